// Structural equality: equal modules compare equal whatever their pointers
// and layout; each kind of difference is found and described.
#include "ir/equal.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "parser/parser.h"
#include "parser/testing/parse_for_test.h"

namespace kir {
namespace {

// Returns "" when equal, else the reported difference.
std::string Difference(const std::string& a, const std::string& b) {
  std::unique_ptr<Module> module_a = ParseOrEmptyForTest(a);
  std::unique_ptr<Module> module_b = ParseOrEmptyForTest(b);
  std::string why;
  const bool equal = StructurallyEqual(*module_a, *module_b, &why);
  if (equal) {
    EXPECT_TRUE(why.empty());
    return "";
  }
  EXPECT_FALSE(why.empty());
  return why;
}

const char kBase[] = R"(
kernel @k sizes(%M, %N) (%x: global f32[%M, %N], %y: global f32[%M]) grid(4) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %p = cmp lt %c0, %c1 : i1
  %s = alloc.shared {align = 128} : shared f32[64]
  for %i = %c0 to %c1 step %c1 {
    if %p {
      %v = load %x[%i, %c0] : f32
      store %y[%i], %v
    } else {
      barrier.block
    }
  }
  fence.proxy.async all loc(inserted "insert-fences" for 3:4)
}
)";

std::string Replace(std::string text, const std::string& from,
                    const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string ReplaceAll(std::string text, const std::string& from,
                       const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(StructurallyEqualTest, SameTextParsedTwiceIsEqual) {
  EXPECT_EQ(Difference(kBase, kBase), "");
}

TEST(StructurallyEqualTest, LayoutAndLocationsDoNotMatter) {
  std::string moved = Replace(kBase, "  %c0 = const 0 : index\n",
                              "\n\n      %c0   =   const 0:index // moved\n");
  moved = Replace(moved, "for 3:4", "for 30:40");
  EXPECT_EQ(Difference(kBase, moved), "");
}

TEST(StructurallyEqualTest, AttributeAtItsDefaultEqualsAbsentOne) {
  EXPECT_EQ(Difference(kBase, Replace(kBase, "{align = 128}",
                                      "{align = 128, swizzle = 0}")),
            "");
  EXPECT_EQ(Difference(kBase,
                       Replace(kBase, "step %c1 {", "step %c1 {unroll = 0} {")),
            "");
}

TEST(StructurallyEqualTest, FindsAttributeDifferences) {
  EXPECT_EQ(Difference(kBase, Replace(kBase, "cmp lt", "cmp le")),
            "kernel @k, body[2] (cmp): attribute 'pred': lt vs le");
  EXPECT_EQ(Difference(kBase, Replace(kBase, "{align = 128}", "{align = 256}")),
            "kernel @k, body[3] (alloc.shared): attribute 'align': 128 vs 256");
  EXPECT_EQ(Difference(kBase,
                       Replace(kBase, "step %c1 {", "step %c1 {unroll = 2} {")),
            "kernel @k, body[4] (for): attribute 'unroll': 0 vs 2");
  EXPECT_EQ(Difference("kernel @k() { %c = const 1 : f32 }",
                       "kernel @k() { %c = const 1.0 : f32 }"),
            "kernel @k, body[0] (const): attribute 'value': 1 vs 1 (float)");
}

TEST(StructurallyEqualTest, FindsOperandDifferences) {
  EXPECT_EQ(
      Difference(kBase, Replace(kBase, "cmp lt %c0, %c1", "cmp lt %c1, %c1")),
      "kernel @k, body[2] (cmp): operand #1: %c0 vs %c1 (different "
      "definitions)");
  EXPECT_EQ(Difference(kBase,
                       Replace(kBase, "load %x[%i, %c0]", "load %x[%c0, %c0]")),
            "kernel @k, body[4] (for) region 0[0] (if) region 0[0] (load): "
            "operand #1 index #1: %i vs %c0 (different definitions)");
  EXPECT_EQ(Difference(kBase,
                       Replace(kBase, "store %y[%i], %v", "store %y[%c0], %v")),
            "kernel @k, body[4] (for) region 0[0] (if) region 0[1] (store): "
            "operand #1 index #1: %i vs %c0 (different definitions)");
}

TEST(StructurallyEqualTest, FindsTypeDifferences) {
  EXPECT_EQ(
      Difference(kBase, Replace(kBase, "const 0 : index", "const 0 : i64")),
      "kernel @k, body[0] (const): result #1 %c0 type: index vs i64");
  EXPECT_EQ(
      Difference(kBase, Replace(kBase, "shared f32[64]", "shared f32[32]")),
      "kernel @k, body[3] (alloc.shared): result #1 %s type: shared "
      "f32[64] vs shared f32[32]");
  // Sizes in shapes match by position, not by pointer or by spelling alone.
  EXPECT_EQ(Difference(kBase, Replace(kBase, "%y: global f32[%M]",
                                      "%y: global f32[%N]")),
            "kernel @k: parameter #2 %y type: global f32[%M] vs global "
            "f32[%N]");
}

TEST(StructurallyEqualTest, FindsNameDifferences) {
  EXPECT_EQ(Difference(kBase, Replace(Replace(kBase, "%p = cmp", "%q = cmp"),
                                      "if %p", "if %q")),
            "kernel @k, body[2] (cmp): result #1 name: %p vs %q");
  EXPECT_EQ(Difference(kBase, ReplaceAll(kBase, "%i", "%j")),
            "kernel @k, body[4] (for): region argument #1 name: %i vs %j");
  EXPECT_EQ(Difference(kBase, Replace(kBase, "kernel @k", "kernel @k2")),
            "kernel @k: kernel name: @k vs @k2");
}

TEST(StructurallyEqualTest, FindsRegionContentDifferences) {
  EXPECT_EQ(Difference(kBase, Replace(kBase, "      barrier.block\n", "")),
            "kernel @k, body[4] (for) region 0[0] (if): number of ops in "
            "region: 1 vs 0; first unmatched op is 'barrier.block' in the "
            "first module");
  EXPECT_EQ(Difference(kBase, Replace(kBase, "      barrier.block\n",
                                      "      cluster.wait\n")),
            "kernel @k, body[4] (for) region 0[0] (if) region 1[0] "
            "(barrier.block): op kind: 'barrier.block' vs 'cluster.wait'");
  EXPECT_EQ(Difference(kBase, Replace(kBase, "    }\n  }\n  fence",
                                      "    }\n    wgmma.fence\n  }\n  fence")),
            "kernel @k, body[4] (for): number of ops in region: 1 vs 2; first "
            "unmatched op is 'wgmma.fence' in the second module");
}

TEST(StructurallyEqualTest, FindsKernelLevelDifferences) {
  EXPECT_EQ(Difference(kBase, Replace(kBase, "grid(4)", "grid(4, 2)")),
            "kernel @k: grid dimension y: 1 vs 2");
  EXPECT_EQ(Difference(kBase, Replace(kBase, "global f32[%M, %N]",
                                      "global f32[%M, %N] {align = 64}")),
            "kernel @k: parameter #1 align: 16 vs 64");
  EXPECT_EQ(
      Difference(kBase, Replace(kBase, "sizes(%M, %N)", "sizes(%M, %N, %K)")),
      "kernel @k: number of sizes: 2 vs 3");
  EXPECT_EQ(Difference(kBase, std::string(kBase) + "kernel @other() { }"),
            "number of kernels: 1 vs 2");
}

TEST(StructurallyEqualTest, ComparesProvenancePassNames) {
  EXPECT_EQ(Difference(kBase, Replace(kBase, "\"insert-fences\"", "\"other\"")),
            "kernel @k, body[5] (fence.proxy.async): inserted by: "
            "\"insert-fences\" vs \"other\"");
}

TEST(StructurallyEqualTest, ComparesForwardTokenUses) {
  const std::string loop = R"(
kernel @k() {
  %c0 = const 0 : index
  %c1 = const 1 : index
  for %i = %c0 to %c1 step %c1 {
    bulk.wait %t@1
    %t = bulk.commit : token<bulk>
    %u = bulk.commit : token<bulk>
  }
})";
  EXPECT_EQ(Difference(loop, loop), "");
  EXPECT_EQ(Difference(loop, Replace(loop, "%t@1", "%t@2")),
            "kernel @k, body[2] (for) region 0[0] (bulk.wait): operand #1 "
            "distance: @1 vs @2");
  EXPECT_EQ(Difference(loop, Replace(loop, "%t@1", "%u@1")),
            "kernel @k, body[2] (for) region 0[0] (bulk.wait): operand #1: "
            "%t vs %u (different definitions)");
}

TEST(StructurallyEqualTest, BuiltAndParsedModulesCompareEqual) {
  Module built;
  built.kernels.push_back(std::make_unique<Kernel>("k"));
  Kernel& kernel = *built.kernels.back();
  OpBuilder b(kernel.body());
  Value* c = b.Constant(3, DType::kI32, "c");
  b.Binary(OpKind::kAdd, c, c, "sum");
  std::unique_ptr<Module> parsed = ParseOrEmptyForTest(
      "kernel @k() grid(1) block(1) {\n  %c = const 3 : i32\n"
      "  %sum = add %c, %c : i32\n}\n");
  std::string why;
  EXPECT_TRUE(StructurallyEqual(built, *parsed, &why)) << why;
  EXPECT_TRUE(StructurallyEqual(*parsed, built, &why)) << why;
  // A null `why` is allowed.
  std::unique_ptr<Module> other = ParseOrEmptyForTest("kernel @k() { }");
  EXPECT_FALSE(StructurallyEqual(built, *other));
}

}  // namespace
}  // namespace kir
