#include "tools/kir-bench/tune_space.h"

#include "gtest/gtest.h"

namespace kir::bench {
namespace {

gen::MatmulProblem Problem(int64_t m, int64_t n, int64_t k) {
  gen::MatmulProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  return problem;
}

TEST(TuneSpace, HeuristicFirstBoundedDistinctAndValid) {
  gen::MatmulConfig heuristic;
  heuristic.stages = 4;
  // A stand-in for the generator's check: stages x tile must fit.
  auto fits = [](const gen::MatmulConfig& c) {
    return c.stages * (c.tile_m + c.tile_n) * c.tile_k * 2 <= 200 * 1024;
  };
  const std::vector<gen::MatmulConfig> candidates =
      TuneCandidates(Problem(4096, 4096, 4096), heuristic, fits, 12);
  ASSERT_EQ(candidates.size(), 12u);
  EXPECT_TRUE(SameConfig(candidates[0], heuristic));
  for (size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_TRUE(fits(candidates[i]));
    for (size_t j = 0; j < i; ++j)
      EXPECT_FALSE(SameConfig(candidates[i], candidates[j])) << i << " " << j;
    // 32 x 32 output tiles fill the GPU: no split-K.
    EXPECT_EQ(candidates[i].split_k, 1);
  }
}

TEST(TuneSpace, SplitKOnlyWhereTheTilesCannotFillTheGpu) {
  gen::MatmulConfig heuristic;
  heuristic.tile_m = 128;
  heuristic.tile_n = 128;
  const std::vector<gen::MatmulConfig> candidates = TuneCandidates(
      Problem(256, 256, 65536), heuristic,
      [](const gen::MatmulConfig&) { return true; }, 100);
  int split = 0;
  for (const gen::MatmulConfig& c : candidates) split += c.split_k > 1;
  EXPECT_EQ(split, 4);  // 2, 4, 8, 16
  EXPECT_LE(candidates.size(), 100u);
}

TEST(TuneSpace, SixtyFourRowTilesHaveOneConsumerWarpgroup) {
  // A 64-row tile with two consumer warpgroups cannot be generated: the
  // candidate must change both, or tuning never tries 64-row tiles.
  const std::vector<gen::MatmulConfig> candidates = TuneCandidates(
      Problem(4096, 4096, 4096), gen::MatmulConfig(),
      [](const gen::MatmulConfig& c) {
        return c.tile_m == 64 * c.consumer_warpgroups;
      },
      100);
  bool tried_64_rows = false;
  for (const gen::MatmulConfig& c : candidates) {
    EXPECT_EQ(c.tile_m, 64 * c.consumer_warpgroups);
    tried_64_rows |= c.tile_m == 64;
  }
  EXPECT_TRUE(tried_64_rows);
}

TEST(TuneSpace, NothingValidGivesNothing) {
  EXPECT_TRUE(TuneCandidates(
                  Problem(64, 64, 64), gen::MatmulConfig(),
                  [](const gen::MatmulConfig&) { return false; }, 16)
                  .empty());
}

}  // namespace
}  // namespace kir::bench
