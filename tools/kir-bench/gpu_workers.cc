#include "tools/kir-bench/gpu_workers.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kir::bench {
namespace {

// The workers, for the signal handler: an interrupted parent stops them
// (each passes the signal on to its problem's process group) and dies.
constexpr int kMaxWorkers = 1024;
volatile sig_atomic_t worker_pids[kMaxWorkers];
volatile sig_atomic_t worker_pid_count = 0;
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

void StopWorkersAndDie(int signal_number) {
  for (int w = 0; w < worker_pid_count; ++w)
    if (worker_pids[w] > 0) kill(worker_pids[w], SIGTERM);
  ::signal(signal_number, SIG_DFL);
  raise(signal_number);
}

bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// A worker: reads problem indices ("<index>\n") until end of file, answers
// each with "<length>\n<serialized result>". Never returns.
[[noreturn]] void WorkerMain(int commands, int results,
                             const std::function<ProblemResult(size_t)>& work) {
  std::string pending;
  char buffer[256];
  while (true) {
    const size_t newline = pending.find('\n');
    if (newline == std::string::npos) {
      const ssize_t n = read(commands, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(0);
      pending.append(buffer, static_cast<size_t>(n));
      continue;
    }
    size_t index = 0;
    if (!absl::SimpleAtoi(pending.substr(0, newline), &index)) _exit(4);
    pending.erase(0, newline + 1);
    const std::string text = SerializeResult(work(index));
    if (!WriteAll(results, absl::StrCat(text.size(), "\n", text))) _exit(3);
  }
}

struct Worker {
  pid_t pid = -1;
  int commands = -1;  // parent -> worker
  int results = -1;   // worker -> parent
  std::string received;
  long current = -1;  // the problem it runs, -1 when idle
};

void CloseWorkerPipes(Worker& worker) {
  if (worker.commands >= 0) close(worker.commands);
  if (worker.results >= 0) close(worker.results);
  worker.commands = worker.results = -1;
}

std::string DescribeExit(int status) {
  if (WIFSIGNALED(status))
    return absl::StrCat("signal ", WTERMSIG(status), ", ",
                        strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return absl::StrCat("exit code ", WEXITSTATUS(status));
  return "unknown cause";
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseGpus(absl::string_view value,
                                           int available) {
  std::vector<int> devices;
  if (value == "all") {
    for (int d = 0; d < available; ++d) devices.push_back(d);
    if (devices.empty())
      return absl::UnavailableError("--gpus=all: no GPU found");
    return devices;
  }
  int count = 0;
  if (value.find(',') == absl::string_view::npos &&
      absl::SimpleAtoi(value, &count)) {
    if (count < 1)
      return absl::InvalidArgumentError("--gpus takes a count >= 1");
    if (count > kMaxWorkers)
      return absl::InvalidArgumentError(
          absl::StrCat("--gpus: at most ", kMaxWorkers, " workers"));
    if (count > available)
      return absl::InvalidArgumentError(absl::StrCat(
          "--gpus=", count, ": this host has ", available, " GPU(s)"));
    for (int d = 0; d < count; ++d) devices.push_back(d);
    return devices;
  }
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    int index = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(item), &index) ||
        index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--gpus takes all, a count, or a list of GPU indices such as 0,2,3; "
          "not '",
          value, "'"));
    }
    if (index >= available)
      return absl::InvalidArgumentError(
          absl::StrCat("--gpus=", value, ": no GPU ", index, " (this host has ",
                       available, ", numbered from 0)"));
    devices.push_back(index);
  }
  if (devices.size() > static_cast<size_t>(kMaxWorkers))
    return absl::InvalidArgumentError(
        absl::StrCat("--gpus: at most ", kMaxWorkers, " workers"));
  return devices;
}

std::string PinnedDevice(int index, absl::string_view inherited) {
  if (!inherited.empty()) {
    std::vector<std::string> entries = absl::StrSplit(inherited, ',');
    if (index >= 0 && static_cast<size_t>(index) < entries.size())
      return std::string(absl::StripAsciiWhitespace(entries[index]));
  }
  return absl::StrCat(index);
}

std::vector<ProblemResult> RunOnWorkers(
    const std::vector<ProblemResult>& identities,
    const std::vector<size_t>& order, const std::vector<WorkerDevice>& devices,
    const std::function<ProblemResult(size_t)>& work,
    const std::function<void(size_t, const ProblemResult&)>& on_result,
    Progress* progress, const WorkerPoolOptions& options) {
  std::vector<ProblemResult> results = identities;
  std::deque<size_t> queue(order.begin(), order.end());
  std::vector<Worker> workers(devices.size());
  std::vector<int> deaths_in_a_row(devices.size(), 0);
  std::vector<std::string> retired;  // why each retired device stopped

  // A dead worker's pipe must read as closed, so no other process may hold
  // its write end: each worker closes the others' pipes.
  auto start = [&](size_t w) {
    Worker& worker = workers[w];
    worker.received.clear();
    worker.current = -1;
    int commands[2], answers[2];
    if (pipe(commands) != 0) return false;
    if (pipe(answers) != 0) {
      close(commands[0]);
      close(commands[1]);
      return false;
    }
    std::cout.flush();
    std::cerr.flush();
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
      for (int fd : {commands[0], commands[1], answers[0], answers[1]})
        close(fd);
      return false;
    }
    if (pid == 0) {
      for (int signal_number : kStopSignals) ::signal(signal_number, SIG_DFL);
      ::signal(SIGPIPE, SIG_DFL);
      // An orphaned worker stops (and so does its problem's process).
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(1);
      for (Worker& other : workers) CloseWorkerPipes(other);
      close(commands[1]);
      close(answers[0]);
      setenv("CUDA_VISIBLE_DEVICES", devices[w].visible.c_str(), 1);
      WorkerMain(commands[0], answers[1], work);
    }
    close(commands[0]);
    close(answers[1]);
    worker.pid = pid;
    worker.commands = commands[1];
    worker.results = answers[0];
    worker_pids[w] = pid;
    return true;
  };
  auto lost = [&](size_t index, const std::string& why) {
    ProblemResult result = identities[index];
    result.status = "lost";
    result.message = why;
    return result;
  };
  auto finish = [&](size_t index, ProblemResult result) {
    results[index] = std::move(result);
    if (on_result) on_result(index, results[index]);
    if (progress) progress->Finish(results[index]);
  };
  // Hands the next problem to an idle worker, or closes its command pipe
  // (it exits) when there is none.
  auto dispatch = [&](size_t w) {
    Worker& worker = workers[w];
    if (queue.empty()) {
      if (worker.commands >= 0) close(worker.commands);
      worker.commands = -1;
      return;
    }
    const size_t index = queue.front();
    queue.pop_front();
    if (!WriteAll(worker.commands, absl::StrCat(index, "\n"))) {
      queue.push_front(index);  // it died: its end of file says so
      return;
    }
    worker.current = static_cast<long>(index);
    if (progress)
      progress->Start(absl::StrCat(identities[index].name, " (GPU ",
                                   devices[w].label, ")"));
  };

  struct sigaction previous[3], previous_pipe;
  {
    struct sigaction action = {};
    action.sa_handler = StopWorkersAndDie;
    sigemptyset(&action.sa_mask);
    for (int s = 0; s < 3; ++s)
      sigaction(kStopSignals[s], &action, &previous[s]);
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &previous_pipe);
  }
  const int count =
      std::min<int>(static_cast<int>(devices.size()), kMaxWorkers);
  for (int w = 0; w < count; ++w) worker_pids[w] = 0;
  worker_pid_count = count;
  // A worker that cannot even start retires its device.
  auto start_and_dispatch = [&](size_t w) {
    if (start(w)) {
      dispatch(w);
    } else {
      retired.push_back(
          absl::StrCat("GPU ", devices[w].label,
                       ": cannot start a worker: ", std::strerror(errno)));
    }
  };
  for (int w = 0; w < count; ++w) start_and_dispatch(w);

  while (true) {
    std::vector<pollfd> polled;
    std::vector<size_t> polled_worker;
    for (int w = 0; w < count; ++w) {
      if (workers[w].results < 0) continue;
      polled.push_back({workers[w].results, POLLIN, 0});
      polled_worker.push_back(w);
    }
    if (polled.empty()) break;
    if (poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (size_t p = 0; p < polled.size(); ++p) {
      if (polled[p].revents == 0) continue;
      const size_t w = polled_worker[p];
      Worker& worker = workers[w];
      char buffer[65536];
      const ssize_t n = read(worker.results, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        worker.received.append(buffer, static_cast<size_t>(n));
        // Every complete answer in the buffer.
        while (true) {
          const size_t newline = worker.received.find('\n');
          if (newline == std::string::npos) break;
          size_t length = 0;
          if (!absl::SimpleAtoi(worker.received.substr(0, newline), &length) ||
              worker.current < 0) {
            // Not the protocol (or an answer nobody asked for): the worker
            // is broken; its end of file reports its problem lost.
            kill(worker.pid, SIGKILL);
            worker.received.clear();
            break;
          }
          if (worker.received.size() < newline + 1 + length) break;
          const std::string text = worker.received.substr(newline + 1, length);
          worker.received.erase(0, newline + 1 + length);
          const size_t index = static_cast<size_t>(worker.current);
          worker.current = -1;
          absl::StatusOr<ProblemResult> result = DeserializeResult(text);
          ProblemResult row =
              result.ok()
                  ? *std::move(result)
                  : lost(index, absl::StrCat("unreadable result: ",
                                             result.status().message()));
          row.gpu = devices[w].label;
          deaths_in_a_row[w] = 0;
          finish(index, std::move(row));
          dispatch(w);
        }
        continue;
      }
      // End of file: the worker exited (no work left) or died.
      int status = 0;
      waitpid(worker.pid, &status, 0);
      worker_pids[w] = 0;
      CloseWorkerPipes(worker);
      if (worker.current < 0 && queue.empty()) continue;  // done
      const std::string why =
          absl::StrCat("the worker process on GPU ", devices[w].label,
                       " died (", DescribeExit(status), ") while running it");
      if (worker.current >= 0) {
        ProblemResult row = lost(static_cast<size_t>(worker.current), why);
        row.gpu = devices[w].label;
        finish(static_cast<size_t>(worker.current), std::move(row));
        worker.current = -1;
      }
      if (++deaths_in_a_row[w] >= options.deaths_before_retiring) {
        retired.push_back(absl::StrCat(
            "GPU ", devices[w].label, ": its worker died ", deaths_in_a_row[w],
            deaths_in_a_row[w] == 1 ? " time" : " times in a row"));
        std::cerr << "\nkir-bench: " << retired.back()
                  << "; no more problems go to it\n";
        continue;
      }
      if (!queue.empty()) start_and_dispatch(w);
    }
  }
  // Every device retired with problems left: they were never run.
  while (!queue.empty()) {
    const size_t index = queue.front();
    queue.pop_front();
    finish(index, lost(index, absl::StrCat("not run: no GPU left (",
                                           absl::StrJoin(retired, "; "), ")")));
  }
  worker_pid_count = 0;
  for (int s = 0; s < 3; ++s) sigaction(kStopSignals[s], &previous[s], nullptr);
  sigaction(SIGPIPE, &previous_pipe, nullptr);
  if (progress) progress->Done();
  return results;
}

}  // namespace kir::bench
