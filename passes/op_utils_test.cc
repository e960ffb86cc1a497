#include "passes/op_utils.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "passes/test_helpers.h"

namespace kir {
namespace {

// Loops and both branches of an `if`, nested, with enough ops that a few
// of them are sorted by place and most of them found by a walk.
std::string NestedKernel() {
  std::string text =
      "kernel @nested() block(128) {\n"
      "  %c0 = const 0 : index\n"
      "  %c1 = const 1 : index\n"
      "  %c4 = const 4 : index\n"
      "  %f = const 1.0 : f32\n"
      "  %tx = thread.id x : index\n"
      "  %low = cmp lt %tx, %c4 : i1\n"
      "  %s = alloc.shared : shared f32[128]\n";
  for (int unit = 0; unit < 40; ++unit) {
    absl::StrAppend(&text, "  store %s[%tx], %f\n", "  for %i", unit,
                    " = %c0 to %c4 step %c1 {\n", "    store %s[%tx], %f\n",
                    "    if %low {\n", "      store %s[%tx], %f\n",
                    "    } else {\n", "      store %s[%tx], %f\n", "    }\n",
                    "  }\n");
  }
  return text + "}\n";
}

// The ops of `kernel` that `keep` accepts, in a pre-order walk.
template <typename Keep>
std::vector<Op*> WalkOrder(Kernel& kernel, Keep keep) {
  std::vector<Op*> ops;
  Walk(kernel.body(), [&](Op& op) {
    if (keep(op)) ops.push_back(&op);
  });
  return ops;
}

// The order does not depend on whether the ops were few enough to sort by
// place or many enough to be found by a walk.
TEST(InProgramOrderTest, FewOpsAndManyOpsBothComeInPreOrder) {
  std::unique_ptr<Module> module = ParseForTest(NestedKernel());
  ASSERT_NE(module, nullptr);
  Kernel& kernel = *module->kernels.front();
  const std::vector<Op*> all = WalkOrder(kernel, [](Op&) { return true; });
  ASSERT_GT(all.size(), 200u);  // three are sorted: fewer than one in 32
  // Every op and the stores (the walk), the ops of the kernel body, and
  // three stores deep in the nest, given in reverse (sorted by place).
  const std::vector<Op*> stores =
      WalkOrder(kernel, [](Op& op) { return op.kind() == OpKind::kStore; });
  const std::vector<Op*> few = {stores[40], stores[17], stores[3]};
  // Only ops of the kernel body (placed by position).
  const std::vector<Op*> top = WalkOrder(
      kernel, [&](Op& op) { return op.parent_region() == &kernel.body(); });
  for (const std::vector<Op*>& expected :
       {all, stores, top,
        std::vector<Op*>{stores[3], stores[17], stores[40]}}) {
    OpSet given;
    for (Op* op : expected.size() == 3 ? few : expected) given.Insert(op);
    EXPECT_EQ(InProgramOrder(kernel, given), expected)
        << expected.size() << " ops";
  }
}

// An op taken out of the kernel is left out, by either way of ordering.
TEST(InProgramOrderTest, LeavesOutOpsNoLongerInTheKernel) {
  std::unique_ptr<Module> module = ParseForTest(NestedKernel());
  ASSERT_NE(module, nullptr);
  Kernel& kernel = *module->kernels.front();
  std::vector<Op*> stores =
      WalkOrder(kernel, [](Op& op) { return op.kind() == OpKind::kStore; });
  // Detached but alive: the region hands it back.
  Op* inner = stores[5];
  Region* region = inner->parent_region();
  std::unique_ptr<Op> detached = region->Take(region->IndexOf(inner));
  stores.erase(stores.begin() + 5);
  const std::vector<Op*> all = WalkOrder(kernel, [](Op&) { return true; });
  OpSet many;
  for (Op* op : all) many.Insert(op);
  many.Insert(detached.get());
  EXPECT_EQ(InProgramOrder(kernel, many), all);
  OpSet few = {stores[0], detached.get()};
  EXPECT_EQ(InProgramOrder(kernel, few), std::vector<Op*>{stores[0]});
}

// Membership follows every insertion and erasure, including an erasure
// from the middle (the last member moves into the gap) and an op inserted
// again after it was erased.
TEST(OpSetTest, MembershipFollowsInsertionsAndErasures) {
  std::unique_ptr<Module> module = ParseForTest(NestedKernel());
  ASSERT_NE(module, nullptr);
  Kernel& kernel = *module->kernels.front();
  const std::vector<Op*> stores =
      WalkOrder(kernel, [](Op& op) { return op.kind() == OpKind::kStore; });
  OpSet set;
  EXPECT_TRUE(set.empty());
  for (int i : {7, 2, 30, 11}) EXPECT_TRUE(set.Insert(stores[i]));
  EXPECT_FALSE(set.Insert(stores[2]));
  EXPECT_EQ(set.size(), 4u);
  EXPECT_TRUE(set.Erase(stores[2]));
  EXPECT_FALSE(set.Erase(stores[2]));
  EXPECT_FALSE(set.Erase(stores[3]));
  for (int i = 0; i < static_cast<int>(stores.size()); ++i) {
    EXPECT_EQ(set.Contains(stores[i]), i == 7 || i == 30 || i == 11) << i;
  }
  EXPECT_TRUE(set.Insert(stores[2]));
  EXPECT_EQ(InProgramOrder(kernel, set),
            (std::vector<Op*>{stores[2], stores[7], stores[11], stores[30]}));
  for (Op* op : std::vector<Op*>(set.ops())) EXPECT_TRUE(set.Erase(op));
  EXPECT_TRUE(set.empty());
  EXPECT_FALSE(set.Contains(stores[7]));
}

}  // namespace
}  // namespace kir
