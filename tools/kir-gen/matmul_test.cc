#include "tools/kir-gen/matmul.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/ordering.h"
#include "analysis/ordering_test_helpers.h"
#include "analysis/sync_check.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "parser/parser.h"
#include "passes/pipeline.h"
#include "passes/test_helpers.h"
#include "printer/cuda_emitter.h"

namespace kir::gen {
namespace {

using ::testing::HasSubstr;

MatmulProblem Problem(int64_t m, int64_t n, int64_t k,
                      OperandMajor a = OperandMajor::kK,
                      OperandMajor b = OperandMajor::kK,
                      ElementType out = ElementType::kBF16) {
  MatmulProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.a_major = a;
  problem.b_major = b;
  problem.out_dtype = out;
  return problem;
}

// A configuration that fits: 128x256, 3 stages, a dedicated output tile.
MatmulConfig Fitting() {
  MatmulConfig config;
  config.stages = 3;
  config.epilogue = EpilogueMode::kDedicated;
  return config;
}

void ExpectError(const MatmulProblem& problem, const MatmulConfig& config,
                 absl::StatusCode code, const std::string& text) {
  absl::Status status = ValidateMatmul(problem, config);
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(text));
  // Generation refuses what validation refuses.
  EXPECT_FALSE(GenerateMatmul(problem, config).ok());
}

TEST(ValidateMatmul, AcceptsTheDefaultsAndOddSizes) {
  EXPECT_TRUE(ValidateMatmul(Problem(4096, 4096, 4096), Fitting()).ok());
  EXPECT_TRUE(ValidateMatmul(Problem(1, 8, 8), Fitting()).ok());
  EXPECT_TRUE(ValidateMatmul(Problem(1000, 1000, 1000), Fitting()).ok());
}

TEST(ValidateMatmul, RejectsSizesBelowOne) {
  ExpectError(Problem(0, 64, 64), Fitting(), absl::StatusCode::kInvalidArgument,
              "M = 0: sizes must be at least 1");
  ExpectError(Problem(64, -3, 64), Fitting(),
              absl::StatusCode::kInvalidArgument, "N = -3");
}

TEST(ValidateMatmul, NamesTheTensorTmaCannotDescribe) {
  // A K-major bf16 operand needs K a multiple of 8 (16-byte rows).
  ExpectError(Problem(64, 64, 1001), Fitting(),
              absl::StatusCode::kInvalidArgument,
              "A is K-major: its rows hold K = 1001 bf16 elements, 2002 "
              "bytes, and a TMA tensor map needs a row stride that is a "
              "multiple of 16 bytes (K a multiple of 8)");
  // An M-major A needs M a multiple of 8; K is then free.
  ExpectError(Problem(100, 64, 64, OperandMajor::kMN), Fitting(),
              absl::StatusCode::kInvalidArgument, "A is M-major");
  EXPECT_TRUE(ValidateMatmul(
                  Problem(104, 64, 1001, OperandMajor::kMN, OperandMajor::kMN),
                  Fitting())
                  .ok());
  ExpectError(Problem(64, 60, 64, OperandMajor::kK, OperandMajor::kMN),
              Fitting(), absl::StatusCode::kInvalidArgument, "B is N-major");
  // C: bf16 rows need N a multiple of 8, f32 rows a multiple of 4.
  ExpectError(Problem(64, 12, 64), Fitting(),
              absl::StatusCode::kInvalidArgument, "C is row-major");
  MatmulConfig f32 = Fitting();
  f32.tile_n = 128;
  EXPECT_TRUE(ValidateMatmul(Problem(64, 12, 64, OperandMajor::kK,
                                     OperandMajor::kK, ElementType::kF32),
                             f32)
                  .ok());
}

// A ping-pong configuration that fits: 128x128 tiles, 5 stages.
MatmulConfig PingPong() {
  MatmulConfig config;
  config.pingpong = true;
  config.tile_n = 128;
  config.stages = 5;
  return config;
}

TEST(ValidateMatmul, PingPongTakesWholeTilesOfAPersistentGrid) {
  EXPECT_TRUE(ValidateMatmul(Problem(4096, 4096, 4096), PingPong()).ok());
  MatmulConfig wide = PingPong();
  wide.tile_m = 64;
  wide.tile_n = 256;
  wide.stages = 4;
  EXPECT_TRUE(ValidateMatmul(Problem(4096, 4096, 4096), wide).ok());
  struct Case {
    void (*change)(MatmulConfig&);
    const char* error;
  };
  for (const Case& bad : std::vector<Case>{
           {[](MatmulConfig& c) { c.tile_n = 256; },
            "ping-pong tile 128x256: one warpgroup holds the whole tile's f32 "
            "accumulator, 256 registers per thread"},
           {[](MatmulConfig& c) { c.consumer_warpgroups = 1; },
            "ping-pong with 1 consumer warpgroups"},
           {[](MatmulConfig& c) { c.circular_buffer = "pipelined"; },
            "ping-pong with circular buffer mode pipelined"},
           {[](MatmulConfig& c) { c.split_k = 2; },
            "split-K 2 with ping-pong: split-K's grid computes one tile per "
            "block"},
           {[](MatmulConfig& c) { c.epilogue = EpilogueMode::kReuseMainloop; },
            "epilogue reuse with ping-pong"}}) {
    MatmulConfig config = PingPong();
    bad.change(config);
    ExpectError(Problem(4096, 4096, 4096), config,
                absl::StatusCode::kInvalidArgument, bad.error);
  }
  // Each warpgroup has its own ring of two 128x64 output sub-tiles: 5
  // stages of 32 KiB and 64 KiB of output fit, 6 stages do not.
  MatmulConfig six = PingPong();
  six.stages = 6;
  ExpectError(Problem(4096, 4096, 4096), six,
              absl::StatusCode::kInvalidArgument,
              "more than the 232448 a block can use");
  EXPECT_EQ(MaxStages(Problem(4096, 4096, 4096), PingPong()), 5);
}

TEST(ValidateMatmul, ClustersArePairsAndWarpSpecialized) {
  MatmulConfig square = Fitting();
  square.cluster_m = 2;
  square.cluster_n = 2;
  ExpectError(Problem(256, 256, 256), square,
              absl::StatusCode::kInvalidArgument, "cluster 2x2: 1x1, 2x1");
  // Both CTAs of a cluster run the same split of neighbouring tiles.
  MatmulConfig split = Fitting();
  split.cluster_n = 2;
  split.split_k = 2;
  split.epilogue = EpilogueMode::kReuseMainloop;
  EXPECT_TRUE(ValidateMatmul(Problem(256, 256, 4096), split).ok());
  MatmulConfig pipelined = Fitting();
  pipelined.cluster_m = 2;
  pipelined.circular_buffer = "pipelined";
  ExpectError(Problem(256, 256, 256), pipelined,
              absl::StatusCode::kInvalidArgument,
              "multicast loads need warp_specialized");
  MatmulConfig pair = Fitting();
  pair.cluster_m = 2;
  EXPECT_TRUE(ValidateMatmul(Problem(256, 256, 256), pair).ok());
}

TEST(ValidateMatmul, RejectsTilesWgmmaCannotCompute) {
  struct Case {
    void (*change)(MatmulConfig&);
    const char* error;
  };
  for (const Case& bad : std::vector<Case>{
           {[](MatmulConfig& c) { c.tile_n = 512; }, "tile N = 512"},
           {[](MatmulConfig& c) { c.tile_k = 32; }, "tile K = 32"},
           {[](MatmulConfig& c) { c.tile_m = 256; }, "tile M = 256"},
           {[](MatmulConfig& c) { c.stages = 0; }, "0 stages"},
           {[](MatmulConfig& c) { c.circular_buffer = "ring"; },
            "circular buffer mode"}}) {
    MatmulConfig config = Fitting();
    bad.change(config);
    ExpectError(Problem(256, 256, 256), config,
                absl::StatusCode::kInvalidArgument, bad.error);
  }
}

TEST(ValidateMatmul, RejectsATileThatDoesNotFitInSharedMemory) {
  MatmulConfig config = Fitting();
  config.stages = 5;  // 5 x 48 KiB + two 16 KiB output sub-tiles
  ExpectError(Problem(4096, 4096, 4096), config,
              absl::StatusCode::kInvalidArgument,
              "more than the 232448 a block can use");
  config.stages = 4;
  EXPECT_TRUE(ValidateMatmul(Problem(4096, 4096, 4096), config).ok());
  // The whole tile over the stages: 4 fit, 5 do not.
  config.epilogue = EpilogueMode::kReuseMainloop;
  EXPECT_TRUE(ValidateMatmul(Problem(4096, 4096, 4096), config).ok());
  config.stages = 5;
  EXPECT_FALSE(ValidateMatmul(Problem(4096, 4096, 4096), config).ok());
}

TEST(ValidateMatmul, SplitK) {
  MatmulConfig config = Fitting();
  config.epilogue = EpilogueMode::kAuto;
  config.split_k = 4;
  EXPECT_TRUE(ValidateMatmul(Problem(256, 256, 4096), config).ok());
  config.split_k = 65;  // 64 k-steps
  ExpectError(Problem(256, 256, 4096), config,
              absl::StatusCode::kInvalidArgument, "only 64 k-steps");
  config.split_k = 4;
  for (SplitKMode mode : {SplitKMode::kTmaSerial, SplitKMode::kTmaAtomic}) {
    config.split_k_mode = mode;
    EXPECT_TRUE(ValidateMatmul(Problem(256, 256, 4096), config).ok());
  }
  config.split_k_mode = SplitKMode::kSerial;
  config.epilogue = EpilogueMode::kDedicated;
  ExpectError(Problem(256, 256, 4096), config,
              absl::StatusCode::kInvalidArgument, "not persistent");
}

// A skew of d over S splits takes d S (S-1) / 2 k-steps; every split keeps
// one of its own.
TEST(ValidateMatmul, SplitSkew) {
  MatmulConfig config = Fitting();
  config.epilogue = EpilogueMode::kAuto;
  config.split_k = 4;
  config.split_k_skew = 10;  // 60 of 64 k-steps, 4 left: one per split
  EXPECT_TRUE(ValidateMatmul(Problem(256, 256, 4096), config).ok());
  config.split_k_skew = 11;
  ExpectError(Problem(256, 256, 4096), config,
              absl::StatusCode::kInvalidArgument, "the skew takes 66 k-steps");
  config.split_k_skew = -1;
  EXPECT_FALSE(ValidateMatmul(Problem(256, 256, 4096), config).ok());
}

// The heuristic skews only the turn modes' splits, by 512 / tile_n
// k-steps, less where K is short.
TEST(ChooseSplitSkew, TurnModesOnly) {
  const MatmulProblem problem = Problem(256, 256, 65536);
  MatmulConfig config = ChooseConfig(problem);
  EXPECT_EQ(DescribeConfig(config),
            "128x64x64 s8 ws coop wg2 c1x1 r8 epi=reuse splitk=12/serial "
            "skew=7");
  config.split_k_mode = SplitKMode::kTmaSerial;
  EXPECT_EQ(ChooseSplitSkew(problem, config), 7);
  for (SplitKMode mode :
       {SplitKMode::kTmaAtomic, SplitKMode::kGather, SplitKMode::kCluster}) {
    config.split_k_mode = mode;
    EXPECT_EQ(ChooseSplitSkew(problem, config), 0);
  }
  config.split_k_mode = SplitKMode::kSerial;
  config.tile_n = 128;
  EXPECT_EQ(ChooseSplitSkew(problem, config), 4);
  config.split_k = 1;
  EXPECT_EQ(ChooseSplitSkew(problem, config), 0);
  // 16 k-steps in 4 splits: a skew of d takes 6 d, at most half of them.
  config.split_k = 4;
  EXPECT_EQ(ChooseSplitSkew(Problem(256, 256, 1024), config), 1);
  EXPECT_EQ(ChooseSplitSkew(Problem(256, 256, 640), config), 0);
}

// The shapes of testdata/bench/llm.csv that are K-major bf16.
const std::vector<std::vector<int64_t>>& LlmShapes() {
  static const auto* shapes = new std::vector<std::vector<int64_t>>{
      {4096, 4096, 4096},  {4096, 11008, 4096}, {4096, 4096, 11008},
      {4096, 12288, 4096}, {2048, 8192, 8192},  {2048, 28672, 8192},
      {2048, 8192, 28672}, {3648, 480, 8632},   {8192, 8192, 8192},
      {128, 8192, 8192},   {256, 256, 65536},   {512, 1024, 32768},
      {128, 1024, 65536},  {1024, 1024, 16384}};
  return *shapes;
}

TEST(ChooseConfig, EveryChoiceIsValidAndExplained) {
  for (const auto& shape : LlmShapes()) {
    for (ElementType out : {ElementType::kBF16, ElementType::kF32}) {
      const MatmulProblem problem =
          Problem(shape[0], shape[1], shape[2], OperandMajor::kK,
                  OperandMajor::kK, out);
      std::string why;
      const MatmulConfig config = ChooseConfig(problem, &why);
      EXPECT_TRUE(ValidateMatmul(problem, config).ok())
          << shape[0] << "x" << shape[1] << "x" << shape[2] << ": "
          << DescribeConfig(config) << ": " << ValidateMatmul(problem, config);
      std::vector<std::string> lines =
          absl::StrSplit(why, '\n', absl::SkipEmpty());
      // One line more for a split skew.
      EXPECT_EQ(lines.size(), config.split_k_skew > 0 ? 8u : 7u) << why;
      EXPECT_THAT(why, HasSubstr("stages"));
    }
  }
}

TEST(ChooseConfig, LargeShapesArePersistentSmallOnesSplitK) {
  const MatmulConfig large = ChooseConfig(Problem(4096, 4096, 4096));
  EXPECT_EQ(DescribeConfig(large),
            "128x256x64 s4 ws coop wg2 c1x1 r8 epi=dedicated");
  // 2 tiles of 128x256 cannot fill 132 SMs: K is split.
  const MatmulConfig small = ChooseConfig(Problem(256, 256, 65536));
  EXPECT_GT(small.split_k, 1);
  EXPECT_EQ(small.epilogue, EpilogueMode::kReuseMainloop);
  // One wave of tiles: one tile per block, more stages.
  const MatmulConfig wave = ChooseConfig(Problem(1024, 1024, 1024));
  EXPECT_EQ(wave.split_k, 1);
  EXPECT_EQ(wave.epilogue, EpilogueMode::kReuseMainloop);
  EXPECT_GE(wave.stages, 4);
}

// tma-atomic's partials reduce without turns: the heuristic splits K
// further where more splits still fit one wave, with no skew. On
// load-bound shapes it keeps the turn modes' tile (256x256x65536: 16
// splits of 128x64 tiles, 128 blocks, against the turn modes' 12); on
// the others it takes wider tiles in more splits (512x1024x32768 and
// 1024x1024x16384: 128x256).
TEST(ChooseConfig, TmaAtomicSplitsWithoutTurns) {
  const std::pair<std::vector<int64_t>, std::string> expected[] = {
      {{256, 256, 65536},
       "128x64x64 s8 ws coop wg2 c1x1 r8 epi=reuse "
       "splitk=16/tma-atomic"},
      {{512, 1024, 32768},
       "128x256x64 s4 ws coop wg2 c1x1 r8 epi=reuse "
       "splitk=8/tma-atomic"},
      {{128, 8192, 8192}, "128x64x64 s8 ws coop wg2 c1x1 r8 epi=reuse"},
      {{128, 1024, 65536},
       "128x64x64 s8 ws coop wg2 c1x1 r8 epi=reuse "
       "splitk=8/tma-atomic"},
      {{1024, 1024, 16384},
       "128x256x64 s4 ws coop wg2 c1x1 r8 epi=reuse "
       "splitk=4/tma-atomic"},
      {{4096, 4096, 4096}, "128x256x64 s4 ws coop wg2 c1x1 r8 epi=dedicated"},
  };
  for (const auto& [shape, config] : expected) {
    const MatmulProblem problem = Problem(shape[0], shape[1], shape[2]);
    std::string why;
    const MatmulConfig chosen =
        ChooseConfig(problem, &why, SplitKMode::kTmaAtomic);
    EXPECT_EQ(DescribeConfig(chosen), config) << why;
    EXPECT_TRUE(ValidateMatmul(problem, chosen).ok());
    if (chosen.split_k > 1) {
      EXPECT_THAT(why, HasSubstr("(tma-atomic)"));
    }
  }
  // Every shape of llm.csv gets a configuration that can be generated.
  for (const auto& shape : LlmShapes()) {
    const MatmulProblem problem = Problem(shape[0], shape[1], shape[2]);
    const MatmulConfig chosen =
        ChooseConfig(problem, nullptr, SplitKMode::kTmaAtomic);
    EXPECT_TRUE(ValidateMatmul(problem, chosen).ok()) << DescribeConfig(chosen);
  }
  // The turn modes' choice is unchanged by the mode they take turns in.
  EXPECT_EQ(DescribeConfig(ChooseConfig(Problem(256, 256, 65536), nullptr,
                                        SplitKMode::kTmaSerial)),
            "128x64x64 s8 ws coop wg2 c1x1 r8 epi=reuse splitk=12/tma-serial "
            "skew=7");
}

// A load-bound problem whose unsplit tiles fill a wave is not split, in
// any mode: 128x8192x8192 (126 flops per operand byte) takes 128 tiles of
// 128x64, where the model alone would split 128x128 tiles in two. A
// load-bound problem whose tiles cannot fill a wave is still split, and
// so is one with enough flops per byte.
TEST(ChooseConfig, LoadBoundProblemThatFillsAWaveIsNotSplit) {
  for (SplitKMode mode :
       {SplitKMode::kSerial, SplitKMode::kTmaSerial, SplitKMode::kTmaAtomic}) {
    std::string why;
    const MatmulConfig config =
        ChooseConfig(Problem(128, 8192, 8192), &why, mode);
    EXPECT_EQ(DescribeConfig(config),
              "128x64x64 s8 ws coop wg2 c1x1 r8 epi=reuse")
        << why;
    EXPECT_THAT(why, HasSubstr("load-bound (126 flops per byte"));
    EXPECT_THAT(why, HasSubstr("no split-K: a split would not shorten"));
  }
  // 64 tiles of 128x64 leave half the SMs idle: split.
  EXPECT_GT(ChooseConfig(Problem(128, 4096, 16384)).split_k, 1);
  EXPECT_GT(ChooseConfig(Problem(128, 1024, 65536)).split_k, 1);
  // 512x1024x32768 has 341 flops per byte: the model decides.
  EXPECT_EQ(ChooseConfig(Problem(512, 1024, 32768)).split_k, 4);
}

TEST(DescribeConfig, NamesEverySetting) {
  MatmulConfig config;
  EXPECT_EQ(DescribeConfig(config),
            "128x256x64 s4 ws coop wg2 c1x1 r8 epi=auto");
  config.split_k = 3;
  config.circular_buffer = "pipelined";
  config.epilogue = EpilogueMode::kReuseMainloop;
  EXPECT_EQ(DescribeConfig(config),
            "128x256x64 s4 pipe coop wg2 c1x1 r8 epi=reuse splitk=3/serial");
}

TEST(ParseConfig, RoundTrips) {
  std::vector<MatmulConfig> configs(4);
  configs[1].tile_m = 64;
  configs[1].tile_n = 128;
  configs[1].consumer_warpgroups = 1;
  configs[1].stages = 7;
  configs[1].circular_buffer = "pipelined";
  configs[1].raster_group = 3;
  configs[2].split_k = 16;
  configs[2].split_k_mode = SplitKMode::kTmaSerial;
  configs[2].split_k_skew = 3;
  configs[2].epilogue = EpilogueMode::kReuseMainloop;
  configs[3].pingpong = true;
  configs[3].tile_n = 128;
  configs[3].cluster_m = 2;
  configs[3].epilogue = EpilogueMode::kDedicated;
  for (const MatmulConfig& config : configs) {
    const std::string text = DescribeConfig(config);
    absl::StatusOr<MatmulConfig> parsed = ParseConfig(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    EXPECT_EQ(DescribeConfig(*parsed), text);
  }
  // Settings in any order; those not given keep their defaults.
  absl::StatusOr<MatmulConfig> short_form = ParseConfig("epi=reuse 128x128x64");
  ASSERT_TRUE(short_form.ok()) << short_form.status();
  EXPECT_EQ(DescribeConfig(*short_form),
            "128x128x64 s4 ws coop wg2 c1x1 r8 epi=reuse");
}

TEST(ParseConfig, RejectsMalformedText) {
  for (const char* text :
       {"", "s4 ws", "128x256 s4", "128x256x64 s4 s5", "128x256x64 sx",
        "128x256x64 epi=shared", "128x256x64 splitk=4", "128x256x64 bogus",
        "128x256x64 splitk=4/atomic", "128x256x64 c2",
        "128x256x64 splitk=4/serial skew=x"}) {
    EXPECT_FALSE(ParseConfig(text).ok()) << "'" << text << "'";
  }
}

TEST(ParseHelpers, NamesRoundTrip) {
  for (ElementType type :
       {ElementType::kBF16, ElementType::kF16, ElementType::kF32}) {
    EXPECT_EQ(*ParseElementType(ElementTypeName(type)), type);
  }
  EXPECT_EQ(*ParseOperandMajor("m", 'a'), OperandMajor::kMN);
  EXPECT_EQ(*ParseOperandMajor("n", 'b'), OperandMajor::kMN);
  EXPECT_FALSE(ParseOperandMajor("n", 'a').ok());
  EXPECT_FALSE(ParseOperandMajor("t", 'b').ok());
  EXPECT_FALSE(ParseElementType("fp8").ok());
}

TEST(ReferenceCheck, FollowsTheLayoutsAndScalesWithK) {
  EXPECT_EQ(ReferenceCheck(Problem(8, 8, 4096)),
            "c ~= bf16(a @ b.T) rtol=0.01 atol=0.064");
  EXPECT_EQ(ReferenceCheck(Problem(8, 8, 16, OperandMajor::kMN,
                                   OperandMajor::kMN, ElementType::kF32)),
            "c ~= a.T @ b rtol=0.001 atol=0.004");
}

// The directive lowers a TMA split-K mode's splitk before the default
// pipeline; without a split the mode does not matter.
TEST(LoweringPipeline, NamesTheSplitKMode) {
  MatmulConfig config;
  EXPECT_EQ(LoweringPipeline(config), "default");
  config.split_k_mode = SplitKMode::kTmaAtomic;
  EXPECT_EQ(LoweringPipeline(config), "default");
  config.split_k = 4;
  EXPECT_EQ(LoweringPipeline(config),
            "serialize-split-k{mode=tma-atomic},default");
  config.split_k_mode = SplitKMode::kTmaSerial;
  EXPECT_EQ(LoweringPipeline(config),
            "serialize-split-k{mode=tma-serial},default");
  config.split_k_mode = SplitKMode::kSerial;
  EXPECT_EQ(LoweringPipeline(config), "default");
  // Split-K kernels reset their workspaces themselves: zeroed once.
  EXPECT_THAT(RunDirective(Problem(8, 8, 512), config),
              HasSubstr("// run: workspace=once pipeline='default' @matmul "
                        "M=8 N=8 K=512"));
  config.split_k = 1;
  EXPECT_THAT(RunDirective(Problem(8, 8, 512), config),
              HasSubstr("// run: pipeline='default' @matmul M=8 N=8 K=512"));
}

struct Variant {
  std::string name;
  MatmulProblem problem;
  MatmulConfig config;
};

std::vector<Variant> Variants() {
  std::vector<Variant> variants;
  // Both operands of the other major than the default, f32 output,
  // pipelined (testdata/kir-gen/ has every combination as goldens).
  Variant mn;
  mn.problem = Problem(200, 136, 520, OperandMajor::kMN, OperandMajor::kMN,
                       ElementType::kF32);
  mn.config.tile_n = 128;
  mn.config.epilogue = EpilogueMode::kDedicated;
  mn.config.circular_buffer = "pipelined";
  mn.config.stages = MaxStages(mn.problem, mn.config);
  mn.name = "mn_f32_pipelined";
  variants.push_back(mn);
  Variant heuristic;
  heuristic.problem = Problem(4096, 4096, 4096);
  heuristic.config = ChooseConfig(heuristic.problem);
  heuristic.name = "heuristic_4096";
  variants.push_back(heuristic);
  Variant split;
  split.name = "split_k";
  split.problem = Problem(256, 512, 4096);
  split.config.split_k = 5;
  split.config.epilogue = EpilogueMode::kAuto;
  variants.push_back(split);
  // The TMA modes: tma-atomic's epilogue (stmatrix, TMA store) runs under
  // its vote, which the verifier must see as uniform (V33).
  for (SplitKMode mode : {SplitKMode::kTmaSerial, SplitKMode::kTmaAtomic}) {
    Variant tma = split;
    tma.config.split_k_mode = mode;
    tma.name = mode == SplitKMode::kTmaSerial ? "split_k_tma_serial"
                                              : "split_k_tma_atomic";
    variants.push_back(tma);
  }
  Variant reuse;
  reuse.name = "reuse_f16_64x64";
  reuse.problem = Problem(77, 40, 24, OperandMajor::kK, OperandMajor::kK,
                          ElementType::kF16);
  reuse.problem.dtype = ElementType::kF16;
  reuse.config.tile_m = 64;
  reuse.config.tile_n = 64;
  reuse.config.consumer_warpgroups = 1;
  reuse.config.epilogue = EpilogueMode::kReuseMainloop;
  reuse.config.stages = 2;
  variants.push_back(reuse);
  // Ping-pong: 128x128 tiles (two row blocks) with N-major B and f32
  // output, and 64x256 tiles with M-major A.
  Variant pingpong;
  pingpong.name = "pingpong_128x128_kn_f32";
  pingpong.problem = Problem(200, 136, 520, OperandMajor::kK, OperandMajor::kMN,
                             ElementType::kF32);
  pingpong.config = PingPong();
  variants.push_back(pingpong);
  Variant wide;
  wide.name = "pingpong_64x256_mk";
  wide.problem = Problem(1000, 1000, 1000, OperandMajor::kMN);
  wide.config = PingPong();
  wide.config.tile_m = 64;
  wide.config.tile_n = 256;
  wide.config.stages = 4;
  variants.push_back(wide);
  Variant cluster_b;
  cluster_b.name = "cluster_2x1_shares_b";
  cluster_b.problem = Problem(300, 200, 520);
  cluster_b.config.tile_n = 128;
  cluster_b.config.cluster_m = 2;
  cluster_b.config.epilogue = EpilogueMode::kDedicated;
  variants.push_back(cluster_b);
  Variant cluster_a;
  cluster_a.name = "cluster_1x2_shares_a_mn_major";
  cluster_a.problem =
      Problem(256, 200, 136, OperandMajor::kMN, OperandMajor::kMN);
  cluster_a.config.tile_n = 64;
  cluster_a.config.cluster_n = 2;
  cluster_a.config.epilogue = EpilogueMode::kReuseMainloop;
  variants.push_back(cluster_a);
  return variants;
}

// Each variant verifies, lowers through its directive's pipeline (the
// default one, after serialize-split-k in a TMA mode), passes the
// sync and proxy-fence checkers and is accepted by the CUDA emitter (the
// lit goldens compile a subset to cubins with NVRTC).
TEST(GenerateMatmul, LowersAndPassesTheCheckers) {
  for (const Variant& variant : Variants()) {
    SCOPED_TRACE(variant.name);
    absl::StatusOr<std::string> text =
        GenerateMatmul(variant.problem, variant.config);
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_THAT(*text,
                HasSubstr(RunDirective(variant.problem, variant.config)));
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(*text);
    ASSERT_TRUE(module.ok()) << module.status() << "\n" << *text;
    absl::StatusOr<Pipeline> pipeline =
        ParsePipeline(LoweringPipeline(variant.config));
    ASSERT_TRUE(pipeline.ok());
    PipelineRunOptions options;
    options.write_reproducer = false;
    std::ostringstream log;
    ASSERT_TRUE(RunPipeline(**module, *pipeline, options, log).ok())
        << log.str();
    const Kernel& kernel = *(*module)->kernels.front();
    EXPECT_TRUE(CheckSyncs(kernel).ok()) << CheckSyncs(kernel);
    EXPECT_TRUE(CheckProxyFences(kernel, FencePlacement::kWriters).ok())
        << CheckProxyFences(kernel, FencePlacement::kWriters);
    absl::StatusOr<std::string> cuda = EmitCuda(**module);
    EXPECT_TRUE(cuda.ok()) << cuda.status();
  }
}

// The heuristic's kernel with M-major A and N-major B, parsed and run
// through `pipeline`.
std::unique_ptr<Module> LoweredMnMajor(const std::string& pipeline) {
  const MatmulProblem problem =
      Problem(4096, 4096, 4096, OperandMajor::kMN, OperandMajor::kMN);
  absl::StatusOr<std::string> text =
      GenerateMatmul(problem, ChooseConfig(problem));
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return nullptr;
  std::unique_ptr<Module> module = ParseForTest(*text);
  if (module == nullptr) return nullptr;
  const absl::Status lowered = RunPasses(*module, pipeline);
  EXPECT_TRUE(lowered.ok()) << lowered;
  return module;
}

// kir-gen --pingpong: two consumer roles, each with the named barriers of
// its own output buffer inside its tile loop, and shared memory reused
// across allocations (plan-shared-memory looks for their pairs). The
// ordering dataflow's work for the default pipeline stays about where it
// is (measured: 0.65 million; 12.1 million when every loop round and every
// walk again took every access and insert-syncs and insert-proxy-fences
// walked once more per inserted barrier or fence to record what it
// orders).
TEST(GenerateMatmul, PingpongOrderingWorkIsBounded) {
  absl::StatusOr<MatmulConfig> config =
      ParseConfig("128x128x64 s5 ws pingpong wg2 c1x1 r8 epi=auto");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::string> text =
      GenerateMatmul(Problem(4096, 4096, 4096), *config);
  ASSERT_TRUE(text.ok()) << text.status();
  std::unique_ptr<Module> module = ParseForTest(*text);
  ASSERT_NE(module, nullptr);
  const int64_t before = OrderingDataflowWork();
  const absl::Status lowered = RunPasses(*module, "default");
  EXPECT_TRUE(lowered.ok()) << lowered;
  const int64_t work = OrderingDataflowWork() - before;
  EXPECT_GT(work, 0);
  EXPECT_LT(work, 1'300'000) << "ordering dataflow work " << work;
}

// Its consumer role holds the tile loop, inside which insert-syncs places
// the named barriers of the output sub-tile ring, and insert-proxy-fences
// a fence: each placement walks the role again. The ordering dataflow's
// work for the default pipeline (without --stats) stays about where it is
// (measured: 0.46 million; 5.7 million when every loop round and every
// walk again took every access, and insert-syncs and insert-proxy-fences
// walked once more per inserted barrier or fence to record what it
// orders): a walk per candidate position, or loop rounds that walk every
// access again, go past the bound.
TEST(GenerateMatmul, MnMajorOrderingWorkIsBounded) {
  const int64_t before = OrderingDataflowWork();
  ASSERT_NE(LoweredMnMajor("default"), nullptr);
  const int64_t work = OrderingDataflowWork() - before;
  EXPECT_GT(work, 0);
  EXPECT_LT(work, 1'000'000) << "ordering dataflow work " << work;
}

// IncrementalOrdering on it, up to insert-syncs, with barriers and fences
// placed and taken out at random (inside the role's loops too): every
// answer equals a walk from scratch.
TEST(GenerateMatmul, MnMajorIncrementalOrderingMatchesWalksFromScratch) {
  for (const std::optional<FencePlacement> proxy :
       {std::optional<FencePlacement>(),
        std::optional(FencePlacement::kWriters)}) {
    std::unique_ptr<Module> module = LoweredMnMajor(
        "canonicalize,serialize-split-k,circular-buffer,uniform-predicates,"
        "insert-async-waits,plan-shared-memory");
    ASSERT_NE(module, nullptr);
    ExpectIncrementalMatchesScratch(*module->kernels.front(), 4, proxy, 5);
  }
}

TEST(GenerateMatmul, IsDeterministic) {
  const MatmulProblem problem = Problem(1000, 2000, 3000);
  const MatmulConfig config = ChooseConfig(problem);
  EXPECT_EQ(*GenerateMatmul(problem, config), *GenerateMatmul(problem, config));
}

}  // namespace
}  // namespace kir::gen
