// Tests for insert-proxy-fences: every edge kind gets the fence of its kind
// at the position of its placement model, the must-not-fence cases get none,
// each option changes what it says, hoisting leaves exactly one fence where
// one suffices and none where it would not order every iteration; every
// output passes CheckProxyFences in its model and a second run is a no-op,
// also on random kernels.
#include "passes/insert_proxy_fences.h"

#include <cstdio>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "analysis/sync_check.h"
#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "ir/sanitizers.h"
#include "parser/parser.h"
#include "passes/pipeline.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

using Options = std::vector<std::pair<std::string, std::string>>;

std::unique_ptr<Module> ParseAndVerify(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModuleString(text, "fences.kir");
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  if (!module.ok()) return nullptr;
  absl::Status verified = Verify(**module);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << text;
  return verified.ok() ? *std::move(module) : nullptr;
}

FencePlacement ModelOf(const Options& options) {
  for (const auto& [name, value] : options) {
    if (name == "placement" && value == "issuer")
      return FencePlacement::kIssuer;
  }
  return FencePlacement::kWriters;
}

bool Hoists(const Options& options) {
  for (const auto& [name, value] : options) {
    if (name == "hoist" && value == "false") return false;
  }
  return true;
}

absl::Status RunOnce(Kernel& kernel, const Options& options,
                     PassStatistics& stats) {
  PassContext context{stats};
  return InsertProxyFences(kernel, PassOptions(options, "insert-proxy-fences"),
                           context);
}

// Checks the post-condition of the pass in its placement model: every edge
// fenced, and (with hoisting) every inserted fence needed; then that a
// second run changes nothing.
void ExpectCheckedAndIdempotent(Kernel& kernel, const Options& options) {
  const FencePlacement model = ModelOf(options);
  if (Hoists(options)) {
    absl::Status check = CheckProxyFences(kernel, model);
    EXPECT_TRUE(check.ok()) << check << "\n" << PrintKernel(kernel);
  } else {
    // One fence per access keeps duplicates, which the "every inserted fence
    // is needed" half of the checker rejects; every edge is still fenced.
    EXPECT_TRUE(FindUnfencedPairs(kernel, model).empty())
        << PrintKernel(kernel);
  }
  EXPECT_TRUE(CheckSyncs(kernel).ok()) << CheckSyncs(kernel);
  const std::string once = PrintKernel(kernel);
  PassStatistics again;
  ASSERT_TRUE(RunOnce(kernel, options, again).ok());
  EXPECT_EQ(PrintKernel(kernel), once);
  EXPECT_EQ(again.Get("unfenced-edges"), 0);
  EXPECT_EQ(again.Get("shared-fences-inserted"), 0);
  EXPECT_EQ(again.Get("global-fences-inserted"), 0);
  EXPECT_EQ(again.Get("mbarrier-init-fences-inserted"), 0);
}

struct FenceRun {
  std::unique_ptr<Module> module;
  PassStatistics stats;
  absl::Status status;
  Kernel& kernel() { return *module->kernels[0]; }
};

// Parses a lowered kernel (barriers and waits in place: CheckSyncs holds),
// runs the pass, and on success checks its post-condition and idempotence.
FenceRun RunPassOn(const std::string& text, const Options& options = {}) {
  FenceRun result;
  result.module = ParseAndVerify(text);
  if (result.module == nullptr) {
    result.status = absl::InternalError("parse");
    return result;
  }
  absl::Status synced = CheckSyncs(result.kernel());
  EXPECT_TRUE(synced.ok()) << "the test kernel is not ordered: " << synced;
  result.status = RunOnce(result.kernel(), options, result.stats);
  if (!result.status.ok()) return result;
  absl::Status verified = Verify(*result.module);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << PrintModule(*result.module);
  ExpectCheckedAndIdempotent(result.kernel(), options);
  return result;
}

std::string Name(const Op* op) {
  return op == nullptr ? "-" : std::string(Mnemonic(op->kind()));
}

// Where each fence sits, in program order: "fence.proxy.async shared_cta
// after store before barrier.block in kernel" ("-" at a region's ends; the
// enclosing op's mnemonic or "kernel").
std::vector<std::string> Fences(const Kernel& kernel) {
  std::vector<std::string> fences;
  Walk(kernel.body(), [&](const Op& op) {
    if (op.kind() != OpKind::kFenceProxyAsync &&
        op.kind() != OpKind::kFenceMbarrierInit) {
      return;
    }
    const Region& region = *op.parent_region();
    const int index = region.IndexOf(&op);
    std::string text(Mnemonic(op.kind()));
    if (op.kind() == OpKind::kFenceProxyAsync) {
      absl::StrAppend(&text, " ", op.GetString("space"));
    }
    absl::StrAppend(
        &text, " after ", Name(index > 0 ? &region.op(index - 1) : nullptr),
        " before ",
        Name(index + 1 < region.size() ? &region.op(index + 1) : nullptr),
        " in ", op.parent_op() == nullptr ? "kernel" : Name(op.parent_op()));
    fences.push_back(text);
  });
  return fences;
}

using Strings = std::vector<std::string>;

// ---------------------------------------------------------------------------
// Generic write -> TMA store: a write loop, a barrier, a store loop.

constexpr char kWriteLoop[] = R"(
kernel @write_loop(%o: global f32[16, 128],
                   %map: tensormap f32[1, 128] of %o) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c4 = const 4 : index
  %f = const 1.0 : f32
  %s = alloc.shared {align = 128} : shared f32[4, 128]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  for %r = %c0 to %c4 step %c1 {
    store %s[%r, %tid], %f
  }
  barrier.block
  for %k = %c0 to %c4 step %c1 {
    if %is_t0 {
      tma.store %map[%k, %c0], %s[%k, %c0]
    }
  }
  if %is_t0 {
    %t = bulk.commit : token<bulk>
    bulk.wait %t {read}
  }
})";

TEST(InsertProxyFencesTest, WritersHoistOneFenceAfterTheWriteLoop) {
  FenceRun result = RunPassOn(kWriteLoop);
  ASSERT_TRUE(result.status.ok()) << result.status;
  // Exactly one, after the loop and before the barrier: none in its body.
  EXPECT_EQ(Fences(result.kernel()),
            Strings{"fence.proxy.async shared_cta after for before "
                    "barrier.block in kernel"});
  EXPECT_EQ(result.stats.Get("shared-fences-inserted"), 1);
  EXPECT_EQ(result.stats.Get("global-fences-inserted"), 0);
  EXPECT_EQ(result.stats.Get("mbarrier-init-fences-inserted"), 0);
  EXPECT_EQ(result.stats.Get("unfenced-edges"), 1);
}

TEST(InsertProxyFencesTest, FencesCarryProvenance) {
  FenceRun result = RunPassOn(kWriteLoop);
  ASSERT_TRUE(result.status.ok()) << result.status;
  int fences = 0;
  Walk(result.kernel().body(), [&](const Op& op) {
    if (op.kind() != OpKind::kFenceProxyAsync) return;
    ++fences;
    EXPECT_EQ(op.provenance().pass, "insert-proxy-fences");
    // The write (line 12) and the TMA store (line 17) it orders.
    std::vector<std::string> because;
    for (const Location& loc : op.provenance().because) {
      because.push_back(loc.LineColumn());
    }
    EXPECT_EQ(because, (Strings{"12:5", "17:7"}));
  });
  EXPECT_EQ(fences, 1);
}

TEST(InsertProxyFencesTest, NoHoistFencesEachWriteInsideTheLoop) {
  FenceRun result = RunPassOn(kWriteLoop, {{"hoist", "false"}});
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(Fences(result.kernel()),
            Strings{"fence.proxy.async shared_cta after store before - in "
                    "for"});
}

TEST(InsertProxyFencesTest, SpaceAllUsesTheUnqualifiedFence) {
  FenceRun result = RunPassOn(kWriteLoop, {{"space", "all"}});
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(Fences(result.kernel()),
            Strings{"fence.proxy.async all after for before barrier.block in "
                    "kernel"});
  EXPECT_EQ(result.stats.Get("shared-fences-inserted"), 1);
}

TEST(InsertProxyFencesTest, IssuerFencesUnderThePredicateBeforeEachStore) {
  FenceRun result = RunPassOn(kWriteLoop, {{"placement", "issuer"}});
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(Fences(result.kernel()),
            Strings{"fence.proxy.async shared_cta after - before tma.store in "
                    "if"});
}

TEST(InsertProxyFencesTest, IssuerWithoutPredicateHoistsOneFenceBeforeTheLoop) {
  FenceRun result =
      RunPassOn(kWriteLoop, {{"placement", "issuer"}, {"predicate", "false"}});
  ASSERT_TRUE(result.status.ok()) << result.status;
  // In the preheader of the store loop, after the barrier; none in the body.
  EXPECT_EQ(Fences(result.kernel()),
            Strings{"fence.proxy.async shared_cta after barrier.block before "
                    "for in kernel"});
}

TEST(InsertProxyFencesTest, IssuerWithoutPredicateOrHoistFencesEachIteration) {
  FenceRun result = RunPassOn(
      kWriteLoop,
      {{"placement", "issuer"}, {"predicate", "false"}, {"hoist", "false"}});
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(Fences(result.kernel()),
            Strings{"fence.proxy.async shared_cta after - before if in for"});
}

TEST(InsertProxyFencesTest, AnIssuerFenceDoesNotSatisfyTheWritersModel) {
  FenceRun result = RunPassOn(kWriteLoop, {{"placement", "issuer"}});
  ASSERT_TRUE(result.status.ok()) << result.status;
  absl::Status writers =
      CheckProxyFences(result.kernel(), FencePlacement::kWriters);
  EXPECT_FALSE(writers.ok());
  EXPECT_NE(writers.message().find("missing proxy fence"), std::string::npos)
      << writers;
}

// A generic write of the stored buffer inside the store loop: no placement
// may leave the loop.
constexpr char kWriteInLoop[] = R"(
kernel @write_in_loop(%o: global f32[4, 128],
                      %map: tensormap f32[1, 128] of %o) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c4 = const 4 : index
  %f = const 1.0 : f32
  %s = alloc.shared {align = 128} : shared f32[1, 128]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  for %k = %c0 to %c4 step %c1 {
    store %s[%c0, %tid], %f
    barrier.block
    if %is_t0 {
      tma.store %map[%k, %c0], %s[%c0, %c0]
      %t = bulk.commit : token<bulk>
      bulk.wait %t {read}
    }
    barrier.block
  }
})";

TEST(InsertProxyFencesTest, NotHoistedWhenTheLoopWritesTheBuffer) {
  for (const Options& options :
       {Options{}, Options{{"placement", "issuer"}},
        Options{{"placement", "issuer"}, {"predicate", "false"}}}) {
    FenceRun result = RunPassOn(kWriteInLoop, options);
    ASSERT_TRUE(result.status.ok()) << result.status;
    const bool issuer = ModelOf(options) == FencePlacement::kIssuer;
    const bool predicate = options.size() < 2;
    EXPECT_EQ(Fences(result.kernel()),
              Strings{!issuer ? "fence.proxy.async shared_cta after store "
                                "before barrier.block in for"
                      : predicate
                          ? "fence.proxy.async shared_cta after - before "
                            "tma.store in if"
                          : "fence.proxy.async shared_cta after barrier.block "
                            "before if in for"})
        << PrintKernel(result.kernel());
  }
}

// ---------------------------------------------------------------------------
// st.shared -> wgmma operand.

constexpr char kWgmmaOperands[] = R"(
kernel @wgmma_operands() block(128) {
  %c0 = const 0 : index
  %c2 = const 2 : index
  %v = const 1.0 : bf16
  %sa = alloc.shared {align = 128} : shared bf16[64, 16]
  %sb = alloc.shared {align = 128} : shared bf16[128, 16]
  %acc = alloc.reg : reg f32[64]
  %tid = thread.id x : index
  %row = div %tid, %c2 : index
  store %sa[%row, %c0], %v
  store %sb[%tid, %c0], %v
  barrier.block
  wgmma.fence
  wgmma %acc[%c0], %sa[%c0, %c0], %sb[%c0, %c0] {n = 128, zero_init}
  %t = wgmma.commit : token<wgmma>
  wgmma.wait %t
})";

TEST(InsertProxyFencesTest, SharedStoreBeforeWgmmaOperand) {
  FenceRun writers = RunPassOn(kWgmmaOperands);
  ASSERT_TRUE(writers.status.ok()) << writers.status;
  // One fence after the last write covers both operands.
  EXPECT_EQ(Fences(writers.kernel()),
            Strings{"fence.proxy.async shared_cta after store before "
                    "barrier.block in kernel"});
  EXPECT_EQ(writers.stats.Get("unfenced-edges"), 2);
  FenceRun issuer = RunPassOn(kWgmmaOperands, {{"placement", "issuer"}});
  ASSERT_TRUE(issuer.status.ok()) << issuer.status;
  EXPECT_EQ(Fences(issuer.kernel()),
            Strings{"fence.proxy.async shared_cta after wgmma.fence before "
                    "wgmma in kernel"});
}

// ---------------------------------------------------------------------------
// Generic read -> TMA load refill; and mbarrier.init.

constexpr char kRefill[] = R"(
kernel @refill(%g: global f32[128], %o: global f32[128],
               %map: tensormap f32[128] of %g) block(128) {
  %c0 = const 0 : index
  %s = alloc.shared {align = 128} : shared f32[128]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  if %is_t0 {
    mbarrier.init %bar[%c0] {count = 1}
    INIT_FENCE
  }
  %v = load %g[%tid] : f32
  store %s[%tid], %v
  barrier.block
  %w = load %s[%tid] : f32
  store %o[%tid], %w
  barrier.block
  if %is_t0 {
    mbarrier.arrive_tx %bar[%c0] {bytes = 512}
    tma.load %s[%c0], %map[%c0], %bar[%c0]
  }
  mbarrier.wait %bar[%c0], %c0
  %x = load %s[%tid] : f32
  store %o[%tid], %x
})";

std::string Refill(bool init_fenced) {
  return absl::StrReplaceAll(
      kRefill, {{"INIT_FENCE", init_fenced ? "fence.mbarrier_init" : ""}});
}

TEST(InsertProxyFencesTest, GenericReadBeforeTmaLoadRefill) {
  FenceRun result = RunPassOn(Refill(/*init_fenced=*/true));
  ASSERT_TRUE(result.status.ok()) << result.status;
  // After the last generic access of %s (the read), before the barrier that
  // hands the buffer to the TMA load; nothing for the read after the
  // mbarrier wait, which completion orders.
  EXPECT_EQ(Fences(result.kernel()),
            (Strings{"fence.mbarrier_init after mbarrier.init before - in if",
                     "fence.proxy.async shared_cta after load before store in "
                     "kernel"}));
  EXPECT_EQ(result.stats.Get("shared-fences-inserted"), 1);
  EXPECT_EQ(result.stats.Get("mbarrier-init-fences-inserted"), 0);
}

TEST(InsertProxyFencesTest, MbarrierInitGetsFenceMbarrierInitInEveryModel) {
  for (const Options& options :
       {Options{}, Options{{"placement", "issuer"}},
        Options{{"placement", "issuer"}, {"predicate", "false"}},
        Options{{"hoist", "false"}}, Options{{"space", "all"}}}) {
    FenceRun result = RunPassOn(Refill(/*init_fenced=*/false), options);
    ASSERT_TRUE(result.status.ok()) << result.status;
    std::vector<std::string> fences = Fences(result.kernel());
    ASSERT_FALSE(fences.empty());
    EXPECT_EQ(fences[0],
              "fence.mbarrier_init after mbarrier.init before - in if");
    EXPECT_EQ(result.stats.Get("mbarrier-init-fences-inserted"), 1);
    // The write and the read of %s before the refill: one fence after the
    // read covers both, unless each access gets its own.
    EXPECT_EQ(result.stats.Get("shared-fences-inserted"),
              Hoists(options) ? 1 : 2);
  }
}

// ---------------------------------------------------------------------------
// Generic acquire of global data -> async access of it: the .global form,
// whatever `space` says.

constexpr char kAcquire[] = R"(
kernel @acquire(%ws: global f32[64, 64],
                %map: tensormap f32[64, 64] of %ws) block(128) {
  %c0 = const 0 : index
  %z = const 0 : i32
  %one = const 1 : i32
  %s = alloc.shared {align = 128} : shared f32[64, 64]
  %sem = alloc.workspace : global i32[1]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  if %is_t0 {
    sem.wait %sem[%c0], %z
    tma.reduce add %map[%c0, %c0], %s[%c0, %c0]
    %t = bulk.commit : token<bulk>
    bulk.wait %t
    sem.release %sem[%c0], %one
  }
})";

TEST(InsertProxyFencesTest, AcquireBeforeAsyncGlobalAccessGetsGlobalFence) {
  for (const Options& options :
       {Options{}, Options{{"space", "all"}}, Options{{"hoist", "false"}},
        Options{{"placement", "issuer"}},
        Options{{"placement", "issuer"}, {"predicate", "false"}}}) {
    FenceRun result = RunPassOn(kAcquire, options);
    ASSERT_TRUE(result.status.ok()) << result.status;
    EXPECT_EQ(Fences(result.kernel()),
              Strings{"fence.proxy.async global after sem.wait before "
                      "tma.reduce in if"});
    EXPECT_EQ(result.stats.Get("global-fences-inserted"), 1);
    EXPECT_EQ(result.stats.Get("shared-fences-inserted"), 0);
  }
}

// ---------------------------------------------------------------------------
// Must not fence.

constexpr char kCompletionOrdered[] = R"(
kernel @completion(%a: global bf16[64, 16], %b: global bf16[128, 16],
                   %a_map: tensormap bf16[64, 16] of %a,
                   %b_map: tensormap bf16[128, 16] of %b,
                   %o: global bf16[64, 16]) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %sa = alloc.shared {align = 128} : shared bf16[64, 16]
  %sb = alloc.shared {align = 128} : shared bf16[128, 16]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %acc = alloc.reg : reg f32[64]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  if %is_t0 {
    mbarrier.init %bar[%c0] {count = 1}
    fence.mbarrier_init
  }
  barrier.block
  for %k = %c0 to %c2 step %c1 {
    %phase = rem %k, %c2 : index
    if %is_t0 {
      mbarrier.arrive_tx %bar[%c0] {bytes = 6144}
      tma.load %sa[%c0, %c0], %a_map[%c0, %c0], %bar[%c0]
      tma.load %sb[%c0, %c0], %b_map[%c0, %c0], %bar[%c0]
    }
    mbarrier.wait %bar[%c0], %phase
    %row = div %tid, %c2 : index
    %x = load %sa[%row, %c0] : bf16
    store %o[%row, %c0], %x
    wgmma.fence
    wgmma %acc[%c0], %sa[%c0, %c0], %sb[%c0, %c0] {n = 128, zero_init}
    %t = wgmma.commit : token<wgmma>
    wgmma.wait %t
    barrier.block
  }
})";

TEST(InsertProxyFencesTest, NothingWhereCompletionOrdersTheProxies) {
  // A generic read of what a TMA load wrote, after its mbarrier wait; wgmma
  // reading what the TMA load wrote; the next TMA load after the wgmma wait.
  // (Only the generic read before the next iteration's TMA load is an edge.)
  FenceRun result = RunPassOn(kCompletionOrdered);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(Fences(result.kernel()),
            (Strings{"fence.mbarrier_init after mbarrier.init before - in if",
                     "fence.proxy.async shared_cta after load before store in "
                     "for"}));
  EXPECT_EQ(result.stats.Get("unfenced-edges"), 1);
}

TEST(InsertProxyFencesTest, NothingWithoutAGenericAccessOfTheBuffer) {
  // The same kernel without the generic read: nothing at all.
  std::string text = absl::StrReplaceAll(
      kCompletionOrdered, {{"%x = load %sa[%row, %c0] : bf16", ""},
                           {"store %o[%row, %c0], %x", ""}});
  FenceRun result = RunPassOn(text);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(Fences(result.kernel()),
            Strings{"fence.mbarrier_init after mbarrier.init before - in if"});
  EXPECT_EQ(result.stats.Get("unfenced-edges"), 0);
}

constexpr char kOtherAllocation[] = R"(
kernel @other(%o: global f32[1, 128],
              %map: tensormap f32[1, 128] of %o) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %f = const 1.0 : f32
  %s = alloc.shared {align = 128} : shared f32[2, 128]
  %other = alloc.shared {align = 128} : shared f32[2, 128]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  store %other[%c0, %tid], %f
  store %s[%c1, %tid], %f
  barrier.block
  if %is_t0 {
    tma.store %map[%c0, %c0], %s[%c0, %c0]
    %t = bulk.commit : token<bulk>
    bulk.wait %t {read}
  }
})";

TEST(InsertProxyFencesTest, NothingForOtherAllocationsOrDisjointRows) {
  for (const Options& options : {Options{}, Options{{"placement", "issuer"}},
                                 Options{{"hoist", "false"}}}) {
    FenceRun result = RunPassOn(kOtherAllocation, options);
    ASSERT_TRUE(result.status.ok()) << result.status;
    EXPECT_EQ(Fences(result.kernel()), Strings{});
    EXPECT_EQ(result.stats.Get("unfenced-edges"), 0);
  }
  // The same store into the row the TMA store reads needs one.
  FenceRun overlapping = RunPassOn(absl::StrReplaceAll(
      kOtherAllocation, {{"store %s[%c1, %tid]", "store %s[%c0, %tid]"}}));
  ASSERT_TRUE(overlapping.status.ok()) << overlapping.status;
  EXPECT_EQ(Fences(overlapping.kernel()),
            Strings{"fence.proxy.async shared_cta after store before "
                    "barrier.block in kernel"});
}

// ---------------------------------------------------------------------------
// A role that writes the stored buffer while the storing role loops: each
// iteration's write is handed over by an mbarrier inside the loop, so no
// fence may be hoisted out of either loop.

constexpr char kConcurrentRole[] = R"(
kernel @roles(%g: global f32[8, 128], %o: global f32[8, 128]) block(256) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c8 = const 8 : index
  %c128 = const 128 : index
  %s = alloc.shared {align = 128} : shared f32[128]
  %full = alloc.shared {align = 8} : shared mbarrier[1]
  %empty = alloc.shared {align = 8} : shared mbarrier[1]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  if %is_t0 {
    mbarrier.init %full[%c0] {count = 128}
    mbarrier.init %empty[%c0] {count = 1}
    fence.mbarrier_init
  }
  barrier.block
  role @writer warps[0, 4) {
    for %k = %c0 to %c8 step %c1 {
      %round = add %k, %c1 : index
      %pe = rem %round, %c2 : index
      mbarrier.wait %empty[%c0], %pe
      %v = load %g[%k, %tid] : f32
      store %s[%tid], %v
      mbarrier.arrive %full[%c0]
    }
  }
  role @storer warps[4, 8) {
    %ctid = sub %tid, %c128 : index
    %is_c0 = cmp eq %ctid, %c0 : i1
    HOISTED
    for %j = %c0 to %c8 step %c1 {
      %pf = rem %j, %c2 : index
      mbarrier.wait %full[%c0], %pf
      if %is_c0 {
        bulk.store %o[%j, %c0], %s[%c0] {bytes = 512}
        %t = bulk.commit : token<bulk>
        bulk.wait %t {read}
        mbarrier.arrive %empty[%c0]
      }
    }
  }
})";

std::string ConcurrentRole(const std::string& hoisted = "") {
  return absl::StrReplaceAll(kConcurrentRole, {{"HOISTED", hoisted}});
}

TEST(InsertProxyFencesTest, NotHoistedWhenAConcurrentRoleWritesTheBuffer) {
  FenceRun writers = RunPassOn(ConcurrentRole());
  ASSERT_TRUE(writers.status.ok()) << writers.status;
  // In the writing role, every iteration, before the release.
  EXPECT_EQ(Fences(writers.kernel()),
            (Strings{"fence.mbarrier_init after mbarrier.init before - in if",
                     "fence.proxy.async shared_cta after store before "
                     "mbarrier.arrive in for"}));
  FenceRun issuer = RunPassOn(ConcurrentRole(), {{"placement", "issuer"}});
  ASSERT_TRUE(issuer.status.ok()) << issuer.status;
  EXPECT_EQ(Fences(issuer.kernel()),
            (Strings{"fence.mbarrier_init after mbarrier.init before - in if",
                     "fence.proxy.async shared_cta after - before bulk.store "
                     "in if"}));
  // Without the predicate the fence may leave the `if` but not the loop:
  // the write it orders is only acquired by this iteration's wait.
  FenceRun unpredicated = RunPassOn(
      ConcurrentRole(), {{"placement", "issuer"}, {"predicate", "false"}});
  ASSERT_TRUE(unpredicated.status.ok()) << unpredicated.status;
  EXPECT_EQ(Fences(unpredicated.kernel()),
            (Strings{"fence.mbarrier_init after mbarrier.init before - in if",
                     "fence.proxy.async shared_cta after mbarrier.wait before "
                     "if in for"}));
}

TEST(InsertProxyFencesTest, TheCheckerRejectsAFenceHoistedPastTheWait) {
  // What a hoist that ignored the concurrent role would produce.
  std::unique_ptr<Module> module =
      ParseAndVerify(ConcurrentRole("fence.proxy.async shared_cta"));
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(
      CheckProxyFences(*module->kernels[0], FencePlacement::kIssuer).ok());
  EXPECT_FALSE(
      CheckProxyFences(*module->kernels[0], FencePlacement::kWriters).ok());
}

// The role writes once, before the storing loop starts: one fence before the
// loop is enough and the issuer placement takes it.
TEST(InsertProxyFencesTest, HoistedWhenTheRoleWritesOnlyBeforeTheLoop) {
  constexpr char kWriteOnce[] = R"(
kernel @write_once(%g: global f32[128], %o: global f32[8, 128]) block(256) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c8 = const 8 : index
  %c128 = const 128 : index
  %s = alloc.shared {align = 128} : shared f32[128]
  %full = alloc.shared {align = 8} : shared mbarrier[1]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  if %is_t0 {
    mbarrier.init %full[%c0] {count = 128}
    fence.mbarrier_init
  }
  barrier.block
  role @writer warps[0, 4) {
    %v = load %g[%tid] : f32
    store %s[%tid], %v
    mbarrier.arrive %full[%c0]
  }
  role @storer warps[4, 8) {
    %ctid = sub %tid, %c128 : index
    %is_c0 = cmp eq %ctid, %c0 : i1
    mbarrier.wait %full[%c0], %c0
    for %j = %c0 to %c8 step %c1 {
      if %is_c0 {
        bulk.store %o[%j, %c0], %s[%c0] {bytes = 512}
      }
    }
    if %is_c0 {
      %t = bulk.commit : token<bulk>
      bulk.wait %t {read}
    }
  }
})";
  FenceRun result =
      RunPassOn(kWriteOnce, {{"placement", "issuer"}, {"predicate", "false"}});
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(Fences(result.kernel()),
            (Strings{"fence.mbarrier_init after mbarrier.init before - in if",
                     "fence.proxy.async shared_cta after mbarrier.wait before "
                     "for in role"}));
}

// ---------------------------------------------------------------------------
// Options.

// ParsePipeline reports this before any pass runs; options built directly
// fail the same way, and the pass changes nothing.
TEST(InsertProxyFencesTest, PredicateWithWritersIsAnOptionError) {
  for (const char* value : {"true", "false"}) {
    std::unique_ptr<Module> module = ParseAndVerify(kWriteLoop);
    ASSERT_NE(module, nullptr);
    const std::string before = PrintModule(*module);
    PassStatistics stats;
    absl::Status status =
        RunOnce(*module->kernels[0], {{"predicate", value}}, stats);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find(
                  "pass 'insert-proxy-fences': option 'predicate' applies to "
                  "placement=issuer only"),
              std::string::npos)
        << status;
    EXPECT_EQ(PrintModule(*module), before);
    // Explicitly naming the writers placement is the same error.
    status = RunOnce(*module->kernels[0],
                     {{"placement", "writers"}, {"predicate", value}}, stats);
    EXPECT_FALSE(status.ok());
  }
}

TEST(InsertProxyFencesTest, InvalidOptionValuesAreRejected) {
  const std::vector<std::pair<Options, std::string>> cases = {
      {{{"placement", "readers"}},
       "option 'placement' expects writers or issuer, got 'readers'"},
      {{{"space", "cluster"}},
       "option 'space' expects shared-cta or all, got 'cluster'"},
      {{{"hoist", "maybe"}}, "option 'hoist' expects a boolean"},
      {{{"placement", "issuer"}, {"predicate", "2"}},
       "option 'predicate' expects a boolean"},
  };
  for (const auto& [options, message] : cases) {
    std::unique_ptr<Module> module = ParseAndVerify(kWriteLoop);
    ASSERT_NE(module, nullptr);
    PassStatistics stats;
    absl::Status status = RunOnce(*module->kernels[0], options, stats);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find(message), std::string::npos) << status;
  }
}

TEST(InsertProxyFencesTest, ExistingFencesCountAndAreKept) {
  // A hand-placed fence after each write: nothing added, nothing removed
  // (the pass removes only fences it inserted).
  std::string text = absl::StrReplaceAll(
      kWriteLoop,
      {{"store %s[%r, %tid], %f",
        "store %s[%r, %tid], %f\n    fence.proxy.async shared_cta"}});
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  PassStatistics stats;
  ASSERT_TRUE(RunOnce(*module->kernels[0], {}, stats).ok());
  EXPECT_EQ(PrintModule(*module), before);
  EXPECT_EQ(stats.Get("unfenced-edges"), 0);
}

// ---------------------------------------------------------------------------
// Random kernels: loops of generic accesses to a few shared allocations,
// barriers, bulk stores and loads issued by one thread. The prerequisite
// passes order them; then, in a random option combination, the pass leaves
// CheckProxyFences satisfied and a second run changes nothing.

class KernelGenerator {
 public:
  explicit KernelGenerator(uint32_t seed) : rng_(seed) {}

  std::string Generate() {
    body_.clear();
    names_ = 0;
    loads_ = 0;
    EmitBlock(/*depth=*/0, "%c0");
    return absl::StrCat(
        "kernel @random(%g: global f32[4, 128], %o: global f32[4, 128])"
        " block(128) {\n"
        "  %c0 = const 0 : index\n"
        "  %c1 = const 1 : index\n"
        "  %c2 = const 2 : index\n"
        "  %c4 = const 4 : index\n"
        "  %c127 = const 127 : index\n"
        "  %f = const 1.0 : f32\n"
        "  %z = const 0 : i32\n"
        "  %a = alloc.shared {align = 128} : shared f32[2, 128]\n"
        "  %b = alloc.shared {align = 128} : shared f32[2, 128]\n"
        "  %bar = alloc.shared {align = 8} : shared mbarrier[8]\n"
        "  %sem = alloc.workspace : global i32[1]\n"
        "  %tx = thread.id x : index\n"
        "  %mirror = sub %c127, %tx : index\n"
        "  %is_t0 = cmp eq %tx, %c0 : i1\n"
        "  if %is_t0 {\n"
        "    for %i = %c0 to %c4 step %c1 {\n"
        "      mbarrier.init %bar[%i] {count = 1}\n"
        "    }\n"
        "  }\n",
        body_, "}\n");
  }

 private:
  int Pick(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  std::string Fresh() { return absl::StrCat("%v", names_++); }
  void Line(int depth, const std::string& text) {
    absl::StrAppend(&body_, std::string(2 * depth + 2, ' '), text, "\n");
  }

  void EmitBlock(int depth, const std::string& stage) {
    const int count = Pick(1, 4);
    for (int i = 0; i < count; ++i) {
      // Loops nest at most two deep: insert-syncs's fixed point grows
      // steeply with the depth (minutes at four levels).
      int kind = Pick(0, depth >= 2 ? 6 : 8);
      if (kind == 6 && (depth > 0 || loads_ >= 4)) kind = 0;
      const std::string buffer = Pick(0, 1) == 0 ? "%a" : "%b";
      const std::string row = Pick(0, 2) == 0 ? "%c1" : stage;
      if (kind <= 2) {
        const std::string index = Pick(0, 1) == 0 ? "%tx" : "%mirror";
        if (Pick(0, 1) == 0) {
          Line(depth,
               absl::StrCat("store ", buffer, "[", row, ", ", index, "], %f"));
        } else {
          Line(depth, absl::StrCat(Fresh(), " = load ", buffer, "[", row, ", ",
                                   index, "] : f32"));
        }
      } else if (kind == 3) {
        Line(depth, "barrier.block");
      } else if (kind <= 5) {
        // A bulk store of one row; sometimes after an acquire.
        Line(depth, "if %is_t0 {");
        if (Pick(0, 3) == 0) Line(depth + 1, "sem.wait %sem[%c0], %z");
        Line(depth + 1, absl::StrCat("bulk.store %o[%c0, %c0], ", buffer, "[",
                                     row, ", %c0] {bytes = 512}"));
        Line(depth, "}");
      } else if (kind == 6) {
        // A bulk load refilling one row, on a fresh mbarrier (phase 0).
        const std::string slot = absl::StrCat("%v", names_++);
        Line(depth, absl::StrCat(slot, " = const ", loads_++, " : index"));
        Line(depth, "if %is_t0 {");
        Line(depth + 1,
             absl::StrCat("mbarrier.arrive_tx %bar[", slot, "] {bytes = 512}"));
        Line(depth + 1, absl::StrCat("bulk.load ", buffer, "[", row,
                                     ", %c0], %g[%c0, %c0], %bar[", slot,
                                     "] {bytes = 512}"));
        Line(depth, "}");
        Line(depth, absl::StrCat("mbarrier.wait %bar[", slot, "], %c0"));
      } else {
        const std::string iv = Fresh();
        const std::string next_stage = Fresh();
        Line(depth, absl::StrCat("for ", iv, " = %c0 to %c4 step %c1 {"));
        Line(depth + 1,
             absl::StrCat(next_stage, " = rem ", iv, ", %c2 : index"));
        EmitBlock(depth + 1, next_stage);
        Line(depth, "}");
      }
    }
  }

  std::mt19937 rng_;
  std::string body_;
  int names_ = 0;
  int loads_ = 0;
};

TEST(InsertProxyFencesTest, RandomKernelsAreFencedAndASecondRunIsANoOp) {
  absl::StatusOr<Pipeline> prerequisites =
      ParsePipeline("insert-async-waits,insert-syncs");
  ASSERT_TRUE(prerequisites.ok()) << prerequisites.status();
  const std::vector<Options> variants = {
      {},
      {{"space", "all"}},
      {{"hoist", "false"}},
      {{"placement", "issuer"}},
      {{"placement", "issuer"}, {"predicate", "false"}},
      {{"placement", "issuer"}, {"hoist", "false"}},
  };
  KernelGenerator generator(/*seed=*/5);
  int fenced = 0, skipped = 0, with_fences = 0, edges = 0;
  for (int n = 0; n < SanitizerScaled(150); ++n) {
    const std::string text = generator.Generate();
    std::unique_ptr<Module> module = ParseAndVerify(text);
    ASSERT_NE(module, nullptr);
    PipelineRunOptions run_options;
    run_options.write_reproducer = false;
    std::ostringstream log;
    if (!RunPipeline(*module, *prerequisites, run_options, log).ok()) {
      ++skipped;  // not the subject here
      continue;
    }
    Kernel& kernel = *module->kernels[0];
    const Options& options = variants[n % variants.size()];
    const std::string lowered = PrintKernel(kernel);
    PassStatistics stats;
    absl::Status status = RunOnce(kernel, options, stats);
    ASSERT_TRUE(status.ok()) << status << "\n" << lowered;
    ASSERT_TRUE(Verify(*module).ok()) << PrintKernel(kernel);
    ExpectCheckedAndIdempotent(kernel, options);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "options: " << PassOptions(options).ToString()
                    << "\ninput:\n"
                    << lowered;
      return;
    }
    ++fenced;
    edges += stats.Get("unfenced-edges");
    with_fences += stats.Get("shared-fences-inserted") +
                       stats.Get("global-fences-inserted") +
                       stats.Get("mbarrier-init-fences-inserted") >
                   0;
  }
  std::printf(
      "insert-proxy-fences: %d random kernels fenced (%d with fences, %d "
      "edges), %d rejected by the prerequisite passes\n",
      fenced, with_fences, edges, skipped);
  EXPECT_GT(fenced, SanitizerScaled(100));
  EXPECT_GT(with_fences, SanitizerScaled(60));
}

}  // namespace
}  // namespace kir
