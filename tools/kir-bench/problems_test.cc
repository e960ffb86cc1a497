#include "tools/kir-bench/problems.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/diagnostics.h"

namespace kir::bench {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<SourceFile> Csv(std::string text) {
  auto file = std::make_shared<SourceFile>();
  file->name = "bench.csv";
  file->text = std::move(text);
  return file;
}

std::string Rendered(const ProblemList& list) {
  return std::string(list.Errors().message());
}

TEST(ProblemsCsv, ReadsColumnsInAnyOrderWithDefaults) {
  ProblemList list =
      ParseProblemsCsv(Csv("# LLM shapes\n"
                           "\n"
                           "k, m, n, dtype, b_major, name\r\n"
                           "4096, 128, 8192, f16, n, decode\r\n"
                           "64,1,1,bf16,k,\n"));
  ASSERT_TRUE(list.errors.empty()) << Rendered(list);
  ASSERT_EQ(list.problems.size(), 2u);
  const BenchProblem& first = list.problems[0];
  EXPECT_EQ(first.name, "decode");
  EXPECT_EQ(first.matmul.m, 128);
  EXPECT_EQ(first.matmul.n, 8192);
  EXPECT_EQ(first.matmul.k, 4096);
  EXPECT_EQ(first.matmul.a_major, gen::OperandMajor::kK);
  EXPECT_EQ(first.matmul.b_major, gen::OperandMajor::kMN);
  EXPECT_EQ(first.matmul.dtype, gen::ElementType::kF16);
  EXPECT_EQ(first.matmul.out_dtype, gen::ElementType::kF16);
  EXPECT_EQ(first.loc.line, 4);
  // No name: the key names it.
  EXPECT_EQ(list.problems[1].name, "1x1x64 a=k b=k bf16 out=bf16");
}

TEST(ProblemsCsv, ReadsOutputTypeAndConfiguration) {
  ProblemList list =
      ParseProblemsCsv(Csv("m,n,k,a_major,out_dtype,config\n"
                           "256,256,65536,m,f32,128x128x64 s6\n"));
  ASSERT_TRUE(list.errors.empty()) << Rendered(list);
  const BenchProblem& problem = list.problems.at(0);
  EXPECT_EQ(problem.matmul.a_major, gen::OperandMajor::kMN);
  EXPECT_EQ(problem.matmul.out_dtype, gen::ElementType::kF32);
  EXPECT_EQ(problem.config, "128x128x64 s6");
  EXPECT_EQ(problem.config_loc.line, 2);
  EXPECT_EQ(problem.config_loc.column, 21);
}

TEST(ProblemsCsv, BadLinesAreLocatedAndTheRestStillRuns) {
  ProblemList list =
      ParseProblemsCsv(Csv("m,n,k,a_major,b_major,dtype\n"
                           "4096,4096,4096,k,k,bf16\n"
                           "4096,4096\n"
                           "64,64,64,x,k,bf16\n"
                           "0,64,64,k,k,bf16\n"
                           "64,-3,64,k,k,bf16\n"
                           "64,64,1e3,k,k,bf16\n"
                           "64,64,64,k,m,bf16\n"
                           "64,64,64,k,k,int8\n"
                           "128,128,128,m,n,f16\n"));
  EXPECT_EQ(list.problems.size(), 2u);
  EXPECT_EQ(list.problems[1].loc.line, 10);
  ASSERT_EQ(list.errors.size(), 7u) << Rendered(list);
  const std::string text = Rendered(list);
  EXPECT_THAT(text, HasSubstr("bench.csv:3:10: error: expected 6 "
                              "comma-separated fields (as the header on line "
                              "1), got 2\n4096,4096\n         ^"));
  EXPECT_THAT(text, HasSubstr("bench.csv:4:10: error: unknown layout 'x' for "
                              "A (expected k: K contiguous, or m: M "
                              "contiguous)\n64,64,64,x,k,bf16\n         ^"));
  EXPECT_THAT(
      text,
      HasSubstr("bench.csv:5:1: error: size m must be at least 1, got 0"));
  EXPECT_THAT(text, HasSubstr("bench.csv:6:4: error: size n must be at least "
                              "1, got -3"));
  EXPECT_THAT(text, HasSubstr("bench.csv:7:7: error: size k must be a "
                              "positive integer, got '1e3'"));
  EXPECT_THAT(text, HasSubstr("bench.csv:8:12: error: unknown layout 'm' for "
                              "B (expected k: K contiguous, or n: N "
                              "contiguous)"));
  EXPECT_THAT(text, HasSubstr("bench.csv:9:14: error: unknown element type "
                              "'int8' (expected bf16, f16 or f32)"));
}

TEST(ProblemsCsv, TooManyFieldsPointsAtTheFirstExtraOne) {
  ProblemList list = ParseProblemsCsv(Csv("m,n,k\n1,2,3,4\n"));
  ASSERT_EQ(list.errors.size(), 1u);
  EXPECT_THAT(Rendered(list),
              HasSubstr("bench.csv:2:7: error: expected 3 comma-separated"));
}

TEST(ProblemsCsv, HeaderErrors) {
  ProblemList unknown = ParseProblemsCsv(Csv("m,n,k,layout\n1,2,3,k\n"));
  EXPECT_TRUE(unknown.problems.empty());
  EXPECT_THAT(Rendered(unknown),
              HasSubstr("bench.csv:1:7: error: unknown column 'layout' in the "
                        "header"));
  ProblemList missing = ParseProblemsCsv(Csv("m,n,dtype\n"));
  EXPECT_THAT(Rendered(missing),
              HasSubstr("bench.csv:1:1: error: the header has no column 'k'"));
  ProblemList twice = ParseProblemsCsv(Csv("m,n,k,m\n"));
  EXPECT_THAT(Rendered(twice),
              HasSubstr("bench.csv:1:7: error: column 'm' appears twice"));
  ProblemList empty = ParseProblemsCsv(Csv("# nothing\n\n"));
  EXPECT_THAT(Rendered(empty), HasSubstr("bench.csv:1:1: error: no header"));
}

TEST(ProblemsCsv, ValidatorErrorsJoinTheParserErrorsInLineOrder) {
  ProblemList list =
      ParseProblemsCsv(Csv("m,n,k,config\n"
                           "64,64,64,256x256x64 s9\n"
                           "0,64,64,\n"
                           "64,64,64,\n"));
  ASSERT_EQ(list.problems.size(), 2u);
  ValidateProblems(list, [](const BenchProblem& problem) -> absl::Status {
    if (problem.config.empty()) return absl::OkStatus();
    return Error(problem.config_loc)
           << "the tile needs 300000 bytes of shared memory";
  });
  ASSERT_EQ(list.problems.size(), 1u);
  EXPECT_EQ(list.problems[0].loc.line, 4);
  ASSERT_EQ(list.errors.size(), 2u);
  EXPECT_EQ(list.errors[0].line, 2);
  EXPECT_EQ(list.errors[1].line, 3);
  EXPECT_THAT(Rendered(list),
              HasSubstr("bench.csv:2:10: error: the tile needs 300000 bytes"));
}

TEST(ProblemsCsv, FlopsAndKey) {
  gen::MatmulProblem problem;
  problem.m = 2;
  problem.n = 3;
  problem.k = 5;
  problem.b_major = gen::OperandMajor::kMN;
  problem.out_dtype = gen::ElementType::kF32;
  EXPECT_EQ(ProblemFlops(problem), 60.0);
  EXPECT_EQ(ProblemKey(problem), "2x3x5 a=k b=n bf16 out=f32");
}

}  // namespace
}  // namespace kir::bench
