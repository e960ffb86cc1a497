#include "tools/kir-bench/resume.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kir::bench {
namespace {

using ::testing::HasSubstr;

ProblemResult Row(const std::string& name, const std::string& status,
                  const std::string& config = "128x256x64 s4") {
  ProblemResult r;
  r.name = name;
  r.key = "256x512x1024 a=k b=k bf16 out=bf16";
  r.line = 3;
  r.flops = 2.0 * 256 * 512 * 1024;
  r.config = config;
  r.config_source = "heuristic";
  r.status = status;
  r.message = status == "passed" ? "" : "why \"quoted\"\nsecond line";
  r.device = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  r.gpu = "1";
  r.seconds = 2.5;
  if (status == "passed" || status == "mismatch") {
    r.baseline_name = "cublasLt";
    r.baseline_ms = 0.0125;
    r.baseline_repeat_ms = {0.0125, 0.0126};
    VariantResult& v = r.variants.emplace_back();
    v.pipeline = "default";
    v.config = config;
    v.checked = true;
    v.passed = status == "passed";
    v.max_abs_error = 0.0039;
    v.median_ms = 0.0131;
    v.min_ms = 0.013;
    v.max_ms = 0.0133;
    v.repeat_ms = {0.0131, 0.0132};
    v.registers = 168;
    v.spill_bytes = 0;
    v.shared_bytes = 197632;
  }
  return r;
}

RunInfo Info(bool tune = false) {
  RunInfo info;
  info.problems_file = "llm.csv";
  info.pipelines = {"default"};
  info.tune = tune;
  info.commit = "abc";
  info.device = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  return info;
}

TEST(Resume, ReadsBackWhatTheJsonReportSays) {
  const std::vector<ProblemResult> rows = {
      Row("a", "passed"), Row("b", "mismatch"), Row("c", "hang")};
  absl::StatusOr<PreviousRun> run =
      ParsePreviousRun(FormatJson(rows, Info()), "run.json");
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->pipelines, std::vector<std::string>{"default"});
  EXPECT_FALSE(run->tune);
  ASSERT_EQ(run->results.size(), 3u);
  const ProblemResult& a = run->results[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.key, rows[0].key);
  EXPECT_EQ(a.gpu, "1");
  EXPECT_EQ(a.device, rows[0].device);
  EXPECT_EQ(a.baseline_ms, 0.0125);
  ASSERT_EQ(a.variants.size(), 1u);
  EXPECT_EQ(a.variants[0].median_ms, 0.0131);
  EXPECT_EQ(a.variants[0].repeat_ms.size(), 2u);
  EXPECT_EQ(a.variants[0].shared_bytes, 197632);
  EXPECT_TRUE(std::isnan(a.variants[0].max_rel_error));  // null in JSON
  EXPECT_EQ(run->results[2].message, "why \"quoted\"\nsecond line");
  // The same report again, from what was read: the merged output has the
  // form of one run's. (The JSON rounds flops to 6 digits: a resumed row
  // takes today's, as FinishedEarlier does.)
  EXPECT_NEAR(a.flops, rows[0].flops, 1e-5 * rows[0].flops);
  for (size_t i = 0; i < rows.size(); ++i)
    run->results[i].flops = rows[i].flops;
  EXPECT_EQ(FormatJson(run->results, Info()), FormatJson(rows, Info()));
  EXPECT_EQ(FormatCsv(run->results, Info()), FormatCsv(rows, Info()));
}

TEST(Resume, TransientFailuresRunAgain) {
  EXPECT_TRUE(IsFinished(Row("a", "passed")));
  EXPECT_TRUE(IsFinished(Row("a", "mismatch")));
  EXPECT_TRUE(IsFinished(Row("a", "error")));
  for (const char* status : {"hang", "crash", "lost", "skipped", "pending"})
    EXPECT_FALSE(IsFinished(Row("a", status))) << status;
}

TEST(Resume, MatchesByNameShapeAndConfiguration) {
  PreviousRun previous;
  previous.pipelines = {"default"};
  previous.results = {Row("a", "passed"), Row("b", "lost"),
                      Row("c", "passed", "128x128x64 s6"), Row("d", "error")};
  std::vector<ProblemResult> today = {Row("a", ""), Row("b", ""), Row("c", ""),
                                      Row("d", ""), Row("e", "")};
  today[0].line = 10;
  const std::vector<std::optional<ProblemResult>> found =
      FinishedEarlier(previous, today);
  ASSERT_TRUE(found[0].has_value());
  EXPECT_EQ(found[0]->status, "passed");
  EXPECT_EQ(found[0]->line, 10);  // today's line
  today[0].flops = 12345;
  EXPECT_EQ(FinishedEarlier(previous, today)[0]->flops, 12345);
  EXPECT_FALSE(found[1].has_value());  // lost: runs again
  EXPECT_FALSE(found[2].has_value());  // another configuration
  ASSERT_TRUE(found[3].has_value());
  EXPECT_EQ(found[3]->status, "error");
  EXPECT_FALSE(found[4].has_value());  // not in the earlier run
}

TEST(Resume, UnderTuneMatchesTheConfigurationTuningStartedFrom) {
  ProblemResult tuned = Row("a", "passed", "128x128x64 s6");
  tuned.config_source = "tuned";
  tuned.heuristic_config = "128x256x64 s4";
  tuned.heuristic_ms = 0.014;
  tuned.heuristic_cublas_ms = 0.0125;
  tuned.candidates = {{"128x256x64 s4", "passed", 0.014, 0.0125},
                      {"128x128x64 s6", "passed", 0.0131, 0.0125}};
  absl::StatusOr<PreviousRun> run =
      ParsePreviousRun(FormatJson({tuned}, Info(true)), "tune.json");
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->tune);
  EXPECT_EQ(run->results[0].candidates.size(), 2u);
  EXPECT_EQ(run->results[0].heuristic_ms, 0.014);
  const auto found = FinishedEarlier(*run, {Row("a", "")});
  ASSERT_TRUE(found[0].has_value());
  EXPECT_EQ(found[0]->config, "128x128x64 s6");
}

TEST(Resume, AnotherRunsReportIsRefused) {
  PreviousRun previous;
  previous.path = "old.json";
  previous.pipelines = {"default", "fast"};
  EXPECT_TRUE(CheckSameRun(previous,
                           [] {
                             RunInfo info = Info();
                             info.pipelines = {"default", "fast"};
                             return info;
                           }())
                  .ok());
  EXPECT_THAT(CheckSameRun(previous, Info()).message(),
              HasSubstr("old.json was a run with --compare default fast, not "
                        "--pipeline default"));
}

TEST(Resume, ABrokenReportIsAnErrorNamingTheFile) {
  EXPECT_THAT(
      ParsePreviousRun("{\"tool\": \"kir-run\"}", "x.json").status().message(),
      HasSubstr("x.json: not a kir-bench JSON report"));
  EXPECT_THAT(ParsePreviousRun("{\"tool\": \"kir-bench\",", "x.json")
                  .status()
                  .message(),
              HasSubstr("x.json:1:"));
  EXPECT_THAT(ParsePreviousRun("{\"tool\": \"kir-bench\", \"pipelines\": [], "
                               "\"tune\": false, \"results\": [{\"name\": 1}]}",
                               "x.json")
                  .status()
                  .message(),
              HasSubstr("x.json: result 1: 'name' is missing or not a string"));
  // A truncated report (an interrupted write) never crashes the reader.
  const std::string whole = FormatJson({Row("a", "passed")}, Info());
  for (size_t n = 0; n < whole.size(); n += 7)
    EXPECT_FALSE(ParsePreviousRun(whole.substr(0, n), "x.json").ok());
}

TEST(Resume, ReadsAReportWrittenBeforeRowsNamedTheirGpu) {
  absl::StatusOr<PreviousRun> run = ParsePreviousRun(
      "{\"tool\": \"kir-bench\", \"pipelines\": [\"default\"], \"tune\": "
      "false, \"results\": [{\"name\": \"a\", \"key\": \"k\", \"line\": 2, "
      "\"flops\": 1, \"config\": \"c\", \"config_source\": \"heuristic\", "
      "\"status\": \"passed\", \"message\": \"\", \"device\": \"d\", "
      "\"seconds\": 1, \"baseline\": {\"name\": \"cublasLt\", \"median_ms\": "
      "1, \"repeat_ms\": [1]}, \"variants\": []}]}",
      "old.json");
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->results[0].gpu, "");
}

}  // namespace
}  // namespace kir::bench
