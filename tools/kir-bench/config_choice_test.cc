#include "tools/kir-bench/config_choice.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kir::bench {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<SourceFile> File(std::string name, std::string text) {
  auto file = std::make_shared<SourceFile>();
  file->name = std::move(name);
  file->text = std::move(text);
  return file;
}

TEST(ConfigChoice, CsvThenCacheThenHeuristicEachCheckedByTheGenerator) {
  ProblemList list = ParseProblemsCsv(File("bench.csv",
                                           "m,n,k,config\n"
                                           "512,512,512,128x128x64 s3\n"
                                           "1024,1024,1024,\n"
                                           "2048,2048,2048,\n"
                                           "64,64,64,128x256x64 s12\n"
                                           "64,64,64,fast please\n"
                                           "100,100,100,\n"));
  ASSERT_TRUE(list.errors.empty());
  gen::MatmulProblem cached;
  cached.m = cached.n = cached.k = 1024;
  gen::MatmulConfig tuned;
  tuned.tile_n = 128;
  tuned.stages = 5;
  absl::StatusOr<TuningCache> cache =
      ParseTuningCache(File("tune.txt", absl::StrCat(ProblemKey(cached), " | ",
                                                     gen::DescribeConfig(tuned),
                                                     " | 1 | 1 | H100\n")));
  ASSERT_TRUE(cache.ok()) << cache.status();

  const std::vector<ChosenConfig> chosen = ChooseConfigs(list, &*cache);
  ASSERT_EQ(chosen.size(), 3u);
  ASSERT_EQ(list.problems.size(), 3u);
  EXPECT_EQ(chosen[0].source, "csv");
  EXPECT_EQ(chosen[0].config.tile_n, 128);
  EXPECT_EQ(chosen[0].config.stages, 3);
  EXPECT_EQ(chosen[1].source, "cache");
  EXPECT_EQ(gen::DescribeConfig(chosen[1].config), gen::DescribeConfig(tuned));
  EXPECT_EQ(chosen[2].source, "heuristic");
  EXPECT_EQ(gen::DescribeConfig(chosen[2].config),
            gen::DescribeConfig(gen::ChooseConfig(list.problems[2].matmul)));

  ASSERT_EQ(list.errors.size(), 3u);
  const std::string errors(list.Errors().message());
  // A tile whose stages do not fit: at the config field.
  EXPECT_THAT(errors, HasSubstr("bench.csv:5:10: error: tile 128x256x64 with "
                                "12 stages"));
  EXPECT_THAT(errors, HasSubstr("64,64,64,128x256x64 s12\n         ^"));
  EXPECT_THAT(errors, HasSubstr("bench.csv:6:10: error: configuration 'fast "
                                "please'"));
  // A shape TMA cannot describe, with the heuristic's choice: at the line.
  EXPECT_THAT(errors, HasSubstr("bench.csv:7:1: error: A is K-major"));
  EXPECT_THAT(errors, HasSubstr("(with the heuristic's configuration "));
}

TEST(ConfigChoice,
     ACachedConfigurationThatCannotBeGeneratedIsLocatedInTheCache) {
  ProblemList list =
      ParseProblemsCsv(File("bench.csv", "m,n,k\n64,64,64\n64,64,128\n"));
  gen::MatmulProblem first;
  first.m = first.n = first.k = 64;
  gen::MatmulProblem second = first;
  second.k = 128;
  absl::StatusOr<TuningCache> cache = ParseTuningCache(
      File("tune.txt",
           absl::StrCat(ProblemKey(first), " | 128x256x64 s12 | 1 | 1 | H100\n",
                        ProblemKey(second), " | nonsense | 1 | 1 | H100\n")));
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::vector<ChosenConfig> chosen = ChooseConfigs(list, &*cache);
  EXPECT_TRUE(chosen.empty());
  const std::string errors(list.Errors().message());
  EXPECT_THAT(errors, HasSubstr("tune.txt:1:34: error: the tuned configuration "
                                "cannot be generated for 64x64x64 a=k b=k "
                                "bf16 out=bf16 (bench.csv:2:1): tile "
                                "128x256x64 with 12 stages"));
  EXPECT_THAT(errors, HasSubstr("tune.txt:2:35: error: configuration "
                                "'nonsense'"));
}

// --split-k-mode: the heuristic's split configurations are its choice for
// the mode (tma-atomic: 128x256 tiles in 8 splits, even; tma-serial: the
// turn modes' 128x128 in 4, skewed); the CSV's and an unsplit problem's
// stay as they are.
TEST(ConfigChoice, SplitKModeChangesOnlyTheHeuristicsSplitConfigurations) {
  struct Expected {
    gen::SplitKMode mode;
    int split, skew;
  };
  for (const auto& [mode, split, skew] :
       {Expected{gen::SplitKMode::kTmaAtomic, 8, 0},
        Expected{gen::SplitKMode::kTmaSerial, 4, 4}}) {
    ProblemList list = ParseProblemsCsv(
        File("bench.csv",
             "m,n,k,config\n"
             "512,1024,32768,\n"
             "4096,4096,4096,\n"
             "512,1024,32768,128x128x64 s7 splitk=4/serial skew=2\n"));
    const std::vector<ChosenConfig> chosen = ChooseConfigs(list, nullptr, mode);
    ASSERT_EQ(chosen.size(), 3u);
    EXPECT_EQ(chosen[0].config.split_k, split);
    EXPECT_EQ(chosen[0].config.split_k_mode, mode);
    EXPECT_EQ(chosen[0].config.split_k_skew, skew);
    EXPECT_EQ(chosen[1].config.split_k, 1);
    EXPECT_EQ(chosen[1].config.split_k_mode, gen::SplitKMode::kSerial);
    EXPECT_EQ(chosen[2].config.split_k_mode, gen::SplitKMode::kSerial);
    EXPECT_EQ(chosen[2].config.split_k_skew, 2);
  }
}

// A regression: `default` lowered a tma-atomic configuration as serial,
// so kir-bench timed another kernel than its row named.
TEST(LoweringPipelines, DefaultTakesTheConfigurationsSplitKMode) {
  gen::MatmulConfig config;
  config.split_k = 4;
  config.split_k_mode = gen::SplitKMode::kTmaAtomic;
  EXPECT_EQ(LoweringPipelines({"default", "canonicalize"}, config),
            (std::vector<std::string>{
                "serialize-split-k{mode=tma-atomic},default", "canonicalize"}));
  config.split_k_mode = gen::SplitKMode::kSerial;
  EXPECT_EQ(LoweringPipelines({"default"}, config),
            std::vector<std::string>{"default"});
}

}  // namespace
}  // namespace kir::bench
