#include "tools/kir-bench/tune_space.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kir::bench {
namespace {

gen::MatmulProblem ProblemOfSize(int64_t m, int64_t n, int64_t k) {
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
      TuneCandidates(ProblemOfSize(4096, 4096, 4096), heuristic, fits, 12);
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
      ProblemOfSize(256, 256, 65536), heuristic,
      [](const gen::MatmulConfig&) { return true; }, 100);
  int split = 0;
  for (const gen::MatmulConfig& c : candidates) split += c.split_k > 1;
  EXPECT_EQ(split, 4);  // 2, 4, 8, 16
  EXPECT_LE(candidates.size(), 100u);
}

// Each split candidate takes the heuristic's skew for its tile and split
// count; the skew itself is varied around the heuristic's.
TEST(TuneSpace, SplitSkewFollowsTheSplitAndIsVaried) {
  const gen::MatmulProblem problem = ProblemOfSize(256, 256, 65536);
  const gen::MatmulConfig heuristic = gen::ChooseConfig(problem);
  ASSERT_EQ(heuristic.split_k_skew, 7);
  const std::vector<gen::MatmulConfig> candidates = TuneCandidates(
      problem, heuristic, [](const gen::MatmulConfig&) { return true; }, 100);
  std::set<int> skews_of_heuristic_split;
  for (const gen::MatmulConfig& c : candidates) {
    if (c.split_k == 1) EXPECT_EQ(c.split_k_skew, 0);
    if (c.split_k == heuristic.split_k && c.tile_n == heuristic.tile_n &&
        c.stages == heuristic.stages) {
      skews_of_heuristic_split.insert(c.split_k_skew);
    }
    if (c.tile_n == 128 && c.split_k == heuristic.split_k) {
      EXPECT_EQ(c.split_k_skew, 4);
    }
  }
  EXPECT_EQ(skews_of_heuristic_split, (std::set<int>{0, 3, 7, 14}));
}

// Where K is split, each tile also comes with the split that fills one
// wave (132 SMs), with as many stages as fit, within the default limit.
TEST(TuneSpace, SplitTilesKeepTheGridWithinOneWave) {
  const gen::MatmulProblem problem = ProblemOfSize(512, 1024, 32768);
  gen::MatmulConfig heuristic = gen::ChooseConfig(problem);
  ASSERT_EQ(gen::DescribeConfig(heuristic),
            "128x128x64 s7 ws coop wg2 c1x1 r8 epi=reuse splitk=4/serial "
            "skew=4");
  heuristic.split_k_mode = gen::SplitKMode::kTmaAtomic;
  heuristic.split_k_skew = 0;
  std::set<std::string> tried;
  for (const gen::MatmulConfig& c : TuneCandidates(
           problem, heuristic,
           [&](const gen::MatmulConfig& c) {
             return gen::ValidateMatmul(problem, c).ok();
           },
           16)) {
    tried.insert(gen::DescribeConfig(c));
  }
  // 16 tiles of 128x256 in 8 splits, 24 of 128x192 in 5, 64 of 128x64 in 2.
  EXPECT_TRUE(tried.count(
      "128x256x64 s4 ws coop wg2 c1x1 r8 epi=reuse splitk=8/tma-atomic"));
  EXPECT_TRUE(tried.count(
      "128x192x64 s5 ws coop wg2 c1x1 r8 epi=reuse splitk=5/tma-atomic"));
  EXPECT_TRUE(tried.count(
      "128x64x64 s8 ws coop wg2 c1x1 r8 epi=reuse splitk=2/tma-atomic"));
}

TEST(TuneSpace, SixtyFourRowTilesHaveOneConsumerWarpgroup) {
  // A 64-row tile with two consumer warpgroups cannot be generated: the
  // candidate must change both, or tuning never tries 64-row tiles.
  const std::vector<gen::MatmulConfig> candidates = TuneCandidates(
      ProblemOfSize(4096, 4096, 4096), gen::MatmulConfig(),
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

// With the generator's own check and the default limit (16), the set for
// a large problem holds the two ping-pong configurations, each valid.
TEST(TuneSpace, IncludesPingPongWithinTheDefaultLimit) {
  const gen::MatmulProblem problem = ProblemOfSize(4096, 4096, 4096);
  const std::vector<gen::MatmulConfig> candidates = TuneCandidates(
      problem, gen::ChooseConfig(problem),
      [&](const gen::MatmulConfig& c) {
        return gen::ValidateMatmul(problem, c).ok();
      },
      16);
  std::vector<std::string> pingpong;
  for (const gen::MatmulConfig& c : candidates) {
    if (c.pingpong) pingpong.push_back(gen::DescribeConfig(c));
  }
  EXPECT_EQ(pingpong,
            (std::vector<std::string>{
                "128x128x64 s5 ws pingpong wg2 c1x1 r8 epi=dedicated",
                "64x256x64 s4 ws pingpong wg2 c1x1 r8 epi=dedicated"}));
  EXPECT_LE(candidates.size(), 16u);
}

TEST(TuneSpace, NothingValidGivesNothing) {
  EXPECT_TRUE(TuneCandidates(
                  ProblemOfSize(64, 64, 64), gen::MatmulConfig(),
                  [](const gen::MatmulConfig&) { return false; }, 16)
                  .empty());
}

}  // namespace
}  // namespace kir::bench
