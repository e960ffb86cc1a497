// Unit tests for the uniform-predicates pass: the cases kir-opt cannot reach
// because the verifier rejects their input (a single-issue op run by a whole
// warp or role, guards that differ within a warp), and the cases the pass
// leaves as written.
#include "passes/uniform_predicates.h"

#include <memory>
#include <string>

#include "analysis/thread_analysis.h"
#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "parser/parser.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

struct Result {
  absl::Status status;
  std::string printed;
  PassStatistics stats;
};

// Parses `text` without verifying it, runs the pass and returns the status
// and the printed module.
Result RunPass(absl::string_view text, absl::string_view mode = "shfl") {
  Result result;
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return result;
  PassContext context{result.stats};
  PassOptions options({{"mode", std::string(mode)}}, "uniform-predicates");
  for (auto& kernel : (*module)->kernels) {
    result.status = UniformPredicates(*kernel, options, context);
    if (!result.status.ok()) return result;
  }
  result.printed = PrintModule(**module);
  return result;
}

absl::Status VerifyText(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(text);
  if (!module.ok()) return module.status();
  return Verify(**module);
}

// Whether every single-issue op of the printed module is proven to run in
// one thread, by the thread analysis the verifier uses.
bool AllSingleThread(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(text);
  if (!module.ok()) return false;
  bool all = true;
  for (const auto& kernel : (*module)->kernels) {
    ThreadAnalysis analysis(*kernel);
    Walk(static_cast<const Region&>(kernel->body()), [&](const Op& op) {
      if (op.kind() == OpKind::kTmaReduce || op.kind() == OpKind::kTmaLoad ||
          op.kind() == OpKind::kBulkCommit || op.kind() == OpKind::kBulkWait) {
        all = all && analysis.IsSingleThread(op);
      }
    });
  }
  return all;
}

// A whole warp issuing a reduce with identical operands reduces 32 times;
// the pass issues it once, from warp 0's elected lane, with its commit and
// wait.
constexpr char kReduceByWarp[] = R"(
kernel @reduce_by_warp(%ws: global f32[64, 64], %map: tensormap f32[64, 64] of %ws) block(128) {
  %c0 = const 0 : index
  %c32 = const 32 : index
  %tid = thread.id x : index
  %part = alloc.shared {align = 128} : shared f32[64, 64]
  %warp0 = cmp lt %tid, %c32 : i1
  if %warp0 {
    tma.reduce add %map[%c0, %c0], %part[%c0, %c0]
    %t = bulk.commit : token<bulk>
    bulk.wait %t
  }
}
)";

TEST(UniformPredicatesTest, WholeWarpReduceBecomesSingleIssue) {
  ASSERT_FALSE(VerifyText(kReduceByWarp).ok());  // V35 rejects the input
  Result result = RunPass(kReduceByWarp);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_TRUE(VerifyText(result.printed).ok())
      << VerifyText(result.printed) << result.printed;
  EXPECT_TRUE(AllSingleThread(result.printed)) << result.printed;
  EXPECT_NE(result.printed.find("if %is_warp0 {\n    %elected = elect.sync "
                                ": i1\n    if %elected {predicated} {\n"
                                "      tma.reduce"),
            std::string::npos)
      << result.printed;
  EXPECT_EQ(result.printed.find("cmp lt"), std::string::npos);
  EXPECT_EQ(result.stats.Get("issues-wrapped"), 1);
  EXPECT_EQ(result.stats.Get("guards-rewritten"), 1);
}

TEST(UniformPredicatesTest, ModeNoneLeavesTheWholeWarpIssuing) {
  Result result = RunPass(kReduceByWarp, "none");
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_FALSE(AllSingleThread(result.printed));
  EXPECT_EQ(result.printed.find("elect.sync"), std::string::npos);
  EXPECT_FALSE(VerifyText(result.printed).ok());
}

// A role issuing a load with no guard of its own: its first warp (4) and
// its elected lane issue it, never absolute warp 0.
TEST(UniformPredicatesTest, RoleIssuesFromItsOwnFirstWarp) {
  Result result = RunPass(R"(
kernel @role_load(%g: global f32[64, 64], %map: tensormap f32[64, 64] of %g) block(256) {
  %c0 = const 0 : index
  %tile = alloc.shared {align = 128} : shared f32[64, 64]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  role @producer warps[4, 8) {
    mbarrier.arrive_tx %bar[%c0] {bytes = 16384}
    tma.load %tile[%c0, %c0], %map[%c0, %c0], %bar[%c0]
    mbarrier.wait %bar[%c0], %c0
  }
}
)");
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_TRUE(VerifyText(result.printed).ok()) << VerifyText(result.printed);
  EXPECT_NE(result.printed.find("%warp4 = const 4 : i32\n  %is_warp4 = cmp eq "
                                "%warp_uniform, %warp4 : i1"),
            std::string::npos)
      << result.printed;
  // Both single-issue ops move into one election; the per-thread wait stays.
  EXPECT_NE(
      result.printed.find("    if %is_warp4 {\n      %elected = "
                          "elect.sync : i1\n      if %elected {predicated} {\n"
                          "        mbarrier.arrive_tx %bar[%c0] {bytes = "
                          "16384}\n        tma.load"),
      std::string::npos)
      << result.printed;
  EXPECT_NE(result.printed.find("      }\n    }\n    mbarrier.wait"),
            std::string::npos)
      << result.printed;
  EXPECT_EQ(result.stats.Get("issues-wrapped"), 1);
}

// Operands that differ between the issuing threads: issuing once would drop
// copies, so the op is left as written.
TEST(UniformPredicatesTest, VaryingOperandsAreNotMergedIntoOneIssue) {
  Result result = RunPass(R"(
kernel @per_thread_rows(%g: global f32[64, 64], %map: tensormap f32[64, 64] of %g) block(128) {
  %c0 = const 0 : index
  %c32 = const 32 : index
  %tid = thread.id x : index
  %part = alloc.shared {align = 128} : shared f32[64, 64]
  %warp0 = cmp lt %tid, %c32 : i1
  if %warp0 {
    tma.store %map[%tid, %c0], %part[%c0, %c0]
  }
}
)");
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.printed.find("elect.sync"), std::string::npos);
  EXPECT_EQ(result.stats.Get("issues-left"), 1);
}

// Guards that provably differ within a warp: located errors with a note at
// the condition (the verifier reports the same inputs as V33).
TEST(UniformPredicatesTest, GuardDifferingWithinAWarpIsAnError) {
  Result result = RunPass(R"(
kernel @half_warp(%out: global i32[128]) block(128) {
  %c48 = const 48 : index
  %tid = thread.id x : index
  %lane0 = const 0 : i32
  %v = cast %tid : i32
  %low = cmp lt %tid, %c48 : i1
  if %low {
    %s = shfl.sync idx %v, %lane0 : i32
    store %out[%tid], %s
  }
}
)");
  ASSERT_FALSE(result.status.ok());
  const std::string message(result.status.message());
  EXPECT_NE(message.find("9:5: error: shfl.sync is warp-collective: all 32 "
                         "threads of a warp must run it together"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("8:3: note: this condition is not warp-uniform (warp "
                         "1: true in threads 32-47, false in 48-63)"),
            std::string::npos)
      << message;
}

TEST(UniformPredicatesTest, TidLt32InA48WideBlockIsAnError) {
  // block(48, 2): warp 1 is x = 32..47 of row 0 and x = 0..15 of row 1.
  Result result = RunPass(R"(
kernel @wide48(%out: global i32[96]) block(48, 2) {
  %c32 = const 32 : index
  %tid = thread.id x : index
  %lane0 = const 0 : i32
  %v = cast %tid : i32
  %low = cmp lt %tid, %c32 : i1
  if %low {
    %s = shfl.sync idx %v, %lane0 : i32
    store %out[%tid], %s
  }
}
)");
  ASSERT_FALSE(result.status.ok());
  EXPECT_NE(std::string(result.status.message())
                .find("(warp 1: true in threads 48-63, false in 32-47)"),
            std::string::npos)
      << result.status;
}

TEST(UniformPredicatesTest, WarpgroupCollectiveNeedsWarpgroupUniformGuards) {
  Result result = RunPass(R"(
kernel @wg(%out: global i32[256]) block(256) {
  %c64 = const 64 : index
  %tid = thread.id x : index
  %low = cmp lt %tid, %c64 : i1
  if %low {
    wgmma.fence
  }
}
)");
  ASSERT_FALSE(result.status.ok());
  EXPECT_NE(std::string(result.status.message())
                .find("wgmma.fence is warpgroup-collective: all 128 threads"),
            std::string::npos)
      << result.status;
}

// If one bulk-group guard must stay as written, the others stay too, so
// that issue, commit and wait remain in one thread (R6).
TEST(UniformPredicatesTest, BulkGroupsStayTogether) {
  Result result = RunPass(R"(
kernel @split_group(%g: global f32[64, 64], %map: tensormap f32[64, 64] of %g,
                    %x: global i32[128]) block(128) {
  %c0 = const 0 : index
  %tid = thread.id x : index
  %tile = alloc.shared {align = 128} : shared f32[64, 64]
  %is_t0 = cmp eq %tid, %c0 : i1
  if %is_t0 {
    tma.store %map[%c0, %c0], %tile[%c0, %c0]
    %t = bulk.commit : token<bulk>
  }
  %v = load %x[%tid] : i32
  if %is_t0 {
    bulk.wait %t {read}
    store %x[%c0], %v
  }
}
)");
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.printed.find("elect.sync"), std::string::npos)
      << result.printed;
  EXPECT_EQ(result.stats.Get("issues-left"), 3);
  EXPECT_TRUE(VerifyText(result.printed).ok()) << VerifyText(result.printed);
}

// elect.sync needs the whole warp: under `tid < 16` warp 0 is not whole.
TEST(UniformPredicatesTest, HalfWarpSelectionIsLeft) {
  Result result = RunPass(R"(
kernel @half(%sem: global i32[4]) block(64) {
  %c0 = const 0 : index
  %c16 = const 16 : index
  %one = const 1 : i32
  %tid = thread.id x : index
  %low = cmp lt %tid, %c16 : i1
  %is_t0 = cmp eq %tid, %c0 : i1
  if %low {
    if %is_t0 {
      sem.release %sem[%c0], %one
    }
  }
}
)");
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.printed.find("elect.sync"), std::string::npos);
  EXPECT_EQ(result.stats.Get("issues-left"), 1);
}

// A block-uniform early exit: the broadcast goes before it, where every
// thread of the block is still present.
TEST(UniformPredicatesTest, ReturnBeforeFirstUsePutsTheBroadcastFirst) {
  Result result = RunPass(R"(
kernel @early_exit(%sem: global i32[4], %n: index) block(64) {
  %c0 = const 0 : index
  %one = const 1 : i32
  %tid = thread.id x : index
  %bid = block.id x : index
  %out = cmp ge %bid, %n : i1
  if %out {
    return
  }
  %is_t0 = cmp eq %tid, %c0 : i1
  if %is_t0 {
    sem.release %sem[%c0], %one
  }
}
)");
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_NE(result.printed.find("block(64) {\n  %warp_id = warp.id"),
            std::string::npos)
      << result.printed;
}

TEST(UniformPredicatesTest, UnknownBlockShapeIsLeftAlone) {
  const char* text = R"(
kernel @dynamic sizes(%B) (%sem: global i32[4]) block(%B) {
  %c0 = const 0 : index
  %one = const 1 : i32
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  if %is_t0 {
    sem.release %sem[%c0], %one
  }
}
)";
  Result result = RunPass(text);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.printed.find("warp.id"), std::string::npos);
}

// A role of one warp needs no warp predicate: only the election, and no
// broadcast.
TEST(UniformPredicatesTest, OneWarpRoleOnlyElects) {
  Result result = RunPass(R"(
kernel @one_warp_role(%g: global f32[64, 64], %map: tensormap f32[64, 64] of %g) block(128) {
  %c0 = const 0 : index
  %tile = alloc.shared {align = 128} : shared f32[64, 64]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  role @producer warps[3, 4) {
    tma.load %tile[%c0, %c0], %map[%c0, %c0], %bar[%c0]
  }
}
)");
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_TRUE(VerifyText(result.printed).ok()) << VerifyText(result.printed);
  EXPECT_EQ(result.printed.find("shfl.sync"), std::string::npos)
      << result.printed;
  EXPECT_NE(
      result.printed.find("role @producer warps[3, 4) {\n    %elected = "
                          "elect.sync : i1\n    if %elected {predicated} {\n"
                          "      tma.load"),
      std::string::npos)
      << result.printed;
}

// The dead-condition cleanup meets one value twice when two rewritten ifs
// share a guard, or when a dead op uses a value twice; the first visit
// erases its definition. It used to read the freed op on the second visit
// (AddressSanitizer: heap-use-after-free; a Release build passed by luck).
TEST(UniformPredicatesTest, DeadConditionsSharedByTwoIfsAreRemovedOnce) {
  constexpr char kTwoIfsOneGuard[] = R"(
kernel @two_ifs(%g: global f32[64, 64], %map: tensormap f32[64, 64] of %g) block(128) {
  %c0 = const 0 : index
  %tid = thread.id x : index
  %tile = alloc.shared {align = 128} : shared f32[64, 64]
  %is_t0 = cmp eq %tid, %c0 : i1
  if %is_t0 {
    tma.store %map[%c0, %c0], %tile[%c0, %c0]
    %t = bulk.commit : token<bulk>
    bulk.wait %t {read}
  }
  if %is_t0 {
    tma.store %map[%c0, %c0], %tile[%c0, %c0]
    %u = bulk.commit : token<bulk>
    bulk.wait %u {read}
  }
}
)";
  constexpr char kGuardUsedTwice[] = R"(
kernel @twice(%g: global f32[64, 64], %map: tensormap f32[64, 64] of %g) block(128) {
  %c0 = const 0 : index
  %tid = thread.id x : index
  %tile = alloc.shared {align = 128} : shared f32[64, 64]
  %is_t0 = cmp eq %tid, %c0 : i1
  %both = and %is_t0, %is_t0 : i1
  if %both {
    tma.store %map[%c0, %c0], %tile[%c0, %c0]
    %t = bulk.commit : token<bulk>
    bulk.wait %t {read}
  }
}
)";
  for (const char* text : {kTwoIfsOneGuard, kGuardUsedTwice}) {
    ASSERT_TRUE(VerifyText(text).ok()) << VerifyText(text);
    Result result = RunPass(text);
    ASSERT_TRUE(result.status.ok()) << result.status;
    EXPECT_TRUE(VerifyText(result.printed).ok()) << result.printed;
    EXPECT_EQ(result.printed.find("%is_t0"), std::string::npos)
        << result.printed;
    EXPECT_EQ(result.printed.find("thread.id"), std::string::npos)
        << result.printed;
  }
}

TEST(UniformPredicatesTest, RejectsUnknownMode) {
  Result result = RunPass(kReduceByWarp, "vote");
  EXPECT_FALSE(result.status.ok());
  EXPECT_NE(std::string(result.status.message()).find("expects shfl or none"),
            std::string::npos);
}

}  // namespace
}  // namespace kir
