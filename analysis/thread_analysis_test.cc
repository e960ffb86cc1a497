// Tests for the thread analysis: targeted cases, and a randomized
// cross-check of uniformity and executing sets against brute-force
// evaluation of the same predicates over every thread.
#include "analysis/thread_analysis.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/sanitizers.h"
#include "parser/parser.h"
#include "parser/testing/parse_for_test.h"

namespace kir {
namespace {

// The op defining `%name`, or the `skip`-th op with mnemonic `name`.
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

const Value* FindValue(const Module& module, absl::string_view name) {
  const Value* found = nullptr;
  Walk(module.kernels[0]->body(), [&](const Op& op) {
    for (int i = 0; i < op.num_results(); ++i) {
      if (op.result(i)->name() == name) found = op.result(i);
    }
    for (int r = 0; r < op.num_regions(); ++r) {
      for (int a = 0; a < op.region(r).num_arguments(); ++a) {
        if (op.region(r).argument(a)->name() == name) {
          found = op.region(r).argument(a);
        }
      }
    }
  });
  for (const auto& size : module.kernels[0]->sizes()) {
    if (size->name() == name) found = size.get();
  }
  return found;
}

// ---------------------------------------------------------------------------
// Targeted cases.

TEST(ThreadSetTest, Basics) {
  ThreadSet set = ThreadSet::None(80);
  for (int t = 32; t < 64; ++t) set.mutable_bits()[t] = true;
  EXPECT_EQ(set.Count(), 32);
  EXPECT_TRUE(set.IsWarpAligned());
  EXPECT_EQ(set.Warps(), std::vector<int>{1});
  set.mutable_bits()[70] = true;
  EXPECT_FALSE(set.IsWarpAligned());
  EXPECT_EQ(set.Warps(), (std::vector<int>{1, 2}));
  EXPECT_TRUE(ThreadSet::All(80).IsWarpAligned());  // partial last warp
  EXPECT_FALSE(ThreadSet::Unknown().known());
  EXPECT_TRUE(ThreadSet::Unknown().Contains(5));
  EXPECT_FALSE(set.Contains(1000));
  EXPECT_FALSE(ThreadSet::Unknown().IsWarpAligned());
}

TEST(ThreadAnalysisTest, TidXBelow32InTwoDimensionalBlockIsWarpUniform) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k () block(128, 2) {
  %tx = thread.id x : index
  %c32 = const 32 : index
  %p = cmp lt %tx, %c32 : i1
  if %p {
    barrier.named {id = 1, threads = 64}
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  EXPECT_EQ(analysis.num_threads(), 256);
  const Op* barrier = FindOp(*module, "barrier.named");
  const ThreadSet& set = analysis.ExecutingThreads(*barrier);
  ASSERT_TRUE(set.known());
  EXPECT_EQ(set.Warps(), (std::vector<int>{0, 4}));
  EXPECT_TRUE(set.IsWarpAligned());
  EXPECT_EQ(set.Count(), 64);
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "p")), Scope::kWarp);
  EXPECT_TRUE(analysis.GuardsUniformOver(*barrier, Scope::kWarp));
  const Op* culprit = nullptr;
  EXPECT_FALSE(
      analysis.GuardsUniformOver(*barrier, Scope::kWarpgroup, &culprit));
  EXPECT_EQ(culprit, FindOp(*module, "if"));
  const std::vector<int64_t>* tx =
      analysis.PerThreadValues(FindValue(*module, "tx"));
  ASSERT_NE(tx, nullptr);
  EXPECT_EQ((*tx)[130], 2);
}

TEST(ThreadAnalysisTest, TidXBelow48IsNotWarpUniform) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k () block(128) {
  %tx = thread.id x : index
  %c48 = const 48 : index
  %p = cmp lt %tx, %c48 : i1
  if %p {
    fence.proxy.async shared_cta
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "p")), Scope::kThread);
  const Op* fence = FindOp(*module, "fence.proxy.async");
  EXPECT_FALSE(analysis.GuardsUniformOver(*fence, Scope::kWarp));
  EXPECT_TRUE(analysis.GuardsUniformOver(*fence, Scope::kThread));
  EXPECT_EQ(analysis.ExecutingThreads(*fence).Count(), 48);
  EXPECT_FALSE(analysis.ExecutingThreads(*fence).IsWarpAligned());
}

TEST(ThreadAnalysisTest, ElectInRoleOfFourWarpsIsNotSingleThread) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k () block(256) {
  role @producer warps[4, 8) {
    %e = elect.sync : i1
    if %e {
      fence.acq_rel gpu
    }
    %w = warp.id : index
    %c4 = const 4 : index
    %first = cmp eq %w, %c4 : i1
    if %first {
      %e2 = elect.sync : i1
      if %e2 {
        fence.proxy.async shared_cta
      }
    }
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  const Op* per_warp = FindOp(*module, "fence.acq_rel");
  EXPECT_FALSE(analysis.IsSingleThread(*per_warp));
  EXPECT_EQ(analysis.ExecutingThreads(*per_warp).Warps(),
            (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(analysis.EnclosingRole(*per_warp), FindOp(*module, "role"));
  const Op* single = FindOp(*module, "fence.proxy.async");
  EXPECT_TRUE(analysis.IsSingleThread(*single));
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "e")), Scope::kThread);
  // The role's warps are the group for kRole; `warp.id == 4` is not
  // uniform over them. The elect is not even warp-uniform.
  const Op* culprit = nullptr;
  EXPECT_FALSE(analysis.GuardsUniformOver(*single, Scope::kRole, &culprit));
  EXPECT_EQ(culprit, FindOp(*module, "if", 1));
  EXPECT_FALSE(analysis.GuardsUniformOver(*single, Scope::kWarp, &culprit));
  EXPECT_EQ(culprit, FindOp(*module, "if", 2));
  EXPECT_TRUE(
      analysis.GuardsUniformOver(*FindOp(*module, "if", 2), Scope::kWarp));
}

TEST(ThreadAnalysisTest, ElectUnderWarpZeroIsSingleUnderTidBelow64IsNot) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k () block(128) {
  %w = warp.id : index
  %tx = thread.id x : index
  %c0 = const 0 : index
  %c64 = const 64 : index
  %warp0 = cmp eq %w, %c0 : i1
  %low = cmp lt %tx, %c64 : i1
  %e = elect.sync : i1
  if %warp0 {
    if %e {
      fence.acq_rel gpu
    }
  }
  if %low {
    %e2 = elect.sync : i1
    if %e2 {
      fence.acq_rel cta
    }
  }
  %both = and %warp0, %e : i1
  if %both {
    fence.acq_rel sys
  }
  if %warp0 {
    if %e {
    } else {
      fence.acq_rel cluster
    }
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  EXPECT_TRUE(analysis.IsSingleThread(*FindOp(*module, "fence.acq_rel", 0)));
  EXPECT_FALSE(analysis.IsSingleThread(*FindOp(*module, "fence.acq_rel", 1)));
  EXPECT_TRUE(analysis.IsSingleThread(*FindOp(*module, "fence.acq_rel", 2)));
  // The else side of an elect is every other lane.
  EXPECT_FALSE(analysis.IsSingleThread(*FindOp(*module, "fence.acq_rel", 3)));
}

TEST(ThreadAnalysisTest, SingleThreadByExactGuard) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k () block(32, 4) {
  %bar = alloc.shared : shared mbarrier[1]
  %tx = thread.id x : index
  %ty = thread.id y : index
  %c0 = const 0 : index
  %x0 = cmp eq %tx, %c0 : i1
  %y0 = cmp eq %ty, %c0 : i1
  %p = and %x0, %y0 : i1
  if %p {
    mbarrier.inval %bar[%c0]
  }
  if %x0 {
    fence.acq_rel gpu
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  EXPECT_TRUE(analysis.IsSingleThread(*FindOp(*module, "mbarrier.inval")));
  EXPECT_FALSE(analysis.IsSingleThread(*FindOp(*module, "fence.acq_rel")));
  EXPECT_EQ(
      analysis.ExecutingThreads(*FindOp(*module, "fence.acq_rel")).Warps(),
      (std::vector<int>{0, 1, 2, 3}));
}

TEST(ThreadAnalysisTest, ScopesOfLeaves) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k sizes(%N) (%x: global f32[%N], %s: index) grid(8) block(96) cluster(2) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c32 = const 32 : index
  %bid = block.id x : index
  %gdim = grid.dim x : index
  %bdim = block.dim x : index
  %rank = cluster.cta_rank : index
  %tx = thread.id x : index
  %v = load %x[%tx] : f32
  %wraw = div %tx, %c32 : index
  %wsh = shfl.sync idx %wraw, %c0 : index
  %vsh = shfl.sync idx %v, %c0 : f32
  %vdown = shfl.sync down %v, %c1 : f32
  %lane = lane.id : index
  %sum = add %bid, %s : index
  %mixed = add %tx, %bid : index
  %lt = cmp lt %sum, %N : i1
  for %i = %bid to %N step %c1 {
    %j = add %i, %c1 : index
  }
  for %k = %c0 to %tx step %c1 {
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  auto scope = [&](absl::string_view name) {
    const Value* value = FindValue(*module, name);
    EXPECT_NE(value, nullptr) << name;
    return ScopeName(analysis.UniformScope(value));
  };
  EXPECT_STREQ(scope("N"), "grid");
  EXPECT_STREQ(scope("c0"), "grid");
  EXPECT_STREQ(scope("bid"), "block");
  EXPECT_STREQ(scope("gdim"), "grid");
  EXPECT_STREQ(scope("bdim"), "grid");
  EXPECT_STREQ(scope("rank"), "block");
  EXPECT_STREQ(scope("tx"), "thread");
  EXPECT_STREQ(scope("v"), "thread");
  EXPECT_STREQ(scope("wraw"), "warp");  // 96 threads: tid.x / 32 = warp
  EXPECT_STREQ(scope("wsh"), "warp");
  EXPECT_STREQ(scope("vsh"), "warp");
  EXPECT_STREQ(scope("vdown"), "thread");
  EXPECT_STREQ(scope("lane"), "thread");
  EXPECT_STREQ(scope("sum"), "block");
  EXPECT_STREQ(scope("mixed"), "thread");
  EXPECT_STREQ(scope("lt"), "block");
  EXPECT_STREQ(scope("i"), "block");
  EXPECT_STREQ(scope("j"), "block");
  EXPECT_STREQ(scope("k"), "thread");
  ASSERT_NE(analysis.PerThreadValues(FindValue(*module, "wsh")), nullptr);
  EXPECT_EQ((*analysis.PerThreadValues(FindValue(*module, "wsh")))[70], 2);
  EXPECT_EQ(analysis.PerThreadValues(FindValue(*module, "v")), nullptr);
}

TEST(ThreadAnalysisTest, AffinePartsKeepUnknownOffsetsAnalysable) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k sizes(%N, %M) () block(128, 2) {
  %tx = thread.id x : index
  %w = warp.id : index
  %c32 = const 32 : index
  %a = add %tx, %N : index
  %p = cmp lt %a, %M : i1
  %b = add %w, %N : index
  %q = cmp lt %b, %M : i1
  %t32 = div %tx, %c32 : index
  %c = add %t32, %N : index
  %r = cmp lt %c, %M : i1
  %d = sub %a, %tx : index
  %s = cmp lt %d, %M : i1
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  auto scope = [&](absl::string_view name) {
    return ScopeName(analysis.UniformScope(FindValue(*module, name)));
  };
  EXPECT_STREQ(scope("p"), "thread");
  EXPECT_STREQ(scope("q"), "warp");
  EXPECT_STREQ(scope("r"), "warp");
  // (tid.x + N) - tid.x cancels: uniform over the grid.
  EXPECT_STREQ(scope("d"), "grid");
  EXPECT_STREQ(scope("s"), "grid");
}

TEST(ThreadAnalysisTest, TidXOver32IsNotWarpUniformWhenRowsStraddleWarps) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k () block(48, 2) {
  %tx = thread.id x : index
  %c32 = const 32 : index
  %t32 = div %tx, %c32 : index
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "t32")), Scope::kThread);
}

TEST(ThreadAnalysisTest, UnknownBlockShapeStillKnowsWarpIds) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k sizes(%B) () block(%B) {
  %w = warp.id : index
  %tx = thread.id x : index
  %c0 = const 0 : index
  %c32 = const 32 : index
  %warp0 = cmp eq %w, %c0 : i1
  %low = cmp lt %tx, %c32 : i1
  if %warp0 {
    %e = elect.sync : i1
    if %e {
      fence.acq_rel gpu
    }
  }
  if %low {
    barrier.block
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  EXPECT_EQ(analysis.num_threads(), std::nullopt);
  const Op* fence = FindOp(*module, "fence.acq_rel");
  EXPECT_FALSE(analysis.ExecutingThreads(*fence).known());
  EXPECT_TRUE(analysis.IsSingleThread(*fence));
  EXPECT_FALSE(analysis.GuardsUniformOver(*fence, Scope::kWarp));
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "warp0")), Scope::kWarp);
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "low")), Scope::kThread);
  EXPECT_EQ(analysis.PerThreadValues(FindValue(*module, "w")), nullptr);
  EXPECT_FALSE(analysis.GuardsUniformOver(*FindOp(*module, "barrier.block"),
                                          Scope::kWarp));
}

TEST(ThreadAnalysisTest, RolesAsGuards) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k () block(384) {
  role @all warps[0, 12) {
    barrier.block
  }
  role @consumer warps[4, 12) {
    barrier.named {id = 1, threads = 256}
    wgmma.fence
  }
  role @odd warps[2, 6) {
    setmaxnreg dec {regs = 40}
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  EXPECT_TRUE(analysis.GuardsUniformOver(*FindOp(*module, "barrier.block"),
                                         Scope::kBlock));
  const Op* named = FindOp(*module, "barrier.named");
  const Op* culprit = nullptr;
  EXPECT_FALSE(analysis.GuardsUniformOver(*named, Scope::kBlock, &culprit));
  EXPECT_EQ(culprit, FindOp(*module, "role", 1));
  EXPECT_TRUE(analysis.GuardsUniformOver(*named, Scope::kRole));
  EXPECT_TRUE(analysis.GuardsUniformOver(*FindOp(*module, "wgmma.fence"),
                                         Scope::kWarpgroup));
  // Warps [2, 6) split warpgroups 0 and 1.
  EXPECT_FALSE(analysis.GuardsUniformOver(*FindOp(*module, "setmaxnreg"),
                                          Scope::kWarpgroup));
  EXPECT_TRUE(
      analysis.GuardsUniformOver(*FindOp(*module, "setmaxnreg"), Scope::kWarp));
}

TEST(ThreadAnalysisTest, ConditionUniformOverTheRoleOnly) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k () block(256) {
  %w = warp.id : index
  %c4 = const 4 : index
  %hi = cmp ge %w, %c4 : i1
  role @consumer warps[4, 8) {
    if %hi {
      barrier.named {id = 1, threads = 128}
    }
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  const Op* barrier = FindOp(*module, "barrier.named");
  // Among warps 4..7, `warp.id >= 4` is always true.
  EXPECT_TRUE(analysis.GuardsUniformOver(*barrier, Scope::kRole));
  EXPECT_FALSE(analysis.GuardsUniformOver(*barrier, Scope::kBlock));
}

// barrier.red's result is shared by its participants: uniform over every
// thread that may reach it when exactly its count may (one generation takes
// them all), in a role as at the top level, and so a guard uniform over the
// block; only warp-uniform when fewer threads are counted than may arrive
// (two generations could split them). Under a guard the analysis cannot
// decide, all 256 may arrive and a generation needs all of them: a thread
// that does not come deadlocks the others, it cannot make them disagree.
TEST(ThreadAnalysisTest, BarrierReductionIsUniformOverItsParticipants) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k (%g: global i32[4]) block(256) {
  %c0 = const 0 : index
  %tid = thread.id x : index
  %first = cmp eq %tid, %c0 : i1
  %all = barrier.red or %first {id = 1, threads = 256} : i1
  %half = barrier.red or %first {id = 2, threads = 128} : i1
  role @consumer warps[4, 8) {
    %in_role = barrier.red popc %first {id = 3, threads = 128} : i32
  }
  %x = load %g[%c0] : i32
  %c0i = const 0 : i32
  %some = cmp ne %x, %c0i : i1
  if %some {
    %guarded = barrier.red and %first {id = 4, threads = 256} : i1
  }
  if %all {
    barrier.block
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "all")), Scope::kBlock);
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "half")), Scope::kWarp);
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "in_role")),
            Scope::kBlock);
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "guarded")),
            Scope::kBlock);
  EXPECT_TRUE(analysis.GuardsUniformOver(*FindOp(*module, "barrier.block"),
                                         Scope::kBlock));
}

TEST(ThreadAnalysisTest, LoopBoundsAndEarlyReturnsGuard) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k sizes(%N) () block(128) {
  %tx = thread.id x : index
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c48 = const 48 : index
  for %i = %c0 to %N step %c1 {
    barrier.block
  }
  for %j = %c0 to %tx step %c1 {
    fence.acq_rel gpu
  }
  %p = cmp lt %tx, %c48 : i1
  if %p {
    return
  }
  wgmma.fence
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  EXPECT_TRUE(analysis.GuardsUniformOver(*FindOp(*module, "barrier.block"),
                                         Scope::kBlock));
  const Op* culprit = nullptr;
  EXPECT_FALSE(analysis.GuardsUniformOver(*FindOp(*module, "fence.acq_rel"),
                                          Scope::kWarp, &culprit));
  EXPECT_EQ(culprit, FindOp(*module, "for", 1));
  EXPECT_FALSE(analysis.GuardsUniformOver(*FindOp(*module, "wgmma.fence"),
                                          Scope::kWarp, &culprit));
  EXPECT_EQ(culprit, FindOp(*module, "if"));
  // The loop comes before the return: unaffected.
  EXPECT_TRUE(analysis.GuardsUniformOver(*FindOp(*module, "barrier.block"),
                                         Scope::kWarp));
}

TEST(ThreadAnalysisTest, ValuesInsideGuardsAreUniformOverReachingThreads) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k () block(48) {
  %tx = thread.id x : index
  %c16 = const 16 : index
  %c20 = const 20 : index
  %low = cmp lt %tx, %c16 : i1
  if %low {
    %inner = cmp lt %tx, %c20 : i1
    if %inner {
      barrier.named {id = 1, threads = 32}
    }
  }
}
)");
  ASSERT_NE(module, nullptr);
  ThreadAnalysis analysis(*module->kernels[0]);
  // Threads 0..15 reach %inner, and it is true for all of them.
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "inner")), Scope::kGrid);
  EXPECT_EQ(analysis.UniformScope(FindValue(*module, "low")), Scope::kThread);
}

TEST(ThreadAnalysisTest, UnverifiedOpsDoNotCrash) {
  // Every op kind, with operands of the right slot kinds but without its
  // attributes, nested in an if whose condition is one of them.
  Kernel kernel("k");
  kernel.block.x = IndexExpr::Constant(64);
  OpBuilder builder(kernel.body());
  Value* index = builder.Constant(1, DType::kIndex, "one");
  Value* buffer = builder
                      .Create(OpKind::kAllocShared, {}, {},
                              {Type::Buffer(MemorySpace::kShared, DType::kI32,
                                            {IndexExpr::Constant(64)})},
                              {"smem"})
                      ->result();
  std::vector<const Op*> built;
  for (int i = 0; i < kNumOpKinds; ++i) {
    const OpInfo& info = GetOpInfo(static_cast<OpKind>(i));
    std::vector<Operand> operands;
    for (OperandSlot slot : info.operands) {
      operands.push_back(slot == OperandSlot::kRef ? Ref(buffer, {index})
                                                   : Use(index));
    }
    std::vector<Type> results(std::max(0, info.num_results),
                              Type::Scalar(DType::kIndex));
    Op* op = builder.Create(info.kind, std::move(operands), {}, results);
    for (int r = 0; r < info.num_regions; ++r) {
      kernel.AddRegion(*op, info.kind == OpKind::kFor
                                ? std::vector<Type>{Type::Scalar(DType::kIndex)}
                                : std::vector<Type>{});
      OpBuilder(op->region(r)).Create(OpKind::kBarrierBlock, {});
    }
    built.push_back(op);
  }
  ThreadAnalysis analysis(kernel);
  for (const Op* op : built) {
    SCOPED_TRACE(op->mnemonic());
    analysis.IsSingleThread(*op);
    analysis.GuardsUniformOver(*op, Scope::kWarp);
    for (int r = 0; r < op->num_results(); ++r) {
      analysis.UniformScope(op->result(r));
    }
    for (int r = 0; r < op->num_regions(); ++r) {
      EXPECT_TRUE(analysis.ExecutingThreads(op->region(r).op(0)).known());
    }
  }
}

// ---------------------------------------------------------------------------
// Randomized cross-check.

// A random integer or predicate expression, evaluated independently of the
// analysis.
struct Expr {
  enum Kind {
    kConst,
    kTid,
    kLane,
    kWarp,
    kSize,
    kBlockId,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kRem,
    kLt,
    kLe,
    kEq,
    kAnd,
    kOr
  };
  Kind kind = kConst;
  int64_t value = 0;  // kConst; kTid: dimension; kSize: which size
  std::shared_ptr<Expr> lhs, rhs;
};
using ExprPtr = std::shared_ptr<Expr>;

constexpr int kNumSizes = 3;

struct LaunchEnv {
  int64_t bx = 1, by = 1, bz = 1;
  std::vector<int64_t> sizes;
  int64_t block_id = 0;
  int threads() const { return static_cast<int>(bx * by * bz); }
};

int64_t Eval(const Expr& e, int t, const LaunchEnv& env) {
  switch (e.kind) {
    case Expr::kConst:
      return e.value;
    case Expr::kTid:
      return e.value == 0   ? t % env.bx
             : e.value == 1 ? (t / env.bx) % env.by
                            : t / (env.bx * env.by);
    case Expr::kLane:
      return t % 32;
    case Expr::kWarp:
      return t / 32;
    case Expr::kSize:
      return env.sizes[e.value];
    case Expr::kBlockId:
      return env.block_id;
    default:
      break;
  }
  int64_t a = Eval(*e.lhs, t, env);
  int64_t b = Eval(*e.rhs, t, env);
  switch (e.kind) {
    case Expr::kAdd:
      return a + b;
    case Expr::kSub:
      return a - b;
    case Expr::kMul:
      return a * b;
    case Expr::kDiv:
      return a / b;  // b is a positive constant
    case Expr::kRem:
      return a % b;
    case Expr::kLt:
      return a < b;
    case Expr::kLe:
      return a <= b;
    case Expr::kEq:
      return a == b;
    case Expr::kAnd:
      return a && b;
    case Expr::kOr:
      return a || b;
    default:
      return 0;
  }
}

bool UsesUnknowns(const Expr& e) {
  if (e.kind == Expr::kSize || e.kind == Expr::kBlockId) return true;
  return (e.lhs && UsesUnknowns(*e.lhs)) || (e.rhs && UsesUnknowns(*e.rhs));
}

std::string Show(const Expr& e) {
  static const char* kOps[] = {"",  "",  "",  "",  "",   "",   "+",  "-",
                               "*", "/", "%", "<", "<=", "==", "&&", "||"};
  switch (e.kind) {
    case Expr::kConst:
      return absl::StrCat(e.value);
    case Expr::kTid:
      return absl::StrCat("tid.", std::string(1, "xyz"[e.value]));
    case Expr::kLane:
      return "lane";
    case Expr::kWarp:
      return "warp";
    case Expr::kSize:
      return absl::StrCat("N", e.value);
    case Expr::kBlockId:
      return "bid";
    default:
      return absl::StrCat("(", Show(*e.lhs), " ", kOps[e.kind], " ",
                          Show(*e.rhs), ")");
  }
}

class ExprGenerator {
 public:
  explicit ExprGenerator(std::mt19937& rng) : rng_(rng) {}

  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  ExprPtr Leaf(bool allow_unknowns) {
    auto e = std::make_shared<Expr>();
    int pick = Uniform(0, 99);
    if (allow_unknowns && pick < 12) {
      e->kind = Expr::kSize;
      e->value = Uniform(0, kNumSizes - 1);
    } else if (allow_unknowns && pick < 16) {
      e->kind = Expr::kBlockId;
    } else if (pick < 30) {
      e->kind = Expr::kConst;
      e->value = Uniform(0, 3) == 0 ? 32 * Uniform(0, 4) : Uniform(0, 70);
    } else if (pick < 62) {
      e->kind = Expr::kTid;
      e->value = Uniform(0, 5) < 4 ? 0 : Uniform(1, 2);
    } else if (pick < 80) {
      e->kind = Expr::kWarp;
    } else {
      e->kind = Expr::kLane;
    }
    return e;
  }

  ExprPtr Constant(int64_t value) {
    auto e = std::make_shared<Expr>();
    e->value = value;
    return e;
  }

  ExprPtr Binary(Expr::Kind kind, ExprPtr lhs, ExprPtr rhs) {
    auto e = std::make_shared<Expr>();
    e->kind = kind;
    e->lhs = std::move(lhs);
    e->rhs = std::move(rhs);
    return e;
  }

  // Affine-ish integer expressions: sums of leaves, scaled, divided and
  // taken modulo positive constants.
  ExprPtr Integer(int depth, bool allow_unknowns) {
    if (depth == 0 || Chance(0.35)) return Leaf(allow_unknowns);
    static const int kDivisors[] = {1, 2, 3, 4, 8, 16, 32, 48, 64, 96, 128};
    switch (Uniform(0, 5)) {
      case 0:
        return Binary(Expr::kAdd, Integer(depth - 1, allow_unknowns),
                      Integer(depth - 1, allow_unknowns));
      case 1:
        return Binary(Expr::kSub, Integer(depth - 1, allow_unknowns),
                      Integer(depth - 1, allow_unknowns));
      case 2:
        return Binary(Expr::kMul, Integer(depth - 1, allow_unknowns),
                      Constant(Uniform(0, 4)));
      case 3:
        return Binary(Expr::kDiv, Integer(depth - 1, allow_unknowns),
                      Constant(kDivisors[Uniform(0, 10)]));
      case 4:
        return Binary(Expr::kRem, Integer(depth - 1, allow_unknowns),
                      Constant(kDivisors[Uniform(1, 10)]));
      default:
        return Integer(depth - 1, allow_unknowns);
    }
  }

  ExprPtr Predicate(int depth, bool allow_unknowns) {
    if (depth > 0 && Chance(0.3)) {
      return Binary(Chance(0.5) ? Expr::kAnd : Expr::kOr,
                    Predicate(depth - 1, allow_unknowns),
                    Predicate(depth - 1, allow_unknowns));
    }
    static const Expr::Kind kCompares[] = {Expr::kLt, Expr::kLe, Expr::kEq};
    return Binary(kCompares[Uniform(0, 2)], Integer(2, allow_unknowns),
                  Integer(1, allow_unknowns));
  }

 private:
  std::mt19937& rng_;
};

// Builds `e` as IR at the end of `b`'s region.
Value* BuildExpr(OpBuilder& b, const Expr& e,
                 const std::vector<Value*>& sizes) {
  const Type index = Type::Scalar(DType::kIndex);
  switch (e.kind) {
    case Expr::kConst:
      return b.Constant(e.value, DType::kIndex);
    case Expr::kTid:
      return b
          .Create(OpKind::kThreadId, {},
                  {{"dim", Attribute::Enum(std::string(1, "xyz"[e.value]))}},
                  {index}, {"tid"})
          ->result();
    case Expr::kLane:
      return b.Create(OpKind::kLaneId, {}, {}, {index}, {"lane"})->result();
    case Expr::kWarp:
      return b.Create(OpKind::kWarpId, {}, {}, {index}, {"warp"})->result();
    case Expr::kSize:
      return sizes[e.value];
    case Expr::kBlockId:
      return b
          .Create(OpKind::kBlockId, {}, {{"dim", Attribute::Enum("x")}},
                  {index}, {"bid"})
          ->result();
    default:
      break;
  }
  Value* lhs = BuildExpr(b, *e.lhs, sizes);
  Value* rhs = BuildExpr(b, *e.rhs, sizes);
  switch (e.kind) {
    case Expr::kAdd:
      return b.Binary(OpKind::kAdd, lhs, rhs);
    case Expr::kSub:
      return b.Binary(OpKind::kSub, lhs, rhs);
    case Expr::kMul:
      return b.Binary(OpKind::kMul, lhs, rhs);
    case Expr::kDiv:
      return b.Binary(OpKind::kDiv, lhs, rhs);
    case Expr::kRem:
      return b.Binary(OpKind::kRem, lhs, rhs);
    case Expr::kLt:
      return b.Compare(CmpPredicate::kLt, lhs, rhs);
    case Expr::kLe:
      return b.Compare(CmpPredicate::kLe, lhs, rhs);
    case Expr::kEq:
      return b.Compare(CmpPredicate::kEq, lhs, rhs);
    case Expr::kAnd:
      return b.Binary(OpKind::kAnd, lhs, rhs);
    case Expr::kOr:
      return b.Binary(OpKind::kOr, lhs, rhs);
    default:
      return nullptr;
  }
}

// Uniformity truth: is `value` (per sample, per thread) constant over every
// group instance at `level`, among the threads in `reach`?
enum Level { kWarpLevel, kWarpgroupLevel, kBlockLevel, kGridLevel };
constexpr Level kLevels[] = {kWarpLevel, kWarpgroupLevel, kBlockLevel,
                             kGridLevel};
const Scope kLevelScope[] = {Scope::kWarp, Scope::kWarpgroup, Scope::kBlock,
                             Scope::kGrid};

// values[s][b][t]: sample s (sizes), block id b, thread t. Threads absent
// from reach[s][b] do not count.
using PerSample = std::vector<std::vector<std::vector<int64_t>>>;
using ReachSample = std::vector<std::vector<std::vector<bool>>>;

bool TrulyUniform(const PerSample& values, const ReachSample& reach,
                  Level level) {
  for (size_t s = 0; s < values.size(); ++s) {
    bool grid_seen = false;
    int64_t grid_value = 0;
    for (size_t b = 0; b < values[s].size(); ++b) {
      const int n = static_cast<int>(values[s][b].size());
      const int chunk = level == kWarpLevel        ? 32
                        : level == kWarpgroupLevel ? 128
                                                   : n;
      for (int start = 0; start < n; start += chunk) {
        bool seen = false;
        int64_t first = 0;
        for (int t = start; t < std::min(n, start + chunk); ++t) {
          if (!reach[s][b][t]) continue;
          int64_t v = values[s][b][t];
          if (!seen) {
            seen = true;
            first = v;
          } else if (v != first) {
            return false;
          }
          if (level == kGridLevel) {
            if (!grid_seen) {
              grid_seen = true;
              grid_value = v;
            } else if (v != grid_value) {
              return false;
            }
          }
        }
      }
    }
  }
  return true;
}

struct Tally {
  int claims = 0, truths = 0, proven = 0, unsound = 0;
};

TEST(ThreadAnalysisRandomTest, AgreesWithBruteForce) {
  std::mt19937 rng(20240611);
  ExprGenerator gen(rng);
  // A tenth under the sanitizers, which look for memory errors, not for
  // rare index forms; the Release build runs them all.
  constexpr int kCases = SanitizerScaled(2000);
  constexpr int kSizeSamples = 6;
  const std::vector<int64_t> kBlockIds = {0, 1, 5};
  static const int64_t kWidths[] = {1,  7,  16, 24,  31,  32,  33, 40,
                                    48, 64, 96, 100, 128, 160, 256};

  // uniform[level]: every case; known[level]: cases without unknown
  // operands; strict: warp-uniform but not block-uniform values.
  Tally uniform[4], known[4], guards[4], strict;
  int exec_checks = 0, exec_exact = 0, exec_unsound = 0;
  int single_claims = 0, single_truths = 0, single_unsound = 0;
  std::vector<std::string> failures;

  for (int c = 0; c < kCases; ++c) {
    // A random block shape; 10% with a symbolic x extent.
    const bool symbolic_shape = gen.Chance(0.1);
    int64_t bx = kWidths[gen.Uniform(0, 14)];
    int64_t by = gen.Chance(0.5) ? 1 : gen.Uniform(2, 4);
    int64_t bz = gen.Chance(0.75) ? 1 : gen.Uniform(2, 3);
    while (bx * by * bz > 1024) by = 1, bz = 1;
    const bool allow_unknowns = gen.Chance(0.4);
    const bool with_elect = gen.Chance(0.2);
    ExprPtr p1 = gen.Predicate(2, allow_unknowns);
    ExprPtr inner = gen.Integer(3, allow_unknowns);
    ExprPtr p2 = gen.Predicate(1, allow_unknowns);

    Kernel kernel("random");
    std::vector<Value*> sizes;
    for (int i = 0; i < kNumSizes; ++i) {
      sizes.push_back(kernel.AddSize(absl::StrCat("N", i)));
    }
    Value* symbolic_bx = kernel.AddSize("BX");
    kernel.block.x =
        symbolic_shape ? IndexExpr::Size(symbolic_bx) : IndexExpr::Constant(bx);
    kernel.block.y = IndexExpr::Constant(by);
    kernel.block.z = IndexExpr::Constant(bz);
    OpBuilder top(kernel.body());
    Value* p1_value = BuildExpr(top, *p1, sizes);
    Op* outer_if = top.If(p1_value);
    OpBuilder then_builder(outer_if->region(0));
    Value* inner_value = BuildExpr(then_builder, *inner, sizes);
    Value* p2_value = BuildExpr(then_builder, *p2, sizes);
    if (with_elect) {
      Value* elect = then_builder
                         .Create(OpKind::kElectSync, {}, {},
                                 {Type::Scalar(DType::kI1)}, {"e"})
                         ->result();
      p2_value = then_builder.Binary(OpKind::kAnd, elect, p2_value);
    }
    Op* inner_if = then_builder.If(p2_value);
    Op* x_op = OpBuilder(inner_if->region(0)).Create(OpKind::kBarrierBlock, {});
    Op* y_op = OpBuilder(inner_if->region(1)).Create(OpKind::kBarrierBlock, {});
    Op* z_op = OpBuilder(outer_if->region(1)).Create(OpKind::kBarrierBlock, {});
    ThreadAnalysis analysis(kernel);

    // Brute force over samples of the unknowns.
    PerSample p1_vals, inner_vals, p2_vals;
    ReachSample all_reach, p1_reach;
    std::vector<LaunchEnv> envs;
    for (int s = 0; s < kSizeSamples; ++s) {
      LaunchEnv env;
      env.bx = symbolic_shape ? kWidths[gen.Uniform(0, 12)] : bx;
      env.by = by;
      env.bz = bz;
      for (int i = 0; i < kNumSizes; ++i) {
        env.sizes.push_back(gen.Uniform(0, 3) == 0 ? 32 * gen.Uniform(0, 4)
                                                   : gen.Uniform(0, 200));
      }
      p1_vals.emplace_back();
      inner_vals.emplace_back();
      p2_vals.emplace_back();
      all_reach.emplace_back();
      p1_reach.emplace_back();
      for (int64_t bid : kBlockIds) {
        env.block_id = bid;
        envs.push_back(env);
        const int n = env.threads();
        std::vector<int64_t> a(n), v(n), q(n);
        std::vector<bool> everyone(n, true), reached(n);
        for (int t = 0; t < n; ++t) {
          a[t] = Eval(*p1, t, env);
          v[t] = Eval(*inner, t, env);
          q[t] = Eval(*p2, t, env);
          reached[t] = a[t] != 0;
        }
        p1_vals.back().push_back(a);
        inner_vals.back().push_back(v);
        p2_vals.back().push_back(q);
        all_reach.back().push_back(everyone);
        p1_reach.back().push_back(reached);
      }
    }
    const std::string what =
        absl::StrCat("case ", c, ": block(", symbolic_shape ? "%BX" : "",
                     symbolic_shape ? "" : absl::StrCat(bx), ", ", by, ", ", bz,
                     ") p1 = ", Show(*p1), "; v = ", Show(*inner),
                     "; p2 = ", with_elect ? "elect && " : "", Show(*p2));
    auto fail = [&](const std::string& message) {
      if (failures.size() < 20) failures.push_back(what + ": " + message);
    };
    auto any_reached = [](const ReachSample& reach) {
      for (const auto& s : reach)
        for (const auto& b : s)
          for (bool r : b)
            if (r) return true;
      return false;
    };

    // Uniformity of p1 (everyone), v and p2 (threads where p1 holds).
    struct Subject {
      const char* name;
      const Value* value;
      const PerSample* values;
      const ReachSample* reach;
    };
    std::vector<Subject> subjects = {
        {"p1", p1_value, &p1_vals, &all_reach},
        {"v", inner_value, &inner_vals, &p1_reach}};
    if (!with_elect) {
      subjects.push_back({"p2", p2_value, &p2_vals, &p1_reach});
    }
    for (const Subject& subject : subjects) {
      const Scope claimed = analysis.UniformScope(subject.value);
      const bool counts = any_reached(*subject.reach);
      for (Level level : kLevels) {
        const bool claim = claimed >= kLevelScope[level];
        const bool truth = TrulyUniform(*subject.values, *subject.reach, level);
        Tally& tally = uniform[level];
        if (claim) ++tally.claims;
        if (claim && !truth) {
          ++tally.unsound;
          fail(absl::StrCat(subject.name, " claimed ", ScopeName(claimed)));
        }
        if (truth && counts) {
          ++tally.truths;
          if (claim) ++tally.proven;
          if (!allow_unknowns) {
            ++known[level].truths;
            if (claim) ++known[level].proven;
          }
        }
      }
      if (counts && TrulyUniform(*subject.values, *subject.reach, kWarpLevel) &&
          !TrulyUniform(*subject.values, *subject.reach, kBlockLevel)) {
        ++strict.truths;
        if (claimed >= Scope::kWarp) ++strict.proven;
      }
    }

    // Guards of X: p1 over everyone, then p2 over the threads reaching it.
    if (!with_elect) {
      for (Level level : {kWarpLevel, kWarpgroupLevel, kBlockLevel}) {
        const bool claim =
            analysis.GuardsUniformOver(*x_op, kLevelScope[level]);
        const bool truth = TrulyUniform(p1_vals, all_reach, level) &&
                           TrulyUniform(p2_vals, p1_reach, level);
        Tally& tally = guards[level];
        if (claim) ++tally.claims;
        if (claim && !truth) {
          ++tally.unsound;
          fail(absl::StrCat("guards of X claimed uniform over ",
                            ScopeName(kLevelScope[level])));
        }
        if (truth) {
          ++tally.truths;
          if (claim) ++tally.proven;
        }
      }
    }

    // Executing sets: each sample's true set must be inside the analysis's;
    // with an elect, any lane may be the elected one.
    struct Target {
      const char* name;
      const Op* op;
      std::function<bool(size_t, size_t, int)> may_run;
    };
    std::vector<Target> targets = {
        {"X", x_op,
         [&](size_t s, size_t b, int t) {
           return p1_vals[s][b][t] && p2_vals[s][b][t];
         }},
        {"Y", y_op,
         [&](size_t s, size_t b, int t) {
           return p1_vals[s][b][t] && (with_elect || !p2_vals[s][b][t]);
         }},
        {"Z", z_op,
         [&](size_t s, size_t b, int t) { return !p1_vals[s][b][t]; }},
    };
    const bool exact_expected =
        !allow_unknowns || (!UsesUnknowns(*p1) && !UsesUnknowns(*p2));
    for (const Target& target : targets) {
      const ThreadSet& set = analysis.ExecutingThreads(*target.op);
      std::vector<bool> union_set;
      bool sound = true, single = true;
      for (size_t s = 0; s < p1_vals.size(); ++s) {
        for (size_t b = 0; b < p1_vals[s].size(); ++b) {
          const int n = static_cast<int>(p1_vals[s][b].size());
          union_set.resize(std::max<size_t>(union_set.size(), n), false);
          std::vector<int> warps;
          for (int t = 0; t < n; ++t) {
            if (!target.may_run(s, b, t)) continue;
            union_set[t] = true;
            if (!set.Contains(t)) sound = false;
            if (warps.empty() || warps.back() != t / 32)
              warps.push_back(t / 32);
          }
          // With an elect in X's guard, each warp may run one thread.
          int count = 0;
          for (int t = 0; t < n; ++t) count += target.may_run(s, b, t);
          const bool elected = with_elect && target.op == x_op;
          if ((elected ? static_cast<int>(warps.size()) : count) > 1) {
            single = false;
          }
        }
      }
      if (set.known()) {
        ++exec_checks;
        if (!sound) {
          ++exec_unsound;
          fail(absl::StrCat("executing set of ", target.name,
                            " misses a thread"));
        }
        std::vector<bool> bits = set.bits();
        if (sound && exact_expected && !(with_elect && target.op != z_op) &&
            bits == union_set) {
          ++exec_exact;
        }
      }
      const bool claim = analysis.IsSingleThread(*target.op);
      if (claim) ++single_claims;
      if (single) ++single_truths;
      if (claim && !single) {
        ++single_unsound;
        fail(absl::StrCat(target.name, " claimed single-thread"));
      }
    }
  }

  for (const std::string& failure : failures) ADD_FAILURE() << failure;
  const char* kNames[] = {"warp", "warpgroup", "block", "grid"};
  auto percent = [](const Tally& tally) {
    return 100.0 * tally.proven / std::max(1, tally.truths);
  };
  for (Level level : kLevels) {
    EXPECT_EQ(uniform[level].unsound, 0) << kNames[level];
    EXPECT_EQ(guards[level].unsound, 0) << kNames[level];
    std::printf(
        "uniform over %-9s: %4d/%4d proven (%5.1f%%), without unknowns "
        "%4d/%4d (%5.1f%%)",
        kNames[level], uniform[level].proven, uniform[level].truths,
        percent(uniform[level]), known[level].proven, known[level].truths,
        percent(known[level]));
    if (level != kGridLevel) {
      std::printf("; guards %4d/%4d (%5.1f%%)", guards[level].proven,
                  guards[level].truths, percent(guards[level]));
    }
    std::printf("\n");
  }
  std::printf("warp- but not block-uniform: %d/%d proven (%.1f%%)\n",
              strict.proven, strict.truths, percent(strict));
  std::printf(
      "executing sets: %d checked, %d exact (cases without unknowns "
      "or elect), %d missing a thread\n",
      exec_checks, exec_exact, exec_unsound);
  std::printf("single thread: %d truly single, %d proven\n", single_truths,
              single_claims);
  EXPECT_EQ(exec_unsound, 0);
  EXPECT_EQ(single_unsound, 0);
  // The analysis must not be vacuous: it proves most warp-uniform cases.
  EXPECT_GT(uniform[kWarpLevel].proven, uniform[kWarpLevel].truths / 2);
  EXPECT_GT(exec_exact, 0);
}

}  // namespace
}  // namespace kir
