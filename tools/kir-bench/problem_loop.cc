#include "tools/kir-bench/problem_loop.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/kir-run/child_process.h"

namespace kir::bench {
namespace {

std::string TemporaryPath() {
  const char* directory = std::getenv("TMPDIR");
  std::string path = absl::StrCat(directory && *directory ? directory : "/tmp",
                                  "/kir-bench-XXXXXX");
  const int fd = mkstemp(path.data());
  if (fd < 0) return "";
  close(fd);
  return path;
}

// The running child's process group and result file, for the handler
// below (a child leads its own group, so a Ctrl-C at the terminal does not
// reach it: kir-bench has to pass it on).
volatile sig_atomic_t running_child = 0;
char running_result_path[4096];

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};

void KillChildAndDie(int signal_number) {
  if (running_child > 0) {
    kill(-running_child, SIGKILL);
    unlink(running_result_path);
  }
  ::signal(signal_number, SIG_DFL);
  raise(signal_number);
}

void SetSignalHandlers(void (*handler)(int)) {
  struct sigaction action = {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  for (int signal_number : kForwardedSignals)
    sigaction(signal_number, &action, nullptr);
}

}  // namespace

ProblemResult IdentityOf(const BenchProblem& problem) {
  ProblemResult result;
  result.name = problem.name;
  result.key = ProblemKey(problem.matmul);
  result.line = problem.loc.line;
  result.flops = ProblemFlops(problem.matmul);
  return result;
}

ProblemResult RunInChild(const std::function<ProblemResult()>& work,
                         double timeout_seconds,
                         const ProblemResult& identity) {
  ProblemResult failed = identity;
  const std::string path = TemporaryPath();
  if (path.empty()) {
    failed.status = "error";
    failed.message =
        absl::StrCat("cannot create a temporary file: ", std::strerror(errno));
    return failed;
  }
  const auto start = std::chrono::steady_clock::now();
  std::cout.flush();
  std::cerr.flush();
  if (path.size() < sizeof(running_result_path))
    std::memcpy(running_result_path, path.c_str(), path.size() + 1);
  SetSignalHandlers(KillChildAndDie);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    std::remove(path.c_str());
    failed.status = "error";
    failed.message = absl::StrCat("fork failed: ", std::strerror(errno));
    return failed;
  }
  if (pid == 0) {
    // Its own process group, so the watchdog kills whatever it starts too.
    setpgid(0, 0);
    SetSignalHandlers(SIG_DFL);
    // Outside the terminal's group it would outlive a killed parent (a
    // --gpus worker) and hold its GPU: it dies with it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    const ProblemResult result = work();
    {
      std::ofstream out(path, std::ios::binary);
      out << SerializeResult(result);
      if (!out) _exit(2);
    }
    _exit(0);
  }
  setpgid(pid, pid);
  running_child = pid;
  const ChildWait wait = WaitForChild(pid, timeout_seconds, start);
  running_child = 0;
  const int status = wait.status;
  const bool hung = wait.hung;
  const double seconds = wait.seconds;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  failed.seconds = seconds;
  if (hung) {
    failed.status = "hang";
    failed.message = absl::StrFormat(
        "still running after %.0f s; killed (a wait that is never "
        "satisfied: mbarrier parity, a barrier some threads skip)",
        timeout_seconds);
    return failed;
  }
  if (WIFSIGNALED(status)) {
    failed.status = "crash";
    failed.message =
        absl::StrCat("the process running it died of signal ", WTERMSIG(status),
                     " (", strsignal(WTERMSIG(status)), ")");
    return failed;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.str().empty()) {
    failed.status = "crash";
    failed.message = absl::StrCat("the process running it exited with code ",
                                  WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                                  " without a result");
    return failed;
  }
  absl::StatusOr<ProblemResult> result = DeserializeResult(text.str());
  if (!result.ok()) {
    failed.status = "crash";
    failed.message =
        absl::StrCat("unreadable result: ", result.status().message());
    return failed;
  }
  result->seconds = seconds;
  return *std::move(result);
}

std::vector<ProblemResult> RunProblems(
    const std::vector<BenchProblem>& problems,
    const std::function<ProblemResult(const BenchProblem&)>& work,
    double timeout_seconds, Progress* progress) {
  std::vector<ProblemResult> results;
  for (const BenchProblem& problem : problems) {
    if (progress) progress->Start(problem.name);
    results.push_back(RunInChild([&] { return work(problem); }, timeout_seconds,
                                 IdentityOf(problem)));
    if (progress) progress->Finish(results.back());
  }
  if (progress) progress->Done();
  return results;
}

}  // namespace kir::bench
