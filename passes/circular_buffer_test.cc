// Unit tests for the circular-buffer pass: every mode, stage count and
// prefetch distance on the examples goes through the rest of the default
// pipeline and satisfies the barrier and fence checkers; statistics;
// option errors; idempotence.
#include "passes/circular_buffer.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/sync_check.h"
#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "ir/sanitizers.h"
#include "parser/parser.h"
#include "passes/pipeline.h"
#include "passes/test_helpers.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

constexpr char kRest[] =
    "uniform-predicates,insert-async-waits,insert-syncs,insert-proxy-fences,"
    "dce";

struct Variant {
  const char* mode;
  int stages;
  int prefetch;  // pipelined only
};

struct Example {
  const char* file;
  int block_threads;  // before the pass
  std::vector<Variant> variants;
};

// Every stage count 1..5 and prefetch distance for the row sums.
std::vector<Variant> AllVariants() {
  std::vector<Variant> variants;
  for (int stages = 1; stages <= 5; ++stages) {
    for (int prefetch = 0; prefetch < stages; ++prefetch) {
      variants.push_back({"pipelined", stages, prefetch});
    }
    variants.push_back({"warp-specialized", stages, 0});
  }
  return variants;
}

// A few for the GEMM, whose sync analysis takes seconds (one per mode
// under the sanitizers, where it takes ten times longer).
std::vector<Variant> GemmVariants() {
  if (kSanitizedBuild) return {{"pipelined", 3, 1}, {"warp-specialized", 5, 0}};
  return {{"pipelined", 1, 0},
          {"pipelined", 3, 1},
          {"warp-specialized", 1, 0},
          {"warp-specialized", 5, 0}};
}

class SweepTest : public ::testing::TestWithParam<Example> {};

// Every variant lowers to a kernel in which every shared-memory pair is
// ordered and every generic->async edge fenced, as the checkers define it;
// warp_specialized grows the block by a warpgroup, pipelined does not.
TEST_P(SweepTest, EveryModeStageAndPrefetchPassesTheCheckers) {
  const std::string text = ReadTestdata(GetParam().file);
  ASSERT_FALSE(text.empty()) << GetParam().file;
  for (const Variant& variant : GetParam().variants) {
    const bool pipelined = std::string(variant.mode) == "pipelined";
    const std::string options =
        pipelined
            ? absl::StrCat("mode=pipelined,stages=", variant.stages,
                           ",prefetch=", variant.prefetch)
            : absl::StrCat("mode=warp-specialized,stages=", variant.stages);
    SCOPED_TRACE(absl::StrCat(GetParam().file, " ", options));
    std::unique_ptr<Module> module = ParseForTest(text);
    ASSERT_NE(module, nullptr);
    ASSERT_TRUE(RunPasses(*module, absl::StrCat("canonicalize,circular-buffer{",
                                                options, "},", kRest))
                    .ok());
    for (const auto& kernel : module->kernels) {
      EXPECT_TRUE(CheckSyncs(*kernel).ok()) << CheckSyncs(*kernel);
      EXPECT_TRUE(CheckProxyFences(*kernel, FencePlacement::kWriters).ok())
          << CheckProxyFences(*kernel, FencePlacement::kWriters);
      EXPECT_EQ(kernel->block.StaticVolume(),
                GetParam().block_threads + (pipelined ? 0 : 128));
      const std::string printed = PrintKernel(*kernel);
      EXPECT_EQ(printed.find("circular_buffer"), std::string::npos);
      EXPECT_NE(printed.find(absl::StrCat("mbarrier[", variant.stages, "]")),
                std::string::npos)
          << printed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, SweepTest,
    ::testing::Values(Example{"passes/circular-buffer/rowsum.kir", 128,
                              AllVariants()},
                      Example{"examples/ws_gemm.kir", 256, GemmVariants()}));

// Lowers `text` with circular-buffer{options} and the rest of the default
// pipeline, verifies it and (outside the sanitized build, where the sync
// analysis of a two-role GEMM takes minutes and the pass runs alone) checks
// it with the barrier and fence checkers; returns the printed kernel, or
// "" after a failure.
std::string LowerAndCheck(const std::string& text, const std::string& options) {
  std::unique_ptr<Module> module = ParseForTest(text);
  if (module == nullptr) {
    ADD_FAILURE() << "parse failed";
    return "";
  }
  const absl::Status lowered =
      RunPasses(*module, absl::StrCat("canonicalize,circular-buffer{", options,
                                      "},", kSanitizedBuild ? "dce" : kRest));
  if (!lowered.ok()) {
    ADD_FAILURE() << lowered;
    return "";
  }
  const Kernel& kernel = *module->kernels[0];
  EXPECT_TRUE(Verify(*module).ok()) << Verify(*module);
  if (!kSanitizedBuild) {
    EXPECT_TRUE(CheckSyncs(kernel).ok()) << CheckSyncs(kernel);
    EXPECT_TRUE(CheckProxyFences(kernel, FencePlacement::kWriters).ok())
        << CheckProxyFences(kernel, FencePlacement::kWriters);
  }
  return PrintKernel(kernel);
}

// Ping-pong makes a producer and two consumer warpgroups of the example's
// one; a single stage and the merged producer loop pass the checkers (the
// sync analysis of the two-role GEMM takes about 20 s a variant; lit checks
// the other variants).
TEST(CircularBufferTest, PingPongPassesTheCheckers) {
  const std::string text = ReadTestdata("examples/pingpong_gemm.kir");
  ASSERT_FALSE(text.empty());
  for (const std::string options :
       {"stages=1", "stages=4,producer-loop=merged"}) {
    SCOPED_TRACE(options);
    const std::string printed = LowerAndCheck(text, options);
    EXPECT_NE(printed.find("block(384)"), std::string::npos);
    EXPECT_NE(printed.find("role @consumer0 warps[4, 8)"), std::string::npos);
    EXPECT_NE(printed.find("role @consumer1 warps[8, 12)"), std::string::npos);
    EXPECT_NE(printed.find("mbarrier.arrive %order[%c1]"), std::string::npos);
    EXPECT_NE(printed.find("mbarrier.arrive %order[%c0]"), std::string::npos);
    EXPECT_EQ(printed.find("pingpong}"), std::string::npos);  // the marker
  }
}

// Ping-pong gives the second consumer group its own copy of each shared
// buffer the tile loop uses besides the stages, and counts the copy when it
// checks that the stages fit: 2 stages of 64 KiB and a 56 KiB epilogue
// buffer fit once (184 KiB), not twice (240 KiB).
TEST(CircularBufferTest, PingPongCopiesTheGroupsSharedBuffers) {
  const std::string text =
      ReadTestdata("passes/circular-buffer/pingpong_private.kir");
  ASSERT_FALSE(text.empty());
  std::unique_ptr<Module> module = ParseForTest(text);
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(RunPasses(*module, "circular-buffer").ok());
  EXPECT_TRUE(Verify(*module).ok()) << Verify(*module);
  const std::string printed = PrintKernel(*module->kernels[0]);
  const size_t second = printed.find("role @consumer1");
  ASSERT_NE(second, std::string::npos);
  EXPECT_NE(printed.find("%g1_out = alloc.shared"), std::string::npos);
  EXPECT_NE(printed.find("store %g1_out[", second), std::string::npos);
  EXPECT_EQ(printed.find("%out[", second), std::string::npos);

  constexpr char kTooLarge[] = R"(
kernel @k sizes(%n) (%x: global f32[%n, 64], %y: global f32[%n, 128],
    %x_map: tensormap f32[256, 64] of %x) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %buf = alloc.shared {align = 128} : shared f32[256, 64]
  %out = alloc.shared {align = 16} : shared f32[128, 112]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  for %t = %c0 to %n step %c1 {
    for %i = %c0 to %c1 step %c1 {circular_buffer = warp_specialized, stages = 2, pingpong} {
      if %is_t0 {
        tma.load %buf[%c0, %c0], %x_map[%t, %c0], %bar[%c0]
      }
    }
    %v = const 1.0 : f32
    store %out[%tid, %c0], %v
    %w = load %out[%tid, %c0] : f32
    store %y[%t, %tid], %w
  }
}
)";
  std::unique_ptr<Module> large = ParseForTest(kTooLarge);
  ASSERT_NE(large, nullptr);
  absl::Status status = RunPasses(*large, "circular-buffer");
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("a block can use"),
            std::string::npos)
      << status;
  ASSERT_TRUE(RunPasses(*large, "circular-buffer{pingpong=false}").ok());
}

constexpr char kLoop[] = R"(
kernel @k sizes(%n) (%x: global f32[%n, 32], %y: global f32[%n, 128],
    %x_map: tensormap f32[128, 32] of %x) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c128 = const 128 : index
  %buf = alloc.shared {align = 128} : shared f32[128, 32]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  for %i = %c0 to %n step %c1 {circular_buffer = pipelined, stages = 3} {
    %row = mul %i, %c128 : index
    if %is_t0 {
      tma.load %buf[%c0, %c0], %x_map[%row, %c0], %bar[%c0]
    }
    %v = load %buf[%tid, %c0] : f32
    store %y[%i, %tid], %v
  }
}
)";

TEST(CircularBufferTest, CountsWhatItDid) {
  std::unique_ptr<Module> module = ParseForTest(kLoop);
  ASSERT_NE(module, nullptr);
  PassStatistics stats;
  PassContext context{stats};
  ASSERT_TRUE(CircularBuffer(*module->kernels[0],
                             PassOptions({}, "circular-buffer"), context)
                  .ok());
  EXPECT_EQ(stats.counters().at("loops-pipelined"), 1);
  EXPECT_EQ(stats.counters().at("loops-warp-specialized"), 0);
  EXPECT_EQ(stats.counters().at("loops-pingpong"), 0);
  EXPECT_EQ(stats.counters().at("buffers-staged"), 1);
  EXPECT_EQ(stats.counters().at("loads-pipelined"), 2);  // prologue, refill
  EXPECT_TRUE(Verify(*module).ok()) << Verify(*module);
}

TEST(CircularBufferTest, SecondRunChangesNothing) {
  for (const char* options : {"", "{mode=warp-specialized}"}) {
    std::unique_ptr<Module> module = ParseForTest(kLoop);
    ASSERT_NE(module, nullptr);
    ASSERT_TRUE(
        RunPasses(*module, absl::StrCat("circular-buffer", options)).ok());
    const std::string once = PrintModule(*module);
    ASSERT_TRUE(
        RunPasses(*module, absl::StrCat("circular-buffer", options)).ok());
    EXPECT_EQ(PrintModule(*module), once) << options;
  }
}

// A loop over row blocks of 128 whose second operand, the same 128x32
// box of %w in every CTA, is shared by a cluster of 2.
constexpr char kMulticastLoop[] = R"(
kernel @k sizes(%n) (%x: global f32[%n, 32], %w: global f32[128, 32],
    %y: global f32[%n, 128],
    %x_map: tensormap f32[128, 32] of %x, %w_map: tensormap f32[128, 32] of %w)
    grid(8) block(128) cluster(2) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c128 = const 128 : index
  %sx = alloc.shared {align = 128} : shared f32[128, 32]
  %sw = alloc.shared {align = 128} : shared f32[128, 32]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  for %i = %c0 to %n step %c1 {circular_buffer = warp_specialized, stages = 3} {
    %row = mul %i, %c128 : index
    if %is_t0 {
      tma.load %sx[%c0, %c0], %x_map[%row, %c0], %bar[%c0]
      tma.load %sw[%c0, %c0], %w_map[%c0, %c0], %bar[%c0] {cluster_shared}
    }
    %v = load %sx[%tid, %c0] : f32
    %u = load %sw[%tid, %c0] : f32
    %p = mul %v, %u : f32
    store %y[%i, %tid], %p
  }
}
)";

// One of the two loads is multicast, through one slice map of half the
// box; the rest of the pipeline yields a kernel the checkers accept, and a
// second run of the pass changes nothing.
TEST(CircularBufferTest, MulticastsTheSharedLoad) {
  std::unique_ptr<Module> module = ParseForTest(kMulticastLoop);
  ASSERT_NE(module, nullptr);
  Kernel& kernel = *module->kernels[0];
  PassStatistics stats;
  PassContext context{stats};
  ASSERT_TRUE(
      CircularBuffer(kernel, PassOptions({}, "circular-buffer"), context).ok());
  EXPECT_EQ(stats.counters().at("loads-pipelined"), 2);
  EXPECT_EQ(stats.counters().at("loads-multicast"), 1);
  EXPECT_TRUE(Verify(*module).ok()) << Verify(*module);
  ASSERT_EQ(kernel.params().size(), 6u);
  const Param& slice = kernel.params().back();
  EXPECT_EQ(slice.kind, Param::Kind::kTensorMap);
  EXPECT_EQ(slice.value->name(), "w_map_slice");
  EXPECT_EQ(slice.value->type().box(), (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(slice.tensor, kernel.params()[1].value);
  const std::string once = PrintModule(*module);
  EXPECT_NE(once.find("{multicast = 3}"), std::string::npos) << once;
  EXPECT_NE(once.find("mbarrier.init %empty[%s] {count = 256}"),
            std::string::npos)
      << once;
  EXPECT_EQ(once.find("cluster_shared"), std::string::npos) << once;
  ASSERT_TRUE(RunPasses(*module, "circular-buffer").ok());
  EXPECT_EQ(PrintModule(*module), once);
  ASSERT_TRUE(RunPasses(*module, kRest).ok());
  EXPECT_TRUE(CheckSyncs(kernel).ok()) << CheckSyncs(kernel);
  EXPECT_TRUE(CheckProxyFences(kernel, FencePlacement::kWriters).ok())
      << CheckProxyFences(kernel, FencePlacement::kWriters);
}

// The multicast GEMM example in both producer forms and 1 and 5 stages
// passes the checkers; since only wgmma reads its stages, threads 0 and 1
// of each of its two consumer warpgroups release a stage, in their own CTA
// and the peer, and `empty` counts those 2 x 2 arrivals.
TEST(CircularBufferTest, MulticastGemmPassesTheCheckers) {
  const std::string text = ReadTestdata("examples/multicast_gemm.kir");
  ASSERT_FALSE(text.empty());
  for (const std::string options : {"stages=1", "stages=5,producer=warp"}) {
    SCOPED_TRACE(options);
    const std::string printed = LowerAndCheck(text, options);
    int releases = 0;
    for (size_t at = printed.find("mbarrier.arrive_remote %empty[");
         at != std::string::npos;
         at = printed.find("mbarrier.arrive_remote %empty[", at + 1)) {
      ++releases;
    }
    EXPECT_EQ(releases, 1) << printed;  // the peer's; its own is local
    EXPECT_NE(printed.find("mbarrier.init %empty[%s] {count = 4}"),
              std::string::npos)
        << printed;
    EXPECT_NE(printed.find("%cb_signals = cmp lt %cb_wg_thread, %c2 : i1"),
              std::string::npos)
        << printed;
  }
}

TEST(CircularBufferTest, RejectsBadOptions) {
  for (const auto& [options, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"mode=fast",
            "option 'mode' expects marker, pipelined or "
            "warp-specialized, got 'fast'"},
           {"stages=17", "option 'stages' expects an integer from 0 to 16"},
           {"producer=team",
            "option 'producer' expects marker, warpgroup "
            "or warp"},
           {"producer-loop=flat",
            "option 'producer-loop' expects nested or "
            "merged"},
           {"pingpong=yes",
            "option 'pingpong' expects marker, true or false"}}) {
    std::unique_ptr<Module> module = ParseForTest(kLoop);
    ASSERT_NE(module, nullptr);
    absl::Status status =
        RunPasses(*module, absl::StrCat("circular-buffer{", options, "}"));
    EXPECT_FALSE(status.ok()) << options;
    EXPECT_NE(std::string(status.message()).find(message), std::string::npos)
        << status;
  }
  // Ping-pong asked of a pipelined loop is an error at the loop.
  {
    std::unique_ptr<Module> module = ParseForTest(kLoop);
    ASSERT_NE(module, nullptr);
    absl::Status status = RunPasses(*module, "circular-buffer{pingpong=true}");
    EXPECT_NE(std::string(status.message())
                  .find("pingpong needs warp_specialized mode"),
              std::string::npos)
        << status;
  }
  // A prefetch the stages cannot hold is an error at the loop.
  std::unique_ptr<Module> module = ParseForTest(kLoop);
  ASSERT_NE(module, nullptr);
  absl::Status status = RunPasses(*module, "circular-buffer{prefetch=3}");
  EXPECT_NE(std::string(status.message())
                .find("prefetch must be in 0..2 (less than stages), got 3"),
            std::string::npos)
      << status;
}

}  // namespace
}  // namespace kir
