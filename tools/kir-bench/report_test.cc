#include "tools/kir-bench/report.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kir::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ProblemResult Timed(const std::string& name, double kernel_ms,
                    double cublas_ms) {
  ProblemResult r;
  r.name = name;
  r.key = name + " a=k b=k bf16 out=bf16";
  r.flops = 2e12;  // 2 TFLOP: 1 ms is 2000 TFLOP/s
  r.config = "128x256x64 s4";
  r.config_source = "heuristic";
  r.status = "passed";
  r.baseline_name = "cublasLt";
  r.baseline_ms = cublas_ms;
  VariantResult& v = r.variants.emplace_back();
  v.pipeline = "default";
  v.checked = v.passed = true;
  v.max_abs_error = 0.03125;
  v.median_ms = kernel_ms;
  v.repeat_ms = {kernel_ms, kernel_ms};
  return r;
}

std::vector<ProblemResult> Results() {
  std::vector<ProblemResult> results = {Timed("a", 1.0, 0.5),
                                        Timed("b", 1.0, 2.0)};
  ProblemResult hang = Timed("c,\"odd\"", 1.0, 1.0);
  hang.status = "hang";
  hang.message = "still running after 300 s; killed";
  hang.variants.clear();
  hang.line = 4;
  results.push_back(hang);
  return results;
}

RunInfo Info() {
  RunInfo info;
  info.problems_file = "llm.csv";
  info.pipelines = {"default"};
  info.commit = "abc";
  info.device = "H100";
  return info;
}

TEST(Report, GeometricMeanIgnoresWhatWasNotMeasured) {
  EXPECT_DOUBLE_EQ(GeometricMean({50, 200}), 100);
  EXPECT_DOUBLE_EQ(GeometricMean({50, NAN, 200, 0, -1}), 100);
  EXPECT_TRUE(std::isnan(GeometricMean({})));
  // Only problems that passed count.
  EXPECT_EQ(PercentsOfCublas(Results(), 0), (std::vector<double>{50, 200}));
}

TEST(Report, TableHasEveryProblemAndTheGeometricMean) {
  const std::string table = FormatTable(Results(), Info());
  const std::vector<std::string> lines = absl::StrSplit(table, '\n');
  EXPECT_THAT(lines[0], HasSubstr("problem"));
  EXPECT_THAT(lines[0], HasSubstr("% cuBLAS"));
  EXPECT_THAT(lines[0], HasSubstr("max abs err"));
  EXPECT_THAT(lines[0], Not(HasSubstr("vs P1")));
  EXPECT_THAT(lines[1], ::testing::MatchesRegex(
                            "a +128x256x64 s4 +1.0000 +2000.0 +0.5000 +50.0% "
                            "+3.12e-02 +passed"));
  EXPECT_THAT(lines[3], ::testing::MatchesRegex(
                            "c,\"odd\" +128x256x64 s4 +- +- +1.0000 +- +- "
                            "+hang"));
  EXPECT_THAT(table, HasSubstr("geometric mean of % of cuBLAS: 100.0% over 2 "
                               "of 3 problems (min 50.0%, max 200.0%)"));
  EXPECT_THAT(table, HasSubstr("1 problem(s) did not pass"));
}

TEST(Report, CompareTableGivesRatiosPerPipeline) {
  std::vector<ProblemResult> results = {Timed("a", 1.0, 1.0)};
  VariantResult second = results[0].variants[0];
  second.pipeline = "default{fence=all}";
  second.median_ms = 1.25;
  second.repeat_ms = {1.2, 1.3};
  results[0].variants.push_back(second);
  RunInfo info = Info();
  info.pipelines = {"default", "default{fence=all}"};
  const std::string table = FormatTable(results, info);
  EXPECT_THAT(table, HasSubstr("vs P1"));
  EXPECT_THAT(table, HasSubstr("P2 default{fence=all}"));
  EXPECT_THAT(table, HasSubstr("1.250"));  // median of 1.2 and 1.3
  EXPECT_THAT(table, HasSubstr("geometric mean of % of cuBLAS (P1 default): "
                               "100.0%"));
  EXPECT_THAT(table, HasSubstr("geometric mean of % of cuBLAS (P2 "
                               "default{fence=all}): 80.0%"));
  EXPECT_THAT(table, HasSubstr("geometric mean of time(P2) / time(P1): 1.250 "
                               "over 1 problems"));
  info.input_errors = {"llm.csv:3:1: error: size m must be at least 1"};
  const std::string json = FormatJson(results, info);
  EXPECT_THAT(json, HasSubstr("\"geomean_ratio_to_p1\": 1.25}"));
  EXPECT_THAT(json, HasSubstr("\"input_errors\": [\"llm.csv:3:1: error: "
                              "size m must be at least 1\"]"));
}

TEST(Report, TuneTableComparesHeuristicAndTuned) {
  std::vector<ProblemResult> results = {Timed("a", 1.0, 1.0)};
  results[0].config_source = "tuned";
  results[0].heuristic_config = "128x128x64 s6";
  results[0].heuristic_ms = 1.25;
  results[0].heuristic_cublas_ms = 1.0;
  results[0].candidates.resize(7);
  RunInfo info = Info();
  info.tune = true;
  const std::string table = FormatTable(results, info);
  EXPECT_THAT(table, HasSubstr("heuristic against tuned:"));
  EXPECT_THAT(table, ::testing::ContainsRegex(
                         "a +128x128x64 s6 +80.0% +128x256x64 s4 +100.0% "
                         "+1.250 +7"));
  EXPECT_THAT(table, HasSubstr("heuristic 80.0%, tuned 100.0%"));
}

TEST(Report, CsvHasAHeaderAndOneQuotedRowPerProblem) {
  const std::string csv = FormatCsv(Results(), Info());
  std::vector<std::string> lines = absl::StrSplit(csv, '\n');
  ASSERT_EQ(lines.size(), 5u);  // header, 3 rows, ""
  const size_t columns = std::count(lines[0].begin(), lines[0].end(), ',');
  EXPECT_THAT(lines[0], HasSubstr("percent_of_cublas"));
  EXPECT_THAT(lines[1], HasSubstr(",50,"));
  EXPECT_THAT(lines[3], ::testing::StartsWith("\"c,\"\"odd\"\"\",4,"));
  EXPECT_THAT(lines[3], HasSubstr(",hang,still running after 300 s; killed,"));
  EXPECT_EQ(std::count(lines[1].begin(), lines[1].end(), ','), columns);
}

TEST(Report, JsonHasTheSummaryAndEveryResult) {
  const std::string json = FormatJson(Results(), Info());
  EXPECT_THAT(json, HasSubstr("\"tool\": \"kir-bench\""));
  EXPECT_THAT(json, HasSubstr("\"geomean_percent_of_cublas\": 100, "
                              "\"problems_timed\": 2, \"problems\": 3"));
  EXPECT_THAT(json, HasSubstr("\"name\": \"c,\\\"odd\\\"\""));
  EXPECT_THAT(json, HasSubstr("\"percent_of_cublas\": 50"));
  EXPECT_THAT(json, HasSubstr("\"max_abs_error\": 0.03125"));
  EXPECT_THAT(json, HasSubstr("\"tflops\": 2000"));
  // Nothing unmeasured is a number JSON cannot hold.
  EXPECT_THAT(json, Not(HasSubstr("nan")));
  EXPECT_EQ(std::count(json.begin(), json.end(), '{'),
            std::count(json.begin(), json.end(), '}'));
  EXPECT_EQ(std::count(json.begin(), json.end(), '['),
            std::count(json.begin(), json.end(), ']'));
}

TEST(Report, SvgHasABarPerTimedVariantAndAMarkForTheRest) {
  std::vector<ProblemResult> results = Results();
  VariantResult second = results[0].variants[0];
  second.median_ms = 0.5;
  results[0].variants.push_back(second);
  results[1].variants.push_back(results[1].variants[0]);
  RunInfo info = Info();
  info.pipelines = {"default", "default{fence=all}"};
  const std::string svg = FormatSvg(results, info);
  EXPECT_THAT(svg, ::testing::StartsWith("<svg xmlns="));
  EXPECT_THAT(svg, ::testing::EndsWith("</svg>\n"));
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = svg.find(what); at != std::string::npos;
         at = svg.find(what, at + 1))
      ++n;
    return n;
  };
  // 4 bars, 2 legend swatches, the background.
  EXPECT_EQ(count("<rect "), 7u);
  EXPECT_EQ(count("fill=\"red\""), 2u);  // the hung problem, both pipelines
  EXPECT_THAT(svg, HasSubstr("a, P2 default{fence=all}: 100.0% of cuBLAS"));
  EXPECT_THAT(svg, HasSubstr("c,&quot;odd&quot;"));
  EXPECT_THAT(svg, HasSubstr("(geomean 141.4%)"));
}

TEST(Report, TuneSvgDrawsTheHeuristicAgainstTheTuned) {
  std::vector<ProblemResult> results = {Timed("a", 1.0, 1.0)};
  results[0].heuristic_ms = 2.0;
  results[0].heuristic_cublas_ms = 1.0;
  RunInfo info = Info();
  info.tune = true;
  const std::string svg = FormatSvg(results, info);
  EXPECT_THAT(svg, HasSubstr("a, heuristic: 50.0% of cuBLAS"));
  EXPECT_THAT(svg, HasSubstr("a, tuned: 100.0% of cuBLAS"));
  EXPECT_THAT(svg, HasSubstr("heuristic (geomean 50.0%)"));
}

}  // namespace
}  // namespace kir::bench
