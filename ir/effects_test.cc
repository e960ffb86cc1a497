// Tests for the effects table: coverage of every op kind, and the accesses,
// regions and execution classes of each memory and synchronization op.
#include "ir/effects.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/testing/heap_count.h"
#include "parser/parser.h"
#include "parser/testing/parse_for_test.h"

namespace kir {
namespace {

// The first op with `mnemonic` in the module's first kernel.
const Op* FindOp(const Module& module, absl::string_view mnemonic,
                 int skip = 0) {
  const Op* found = nullptr;
  Walk(module.kernels[0]->body(), [&](const Op& op) {
    if (found == nullptr && op.mnemonic() == mnemonic && skip-- == 0) {
      found = &op;
    }
  });
  return found;
}

// Builds an instance of `kind` with operands of the right slot kinds:
// values for `v`, a shared-buffer element for `r`, a tensor map for `b`.
// Without `with_attrs`, required attributes are left out, as in IR that
// has not been verified.
Op* BuildAnyOp(Kernel& kernel, OpKind kind, bool with_attrs = true) {
  const OpInfo& info = GetOpInfo(kind);
  OpBuilder builder(kernel.body());
  Value* index = builder.Constant(0, DType::kIndex, "i");
  Value* buffer = builder
                      .Create(OpKind::kAllocShared, {}, {},
                              {Type::Buffer(MemorySpace::kShared, DType::kF16,
                                            {IndexExpr::Constant(64),
                                             IndexExpr::Constant(64)})},
                              {"smem"})
                      ->result();
  const Value* map = kernel.params()[1].value;
  std::vector<Operand> operands;
  for (OperandSlot slot : info.operands) {
    switch (slot) {
      case OperandSlot::kValue:
      case OperandSlot::kVariadic:
        operands.push_back(Use(index));
        break;
      case OperandSlot::kOptional:  // left out
        break;
      case OperandSlot::kRef:
        operands.push_back(Ref(buffer, {index, index}));
        break;
      case OperandSlot::kBuffer:
        operands.push_back(Use(const_cast<Value*>(map)));
        break;
    }
  }
  AttrList attrs;
  for (const AttrSpec& spec : info.attrs) {
    if (!with_attrs || spec.default_value || spec.optional) continue;
    switch (spec.kind) {
      case AttrKind::kInt:
        attrs.push_back({spec.name, Attribute::Int(8)});
        break;
      case AttrKind::kNumber:
        attrs.push_back({spec.name, Attribute::Integer(1)});
        break;
      case AttrKind::kFlag:
        break;
      case AttrKind::kString:
        attrs.push_back({spec.name, Attribute::String("x")});
        break;
      case AttrKind::kInts:
        attrs.push_back({spec.name, Attribute::Ints({})});
        break;
      case AttrKind::kEnum:
        attrs.push_back({spec.name, Attribute::Enum(spec.enum_values[0])});
        break;
    }
  }
  std::vector<Type> results(std::max(0, info.num_results),
                            Type::Scalar(DType::kIndex));
  Op* op = builder.Create(kind, std::move(operands), std::move(attrs), results);
  for (int r = 0; r < info.num_regions; ++r) kernel.AddRegion(*op);
  return op;
}

TEST(EffectsTest, EveryOpKindHasConsistentFacts) {
  for (int i = 0; i < kNumOpKinds; ++i) {
    const OpKind kind = static_cast<OpKind>(i);
    const OpInfo& info = GetOpInfo(kind);
    const OpFacts& facts = FactsOf(kind);
    SCOPED_TRACE(info.mnemonic);
    // An op without results or regions exists only for its effects.
    if (info.num_results == 0) {
      EXPECT_TRUE(facts.has_side_effects);
    }
    // Asynchronous completion and synchronization are effects.
    if (facts.completion != Completion::kImmediate ||
        facts.sync != SyncKind::kNone) {
      EXPECT_TRUE(facts.has_side_effects);
    }
    if (facts.sync == SyncKind::kGroupCommit) {
      EXPECT_TRUE(facts.group.has_value());
      EXPECT_EQ(info.num_results, 1);
    }
    if (facts.sync == SyncKind::kGroupWait) {
      EXPECT_TRUE(facts.group.has_value());
      EXPECT_EQ(info.operands.back(), OperandSlot::kVariadic);
    }
    // Cross-checks by name, independent of the table's layout.
    const std::string& name = info.mnemonic;
    if (absl::StartsWith(name, "wgmma") || name == "setmaxnreg") {
      EXPECT_EQ(facts.exec, ExecClass::kWarpgroupCollective);
    }
    if (absl::StartsWith(name, "barrier.") || name == "cluster.arrive" ||
        name == "cluster.wait") {
      EXPECT_EQ(facts.exec, ExecClass::kParticipants);
    }
    if (absl::StartsWith(name, "tma.") || absl::StartsWith(name, "bulk.")) {
      EXPECT_EQ(facts.exec, ExecClass::kSingleIssue);
    }
    if (absl::StartsWith(name, "fence.")) {
      EXPECT_EQ(facts.exec, ExecClass::kPerThread);
      EXPECT_NE(facts.sync, SyncKind::kNone);
    }
    // One lane's predicate can guard only what one thread runs alone:
    // never a collective, control flow, or a computation (which needs no
    // predicate at all).
    if (facts.predicable) {
      EXPECT_TRUE(facts.exec == ExecClass::kPerThread ||
                  facts.exec == ExecClass::kSingleIssue);
      EXPECT_TRUE(facts.has_side_effects);
      EXPECT_FALSE(facts.computes);
      EXPECT_EQ(info.num_regions, 0);
    }
    // Every single-issue op has a predicated form, so an election over it
    // can issue branch-free.
    if (facts.exec == ExecClass::kSingleIssue) {
      EXPECT_TRUE(facts.predicable);
    }
    EXPECT_FALSE(std::string(ExecClassName(facts.exec)).empty());
    EXPECT_FALSE(std::string(SyncKindName(facts.sync)).empty());
  }
}

// `predicated` is legal on an election whose body has predicated forms
// only; the reason names what is wrong otherwise.
TEST(EffectsTest, PredicatedIssueNeedsElectionAndPredicableBody) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k(%g: global f32[32]) block(32) {
  %c0 = const 0 : index
  %one = const 1.0 : f32
  %tid = thread.id x : index
  %t0 = cmp eq %tid, %c0 : i1
  %bar = alloc.shared : shared mbarrier[1]
  %e = elect.sync : i1
  if %e {
    %c1 = const 1 : index
    mbarrier.init %bar[%c0] {count = 1}
    fence.mbarrier_init
  }
  if %e {
    mbarrier.init %bar[%c0] {count = 1}
    store %g[%c0], %one
  }
  if %t0 {
    mbarrier.init %bar[%c0] {count = 1}
  }
  if %e {
    mbarrier.arrive %bar[%c0]
  } else {
    mbarrier.arrive %bar[%c0]
  }
  if %e {
    mbarrier.arrive %bar[%c0]
  }
}
)");
  ASSERT_NE(module, nullptr);
  std::vector<const Op*> ifs;
  Walk(module->kernels[0]->body(), [&](const Op& op) {
    if (op.kind() == OpKind::kIf) ifs.push_back(&op);
  });
  ASSERT_EQ(ifs.size(), 5u);
  std::string why;
  EXPECT_TRUE(CanIssuePredicated(*ifs[0], &why)) << why;
  EXPECT_TRUE(HoldsSingleIssue(ifs[0]->region(0)));
  EXPECT_FALSE(CanIssuePredicated(*ifs[1], &why));
  EXPECT_EQ(why, "its body holds 'store', which has no predicated form");
  EXPECT_FALSE(CanIssuePredicated(*ifs[2], &why));
  EXPECT_EQ(why, "its condition is not an elect.sync result");
  EXPECT_FALSE(CanIssuePredicated(*ifs[3], &why));
  EXPECT_EQ(why, "it has an else region");
  // Legal, though nothing in it is single-issue (uniform-predicates does
  // not mark such a body).
  EXPECT_TRUE(CanIssuePredicated(*ifs[4], &why)) << why;
  EXPECT_FALSE(HoldsSingleIssue(ifs[4]->region(0)));
}

TEST(EffectsTest, EveryOpKindDescribesWellFormedAccesses) {
  for (int i = 0; i < kNumOpKinds; ++i) {
    const OpKind kind = static_cast<OpKind>(i);
    SCOPED_TRACE(Mnemonic(kind));
    Kernel kernel("k");
    Value* tensor =
        kernel
            .AddParam("g",
                      Type::Buffer(
                          MemorySpace::kGlobal, DType::kF16,
                          {IndexExpr::Constant(256), IndexExpr::Constant(256)}),
                      Param{})
            .value;
    Param map;
    map.kind = Param::Kind::kTensorMap;
    map.tensor = tensor;
    kernel.AddParam("map", Type::TensorMap(DType::kF16, {64, 64}), map);
    const Op* op = BuildAnyOp(kernel, kind);
    for (const MemoryEffect& effect : MemoryEffectsOf(*op)) {
      ASSERT_GE(effect.operand, 0);
      ASSERT_LT(effect.operand, op->num_operands());
      EXPECT_NE(effect.buffer, nullptr);
      if (!effect.whole_buffer) {
        EXPECT_EQ(effect.extent.size(), effect.origin.size());
      }
      if (effect.completion != Completion::kImmediate) {
        EXPECT_EQ(effect.completion, FactsOf(kind).completion);
      }
    }
    EXPECT_TRUE(absl::StrContains(DescribeEffects(*op), "exec "));
  }
}

TEST(EffectsTest, UnverifiedOpsDoNotCrash) {
  for (int i = 0; i < kNumOpKinds; ++i) {
    const OpKind kind = static_cast<OpKind>(i);
    SCOPED_TRACE(Mnemonic(kind));
    Kernel kernel("k");
    kernel.AddParam("g",
                    Type::Buffer(MemorySpace::kGlobal, DType::kF16,
                                 {IndexExpr::Constant(256)}),
                    Param{});
    // A tensor map that maps nothing.
    Param map;
    map.kind = Param::Kind::kTensorMap;
    kernel.AddParam("map", Type::TensorMap(DType::kF16, {64, 64}), map);
    const Op* op = BuildAnyOp(kernel, kind, /*with_attrs=*/false);
    for (const MemoryEffect& effect : MemoryEffectsOf(*op)) {
      EXPECT_NE(effect.buffer, nullptr);
    }
    EXPECT_FALSE(DescribeEffects(*op).empty());
  }
}

constexpr absl::string_view kMemoryKernel = R"(
kernel @memory sizes(%M, %N) (
    %A: global f16[%M, %N],
    %C: global f32[%M, %N],
    %sem: global i32[64],
    %amap: tensormap f16[64, 64] of %A,
    %cmap: tensormap f32[32, 64] of %C) grid(4) block(384) cluster(2) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %one = const 1 : i32
  %x = const 1.0 : f32
  %sa = alloc.shared : shared f16[2, 64, 64]
  %sc = alloc.shared : shared f32[32, 64]
  %bar = alloc.shared : shared mbarrier[2]
  %acc = alloc.reg : reg f32[64]
  %afrag = alloc.reg : reg f16[8]
  %v = load %A[%c0, %c1] : vec<8xf16>
  store %C[%c0, %c1], %x
  cp.async %sa[%c0, %c0, %c0], %A[%c0, %c1]
  %cpt = cp.async.commit : token<cp_async>
  cp.async.wait %cpt
  %m4 = ldmatrix %sa[%c0, %c0, %c1] : vec<8xf16>
  %m2 = ldmatrix %sa[%c1, %c0, %c1] {count = 2, trans} : vec<4xf16>
  stmatrix %sa[%c0, %c1, %c0], %v {count = 1}
  mbarrier.init %bar[%c0] {count = 1}
  fence.mbarrier_init
  mbarrier.arrive_tx %bar[%c0] {bytes = 16384}
  tma.load %sa[%c1, %c0, %c0], %amap[%c0, %c1], %bar[%c1] {multicast = 3}
  mbarrier.wait %bar[%c0], %c0
  tma.prefetch %amap
  fence.proxy.async shared_cta
  tma.store %cmap[%c1, %c0], %sc[%c0, %c0]
  tma.reduce add %cmap[%c1, %c0], %sc[%c0, %c0]
  bulk.load %sa[%c0, %c0, %c0], %A[%c1, %c0], %bar[%c0] {bytes = 256}
  bulk.store %C[%c1, %c0], %sc[%c0, %c0] {bytes = 256}
  %bt = bulk.commit : token<bulk>
  bulk.wait %bt {read}
  wgmma.fence
  wgmma %acc[%c0], %sa[%c0, %c0, %c0], %sa[%c1, %c0, %c0] {n = 128}
  wgmma %acc[%c0], %afrag[%c0], %sa[%c1, %c0, %c0] {n = 64, a_major = m, b_major = n, zero_init}
  %wt = wgmma.commit : token<wgmma>
  wgmma.wait %wt
  mbarrier.arrive %bar[%c1]
  mbarrier.inval %bar[%c1]
  sem.wait %sem[%c0], %one
  sem.release %sem[%c0], %one {scope = cluster}
  %old = atomic add %sem[%c1], %one {order = acq_rel} : i32
  red max %sem[%c1], %one
  %r = ptx "mov.b32 $0, $1;" (%one) reads(%sem) writes(%C) : i32
  barrier.block
  barrier.named {id = 1, threads = 256}
  fence.acq_rel gpu
  %e = elect.sync : i1
  %s = shfl.sync idx %x, %c0 : f32
  setmaxnreg dec {regs = 40}
}
)";

TEST(EffectsTest, DescribesEveryMemoryAndSyncOp) {
  std::unique_ptr<Module> module = ParseForTest(kMemoryKernel);
  ASSERT_NE(module, nullptr);
  std::string text;
  Walk(module->kernels[0]->body(), [&](const Op& op) {
    if (op.kind() == OpKind::kConst || op.kind() == OpKind::kAllocShared ||
        op.kind() == OpKind::kAllocReg) {
      return;
    }
    absl::StrAppend(&text, op.mnemonic(), ":\n", DescribeEffects(op), "\n");
  });
  EXPECT_EQ(text, R"(load:
read %A[%c0, %c1] box [1, 8] global generic immediate per-thread
exec per-thread
store:
write %C[%c0, %c1] box [1, 1] global generic immediate per-thread
exec per-thread, side-effects
cp.async:
write %sa[%c0, %c0, %c0] box [1, 1, 8] shared generic cp-async-group per-thread
read %A[%c0, %c1] box [1, 8] global generic cp-async-group per-thread
exec per-thread, side-effects
cp.async.commit:
exec per-thread, sync group-commit(cp_async), side-effects
cp.async.wait:
exec per-thread, sync group-wait(cp_async), side-effects
ldmatrix:
read %sa[%c0, %c0, %c1] box [1, 16, 16] shared generic immediate fragment
exec warp-collective, side-effects
ldmatrix:
read %sa[%c1, %c0, %c1] box [1, 8, 16] shared generic immediate fragment
exec warp-collective, side-effects
stmatrix:
write %sa[%c0, %c1, %c0] box [1, 8, 8] shared generic immediate fragment
exec warp-collective, side-effects
mbarrier.init:
write %bar[%c0] box [1] shared generic immediate issuer
exec single-issue, sync mbarrier-init, side-effects
fence.mbarrier_init:
exec per-thread, sync mbarrier-init-fence, side-effects
mbarrier.arrive_tx:
read-write %bar[%c0] box [1] shared generic immediate issuer release.cta
exec single-issue, sync mbarrier-arrive, side-effects
tma.load:
write %sa[%c1, %c0, %c0] box [1, 64, 64] shared async mbarrier issuer multicast
read %A[%c0, %c1] via %amap box [64, 64] global async mbarrier issuer
read-write %bar[%c1] box [1] shared generic mbarrier issuer release.cluster multicast
exec single-issue, side-effects
mbarrier.wait:
read %bar[%c0] box [1] shared generic immediate per-thread acquire.cta
exec per-thread, sync mbarrier-wait, side-effects
tma.prefetch:
exec single-issue, side-effects
fence.proxy.async:
exec per-thread, sync proxy-fence, side-effects
tma.store:
write %C[%c1, %c0] via %cmap box [32, 64] global async bulk-group issuer
read %sc[%c0, %c0] box [32, 64] shared async bulk-group issuer
exec single-issue, side-effects
tma.reduce:
read-write %C[%c1, %c0] via %cmap box [32, 64] global async bulk-group issuer
read %sc[%c0, %c0] box [32, 64] shared async bulk-group issuer
exec single-issue, side-effects
bulk.load:
write %sa[%c0, %c0, %c0] box [1, 1, 128] shared async mbarrier issuer
read %A[%c1, %c0] box [1, 128] global async mbarrier issuer
read-write %bar[%c0] box [1] shared generic mbarrier issuer release.cluster
exec single-issue, side-effects
bulk.store:
write %C[%c1, %c0] box [1, 64] global async bulk-group issuer
read %sc[%c0, %c0] box [1, 64] shared async bulk-group issuer
exec single-issue, side-effects
bulk.commit:
exec single-issue, sync group-commit(bulk), side-effects
bulk.wait:
exec single-issue, sync group-wait(bulk), side-effects
wgmma.fence:
exec warpgroup-collective, sync register-fence, side-effects
wgmma:
read-write %acc[%c0] box [64] reg generic wgmma-group per-thread
read %sa[%c0, %c0, %c0] box [1, 64, 16] shared async wgmma-group fragment
read %sa[%c1, %c0, %c0] box [1, 128, 16] shared async wgmma-group fragment
exec warpgroup-collective, side-effects
wgmma:
write %acc[%c0] box [32] reg generic wgmma-group per-thread
read %afrag[%c0] box [8] reg generic wgmma-group per-thread
read %sa[%c1, %c0, %c0] box [1, 16, 64] shared async wgmma-group fragment
exec warpgroup-collective, side-effects
wgmma.commit:
exec warpgroup-collective, sync group-commit(wgmma), side-effects
wgmma.wait:
exec warpgroup-collective, sync group-wait(wgmma), side-effects
mbarrier.arrive:
read-write %bar[%c1] box [1] shared generic immediate per-thread release.cta
exec per-thread, sync mbarrier-arrive, side-effects
mbarrier.inval:
write %bar[%c1] box [1] shared generic immediate issuer
exec single-issue, sync mbarrier-inval, side-effects
sem.wait:
read %sem[%c0] box [1] global generic immediate per-thread acquire.gpu
exec per-thread, sync sem-wait, side-effects
sem.release:
write %sem[%c0] box [1] global generic immediate issuer release.cluster
exec single-issue, sync sem-release, side-effects
atomic:
read-write %sem[%c1] box [1] global generic immediate per-thread acq_rel.gpu
exec per-thread, side-effects
red:
read-write %sem[%c1] box [1] global generic immediate per-thread relaxed.gpu
exec per-thread, side-effects
ptx:
read %sem whole global generic immediate per-thread
write %C whole global generic immediate per-thread
exec per-thread, side-effects
barrier.block:
exec participants, sync block-barrier, side-effects
barrier.named:
exec participants, sync named-barrier, side-effects
fence.acq_rel:
exec per-thread, sync acq-rel-fence, side-effects
elect.sync:
exec warp-collective, side-effects
shfl.sync:
exec warp-collective, side-effects
setmaxnreg:
exec warpgroup-collective, side-effects
)");
}

TEST(EffectsTest, TmaAccessesTheMappedTensor) {
  std::unique_ptr<Module> module = ParseForTest(kMemoryKernel);
  ASSERT_NE(module, nullptr);
  const Kernel& kernel = *module->kernels[0];
  const Op* load = FindOp(*module, "tma.load");
  ASSERT_NE(load, nullptr);
  MemoryEffects effects = MemoryEffectsOf(*load);
  ASSERT_EQ(effects.size(), 3u);
  EXPECT_EQ(effects[0].operand, 0);
  EXPECT_TRUE(effects[0].writes());
  EXPECT_FALSE(effects[0].reads());
  EXPECT_EQ(effects[1].operand, 1);
  EXPECT_EQ(effects[1].buffer, kernel.params()[0].value);      // %A
  EXPECT_EQ(effects[1].tensor_map, kernel.params()[3].value);  // %amap
  EXPECT_EQ(std::vector<const Value*>(effects[1].origin.begin(),
                                      effects[1].origin.end()),
            (std::vector<const Value*>{load->operand(1).indices[0],
                                       load->operand(1).indices[1]}));
  EXPECT_EQ(effects[2].proxy, Proxy::kGeneric);
  EXPECT_EQ(effects[2].space, MemorySpace::kShared);
}

TEST(EffectsTest, TmaBoxFoldsIntoLowerRankSharedBuffer) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @fold (%A: global f16[8, 64, 64], %map: tensormap f16[2, 32, 64] of %A)
    block(128) {
  %c0 = const 0 : index
  %s = alloc.shared : shared f16[64, 64]
  %bar = alloc.shared : shared mbarrier[1]
  tma.load %s[%c0, %c0], %map[%c0, %c0, %c0], %bar[%c0]
}
)");
  ASSERT_NE(module, nullptr);
  MemoryEffects effects = MemoryEffectsOf(*FindOp(*module, "tma.load"));
  ASSERT_EQ(effects.size(), 3u);
  EXPECT_EQ(effects[0].extent, (absl::InlinedVector<int64_t, 4>{64, 64}));
  EXPECT_EQ(effects[1].extent, (absl::InlinedVector<int64_t, 4>{2, 32, 64}));
}

TEST(EffectsTest, PureOpsHaveNoEffects) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @pure (%n: index) block(32) {
  %t = thread.id x : index
  %a = add %t, %n : index
  %p = cmp lt %a, %n : i1
  %s = alloc.shared : shared f32[32]
}
)");
  ASSERT_NE(module, nullptr);
  Walk(module->kernels[0]->body(), [](const Op& op) {
    EXPECT_TRUE(MemoryEffectsOf(op).empty()) << op.mnemonic();
    EXPECT_FALSE(FactsOf(op.kind()).has_side_effects) << op.mnemonic();
    EXPECT_EQ(DescribeEffects(op), "exec per-thread");
  });
}

TEST(EffectsTest, LoadIsReadOnlyButNotSideEffecting) {
  const OpFacts& load = FactsOf(OpKind::kLoad);
  EXPECT_FALSE(load.has_side_effects);
  EXPECT_EQ(load.exec, ExecClass::kPerThread);
  EXPECT_TRUE(FactsOf(OpKind::kStore).has_side_effects);
  EXPECT_EQ(FactsOf(OpKind::kMbarrierInit).exec, ExecClass::kSingleIssue);
  EXPECT_EQ(FactsOf(OpKind::kLdmatrix).exec, ExecClass::kWarpCollective);
  EXPECT_EQ(FactsOf(OpKind::kTmaStore).group, TokenKind::kBulk);
  EXPECT_EQ(FactsOf(OpKind::kTmaLoad).group, std::nullopt);
}

// The passes ask for every op's effects several times: an op with one
// effect of rank at most 4 (a shared store or load, a TMA copy of a 2-D
// box, an mbarrier arrive) gets them without a heap allocation. Each used
// to cost three (the box argument and two copies while fitting it).
TEST(EffectsTest, OneEffectOfSmallRankAllocatesNothing) {
  if (!HeapCounting())
    GTEST_SKIP() << "the sanitizers' allocator is not counted";
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k(%g: global f32[256, 64]) block(128) {
  %tx = thread.id x : index
  %c0 = const 0 : index
  %f = const 1.0 : f32
  %s = alloc.shared : shared f32[4, 128]
  %bar = alloc.shared : shared mbarrier[1]
  store %s[%c0, %tx], %f
  %v = load %s[%c0, %tx] : f32
  mbarrier.arrive %bar[%c0]
})");
  ASSERT_NE(module, nullptr);
  // Once first: a table's one-time set-up is not what is bounded.
  Walk(module->kernels[0]->body(),
       [](const Op& op) { (void)MemoryEffectsOf(op); });
  int ops_with_one_effect = 0;
  Walk(module->kernels[0]->body(), [&](const Op& op) {
    const int64_t before = HeapAllocations();
    const MemoryEffects effects = MemoryEffectsOf(op);
    const int64_t allocations = HeapAllocations() - before;
    if (effects.size() == 1) {
      ++ops_with_one_effect;
      EXPECT_EQ(allocations, 0) << op.mnemonic();
    }
  });
  EXPECT_EQ(ops_with_one_effect, 3);
}

}  // namespace
}  // namespace kir
