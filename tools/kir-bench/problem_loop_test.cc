#include "tools/kir-bench/problem_loop.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kir::bench {
namespace {

using ::testing::HasSubstr;

std::vector<BenchProblem> Problems() {
  auto file = std::make_shared<SourceFile>();
  file->name = "loop.csv";
  file->text =
      "m,n,k,name\n"
      "64,64,64,fine\n"
      "64,64,128,crashes\n"
      "64,64,192,hangs\n"
      "64,64,256,exits\n"
      "64,64,320,also fine\n";
  ProblemList list = ParseProblemsCsv(file);
  EXPECT_TRUE(list.errors.empty());
  return list.problems;
}

// A stand-in for the GPU work: passes, crashes, hangs or exits by name.
ProblemResult FakeWork(const BenchProblem& problem) {
  if (problem.name == "crashes") std::abort();
  if (problem.name == "hangs") {
    while (true) pause();
  }
  if (problem.name == "exits") _exit(5);
  ProblemResult result = IdentityOf(problem);
  result.status = "passed";
  result.config = "fake";
  result.baseline_ms = 1.0;
  VariantResult& variant = result.variants.emplace_back();
  variant.median_ms = problem.matmul.k / 64.0;
  variant.checked = variant.passed = true;
  result.log = absl::StrCat("ran in process ", getpid());
  return result;
}

TEST(ProblemLoop, ACrashOrAHangCostsOnlyItsProblem) {
  std::ostringstream progress_text;
  Progress progress(progress_text, 5, /*terminal=*/false);
  const std::vector<ProblemResult> results =
      RunProblems(Problems(), FakeWork, /*timeout_seconds=*/1.0, &progress);
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0].status, "passed");
  EXPECT_EQ(results[0].variants.at(0).median_ms, 1.0);
  // The work ran in another process.
  EXPECT_THAT(results[0].log, HasSubstr("ran in process "));
  EXPECT_NE(results[0].log, absl::StrCat("ran in process ", getpid()));

  EXPECT_EQ(results[1].status, "crash");
  EXPECT_THAT(results[1].message, HasSubstr("signal 6 (Aborted)"));
  EXPECT_EQ(results[1].name, "crashes");
  EXPECT_EQ(results[1].line, 3);

  EXPECT_EQ(results[2].status, "hang");
  EXPECT_THAT(results[2].message, HasSubstr("still running after 1 s"));
  EXPECT_GE(results[2].seconds, 1.0);
  EXPECT_LT(results[2].seconds, 10.0);

  EXPECT_EQ(results[3].status, "crash");
  EXPECT_THAT(results[3].message, HasSubstr("exited with code 5"));

  EXPECT_EQ(results[4].status, "passed");
  EXPECT_EQ(results[4].variants.at(0).median_ms, 5.0);

  // One plain line per problem when stderr is not a terminal.
  const std::string text = progress_text.str();
  EXPECT_THAT(text, HasSubstr("kir-bench: [1/5] passed   fine: 1.0000 ms, "
                              "100.0% of cuBLAS\n"));
  EXPECT_THAT(text, HasSubstr("kir-bench: [3/5] hang     hangs: still "
                              "running after 1 s"));
  EXPECT_THAT(text, HasSubstr("kir-bench: [5/5] passed   also fine"));
}

TEST(ProblemLoop, TheBarRedrawsInPlaceOnATerminal) {
  std::ostringstream progress_text;
  Progress progress(progress_text, 2, /*terminal=*/true);
  std::vector<BenchProblem> problems = Problems();
  problems.resize(1);
  RunProblems(problems, FakeWork, 5.0, &progress);
  const std::string text = progress_text.str();
  EXPECT_THAT(text, HasSubstr("\r\033[K[..............................] 0/2 "
                              "fine"));
  EXPECT_THAT(text, HasSubstr("\r\033[K[###############...............] 1/2"));
  EXPECT_EQ(text.back(), '\n');
}

TEST(ProblemLoop, InterruptingKirBenchAlsoStopsTheProblemItRuns) {
  // The child's pid comes back through a pipe; the child then hangs.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t bench = fork();
  ASSERT_GE(bench, 0);
  if (bench == 0) {
    RunInChild(
        [&] {
          const pid_t self = getpid();
          if (write(pipe_fds[1], &self, sizeof(self)) != sizeof(self)) _exit(1);
          while (true) pause();
          return ProblemResult();
        },
        /*timeout_seconds=*/60, ProblemResult());
    _exit(0);
  }
  close(pipe_fds[1]);
  pid_t child = 0;
  ASSERT_EQ(read(pipe_fds[0], &child, sizeof(child)),
            static_cast<ssize_t>(sizeof(child)));
  close(pipe_fds[0]);
  kill(bench, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(bench, &status, 0), bench);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  // The problem's process is gone too: dead, or a zombie left for whoever
  // adopted it to reap.
  auto dead = [&] {
    if (kill(child, 0) != 0) return true;
    std::ifstream stat(absl::StrCat("/proc/", child, "/stat"));
    std::string pid_text, name, state;
    stat >> pid_text >> name >> state;
    return state == "Z";
  };
  bool gone = false;
  for (int i = 0; i < 400 && !gone; ++i) {
    gone = dead();
    if (!gone) usleep(5000);
  }
  EXPECT_TRUE(gone) << "process " << child << " still runs";
  if (!gone) kill(child, SIGKILL);
}

}  // namespace
}  // namespace kir::bench
