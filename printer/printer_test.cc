// Printer tests: the canonical layout of headers, launch dimensions,
// attributes and numbers, PrintOp and PrintKernel, and the pending-group
// comments.
#include <limits>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "parser/parser.h"
#include "parser/testing/parse_for_test.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

std::string Reprint(const std::string& text, PrintOptions options = {}) {
  return PrintModule(*ParseOrEmptyForTest(text), options);
}

TEST(PrinterTest, EmptyModulePrintsNothing) {
  EXPECT_EQ(PrintModule(Module()), "");
}

TEST(PrinterTest, HeaderWithOneParamStaysOnOneLine) {
  EXPECT_EQ(Reprint("kernel @k  (  %x : f32 )  { }"),
            "kernel @k(%x: f32) grid(1) block(1) {\n}\n");
  EXPECT_EQ(Reprint("kernel @k() block(32) { }"),
            "kernel @k() grid(1) block(32) {\n}\n");
}

TEST(PrinterTest, HeaderWithSeveralParamsPutsOnePerLine) {
  EXPECT_EQ(Reprint("kernel @k sizes(%N, %M) (%x: global f32[%N] {align = 16},"
                    " %y: global f32[%M, %N] {layout = row_major}) { }"),
            "kernel @k sizes(%N, %M) (\n"
            "    %x: global f32[%N],\n"
            "    %y: global f32[%M, %N]) grid(1) block(1) {\n"
            "}\n");
}

TEST(PrinterTest, LaunchDimensionsStopAtTheLastOneThatIsNotOne) {
  EXPECT_EQ(Reprint("kernel @k() grid(1, 1, 1) block(32, 1, 1) "
                    "cluster(1, 1, 1) { }"),
            "kernel @k() grid(1) block(32) {\n}\n");
  EXPECT_EQ(Reprint("kernel @k() grid(1, 2) block(1, 1, 4) cluster(1, 2) { }"),
            "kernel @k() grid(1, 2) block(1, 1, 4) cluster(1, 2) {\n}\n");
  EXPECT_EQ(Reprint("kernel @k sizes(%N) () grid(cdiv(%N, 128), 1 * 1) { }"),
            "kernel @k sizes(%N) () grid(cdiv(%N, 128)) block(1) {\n}\n");
}

TEST(PrinterTest, IndexExpressionsKeepTheirMeaning) {
  EXPECT_EQ(Reprint("kernel @k sizes(%A, %B) () grid((%A - %B) - 1, %A - (%B "
                    "- 1), (%A + 1) * %B) block(%A * (%B / 2), -3 + %A) { }"),
            "kernel @k sizes(%A, %B) () grid(%A - %B - 1, %A - (%B - 1), (%A "
            "+ 1) * %B) block(%A * (%B / 2), (-3) + %A) {\n}\n");
}

TEST(PrinterTest, AttributesInSpecOrderWithoutDefaults) {
  EXPECT_EQ(
      Reprint(R"(kernel @k() {
  %s = alloc.shared {offset = 256, pad = 0, swizzle = 64, align = 16} : shared f32[64]
  %c = const 0 : index
  %f = ldmatrix %s[%c] {trans, count = 4} : vec<4xf32>
  %r = ldmatrix %s[%c] {count = 2} : vec<2xf32>
})"),
      "kernel @k() grid(1) block(1) {\n"
      "  %s = alloc.shared {swizzle = 64, offset = 256} : shared f32[64]\n"
      "  %c = const 0 : index\n"
      "  %f = ldmatrix %s[%c] {trans} : vec<4xf32>\n"
      "  %r = ldmatrix %s[%c] {count = 2} : vec<2xf32>\n"
      "}\n");
}

TEST(PrinterTest, FloatsRoundTripAndLookLikeFloats) {
  Module module;
  module.kernels.push_back(std::make_unique<Kernel>("k"));
  OpBuilder b(module.kernels[0]->body());
  const double values[] = {0.0,
                           -0.0,
                           1.0,
                           -2.0,
                           0.1,
                           1e16,
                           123456789012345678.0,
                           1.0 / 3.0,
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::max(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()};
  for (double value : values) b.FloatConstant(value, DType::kF32, "f");
  const std::string printed = PrintModule(module);
  EXPECT_NE(printed.find("%f = const 0.0 : f32\n"), std::string::npos);
  EXPECT_NE(printed.find("%f_1 = const -0.0 : f32\n"), std::string::npos);
  EXPECT_NE(printed.find("%f_2 = const 1.0 : f32\n"), std::string::npos);
  EXPECT_NE(printed.find("%f_3 = const -2.0 : f32\n"), std::string::npos);
  EXPECT_NE(printed.find("%f_4 = const 0.1 : f32\n"), std::string::npos);
  EXPECT_NE(printed.find("%f_5 = const 1e+16 : f32\n"), std::string::npos);
  EXPECT_NE(printed.find("%f_8 = const 5e-324 : f32\n"), std::string::npos);
  EXPECT_NE(printed.find("%f_10 = const -inf : f32\n"), std::string::npos);
  EXPECT_NE(printed.find("%f_11 = const nan : f32\n"), std::string::npos);
  std::unique_ptr<Module> parsed = ParseOrEmptyForTest(printed);
  const Region& body = parsed->kernels[0]->body();
  ASSERT_EQ(body.size(), 12);
  for (int i = 0; i < 11; ++i) {
    const Attribute& attr = body.op(i).GetAttr("value");
    EXPECT_FALSE(attr.is_integral) << i;
    EXPECT_EQ(attr, Attribute::Float(values[i])) << i << ": " << printed;
  }
  EXPECT_TRUE(std::isnan(body.op(11).GetAttr("value").float_value));
}

TEST(PrinterTest, StringsAreEscaped) {
  Module module;
  module.kernels.push_back(std::make_unique<Kernel>("k"));
  OpBuilder b(module.kernels[0]->body());
  b.Create(OpKind::kPtx, {}, {{"text", Attribute::String("a\"b\\c\nd\te")}});
  EXPECT_EQ(PrintModule(module),
            "kernel @k() grid(1) block(1) {\n"
            "  ptx \"a\\\"b\\\\c\\nd\\te\" ()\n"
            "}\n");
}

TEST(PrinterTest, PrintOpAndPrintKernel) {
  std::unique_ptr<Module> module = ParseOrEmptyForTest(R"(kernel @k() {
  %c = const 1 : index
  for %i = %c to %c step %c {
    barrier.block
  }
})");
  const Kernel& kernel = *module->kernels[0];
  EXPECT_EQ(PrintOp(kernel.body().op(0)), "%c = const 1 : index");
  EXPECT_EQ(PrintOp(kernel.body().op(1), {}, 2),
            "    for %i = %c to %c step %c {\n"
            "      barrier.block\n"
            "    }");
  EXPECT_EQ(PrintKernel(kernel), PrintModule(*module));
}

TEST(PrinterTest, SeveralKernelsAreSeparatedByABlankLine) {
  EXPECT_EQ(Reprint("kernel @a() {} kernel @b() {}"),
            "kernel @a() grid(1) block(1) {\n}\n\n"
            "kernel @b() grid(1) block(1) {\n}\n");
}

TEST(PrinterTest, ProvenanceOnlyWhenAsked) {
  const std::string text = R"(kernel @k() {
  fence.proxy.async all loc(inserted "insert-fences" for 3:5, 4:7)
  barrier.block loc(inserted "sync")
})";
  EXPECT_EQ(Reprint(text),
            "kernel @k() grid(1) block(1) {\n"
            "  fence.proxy.async all\n"
            "  barrier.block\n"
            "}\n");
  PrintOptions options;
  options.provenance = true;
  EXPECT_EQ(Reprint(text, options),
            "kernel @k() grid(1) block(1) {\n"
            "  fence.proxy.async all loc(inserted \"insert-fences\" for 3:5, "
            "4:7)\n"
            "  barrier.block loc(inserted \"sync\")\n"
            "}\n");
}

TEST(PrinterTest, PendingCountsFollowEveryWait) {
  const std::string text = R"(kernel @k() block(128) {
  %t0 = bulk.commit : token<bulk>
  %t1 = bulk.commit : token<bulk>
  bulk.wait %t0
  bulk.wait %t1 {read}
  %p = elect.sync : i1
  %t2 = bulk.commit : token<bulk>
  if %p {
    %t3 = bulk.commit : token<bulk>
  }
  bulk.wait %t2
  %w = wgmma.commit : token<wgmma>
  wgmma.wait %w
  %a = cp.async.commit : token<cp_async>
  %b = cp.async.commit : token<cp_async>
  cp.async.wait %a
})";
  PrintOptions options;
  options.pending_counts = true;
  EXPECT_EQ(Reprint(text, options),
            "kernel @k() grid(1) block(128) {\n"
            "  %t0 = bulk.commit : token<bulk>\n"
            "  %t1 = bulk.commit : token<bulk>\n"
            "  bulk.wait %t0 // pending: 1\n"
            "  bulk.wait %t1 {read} // pending: 0\n"
            "  %p = elect.sync : i1\n"
            "  %t2 = bulk.commit : token<bulk>\n"
            "  if %p {\n"
            "    %t3 = bulk.commit : token<bulk>\n"
            "  }\n"
            "  bulk.wait %t2 // pending: ?\n"
            "  %w = wgmma.commit : token<wgmma>\n"
            "  wgmma.wait %w // pending: 0\n"
            "  %a = cp.async.commit : token<cp_async>\n"
            "  %b = cp.async.commit : token<cp_async>\n"
            "  cp.async.wait %a // pending: 1\n"
            "}\n");
  // The comments are comments: the output parses back to the same text.
  EXPECT_EQ(Reprint(Reprint(text, options)), Reprint(text));
}

}  // namespace
}  // namespace kir
