#include "tools/kir-bench/problem_loop.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

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

}  // namespace
}  // namespace kir::bench
