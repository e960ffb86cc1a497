#include "tools/kir-bench/tune_cache.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kir::bench {
namespace {

using ::testing::HasSubstr;

gen::MatmulProblem Problem(int64_t m, int64_t n, int64_t k) {
  gen::MatmulProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  return problem;
}

std::shared_ptr<SourceFile> Text(std::string text) {
  auto file = std::make_shared<SourceFile>();
  file->name = "tune.txt";
  file->text = std::move(text);
  return file;
}

TEST(TuningCache, RoundTripsAndFindsByProblem) {
  TuningCache cache;
  cache.Record({ProblemKey(Problem(4096, 4096, 4096)),
                "128x256x64 s4 ws coop wg2 c1x1 r8 epi=reuse",
                0.731,
                0.702,
                "NVIDIA H100 80GB HBM3",
                {}});
  cache.Record({ProblemKey(Problem(128, 8192, 8192)),
                "128x128x64 s6 splitk=4/serial",
                0.05,
                0.06,
                "H100",
                {}});
  // A later record for the same problem replaces the first.
  cache.Record({ProblemKey(Problem(128, 8192, 8192)),
                "128x128x64 s5 splitk=2/serial",
                0.045,
                0.06,
                "H100",
                {}});
  const std::string text = FormatTuningCache(cache);
  absl::StatusOr<TuningCache> back = ParseTuningCache(Text(text));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->entries.size(), 2u);
  const TunedEntry* entry = back->Find(Problem(128, 8192, 8192));
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->config, "128x128x64 s5 splitk=2/serial");
  EXPECT_DOUBLE_EQ(entry->kernel_ms, 0.045);
  EXPECT_EQ(entry->device, "H100");
  EXPECT_EQ(entry->config_loc.column, 39);
  EXPECT_EQ(back->Find(Problem(1, 2, 3)), nullptr);
  EXPECT_EQ(FormatTuningCache(*back), text);
}

TEST(TuningCache, MalformedLinesAreLocated) {
  absl::StatusOr<TuningCache> cache = ParseTuningCache(
      Text("# header\n"
           "1x2x3 a=k b=k bf16 out=bf16 | 64x64x64 s2\n"
           "1x2x3 a=k b=k bf16 out=bf16 | 64x64x64 s2 | fast | 1 | H100\n"
           "4x5x6 a=k b=k bf16 out=bf16 |  | 1 | 1 | H100\n"
           "7x8x9 a=k b=k bf16 out=bf16 | 64x64x64 | 1 | 1 | H100\n"
           "7x8x9 a=k b=k bf16 out=bf16 | 64x64x64 | 1 | 1 | H100\n"));
  ASSERT_FALSE(cache.ok());
  const std::string text(cache.status().message());
  EXPECT_THAT(text, HasSubstr("tune.txt:2:1: error: a tuning-cache entry has "
                              "5 fields"));
  EXPECT_THAT(text, HasSubstr("tune.txt:3:45: error: expected a time in ms > "
                              "0, got 'fast'"));
  EXPECT_THAT(text, HasSubstr("tune.txt:4:32: error: empty configuration"));
  EXPECT_THAT(text, HasSubstr("tune.txt:6:1: error: a second entry for "
                              "'7x8x9 a=k b=k bf16 out=bf16'"));
}

TEST(TuningCache, FileRoundTripAndLookupForTheGenerator) {
  const std::string path =
      ::testing::TempDir() + "/kir_bench_tune_cache_test.txt";
  std::remove(path.c_str());
  EXPECT_TRUE(absl::IsNotFound(ReadTuningCache(path).status()));
  // kir-gen names the file: a missing one is an error, not a miss.
  EXPECT_TRUE(
      absl::IsNotFound(FindTunedConfig(path, Problem(64, 64, 256)).status()));

  TuningCache cache;
  gen::MatmulConfig tuned;
  tuned.tile_m = 64;
  tuned.tile_n = 128;
  tuned.consumer_warpgroups = 1;
  tuned.stages = 6;
  tuned.split_k = 2;
  // Records `tuned` for `problem`, writes the cache and looks it up.
  auto record_and_find = [&](const gen::MatmulProblem& problem) {
    cache.Record({ProblemKey(problem),
                  gen::DescribeConfig(tuned),
                  0.01,
                  0.02,
                  "H100",
                  {}});
    EXPECT_TRUE(WriteTuningCache(path, cache).ok());
    return FindTunedConfig(path, problem);
  };
  absl::StatusOr<std::optional<TunedConfig>> found =
      record_and_find(Problem(64, 64, 256));
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(gen::DescribeConfig((*found)->config), gen::DescribeConfig(tuned));
  EXPECT_EQ((*found)->entry.device, "H100");
  absl::StatusOr<std::optional<TunedConfig>> other =
      FindTunedConfig(path, Problem(64, 64, 128));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
  // Another problem's key with a configuration this one cannot use (a
  // split of 2 over one k-step) is a located error, not a kernel.
  absl::StatusOr<std::optional<TunedConfig>> unusable =
      record_and_find(Problem(64, 64, 32));
  ASSERT_FALSE(unusable.ok());
  EXPECT_THAT(std::string(unusable.status().message()),
              HasSubstr("the tuned configuration cannot be generated for "
                        "64x64x32 a=k b=k bf16 out=bf16: split-K 2"));

  std::ofstream(path) << ProblemKey(Problem(64, 64, 256))
                      << " | 64x64x64 bogus | 1 | 1 | H100\n";
  absl::StatusOr<std::optional<TunedConfig>> bad =
      FindTunedConfig(path, Problem(64, 64, 256));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr(absl::StrCat(path, ":1:35: error: configuration")));
  std::ofstream(path) << "broken line\n";
  EXPECT_FALSE(FindTunedConfig(path, Problem(64, 64, 256)).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kir::bench
