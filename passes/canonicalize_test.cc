// Unit tests for the canonicalize pass.
#include "passes/canonicalize.h"

#include <string>
#include <vector>

#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "parser/parser.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

// Parses and verifies `text`, canonicalizes every kernel, verifies again and
// returns the printed module; `stats` receives the counters.
std::string Canonicalized(absl::string_view text,
                          PassStatistics* stats = nullptr) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  EXPECT_TRUE(Verify(**module).ok()) << Verify(**module);
  PassStatistics local;
  PassContext context{stats != nullptr ? *stats : local};
  for (auto& kernel : (*module)->kernels) {
    EXPECT_TRUE(Canonicalize(*kernel, PassOptions(), context).ok());
  }
  absl::Status verified = Verify(**module);
  EXPECT_TRUE(verified.ok()) << verified;
  return PrintModule(**module);
}

// The values of every `const` in the kernel, in program order.
std::vector<int64_t> ConstantValues(const Kernel& kernel) {
  std::vector<int64_t> values;
  Walk(kernel.body(), [&](const Op& op) {
    if (op.kind() == OpKind::kConst) {
      values.push_back(op.GetAttr("value").int_value);
    }
  });
  return values;
}

int CountOps(const Kernel& kernel, OpKind kind) {
  int count = 0;
  Walk(kernel.body(), [&](const Op& op) { count += op.kind() == kind; });
  return count;
}

TEST(CanonicalizeTest, FoldsBuiltArithmeticToOneConstant) {
  Kernel kernel("k");
  kernel.block.x = IndexExpr::Constant(32);
  Param param;
  param.kind = Param::Kind::kTensor;
  Value* out = kernel
                   .AddParam("out",
                             Type::Buffer(MemorySpace::kGlobal, DType::kI32,
                                          {IndexExpr::Constant(4)}),
                             param)
                   .value;
  OpBuilder b(kernel.body());
  Value* index = b.Constant(0, DType::kIndex, "i");
  Value* six = b.Constant(6, DType::kI32, "six");
  Value* seven = b.Constant(7, DType::kI32, "seven");
  Value* product = b.Binary(OpKind::kMul, six, seven, "product");
  Value* sum = b.Binary(OpKind::kAdd, product, seven, "sum");
  b.Create(OpKind::kStore, {Ref(out, {index}), Use(sum)});
  ASSERT_TRUE(Verify(kernel).ok()) << Verify(kernel);

  PassStatistics stats;
  PassContext context{stats};
  ASSERT_TRUE(Canonicalize(kernel, PassOptions(), context).ok());
  ASSERT_TRUE(Verify(kernel).ok()) << Verify(kernel);
  EXPECT_EQ(CountOps(kernel, OpKind::kMul), 0);
  EXPECT_EQ(CountOps(kernel, OpKind::kAdd), 0);
  // 6 and 7 go with the ops that used them; 42 is created and then folded
  // into 49.
  EXPECT_EQ(ConstantValues(kernel), (std::vector<int64_t>{0, 49}));
  EXPECT_EQ(stats.Get("folded"), 2);
  const Op& store = kernel.body().op(kernel.body().size() - 1);
  ASSERT_EQ(store.kind(), OpKind::kStore);
  EXPECT_EQ(store.operand_value(1)->name(), "c49");
}

struct DivisionCase {
  int64_t a, b, quotient, remainder;
};

TEST(CanonicalizeTest, DivisionTruncatesTowardZero) {
  const DivisionCase cases[] = {
      {7, 2, 3, 1},    {-7, 2, -3, -1}, {7, -2, -3, 1},
      {-7, -2, 3, -1}, {6, 3, 2, 0},    {-1, 4, 0, -1},
  };
  for (const DivisionCase& c : cases) {
    std::string text = absl::StrCat(
        "kernel @k(%out: global i32[2]) block(32) {\n"
        "  %c0 = const 0 : index\n"
        "  %c1 = const 1 : index\n"
        "  %a = const ",
        c.a, " : i32\n", "  %b = const ", c.b, " : i32\n",
        "  %q = div %a, %b : i32\n"
        "  %r = rem %a, %b : i32\n"
        "  store %out[%c0], %q\n"
        "  store %out[%c1], %r\n"
        "}\n");
    std::string printed = Canonicalized(text);
    SCOPED_TRACE(text);
    EXPECT_EQ(printed.find(" div "), std::string::npos) << printed;
    EXPECT_EQ(printed.find(" rem "), std::string::npos) << printed;
    // The stores name the folded values (or an equal existing constant).
    auto stored = [&](int slot) {
      auto module = ParseModuleString(printed);
      EXPECT_TRUE(module.ok());
      const Region& body = (*module)->kernels[0]->body();
      int seen = 0;
      for (const auto& op : body.ops()) {
        if (op->kind() != OpKind::kStore || seen++ != slot) continue;
        return op->operand_value(1)->defining_op()->GetAttr("value").int_value;
      }
      return int64_t{-999};
    };
    EXPECT_EQ(stored(0), c.quotient);
    EXPECT_EQ(stored(1), c.remainder);
  }
}

TEST(CanonicalizeTest, LeavesUndefinedArithmeticAlone) {
  std::string printed = Canonicalized(R"(
kernel @k(%out: global i32[1]) block(32) {
  %c0 = const 0 : index
  %zero = const 0 : i32
  %one = const 1 : i32
  %m1 = const -1 : i32
  %min = const -2147483648 : i32
  %big = const 40 : i32
  %a = div %one, %zero : i32
  store %out[%c0], %a
  %b = div %min, %m1 : i32
  store %out[%c0], %b
  %c = shl %one, %big : i32
  store %out[%c0], %c
  %d = shr %m1, %one : i32
  store %out[%c0], %d
}
)");
  EXPECT_NE(printed.find("%a = div %one, %zero"), std::string::npos) << printed;
  EXPECT_NE(printed.find("%b = div %min, %m1"), std::string::npos) << printed;
  EXPECT_NE(printed.find("%c = shl %one, %big"), std::string::npos) << printed;
  EXPECT_NE(printed.find("%d = shr %m1, %one"), std::string::npos) << printed;
}

TEST(CanonicalizeTest, ReassociatesAndCountsIt) {
  PassStatistics stats;
  std::string printed = Canonicalized(R"(
kernel @k(%out: global f32[64]) block(32) {
  %f = const 1.0 : f32
  %c2 = const 2 : index
  %c3 = const 3 : index
  %tid = thread.id x : index
  %a = add %tid, %c2 : index
  %b = add %a, %c3 : index
  store %out[%b], %f
}
)",
                                      &stats);
  EXPECT_NE(printed.find("%b = add %tid, %c5 : index"), std::string::npos)
      << printed;
  EXPECT_EQ(printed.find("%a ="), std::string::npos) << printed;
  EXPECT_EQ(stats.Get("reassociated"), 1);
}

TEST(CanonicalizeTest, DeduplicatesConstantsKeepingTheFirst) {
  PassStatistics stats;
  std::string printed = Canonicalized(R"(
kernel @k(%out: global f32[64]) block(32) {
  %f = const 1.0 : f32
  %first = const 3 : index
  %second = const 3 : index
  store %out[%second], %f
  store %out[%first], %f
}
)",
                                      &stats);
  EXPECT_EQ(printed.find("%second"), std::string::npos) << printed;
  EXPECT_NE(printed.find("store %out[%first], %f\n  store %out[%first], %f"),
            std::string::npos)
      << printed;
  EXPECT_EQ(stats.Get("constants-deduplicated"), 1);
}

TEST(CanonicalizeTest, InlinesConstantIfAndDropsZeroTripLoop) {
  PassStatistics stats;
  std::string printed = Canonicalized(R"(
kernel @k(%out: global f32[64]) block(32) {
  %f = const 1.0 : f32
  %c0 = const 0 : index
  %c1 = const 1 : index
  %p = cmp gt %c1, %c0 : i1
  if %p {
    %inner = add %c1, %c1 : index
    store %out[%inner], %f
  }
  for %i = %c1 to %c1 step %c1 {
    store %out[%i], %f
  }
}
)",
                                      &stats);
  EXPECT_EQ(printed.find("if "), std::string::npos) << printed;
  EXPECT_EQ(printed.find("for "), std::string::npos) << printed;
  EXPECT_NE(printed.find("store %out[%c2], %f"), std::string::npos) << printed;
  EXPECT_EQ(stats.Get("dead-ifs"), 1);
  EXPECT_EQ(stats.Get("dead-loops"), 1);
}

// A workspace whose only op use sits in a removed loop is still named by a
// tensor map parameter: erasing it left the map pointing at a freed value.
TEST(CanonicalizeTest, KeepsAWorkspaceThatATensorMapMaps) {
  PassStatistics stats;
  std::string printed = Canonicalized(R"(
kernel @k sizes(%M) (%y: global f32[%M, 64],
                     %ws_map: tensormap f32[8, 64] of %ws) block(32) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %ws = alloc.workspace : global f32[%M, 64]
  for %j = %c1 to %c0 step %c1 {
    %w = load %ws[%j, %c0] : f32
    store %y[%j, %c0], %w
  }
}
)",
                                      &stats);
  EXPECT_NE(printed.find("%ws = alloc.workspace"), std::string::npos)
      << printed;
  EXPECT_EQ(printed.find("for "), std::string::npos) << printed;
  EXPECT_EQ(stats.Get("dead-loops"), 1);
}

TEST(CanonicalizeTest, ReportsEveryCounterEvenWhenZero) {
  PassStatistics stats;
  Canonicalized("kernel @k() block(32) {\n}\n", &stats);
  std::vector<std::string> names;
  for (const auto& [name, value] : stats.counters()) {
    names.push_back(name);
    EXPECT_EQ(value, 0) << name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "constants-deduplicated", "dead-ifs", "dead-loops",
                       "folded", "identities", "ops-erased", "reassociated",
                       "zero-init-selects"}));
}

TEST(CanonicalizeTest, IsIdempotent) {
  const char* inputs[] = {
      R"(
kernel @k(%out: global i32[64], %n: index) block(32) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c4 = const 4 : index
  %tid = thread.id x : index
  %a = add %tid, %c1 : index
  %b = sub %a, %c4 : index
  %x = mul %b, %c1 : index
  %v = cast %x : i32
  %p = cmp lt %tid, %n : i1
  if %p {
    %c1_again = const 1 : index
    %y = add %x, %c1_again : index
    store %out[%y], %v
  }
}
)",
      R"(
kernel @k(%out: global i32[64]) block(32) {
  %c0 = const 0 : index
  %a = const 9 : i32
  %b = const -4 : i32
  %q = div %a, %b : i32
  %r = rem %a, %b : i32
  %s = xor %q, %r : i32
  store %out[%c0], %s
}
)",
  };
  for (const char* input : inputs) {
    const std::string once = Canonicalized(input);
    const std::string twice = Canonicalized(once);
    EXPECT_EQ(once, twice);
    PassStatistics stats;
    Canonicalized(once, &stats);
    for (const auto& [name, value] : stats.counters()) {
      EXPECT_EQ(value, 0) << name << " on second run of\n" << once;
    }
  }
}

}  // namespace
}  // namespace kir
