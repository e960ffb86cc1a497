// Unit tests for the insert-async-waits pass.
#include "passes/insert_async_waits.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "analysis/async_groups.h"
#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "parser/parser.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

struct Result {
  std::unique_ptr<Module> module;
  PassStatistics stats;
  absl::Status status;
};

Result RunPass(absl::string_view text,
               PassOptions options = PassOptions({}, "insert-async-waits")) {
  Result result;
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return result;
  EXPECT_TRUE(Verify(**module).ok()) << Verify(**module);
  result.module = *std::move(module);
  PassContext context{result.stats};
  for (auto& kernel : result.module->kernels) {
    absl::Status status = InsertAsyncWaits(*kernel, options, context);
    if (!status.ok()) result.status = status;
  }
  if (result.status.ok()) {
    absl::Status verified = Verify(*result.module);
    EXPECT_TRUE(verified.ok()) << verified << "\n"
                               << PrintModule(*result.module);
  }
  return result;
}

std::vector<const Op*> OpsOfKind(const Module& module, OpKind kind) {
  std::vector<const Op*> ops;
  for (const auto& kernel : module.kernels) {
    Walk(kernel->body(), [&](const Op& op) {
      if (op.kind() == kind) ops.push_back(&op);
    });
  }
  return ops;
}

// A TMA store per iteration from a ring of `stages` buffers, the stage being
// (base + i) rem stages, with every thread writing the stage first.
std::string Ring(int stages, int trips) {
  return absl::StrReplaceAll(
      R"(
kernel @ring(%out: global bf16[64, 4096],
             %map: tensormap bf16[64, 32] of %out) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %cS = const STAGES : index
  %cT = const TRIPS : index
  %c32 = const 32 : index
  %v = const 1.0 : bf16
  %buf = alloc.shared {align = 128} : shared bf16[STAGES, 64, 32]
  %tid = thread.id x : index
  %row = div %tid, %c2 : index
  %base = block.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  for %i = %c0 to %cT step %c1 {
    %it = add %base, %i : index
    %stage = rem %it, %cS : index
    %col = mul %i, %c32 : index
    store %buf[%stage, %row, %c0], %v
    if %is_t0 {
      tma.store %map[%c0, %col], %buf[%stage, %c0, %c0]
    }
  }
}
)",
      {{"STAGES", absl::StrCat(stages)}, {"TRIPS", absl::StrCat(trips)}});
}

// The in-loop bulk wait and the groups it leaves pending.
int LoopWaitPending(const Module& module) {
  for (const Op* wait : OpsOfKind(module, OpKind::kBulkWait)) {
    const Op* guard = wait->parent_op();
    if (guard == nullptr || guard->parent_op() == nullptr ||
        guard->parent_op()->kind() != OpKind::kFor) {
      continue;
    }
    std::optional<int> pending = PendingGroupsAfterWait(*wait);
    EXPECT_TRUE(pending.has_value());
    return pending.value_or(-1);
  }
  return -1;  // no wait in the loop
}

// Replays the lowered loop: iteration j writes stage s(j) while at most
// `pending` of the newest groups (committed in iterations j-1, j-2, ...) may
// still read their stages. Returns whether some write hits a stage a pending
// group reads.
bool RingRaces(int stages, int trips, int pending) {
  for (int base = 0; base < stages; ++base) {
    for (int j = 0; j < trips; ++j) {
      for (int back = 1; back <= pending && j - back >= 0; ++back) {
        if ((base + j) % stages == (base + j - back) % stages) return true;
      }
    }
  }
  return false;
}

TEST(InsertAsyncWaitsTest, RingKeepsAsManyGroupsInFlightAsStagesAllow) {
  for (int stages = 1; stages <= 5; ++stages) {
    SCOPED_TRACE(absl::StrCat(stages, " stages"));
    Result result = RunPass(Ring(stages, 12));
    ASSERT_TRUE(result.status.ok()) << result.status;
    const int pending = LoopWaitPending(*result.module);
    // Safe: no write reaches a stage a pending group still reads...
    EXPECT_FALSE(RingRaces(stages, 12, pending));
    // ...and maximal: one more group in flight would race.
    EXPECT_TRUE(RingRaces(stages, 12, pending + 1));
    EXPECT_EQ(pending, stages - 1);
  }
}

// Stage of the write (i + a) rem S and of the store's source (i + b) rem S:
// every combination for small S, offsets and trip counts, against the
// distance found by enumerating iterations.
std::string ShiftedRing(int stages, int write_offset, int read_offset,
                        int trips) {
  return absl::StrReplaceAll(R"(
kernel @shifted(%out: global bf16[64, 4096],
                %map: tensormap bf16[64, 32] of %out) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %cS = const STAGES : index
  %cT = const TRIPS : index
  %ca = const WOFF : index
  %cb = const ROFF : index
  %c32 = const 32 : index
  %v = const 1.0 : bf16
  %buf = alloc.shared {align = 128} : shared bf16[STAGES, 64, 32]
  %tid = thread.id x : index
  %row = div %tid, %c2 : index
  %is_t0 = cmp eq %tid, %c0 : i1
  for %i = %c0 to %cT step %c1 {
    %wi = add %i, %ca : index
    %ws = rem %wi, %cS : index
    %ri = add %i, %cb : index
    %rs = rem %ri, %cS : index
    %col = mul %i, %c32 : index
    store %buf[%ws, %row, %c0], %v
    if %is_t0 {
      tma.store %map[%c0, %col], %buf[%rs, %c0, %c0]
    }
  }
}
)",
                             {{"STAGES", absl::StrCat(stages)},
                              {"TRIPS", absl::StrCat(trips)},
                              {"WOFF", absl::StrCat(write_offset)},
                              {"ROFF", absl::StrCat(read_offset)}});
}

TEST(InsertAsyncWaitsTest, ReuseDistanceMatchesEnumeration) {
  int cases = 0;
  for (int stages = 1; stages <= 4; ++stages) {
    for (int a = 0; a < stages; ++a) {
      for (int b = 0; b < stages; ++b) {
        for (int trips = 1; trips <= 9; ++trips) {
          SCOPED_TRACE(
              absl::StrCat("S=", stages, " a=", a, " b=", b, " trips=", trips));
          // The first later iteration whose write hits the stage that
          // iteration 0's store reads (the pattern is the same from any j).
          int first_reuse = 0;
          for (int d = 1; d < trips && first_reuse == 0; ++d) {
            if ((d + a) % stages == b % stages) first_reuse = d;
          }
          Result result = RunPass(ShiftedRing(stages, a, b, trips));
          ASSERT_TRUE(result.status.ok()) << result.status;
          const int pending = LoopWaitPending(*result.module);
          if (first_reuse == 0) {
            EXPECT_EQ(pending, -1);  // no wait needed in the loop
          } else {
            EXPECT_EQ(pending, first_reuse - 1);
          }
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 270);
}

TEST(InsertAsyncWaitsTest, MaxPendingCapsGroupsInFlight) {
  for (int cap = 0; cap <= 3; ++cap) {
    SCOPED_TRACE(absl::StrCat("max-pending=", cap));
    Result result =
        RunPass(Ring(4, 12), PassOptions({{"max-pending", absl::StrCat(cap)}},
                                         "insert-async-waits"));
    ASSERT_TRUE(result.status.ok()) << result.status;
    const int pending = LoopWaitPending(*result.module);
    EXPECT_EQ(pending, std::min(cap, 3));
    EXPECT_FALSE(RingRaces(4, 12, pending));
  }
}

TEST(InsertAsyncWaitsTest, LoopShorterThanTheRingNeedsNoLoopWait) {
  // Three trips over four stages never reuse a stage: only the exit waits.
  Result result = RunPass(Ring(4, 3));
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(LoopWaitPending(*result.module), -1);
  EXPECT_EQ(OpsOfKind(*result.module, OpKind::kBulkWait).size(), 1u);
  EXPECT_EQ(result.stats.counters().at("waits-inserted"), 1);
}

TEST(InsertAsyncWaitsTest, CommitsAndWaitsRunInTheIssuingThread) {
  Result result = RunPass(Ring(2, 8));
  ASSERT_TRUE(result.status.ok()) << result.status;
  const std::vector<const Op*> commits =
      OpsOfKind(*result.module, OpKind::kBulkCommit);
  ASSERT_EQ(commits.size(), 1u);
  const std::vector<const Op*> stores =
      OpsOfKind(*result.module, OpKind::kTmaStore);
  ASSERT_EQ(stores.size(), 1u);
  EXPECT_EQ(commits[0]->parent_region(), stores[0]->parent_region());
  // Each wait sits directly in an `if` on the store's condition.
  const Value* condition = stores[0]->parent_op()->operand_value(0);
  for (const Op* wait : OpsOfKind(*result.module, OpKind::kBulkWait)) {
    ASSERT_EQ(wait->parent_op()->kind(), OpKind::kIf);
    EXPECT_EQ(wait->parent_op()->operand_value(0), condition);
    EXPECT_TRUE(wait->GetFlag("read"));
  }
}

TEST(InsertAsyncWaitsTest, SecondRunChangesNothing) {
  for (const std::string& text : {Ring(1, 8), Ring(2, 8), Ring(3, 5)}) {
    Result once = RunPass(text);
    ASSERT_TRUE(once.status.ok()) << once.status;
    const std::string first = PrintModule(*once.module);
    Result twice = RunPass(first);
    ASSERT_TRUE(twice.status.ok()) << twice.status;
    EXPECT_EQ(PrintModule(*twice.module), first);
    for (const auto& [counter, value] : twice.stats.counters()) {
      EXPECT_EQ(value, 0) << counter;
    }
  }
}

constexpr char kFenceKernel[] = R"(
kernel @fences(%p: i1, %out: global f32[128]) block(128) {
  %c0 = const 0 : index
  %zero = const 0.0 : f32
  %sa = alloc.shared {align = 1024, swizzle = 128} : shared bf16[64, 64]
  %sb = alloc.shared {align = 1024, swizzle = 128} : shared bf16[128, 64]
  %acc = alloc.reg : reg f32[64]
  %other = alloc.reg : reg f32[4]
  %tid = thread.id x : index
  wgmma %acc[%c0], %sa[%c0, %c0], %sb[%c0, %c0] {n = 128}
  if %p {
    store %REG[%c0], %zero
  }
  wgmma %acc[%c0], %sa[%c0, %c0], %sb[%c0, %c0] {n = 128}
  %v = load %acc[%c0] : f32
  store %out[%tid], %v
}
)";

TEST(InsertAsyncWaitsTest, FenceFollowsWritesOfTheWgmmaRegistersOnAnyPath) {
  // A write of the accumulator on one branch: a second fence after the
  // branch (and the first chain waited for before the write).
  Result touched =
      RunPass(absl::StrReplaceAll(kFenceKernel, {{"%REG", "%acc"}}));
  ASSERT_TRUE(touched.status.ok()) << touched.status;
  EXPECT_EQ(OpsOfKind(*touched.module, OpKind::kWgmmaFence).size(), 2u);
  EXPECT_EQ(OpsOfKind(*touched.module, OpKind::kWgmmaCommit).size(), 2u);
  EXPECT_EQ(touched.stats.counters().at("fences-inserted"), 2);
  // Other registers do not count: one fence, one commit for both wgmmas.
  Result untouched =
      RunPass(absl::StrReplaceAll(kFenceKernel, {{"%REG", "%other"}}));
  ASSERT_TRUE(untouched.status.ok()) << untouched.status;
  EXPECT_EQ(OpsOfKind(*untouched.module, OpKind::kWgmmaFence).size(), 1u);
  EXPECT_EQ(untouched.stats.counters().at("fences-inserted"), 1);
}

TEST(InsertAsyncWaitsTest, RejectsCapsOutsideItsDeclaredRange) {
  for (const char* cap : {"-3", "2147483648", "4294967296"}) {
    Result result = RunPass(
        Ring(2, 8), PassOptions({{"max-pending", cap}}, "insert-async-waits"));
    EXPECT_FALSE(result.status.ok()) << cap;
  }
}

// The cap is a count of groups: the largest one keeps what reuse allows
// (it once wrapped around in an int, 4294967296 acting as 0).
TEST(InsertAsyncWaitsTest, LargestCapKeepsWhatReuseAllows) {
  Result result = RunPass(
      Ring(4, 12),
      PassOptions({{"max-pending", "2147483647"}}, "insert-async-waits"));
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(LoopWaitPending(*result.module), 3);
}

}  // namespace
}  // namespace kir
