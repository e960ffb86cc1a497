// Parser tests: what parses into what, every diagnostic with its exact
// position, and robustness against hostile input.
#include "parser/parser.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/equal.h"
#include "ir/testing/heap_count.h"
#include "parser/lexer.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

std::unique_ptr<Module> MustParse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return std::make_unique<Module>();
  return *std::move(module);
}

std::string ParseError(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModuleString(text, "t.kir");
  if (module.ok()) return "(parsed)";
  return std::string(module.status().message());
}

// --- What parses.

TEST(LexerTest, TracksLinesAndColumnsAndStopsAtBadBytes) {
  Lexer lexer("kernel @k\n  %x.y // c\n");
  Token kernel = lexer.Next();
  EXPECT_TRUE(kernel.IsIdentifier("kernel"));
  EXPECT_EQ(kernel.line, 1);
  EXPECT_EQ(kernel.column, 1);
  EXPECT_TRUE(lexer.Next().is(Tok::kAt));
  EXPECT_TRUE(lexer.Next().IsIdentifier("k"));
  Token value = lexer.Next();
  EXPECT_TRUE(value.is(Tok::kValueName));
  EXPECT_EQ(value.text, "%x");
  EXPECT_EQ(value.ValueName(), "x");
  EXPECT_EQ(value.line, 2);
  EXPECT_EQ(value.column, 3);
  // '.' may continue an identifier but cannot start a token.
  Token bad = lexer.Next();
  EXPECT_TRUE(bad.is(Tok::kError));
  EXPECT_EQ(bad.column, 5);
  EXPECT_EQ(lexer.error(), "unexpected character '.'");
}

TEST(LexerTest, NulBytesAreReportedNotSkipped) {
  const std::string text("kernel @k() { \0 }", 17);
  EXPECT_EQ(ParseError(text).substr(0, ParseError(text).find('\n')),
            "t.kir:1:15: error: unexpected character byte 0x00");
}

TEST(LexerTest, NumbersStringsAndPunctuation) {
  Lexer lexer("0x1F -2.5e3 1e+2 7 \"a\\\"b\" % 4xf32");
  std::vector<Tok> kinds;
  std::vector<std::string> texts;
  for (Token t = lexer.Next(); !t.is(Tok::kEof); t = lexer.Next()) {
    kinds.push_back(t.kind);
    texts.emplace_back(t.text);
  }
  EXPECT_EQ(kinds,
            (std::vector<Tok>{Tok::kInteger, Tok::kMinus, Tok::kFloat,
                              Tok::kFloat, Tok::kInteger, Tok::kString,
                              Tok::kPercent, Tok::kInteger, Tok::kIdentifier}));
  EXPECT_EQ(texts, (std::vector<std::string>{"0x1F", "-", "2.5e3", "1e+2", "7",
                                             "\"a\\\"b\"", "%", "4", "xf32"}));
}

TEST(ParserTest, EmptyInputIsAnEmptyModule) {
  EXPECT_TRUE(MustParse("")->kernels.empty());
  EXPECT_TRUE(MustParse("  // only a comment\n\n")->kernels.empty());
}

// The parser leaves the kernel's name index to be built on first use; a
// name queried or created after parsing must still see every parsed name,
// nested region arguments and sizes included.
TEST(ParserTest, NamesReadAreTakenForLaterFreshNames) {
  std::unique_ptr<Module> module = MustParse(
      "kernel @k sizes(%N) (%x: global f32[%N]) grid(1) block(32) {\n"
      "  %v = const 0 : index\n"
      "  %c1 = const 1 : index\n"
      "  for %i = %v to %N step %c1 {\n"
      "    %v_1 = add %i, %c1 : index\n"
      "  }\n"
      "}\n");
  ASSERT_EQ(module->kernels.size(), 1u);
  Kernel& k = *module->kernels[0];
  for (const char* name : {"N", "x", "v", "c1", "i", "v_1"}) {
    EXPECT_TRUE(k.IsNameTaken(name)) << name;
    EXPECT_FALSE(k.ClaimName(name)) << name;
  }
  EXPECT_EQ(k.FreshName("v"), "v_2");
  EXPECT_EQ(k.FreshName("i"), "i_1");
  EXPECT_FALSE(k.IsNameTaken("w"));
  std::unique_ptr<Op> op =
      k.CreateOp(OpKind::kConst, {}, {Type::Scalar(DType::kIndex)}, {"c1"});
  EXPECT_EQ(op->result()->name(), "c1_1");
}

TEST(ParserTest, KernelHeader) {
  std::unique_ptr<Module> module = MustParse(
      "kernel @k sizes(%M, %N) (%a: global bf16[%M, %N + 8] {layout = "
      "col_major, align = 32}, %s: global f32[%M] {strides = [2]},\n"
      "  %m: tensormap bf16[64, 32] of %a {swizzle = 64, oob = nan}, %f: f32)"
      " grid(cdiv(%M, 64), %N / 2) block(128, 2) cluster(2) { }");
  ASSERT_EQ(module->kernels.size(), 1u);
  const Kernel& k = *module->kernels[0];
  EXPECT_EQ(k.name(), "k");
  ASSERT_EQ(k.sizes().size(), 2u);
  EXPECT_EQ(k.sizes()[1]->name(), "N");
  ASSERT_EQ(k.params().size(), 4u);
  const Param& a = k.params()[0];
  EXPECT_EQ(a.kind, Param::Kind::kTensor);
  EXPECT_EQ(a.layout, TensorLayout::kColumnMajor);
  EXPECT_EQ(a.align, 32);
  EXPECT_EQ(a.value->type().ToString(), "global bf16[%M, %N + 8]");
  EXPECT_EQ(k.params()[1].layout, TensorLayout::kStrided);
  ASSERT_EQ(k.params()[1].strides.size(), 1u);
  EXPECT_EQ(k.params()[1].strides[0].constant(), 2);
  const Param& m = k.params()[2];
  EXPECT_EQ(m.kind, Param::Kind::kTensorMap);
  EXPECT_EQ(m.tensor, a.value);
  EXPECT_EQ(m.swizzle, 64);
  EXPECT_EQ(m.oob, OobFill::kNan);
  EXPECT_EQ(m.value->type().ToString(), "tensormap bf16[64, 32]");
  EXPECT_EQ(k.params()[3].kind, Param::Kind::kScalar);
  EXPECT_EQ(k.grid.x.ToString(), "cdiv(%M, 64)");
  EXPECT_EQ(k.grid.y.ToString(), "%N / 2");
  EXPECT_EQ(k.grid.z.constant(), 1);
  EXPECT_EQ(k.block.y.constant(), 2);
  EXPECT_EQ(k.cluster.x.constant(), 2);
  EXPECT_TRUE(k.body().empty());
}

TEST(ParserTest, IndexExpressionPrecedenceAndNegativeConstants) {
  std::unique_ptr<Module> module = MustParse(
      "kernel @k sizes(%N) (%a: global f32[%N - 1 - 2, (%N - 1) * 2 % 3, "
      "%N-(-4), max(%N, 1) + min(2, %N)]) { }");
  const Type& type = module->kernels[0]->params()[0].value->type();
  ASSERT_EQ(type.rank(), 4);
  EXPECT_EQ(type.shape()[0].ToString(), "%N - 1 - 2");
  EXPECT_EQ(type.shape()[0].kind(), IndexExpr::Kind::kSub);
  EXPECT_EQ(type.shape()[0].lhs().kind(), IndexExpr::Kind::kSub);
  EXPECT_EQ(type.shape()[1].ToString(), "(%N - 1) * 2 % 3");
  EXPECT_EQ(type.shape()[2].ToString(), "%N - (-4)");
  EXPECT_EQ(type.shape()[3].ToString(), "max(%N, 1) + min(2, %N)");
}

TEST(ParserTest, GenericOpsOperandsAttributesAndTypes) {
  std::unique_ptr<Module> module = MustParse(R"(
kernel @k(%x: global f32[64, 64]) {
  %c0 = const 0 : index
  %cf = const -1.5 : f32
  %p = cmp ge %c0, %c0 : i1
  %v = load %x[%c0, %c0] : f32
  store %x[%c0, %c0], %v
  %s = alloc.shared {swizzle = 128, align = 1024} : shared bf16[64, 64]
  %f = ldmatrix %s[%c0, %c0] {trans} : vec<4xbf16>
  %r0, %r1 = ptx "mov $0, $2; mov $1, $2;" (%v) reads(%s) writes(%x) : f32, f32
  tma.prefetch %x
})");
  const Region& body = module->kernels[0]->body();
  ASSERT_EQ(body.size(), 9);
  EXPECT_EQ(body.op(0).kind(), OpKind::kConst);
  EXPECT_EQ(body.op(0).GetAttr("value"), Attribute::Integer(0));
  EXPECT_EQ(body.op(1).GetAttr("value"), Attribute::Float(-1.5));
  EXPECT_EQ(body.op(2).GetString("pred"), "ge");
  EXPECT_EQ(body.op(2).result()->type(), Type::Scalar(DType::kI1));
  const Op& load = body.op(3);
  ASSERT_EQ(load.num_operands(), 1);
  EXPECT_TRUE(load.operand(0).indexed);
  EXPECT_EQ(load.operand(0).value->name(), "x");
  EXPECT_EQ(load.operand(0).indices.size(), 2u);
  EXPECT_EQ(load.operand(0).indices[0], body.op(0).result());
  EXPECT_EQ(body.op(4).operand(1).value, load.result());
  // Attributes are kept in spec order whatever order they were written in.
  const Op& alloc = body.op(5);
  ASSERT_EQ(alloc.attrs().size(), 2u);
  EXPECT_EQ(alloc.attrs()[0].first, "align");
  EXPECT_EQ(alloc.attrs()[1].first, "swizzle");
  EXPECT_TRUE(body.op(6).GetFlag("trans"));
  EXPECT_EQ(body.op(6).GetInt("count"), 4);  // the default
  EXPECT_EQ(body.op(6).result()->type().ToString(), "vec<4xbf16>");
  const Op& ptx = body.op(7);
  EXPECT_EQ(ptx.num_results(), 2);
  EXPECT_EQ(ptx.num_operands(), 3);
  EXPECT_EQ(ptx.GetInt("reads"), 1);
  EXPECT_EQ(ptx.GetInt("writes"), 1);
  EXPECT_EQ(ptx.GetString("text"), "mov $0, $2; mov $1, $2;");
  EXPECT_FALSE(body.op(8).operand(0).indexed);
}

TEST(ParserTest, NamesAreKeptExactly) {
  std::unique_ptr<Module> module = MustParse(R"(
kernel @k() {
  %v_1 = const 1 : i32
  %v = const 2 : i32
  %0 = add %v, %v_1 : i32
  %acc_2 = add %0, %0 : i32
})");
  const Region& body = module->kernels[0]->body();
  EXPECT_EQ(body.op(0).result()->name(), "v_1");
  EXPECT_EQ(body.op(1).result()->name(), "v");
  EXPECT_EQ(body.op(2).result()->name(), "0");
  EXPECT_EQ(body.op(3).result()->name(), "acc_2");
}

TEST(ParserTest, NamesAreScopedToTheirKernel) {
  // The same names in two kernels are distinct values.
  std::unique_ptr<Module> module = MustParse(
      "kernel @a(%x: f32) { %y = neg %x : f32 }\n"
      "kernel @b(%x: f32) { %y = abs %x : f32 }");
  ASSERT_EQ(module->kernels.size(), 2u);
  EXPECT_EQ(module->kernels[1]->body().op(0).operand(0).value,
            module->kernels[1]->params()[0].value);
  // A value of an earlier kernel is not visible in a later one.
  EXPECT_EQ(ParseError("kernel @a() { %y = const 1 : i32 }\n"
                       "kernel @b() { %z = neg %y : i32 }"),
            "t.kir:2:24: error: use of undefined value %y\n"
            "kernel @b() { %z = neg %y : i32 }\n"
            "                       ^");
}

TEST(ParserTest, StructuredOpsAndRegions) {
  std::unique_ptr<Module> module = MustParse(R"(
kernel @k(%out: global f32[8]) block(256) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %p = cmp eq %c0, %c1 : i1
  for %i = %c0 to %c1 step %c1 {unroll = 4} {
    if %p {
      %z = const 0.0 : f32
      store %out[%i], %z
    } else {
      barrier.block
    }
  }
  role @producer warps[0, 4) { }
  splitk %out {op = max} body { } epilogue { barrier.block }
  if %p { }
})");
  const Region& body = module->kernels[0]->body();
  const Op& loop = body.op(3);
  EXPECT_EQ(loop.kind(), OpKind::kFor);
  EXPECT_EQ(loop.GetInt("unroll"), 4);
  ASSERT_EQ(loop.region(0).num_arguments(), 1);
  EXPECT_EQ(loop.region(0).argument(0)->name(), "i");
  EXPECT_TRUE(loop.region(0).argument(0)->type().is_index());
  const Op& branch = loop.region(0).op(0);
  ASSERT_EQ(branch.num_regions(), 2);
  EXPECT_EQ(branch.region(0).size(), 2);
  EXPECT_EQ(branch.region(0).op(1).operand(0).indices[0],
            loop.region(0).argument(0));
  EXPECT_EQ(branch.region(1).size(), 1);
  const Op& role = body.op(4);
  EXPECT_EQ(role.GetString("name"), "producer");
  EXPECT_EQ(role.GetInt("warp_begin"), 0);
  EXPECT_EQ(role.GetInt("warp_end"), 4);
  const Op& split = body.op(5);
  EXPECT_EQ(split.GetString("op"), "max");
  EXPECT_EQ(split.GetString("dim"), "z");
  EXPECT_EQ(split.region(1).size(), 1);
  EXPECT_EQ(body.op(6).num_regions(), 2);  // else exists, empty
  EXPECT_TRUE(body.op(6).region(1).empty());
}

TEST(ParserTest, TokenDistancesAndForwardUses) {
  std::unique_ptr<Module> module = MustParse(R"(
kernel @k() {
  %c0 = const 0 : index
  %c4 = const 4 : index
  %c1 = const 1 : index
  for %i = %c0 to %c4 step %c1 {
    bulk.wait %t@1 {read}
    %t = bulk.commit : token<bulk>
  }
  bulk.wait %t
})");
  const Region& body = module->kernels[0]->body();
  const Region& loop = body.op(3).region(0);
  const Op& wait = loop.op(0);
  EXPECT_EQ(wait.operand(0).value, loop.op(1).result());
  EXPECT_EQ(wait.operand(0).distance, 1);
  EXPECT_TRUE(wait.GetFlag("read"));
  EXPECT_EQ(body.op(4).operand(0).value, loop.op(1).result());
  EXPECT_EQ(body.op(4).operand(0).distance, 0);
}

TEST(ParserTest, ProvenanceTrailerFillsPassAndLocations) {
  std::unique_ptr<Module> module = MustParse(R"(
kernel @k() {
  %p = elect.sync : i1
  fence.proxy.async all loc(inserted "insert-fences" for 12:5, 3:14)
  if %p {
  } loc(inserted "x")
})");
  const Region& body = module->kernels[0]->body();
  const Provenance& fence = body.op(1).provenance();
  EXPECT_EQ(fence.pass, "insert-fences");
  ASSERT_EQ(fence.because.size(), 2u);
  EXPECT_EQ(fence.because[0].line, 12);
  EXPECT_EQ(fence.because[0].column, 5);
  EXPECT_EQ(fence.because[1].LineColumn(), "3:14");
  EXPECT_EQ(fence.because[1].file_name(), "<string>");
  EXPECT_EQ(body.op(2).provenance().pass, "x");
  EXPECT_TRUE(body.op(2).provenance().because.empty());
}

TEST(ParserTest, LocationsPointAtTheSource) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(
      "kernel @k(%a: f32) {\n  %b = neg %a : f32\n}\n", "file.kir");
  ASSERT_TRUE(module.ok());
  const Kernel& k = *(*module)->kernels[0];
  EXPECT_EQ(k.loc().ToString(), "file.kir:1:1");
  EXPECT_EQ(k.params()[0].value->loc().ToString(), "file.kir:1:11");
  EXPECT_EQ(k.body().op(0).loc().ToString(), "file.kir:2:3");
  EXPECT_EQ((*module)->source->name, "file.kir");
}

TEST(ParserTest, StringEscapes) {
  std::unique_ptr<Module> module =
      MustParse("kernel @k() { ptx \"a\\\"b\\\\c\\nd\\te\" () }");
  EXPECT_EQ(module->kernels[0]->body().op(0).GetString("text"),
            "a\"b\\c\nd\te");
}

TEST(ParserTest, IntegerAndFloatLimits) {
  std::unique_ptr<Module> module = MustParse(R"(
kernel @k() {
  %a = const 9223372036854775807 : i64
  %b = const -9223372036854775808 : i64
  %c = const 0x7fffffffffffffff : i64
  %d = const inf : f32
  %e = const -inf : f32
  %f = const nan : f32
  %g = const 1.7976931348623157e308 : f32
})");
  const Region& body = module->kernels[0]->body();
  EXPECT_EQ(body.op(0).GetAttr("value").int_value, INT64_MAX);
  EXPECT_EQ(body.op(1).GetAttr("value").int_value, INT64_MIN);
  EXPECT_EQ(body.op(2).GetAttr("value").int_value, INT64_MAX);
  EXPECT_EQ(body.op(3).GetAttr("value").float_value,
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(body.op(4).GetAttr("value").float_value,
            -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(body.op(5).GetAttr("value").float_value));
  EXPECT_EQ(body.op(6).GetAttr("value").float_value,
            std::numeric_limits<double>::max());
}

TEST(ParserTest, SampleFileCoversEveryOpKind) {
  const std::string path = std::string(KIR_TESTDATA_DIR) + "/parser/ops.kir";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty()) << path;
  std::unique_ptr<Module> module = MustParse(text.str());
  std::set<OpKind> kinds;
  for (const auto& kernel : module->kernels) {
    Walk(kernel->body(), [&](const Op& op) { kinds.insert(op.kind()); });
  }
  for (int i = 0; i < kNumOpKinds; ++i) {
    EXPECT_TRUE(kinds.count(static_cast<OpKind>(i)))
        << "testdata/parser/ops.kir lacks '" << Mnemonic(static_cast<OpKind>(i))
        << "'";
  }
}

// --- Diagnostics: each with its exact position.

struct ErrorCase {
  const char* source;
  const char* expected;  // "line:col: error: message"
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.source; }

class ParserErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(ParserErrorTest, ReportsTheFirstErrorAtItsPosition) {
  const ErrorCase& c = GetParam();
  const std::string message = ParseError(c.source);
  const std::string first_line = message.substr(0, message.find('\n'));
  EXPECT_EQ(first_line, absl::StrCat("t.kir:", c.expected)) << message;
}

const ErrorCase kErrorCases[] = {
    {"kernel @k() { %a = const 1 : i32\n  %a = const 2 : i32 }",
     "2:3: error: redefinition of %a"},
    {"kernel @k() { %a = frobnicate }",
     "1:20: error: unknown operation 'frobnicate'"},
    {"kernel @k() { %a = add %b, %c : i32 }",
     "1:24: error: use of undefined value %b"},
    {"kernel @k() {\n  %c = const 1 : i32\n  %a = add %c : i32\n}",
     "3:15: error: expected operand #2 of 'add' (value), found ':'"},
    {"kernel @k() {\n  %p = cmp foo %a, %b : i1\n}",
     "2:12: error: invalid value 'foo' for attribute 'pred' of 'cmp'"},
    {"kernel @k() { %s = ptx \"abc }", "1:24: error: unterminated string"},
    {"kernel @k() { %c = const 99999999999999999999 : i32 }",
     "1:26: error: integer literal does not fit in 64 bits"},
    {"kernel @k() { %c = const -9223372036854775809 : i64 }",
     "1:26: error: integer literal does not fit in 64 bits"},
    {"kernel @k() { barrier.named {id = 1} }",
     "1:15: error: 'barrier.named' requires attribute 'threads'"},
    {"kernel @k() { bulk.wait %t@1 }",
     "1:25: error: use of undefined value %t"},
    {"kernel @k() { bulk.wait %t@0\n %t = bulk.commit : token<bulk> }",
     "1:25: error: use of undefined value %t (a token used before its "
     "definition names an earlier iteration: '@N' with N >= 1)"},
    {"kernel @k() { barrier.named {id = 1, threads = 32, id = 2} }",
     "1:52: error: duplicate attribute 'id'"},
    {"kernel @k() { barrier.block {color = 1} }",
     "1:30: error: 'barrier.block' has no attribute 'color'"},
    {"kernel @k(%x: global f32[4]) { %c = const 0 : index\n"
     "  %v = load %x : f32 }",
     "2:13: error: operand #1 of 'load' must be a buffer reference "
     "`%x[...]`"},
    {"kernel @k(%x: global f32[4]) { %c = const 0 : index\n"
     "  %v = add %x[%c], %c : f32 }",
     "2:14: error: operand #1 of 'add' is a value, not a buffer reference"},
    {"kernel @k() { %c = const 1 : i32\n  %a, %b = add %c, %c : i32 }",
     "2:3: error: 'add' has 1 result, but 2 result names are given"},
    {"kernel @k() { %c = const 1 : i32\n  add %c, %c : i32 }",
     "2:3: error: 'add' has 1 result, but no result name is given"},
    {"kernel @k() { %c = const 1 : i32\n  %a = add %c, %c : i32, i32 }",
     "2:26: error: 'add' has 1 result, but 2 types are given"},
    {"kernel @k() { %c = const 1 : i32\n  %a = add %c, %c }",
     "2:19: error: expected ':' and the result type of 'add', found '}'"},
    {"kernel @k(%x: global f32[4]) { %c = const 0 : index\n"
     "  %v = load %x[%c] : f32\n  store %x[%c], %v : f32 }",
     "3:20: error: 'store' has no results, so it takes no types"},
    {"kernel @k() { %c = const 1 : i32\n  %d = store %c }",
     "2:3: error: 'store' has no results, but 1 result name is given"},
    {"kernel @k() { %c = const 1 : flt32 }",
     "1:30: error: expected a type, found 'flt32'"},
    {"kernel @k() { %c = const 1 : vec<4xq32> }",
     "1:35: error: expected a vector element type after 'x', found 'q32'"},
    {"kernel @k() { %c = const 1 : token<tma> }",
     "1:36: error: expected a token kind ('bulk', 'wgmma' or 'cp_async'), "
     "found 'tma'"},
    {"kernel @k() { %c = const 1 : i32 } }",
     "1:36: error: expected 'kernel', found '}'"},
    {"kernel @k() { %c = const 1 : i32\n",
     "2:1: error: expected '}' to end the region, found end of file"},
    {"kernel @k(%x: global f32[%N]) { }",
     "1:26: error: use of undefined value %N"},
    {"kernel @k() grid(1, 2, 3, 4) { }",
     "1:27: error: 'grid' takes at most 3 dimensions (x, y, z)"},
    {"kernel @k() block(32) block(64) { }",
     "1:23: error: duplicate 'block' dimensions"},
    {"kernel @k(%x: global f32[4],\n"
     "          %m: tensormap f32[4] of %x {swizzle = 48}) { }",
     "2:49: error: invalid swizzle 48"},
    {"kernel @k(%x: global f32[4] {layout = diagonal}) { }",
     "1:39: error: expected 'row_major' or 'col_major', found 'diagonal'"},
    {"kernel @k(%x: global f32[4] {shape = 4}) { }",
     "1:30: error: unknown tensor attribute 'shape'"},
    {"kernel @k(%x: f32, %m: tensormap f32[4] of %x) { }",
     "1:44: error: %x is not a global tensor parameter or a workspace "
     "(alloc.workspace)"},
    {"kernel @k() { fence.acq_rel everywhere }",
     "1:29: error: invalid value 'everywhere' for attribute 'scope' of "
     "'fence.acq_rel'"},
    {"kernel @k() { %c = const 1 : i32 $ }",
     "1:34: error: unexpected character '$'"},
    {"kernel @k() { %s = alloc.shared {trans} : shared f32[4] }",
     "1:34: error: 'alloc.shared' has no attribute 'trans'"},
    {"kernel @k() { cluster.arrive {relaxed = 1} }",
     "1:39: error: flag 'relaxed' takes no value; write just 'relaxed' to "
     "set it"},
    {"kernel @k() { %s = alloc.shared {align} : shared f32[4] }",
     "1:39: error: expected '=' and a value for attribute 'align', found '}'"},
    {"kernel @k() { %c = const 1 : index\n"
     "  for %i = %c to %c step %c {unroll = x} { } }",
     "2:39: error: expected the 'unroll' attribute of 'for' (an integer), "
     "found 'x'"},
    {"kernel @k() { role @p warps[0, 4] { } }",
     "1:33: error: expected ')' (warp ranges are half-open), found ']'"},
    {"kernel @k() {} kernel @k() {}", "1:16: error: redefinition of kernel @k"},
    {"kernel @k() { wgmma.fence loc(inserted \"\" for 1:2) }",
     "1:40: error: the pass name must not be empty"},
    {"kernel @k() { %c = const 1 : index\n  barrier.block, %c }",
     "2:16: error: too many operands for 'barrier.block'"},
    {"kernel @k() { %c = const 1 : index\n  %d = cmp {pred = lt} %c, %c : i1 }",
     "2:12: error: expected the 'pred' attribute of 'cmp' (an enum: eq, ne, "
     "lt, le, gt, ge), found '{'"},
    {"kernel @k() { %c = const 1 : index\n"
     "  %s = alloc.shared {align = 1, align = 2} : shared f32[4] }",
     "2:33: error: duplicate attribute 'align'"},
    {"kernel @k() { ptx \"x\" () {reads = 1} }",
     "1:27: error: attribute 'reads' of 'ptx' is part of its syntax, not of "
     "the braces"},
    {"kernel @k(%x: global f32[4]) { splitk %x[%x] body { } epilogue { } }",
     "1:41: error: operand #1 of 'splitk' is a whole buffer and takes no "
     "indices"},
    {"kernel @k() { %s = ptx \"bad \\q escape\" () : i32 }",
     "1:29: error: unknown escape sequence '\\q'; strings take \\\", \\\\, "
     "\\n and \\t"},
    {"kernel @k(%n: index) block(%n) { }",
     "1:28: error: %n is not a size; index expressions in shapes and launch "
     "dimensions use only the kernel's sizes"},
    {"kernel @k() block(9223372036854775807 * 2) { }",
     "1:39: error: index expression overflows 64 bits"},
    {"kernel @k() block((-9223372036854775807 - 1) / -1) { }",
     "1:46: error: index expression overflows 64 bits"},
    {"kernel @k(%x: global f32[4] {strides = [1, 2]}) { }",
     "1:40: error: a rank-1 tensor takes 1 stride, got 2"},
    {"kernel @k(%x: global f32[4] {layout = row_major, strides = [1]}) { }",
     "1:50: error: a tensor takes 'layout' or 'strides', not both"},
    {"kernel k() { }",
     "1:8: error: expected '@' and the kernel name, found 'k'"},
    {"func @k() { }", "1:1: error: expected 'kernel', found 'func'"},
    {"kernel @k() { %c = const 1.5e999 : f32 }",
     "1:26: error: float literal '1.5e999' is out of range for f64"},
    {"kernel @k(%a: f32, %a: f32) { }", "1:20: error: redefinition of %a"},
    {"kernel @k sizes(%N) (%N: f32) { }", "1:22: error: redefinition of %N"},
    {"kernel @k() { %c = const 1 : index\n"
     "  for %c = %c to %c step %c { } }",
     "2:7: error: redefinition of %c"},
    {"kernel @k() { %c = const 1 : index\n"
     "  for %i = %c to %c step %c { }\n"
     "  %i = const 2 : index }",
     "3:3: error: redefinition of %i"},
    {"kernel @k() { %a, %a = ptx \"\" () : i32, i32 }",
     "1:19: error: redefinition of %a"},
    {"kernel @k() { %c = const 1 : index %d = const 2 : index\n"
     "  wgmma.wait %c@-1 }",
     "2:17: error: token distance must be between 0 and 2147483647, got -1"},
    {"kernel @k() { %c = const 1 : i32\n  %v = vec.from : vec<4xf32> }",
     "2:17: error: expected operand #1 of 'vec.from' (one or more values), "
     "found ':'"},
    {"kernel @k() { %t = bulk.commit : token<bulk>\n  tma.prefetch %t@1 }",
     "2:18: error: operand #1 of 'tma.prefetch' is a buffer; only tokens "
     "take '@N'"},
    {"kernel @k() { %c = const 1 : index\n  if %c { } else }",
     "2:18: error: expected '{' to start a region, found '}'"},
    {"kernel @k() { %c = const 1 : index\n  splitk %c body { } }",
     "2:22: error: expected 'epilogue', found '}'"},
};

const ErrorCase kMoreErrorCases[] = {
    {"kernel @k() { %c = const 1 : vec<0 x f32> }",
     "1:34: error: vector lane count must be between 2 and 2147483647, got "
     "0"},
    {"kernel @k() { %c = const 1 : shared f32[] }",
     "1:41: error: expected an index expression, found ']'"},
    {"kernel @k() { %c = const 1 : reg f32[(4] }",
     "1:40: error: expected ')', found ']'"},
    {"kernel @k(%m: tensormap f32[0]) { }",
     "1:29: error: box extent must be between 1 and 2147483647, got 0"},
    {"kernel @k() { %c = const 1 : index\n  %x = const 2 : mbarrier }",
     "2:18: error: expected a type, found 'mbarrier'"},
    {"kernel @k() { %c = const x : index }",
     "1:26: error: expected the 'value' attribute of 'const' (a number), "
     "found 'x'"},
};

INSTANTIATE_TEST_SUITE_P(Diagnostics, ParserErrorTest,
                         testing::ValuesIn(kErrorCases));
INSTANTIATE_TEST_SUITE_P(MoreDiagnostics, ParserErrorTest,
                         testing::ValuesIn(kMoreErrorCases));

// Ops, values and regions come from pools, and an op keeps up to two
// operands with up to two indices each inline: parsing a kernel makes few
// heap allocations per op (one per region's op list, attribute list,
// buffer shape), not one per operand list and index list as it used to
// (about two per op for this kernel).
TEST(ParserTest, ParsingAllocatesLittlePerOp) {
  if (!HeapCounting())
    GTEST_SKIP() << "the sanitizers' allocator is not counted";
  // The unit of tools/bench/gen.py: a guarded load, scale and store.
  std::string text =
      "kernel @k sizes(%N) (%x: global f32[%N], %y: global f32[%N], "
      "%a: f32) block(256) {\n"
      "  %i0 = thread.id x : index\n  %one = const 1 : index\n";
  constexpr int kUnits = 5000;
  for (int u = 1; u <= kUnits; ++u) {
    absl::StrAppend(&text, "  %i", u, " = add %i", u - 1, ", %one : index\n",
                    "  %p", u, " = cmp lt %i", u, ", %N : i1\n", "  if %p", u,
                    " {\n", "    %v", u, " = load %x[%i", u, "] : f32\n",
                    "    %w", u, " = mul %v", u, ", %a : f32\n",
                    "    store %y[%i", u, "], %w", u, "\n  }\n");
  }
  text += "}\n";
  const int64_t before = HeapAllocations();
  std::unique_ptr<Module> module = MustParse(text);
  const int64_t allocations = HeapAllocations() - before;
  ASSERT_EQ(module->kernels.size(), 1u);
  const int ops = 2 + 6 * kUnits;
  EXPECT_LT(allocations, ops / 2)
      << allocations << " allocations for " << ops << " ops";
}

TEST(ParserErrorRenderingTest, ShowsTheLineCaretAndNotes) {
  EXPECT_EQ(ParseError("kernel @k() {\n  %a = const 1 : i32\n"
                       "\t%a = const 2 : i32\n}"),
            "t.kir:3:2: error: redefinition of %a\n"
            "\t%a = const 2 : i32\n"
            "\t^\n"
            "t.kir:2:3: note: previous definition is here\n"
            "  %a = const 1 : i32\n"
            "  ^");
  EXPECT_EQ(ParseError("kernel @k() { fence.acq_rel all }"),
            "t.kir:1:29: error: invalid value 'all' for attribute 'scope' of "
            "'fence.acq_rel'\n"
            "kernel @k() { fence.acq_rel all }\n"
            "                            ^\n"
            "t.kir:1:29: note: expected one of: cta, cluster, gpu, sys\n"
            "kernel @k() { fence.acq_rel all }\n"
            "                            ^");
  const std::string missing_operand =
      ParseError("kernel @k() { %c = const 1 : index\n  store }");
  EXPECT_TRUE(absl::StrContains(
      missing_operand,
      "t.kir:2:3: note: 'store' takes operands: buffer reference %buf[...], "
      "value"))
      << missing_operand;
}

// The note of a redefinition points at where the earlier name was written:
// an op's later result, an induction variable, a parameter or size, or a
// name earlier in the same result list.
TEST(ParserErrorRenderingTest, PreviousDefinitionNotesPointAtTheName) {
  auto note = [](const std::string& text) {
    const std::string error = ParseError(text);
    const size_t begin = error.find("t.kir:", error.find('\n'));
    if (begin == std::string::npos) return error;
    return error.substr(begin, error.find('\n', begin) - begin);
  };
  EXPECT_EQ(note("kernel @k() {\n  %a, %b = ptx \"\" () : i32, i32\n"
                 "  %b = const 1 : i32\n}"),
            "t.kir:2:7: note: previous definition is here");
  EXPECT_EQ(note("kernel @k() {\n  %c = const 1 : index\n"
                 "  for %i = %c to %c step %c {\n"
                 "    %i = const 2 : index\n  }\n}"),
            "t.kir:3:7: note: previous definition is here");
  EXPECT_EQ(note("kernel @k(%x: f32, %y: f32) {\n  %y = const 1.0 : f32\n}"),
            "t.kir:1:20: note: previous definition is here");
  EXPECT_EQ(note("kernel @k sizes(%N) (%x: f32) {\n"
                 "  %N = const 1 : index\n}"),
            "t.kir:1:17: note: previous definition is here");
  EXPECT_EQ(
      note("kernel @k() {\n  %a, %b, %a = ptx \"\" () : i32, i32, i32\n}"),
      "t.kir:2:3: note: previous definition is here");
  // Each kernel has its own names.
  EXPECT_EQ(ParseError("kernel @a() { %x = const 1 : i32 }\n"
                       "kernel @b() { %x = const 2 : i32 }"),
            "(parsed)");
}

// --- Robustness: deep nesting, huge and random input.

TEST(ParserRobustnessTest, DeepRegionNestingIsAnError) {
  std::string text = "kernel @k() {\n%p = elect.sync : i1\n";
  for (int i = 0; i < 5000; ++i) text += "if %p {\n";
  EXPECT_TRUE(absl::StrContains(ParseError(text),
                                "error: regions nest more than 128 levels"));
}

TEST(ParserRobustnessTest, DeepExpressionNestingIsAnError) {
  std::string text = "kernel @k() block(";
  for (int i = 0; i < 100000; ++i) text += "(";
  EXPECT_TRUE(absl::StrContains(
      ParseError(text), "error: index expression nests more than 128 levels"));
}

TEST(ParserRobustnessTest, LongExpressionsAreAnError) {
  std::string text = "kernel @k sizes(%N) () block(%N";
  for (int i = 0; i < 100000; ++i) text += " + %N";
  text += ") { }";
  EXPECT_TRUE(absl::StrContains(
      ParseError(text), "error: index expression has more than 512 operators"));
}

TEST(ParserRobustnessTest, TruncationsAndMutationsNeverCrash) {
  const std::string path = std::string(KIR_TESTDATA_DIR) + "/parser/ops.kir";
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  ASSERT_FALSE(text.empty());
  // Every prefix in steps, so each construct is cut in the middle somewhere.
  for (size_t length = 0; length < text.size(); length += 7) {
    (void)ParseModuleString(text.substr(0, length));
  }
  std::mt19937 random(1234);
  const char kBytes[] = "{}[]()<>%@,:=-+*/\"\\\n x0.9e";
  for (int trial = 0; trial < 300; ++trial) {
    std::string mutated = text;
    for (int edit = 0; edit < 4; ++edit) {
      size_t at = random() % mutated.size();
      switch (random() % 3) {
        case 0:
          mutated[at] = kBytes[random() % (sizeof(kBytes) - 1)];
          break;
        case 1:
          mutated.erase(at, random() % 8);
          break;
        default:
          mutated.insert(at, 1, static_cast<char>(random() % 256));
      }
      if (mutated.empty()) mutated = "x";
    }
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(mutated);
    if (module.ok()) {
      // Whatever parses must print and parse back to the same text.
      PrintOptions options;
      options.provenance = true;
      const std::string printed = PrintModule(**module, options);
      absl::StatusOr<std::unique_ptr<Module>> again =
          ParseModuleString(printed);
      ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << printed;
      EXPECT_EQ(PrintModule(**again, options), printed);
      std::string why;
      EXPECT_TRUE(StructurallyEqual(**module, **again, &why)) << why;
    } else {
      EXPECT_TRUE(absl::StrContains(module.status().message(), ": error: "));
    }
  }
}

}  // namespace
}  // namespace kir
