// The structural queries on ops and regions that passes share: which op
// holds which, the ancestor of an op in a region or at the top level, the
// innermost enclosing op of a kind, and what an op defines inside it; and
// a region's op list under insertions and removals.
#include "ir/ir.h"

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "parser/parser.h"

namespace kir {
namespace {

const char kNest[] = R"(
kernel @k sizes(%N) (%x: global f32[64]) block(32) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c4 = const 4 : index
  for %i = %c0 to %c4 step %c1 {
    %p = cmp lt %i, %c1 : i1
    if %p {
      for %j = %c0 to %c4 step %c1 {
        %k = add %i, %j : index
        store %x[%k], %c0
      }
    }
  }
}
)";

class OpQueriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(kNest);
    ASSERT_TRUE(module.ok()) << module.status();
    module_ = *std::move(module);
    kernel_ = module_->FindKernel("k");
    ASSERT_NE(kernel_, nullptr);
    Walk(kernel_->body(), [&](Op& op) {
      if (op.num_results() > 0) defs_[op.result()->name()] = &op;
      if (op.kind() == OpKind::kFor) {
        loops_.push_back(&op);
        defs_[op.region(0).argument(0)->name()] = &op;
      }
      if (op.kind() == OpKind::kIf) if_ = &op;
      if (op.kind() == OpKind::kStore) store_ = &op;
    });
    ASSERT_EQ(loops_.size(), 2u);
  }

  const Value& ValueNamed(const std::string& name) {
    const Op* op = defs_.at(name);
    if (op->kind() == OpKind::kFor && op->region(0).argument(0)->name() == name)
      return *op->region(0).argument(0);
    return *op->result();
  }

  std::unique_ptr<Module> module_;
  Kernel* kernel_ = nullptr;
  std::map<std::string, Op*> defs_;
  std::vector<Op*> loops_;  // outer, inner
  Op* if_ = nullptr;
  Op* store_ = nullptr;
};

TEST_F(OpQueriesTest, IsInsideIsStrictAndTransitive) {
  Op& outer = *loops_[0];
  Op& inner = *loops_[1];
  EXPECT_TRUE(store_->IsInside(inner));
  EXPECT_TRUE(store_->IsInside(*if_));
  EXPECT_TRUE(store_->IsInside(outer));
  EXPECT_TRUE(inner.IsInside(outer));
  EXPECT_FALSE(outer.IsInside(outer));
  EXPECT_FALSE(outer.IsInside(inner));
  EXPECT_FALSE(if_->IsInside(inner));
}

TEST_F(OpQueriesTest, AncestorInFindsTheOpOfTheRegion) {
  Op& outer = *loops_[0];
  Op& inner = *loops_[1];
  EXPECT_EQ(store_->AncestorIn(kernel_->body()), &outer);
  EXPECT_EQ(store_->AncestorIn(outer.region(0)), if_);
  EXPECT_EQ(store_->AncestorIn(if_->region(0)), &inner);
  EXPECT_EQ(store_->AncestorIn(inner.region(0)), store_);
  // A region that does not hold it.
  EXPECT_EQ(outer.AncestorIn(inner.region(0)), nullptr);
  const Op& const_store = *store_;
  EXPECT_EQ(const_store.AncestorIn(outer.region(0)), if_);
}

TEST_F(OpQueriesTest, IsOrIsInsideIncludesTheOpItself) {
  Op& outer = *loops_[0];
  Op& inner = *loops_[1];
  EXPECT_TRUE(outer.IsOrIsInside(outer));
  EXPECT_TRUE(store_->IsOrIsInside(outer));
  EXPECT_TRUE(inner.IsOrIsInside(*if_));
  EXPECT_FALSE(outer.IsOrIsInside(inner));
  EXPECT_FALSE(if_->IsOrIsInside(inner));
}

TEST_F(OpQueriesTest, EnclosingOpFindsTheInnermostOfAKind) {
  Op& outer = *loops_[0];
  Op& inner = *loops_[1];
  EXPECT_EQ(store_->EnclosingOp(OpKind::kFor), &inner);
  EXPECT_EQ(store_->EnclosingOp(OpKind::kIf), if_);
  EXPECT_EQ(inner.EnclosingOp(OpKind::kFor), &outer);  // not itself
  EXPECT_EQ(outer.EnclosingOp(OpKind::kFor), nullptr);
  EXPECT_EQ(store_->EnclosingOp(OpKind::kRole), nullptr);
  // From a region: its own op first.
  EXPECT_EQ(inner.region(0).EnclosingOp(OpKind::kFor), &inner);
  EXPECT_EQ(if_->region(0).EnclosingOp(OpKind::kIf), if_);
  EXPECT_EQ(if_->region(0).EnclosingOp(OpKind::kFor), &outer);
  EXPECT_EQ(kernel_->body().EnclosingOp(OpKind::kFor), nullptr);
}

TEST_F(OpQueriesTest, RegionIsInsideItsOpAndItsOpsAncestors) {
  Op& outer = *loops_[0];
  Op& inner = *loops_[1];
  EXPECT_TRUE(inner.region(0).IsInside(inner));
  EXPECT_TRUE(inner.region(0).IsInside(*if_));
  EXPECT_TRUE(inner.region(0).IsInside(outer));
  EXPECT_TRUE(if_->region(1).IsInside(outer));
  EXPECT_FALSE(outer.region(0).IsInside(inner));
  EXPECT_FALSE(if_->region(0).IsInside(inner));
  EXPECT_FALSE(kernel_->body().IsInside(outer));
}

TEST_F(OpQueriesTest, TopLevelAncestorIsTheOpInTheKernelBody) {
  Op& outer = *loops_[0];
  EXPECT_EQ(store_->TopLevelAncestor(), &outer);
  EXPECT_EQ(if_->TopLevelAncestor(), &outer);
  EXPECT_EQ(outer.TopLevelAncestor(), &outer);
  const Op& const_store = *store_;
  EXPECT_EQ(const_store.TopLevelAncestor(), &outer);
  for (const auto& op : kernel_->body().ops()) {
    EXPECT_EQ(op->TopLevelAncestor(), op.get());
  }
}

TEST_F(OpQueriesTest, DefinesInsideCountsResultsAndRegionArguments) {
  Op& outer = *loops_[0];
  Op& inner = *loops_[1];
  // Its own induction variable, results of ops inside it, and the inner
  // loop's induction variable.
  EXPECT_TRUE(outer.DefinesInside(ValueNamed("i")));
  EXPECT_TRUE(outer.DefinesInside(ValueNamed("p")));
  EXPECT_TRUE(outer.DefinesInside(ValueNamed("j")));
  EXPECT_TRUE(outer.DefinesInside(ValueNamed("k")));
  // Values from outside: constants before it, sizes and parameters.
  EXPECT_FALSE(outer.DefinesInside(ValueNamed("c0")));
  EXPECT_FALSE(inner.DefinesInside(ValueNamed("i")));
  EXPECT_FALSE(inner.DefinesInside(ValueNamed("p")));
  EXPECT_TRUE(inner.DefinesInside(ValueNamed("k")));
  EXPECT_TRUE(if_->DefinesInside(ValueNamed("j")));
  EXPECT_FALSE(if_->DefinesInside(ValueNamed("p")));
  // An op does not define its own result inside itself.
  const Op& k_def = *defs_.at("k");
  EXPECT_FALSE(k_def.DefinesInside(ValueNamed("k")));
  for (const Param& param : kernel_->params()) {
    EXPECT_FALSE(outer.DefinesInside(*param.value));
  }
  for (const auto& size : kernel_->sizes()) {
    EXPECT_FALSE(outer.DefinesInside(*size));
  }
}

// A region's positions, iteration and IndexOf agree with a plain list
// through a random mix of insertions, removals and EraseIf at every place.
// IsBefore is the order a walk visits ops in: an op before what it holds,
// a then-region before its else-region; never across kernels.
// FindFirst returns the first match in Walk's order, parents before their
// children and before the ops after them, asks about no op after it, and
// returns null when nothing matches.
TEST_F(OpQueriesTest, FindFirstStopsAtTheFirstMatchInWalkOrder) {
  std::vector<const Op*> walked;
  Walk(kernel_->body(), [&](const Op& op) { walked.push_back(&op); });
  for (size_t target = 0; target < walked.size(); ++target) {
    size_t asked = 0;
    const Op* found = FindFirst(static_cast<const Region&>(kernel_->body()),
                                [&](const Op& op) {
                                  ++asked;
                                  return &op == walked[target];
                                });
    EXPECT_EQ(found, walked[target]) << target;
    EXPECT_EQ(asked, target + 1) << target;
  }
  // Of two matches deep in the nest (under both loops and the `if`), the
  // earlier.
  EXPECT_EQ(FindFirst(kernel_->body(),
                      [](Op& op) {
                        return op.kind() == OpKind::kStore ||
                               op.kind() == OpKind::kAdd;
                      }),
            defs_.at("k"));
  EXPECT_EQ(FindFirst(loops_[0]->region(0),
                      [](const Op& op) { return op.kind() == OpKind::kFor; }),
            loops_[1]);
  EXPECT_EQ(FindFirst(kernel_->body(),
                      [](const Op& op) { return op.kind() == OpKind::kLoad; }),
            nullptr);
}

TEST(OpOrderTest, IsBeforeIsTheOrderOfAWalk) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(R"(
kernel @k(%x: global f32[64]) block(32) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %tx = thread.id x : index
  %p = cmp lt %tx, %c1 : i1
  if %p {
    for %i = %c0 to %c1 step %c1 {
      store %x[%i], %c0
    }
    store %x[%c0], %c0
  } else {
    if %p {
      store %x[%c1], %c0
    }
  }
  store %x[%tx], %c0
}
kernel @other() block(32) {
  %c0 = const 0 : index
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<const Op*> walked;
  Walk((*module)->kernels[0]->body(),
       [&](const Op& op) { walked.push_back(&op); });
  ASSERT_EQ(walked.size(), 11u);
  for (size_t i = 0; i < walked.size(); ++i) {
    for (size_t j = 0; j < walked.size(); ++j) {
      EXPECT_EQ(walked[i]->IsBefore(*walked[j]), i < j) << i << " " << j;
    }
  }
  const Op& other = (*module)->kernels[1]->body().op(0);
  EXPECT_FALSE(other.IsBefore(*walked[1]));
  EXPECT_FALSE(walked[0]->IsBefore(other));
  // PreviousInProgramOrder steps back through the same walk: into the
  // last op of an op's last non-empty region, out to a parent, from an
  // else-region's first op to the then-region's last.
  EXPECT_EQ(walked[0]->PreviousInProgramOrder(), nullptr);
  for (size_t i = 1; i < walked.size(); ++i) {
    EXPECT_EQ(walked[i]->PreviousInProgramOrder(), walked[i - 1]) << i;
  }
  EXPECT_EQ(other.PreviousInProgramOrder(), nullptr);
  // Regions are numbered in their op: the outer if's then 0, its else 1.
  const Op& outer_if = *walked[4];
  ASSERT_EQ(outer_if.kind(), OpKind::kIf);
  ASSERT_EQ(outer_if.num_regions(), 2);
  EXPECT_EQ(outer_if.region(0).number_in_parent(), 0);
  EXPECT_EQ(outer_if.region(1).number_in_parent(), 1);
  EXPECT_EQ((*module)->kernels[0]->body().number_in_parent(), 0);
}

// Serial numbers: unique in the kernel, in creation order, below the
// kernel's bound; a new op gets a new one even where an old one was freed.
TEST(OpSerialTest, NumbersOpsInCreationOrder) {
  Kernel kernel("k");
  OpBuilder b(kernel.body());
  Value* one = b.Constant(1, DType::kIndex, "one");
  Value* two = b.Binary(OpKind::kAdd, one, one, "two");
  EXPECT_EQ(one->defining_op()->serial(), 0);
  EXPECT_EQ(two->defining_op()->serial(), 1);
  EXPECT_EQ(kernel.op_serial_bound(), 2);
  kernel.body().Take(1);  // destroys `two`
  b.SetInsertionPointToEnd(kernel.body());
  Op* three = b.Create(OpKind::kBarrierBlock, {});
  EXPECT_EQ(three->serial(), 2);
  EXPECT_EQ(kernel.op_serial_bound(), 3);
}

// MayHold: false for a kind the kernel never created (a pass may skip its
// walk), true once one was created, and still true after it is erased.
TEST(KernelTest, MayHoldKindsEverCreated) {
  Kernel kernel("k");
  EXPECT_FALSE(kernel.MayHold(OpKind::kAdd));
  EXPECT_FALSE(kernel.MayHoldAny([](OpKind) { return true; }));
  OpBuilder b(kernel.body());
  Value* one = b.Constant(1, DType::kIndex, "one");
  b.Binary(OpKind::kAdd, one, one, "two");
  EXPECT_TRUE(kernel.MayHold(OpKind::kAdd));
  EXPECT_FALSE(kernel.MayHold(OpKind::kBarrierBlock));
  EXPECT_TRUE(kernel.MayHoldAny([](OpKind k) { return k == OpKind::kAdd; }));
  EXPECT_FALSE(
      kernel.MayHoldAny([](OpKind k) { return k == OpKind::kBarrierBlock; }));
  kernel.body().Take(1);  // erases the add
  EXPECT_TRUE(kernel.MayHold(OpKind::kAdd));
}

TEST(RegionTest, EditsKeepPositionsOfAPlainList) {
  Kernel kernel("k");
  Region& body = kernel.body();
  std::vector<Op*> expected;
  std::vector<std::unique_ptr<Op>> taken;
  std::mt19937 random(12);
  auto check = [&] {
    ASSERT_EQ(body.size(), static_cast<int>(expected.size()));
    ASSERT_EQ(body.empty(), expected.empty());
    std::vector<Op*> iterated;
    for (const auto& op : body.ops()) iterated.push_back(op.get());
    ASSERT_EQ(iterated, expected);
    for (int i = 0; i < body.size(); ++i) {
      ASSERT_EQ(&body.op(i), expected[i]);
      ASSERT_EQ(body.IndexOf(expected[i]), i);
      ASSERT_EQ(expected[i]->parent_region(), &body);
    }
  };
  check();
  for (int step = 0; step < 2000; ++step) {
    const int size = static_cast<int>(expected.size());
    const int choice = static_cast<int>(random() % 10);
    if (choice < 6 || size == 0) {
      // Front, back, near the last edit or anywhere.
      const int index = static_cast<int>(random() % (size + 1));
      Op* op = body.Insert(
          index, kernel.CreateOp(OpKind::kBarrierBlock, Location(), {}, {}));
      expected.insert(expected.begin() + index, op);
    } else if (choice < 9) {
      const int index = static_cast<int>(random() % size);
      taken.push_back(body.Take(index));
      EXPECT_EQ(taken.back().get(), expected[index]);
      EXPECT_EQ(taken.back()->parent_region(), nullptr);
      expected.erase(expected.begin() + index);
    } else {
      const Op* victim = expected[random() % size];
      EXPECT_EQ(body.EraseIf([&](const Op& op) { return &op == victim; }), 1);
      expected.erase(std::find(expected.begin(), expected.end(), victim));
    }
    check();
  }
  // A taken op can go back, and is then found at its new place.
  Op* back = body.Insert(0, std::move(taken.front()));
  expected.insert(expected.begin(), back);
  check();
}

}  // namespace
}  // namespace kir
