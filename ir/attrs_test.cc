// Typed attribute accessors (ir/attrs.def): every enum value an op accepts
// maps to an enumerator spelled as in the text, and back; defaults, optional
// ints and the builder's attr:: lists read and write what the generic
// string-keyed API does.
#include "ir/attrs.h"

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/ir.h"
#include "parser/parser.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

// Reads and writes an enum attribute through its typed accessor, by name.
struct TypedEnum {
  std::function<std::string(const Op&)> get;
  std::function<bool(Op&, absl::string_view)> set;
};

const std::map<std::string, TypedEnum>& TypedEnums() {
  static const auto* typed = new std::map<std::string, TypedEnum>{
#define KIR_ENUM_ATTR(name, Type)                                  \
  {#name,                                                          \
   {[](const Op& op) { return std::string(EnumName(op.name())); }, \
    [](Op& op, absl::string_view spelling) {                       \
      Type value{};                                                \
      if (!ParseEnum(spelling, &value)) return false;              \
      op.set_##name(value);                                        \
      return true;                                                 \
    }}},
#include "ir/attrs.def"
  };
  return *typed;
}

TEST(AttrsTest, EnumNamesAndParsingAreInverse) {
  for (FenceSpace space : EnumValues<FenceSpace>()) {
    FenceSpace parsed{};
    ASSERT_TRUE(ParseEnum(EnumName(space), &parsed));
    EXPECT_EQ(parsed, space);
  }
  EXPECT_STREQ(EnumName(FenceSpace::kSharedCta), "shared_cta");
  EXPECT_STREQ(EnumName(MemoryOrder::kAcqRel), "acq_rel");
  EXPECT_STREQ(EnumName(CombineOp::kAnd), "and");
  EXPECT_STREQ(EnumName(Dim::kZ), "z");
  EXPECT_EQ(EnumSize<Dim>(), 3u);
  CmpPredicate pred{};
  EXPECT_FALSE(ParseEnum("lte", &pred));
  EXPECT_FALSE(ParseEnum("", &pred));
}

TEST(AttrsTest, EveryEnumValueOfEveryOpRoundTripsThroughItsAccessor) {
  Kernel kernel("k");
  int checked = 0;
  for (int k = 0; k < kNumOpKinds; ++k) {
    const OpInfo& info = GetOpInfo(static_cast<OpKind>(k));
    for (const AttrSpec& spec : info.attrs) {
      if (spec.kind != AttrKind::kEnum) continue;
      auto typed = TypedEnums().find(spec.name);
      ASSERT_NE(typed, TypedEnums().end()) << info.mnemonic << " " << spec.name;
      for (const std::string& value : spec.enum_values) {
        std::unique_ptr<Op> op = kernel.CreateOp(info.kind, {}, {}, {});
        // Text spelling in, enumerator out.
        op->SetAttr(spec.name, Attribute::Enum(value));
        EXPECT_EQ(typed->second.get(*op), value)
            << info.mnemonic << " " << spec.name;
        // Enumerator in, text spelling out, as the printer writes it.
        op->RemoveAttr(spec.name);
        ASSERT_TRUE(typed->second.set(*op, value));
        EXPECT_EQ(op->GetString(spec.name), value);
        // Defaults are not printed.
        const bool is_default = spec.default_value.has_value() &&
                                spec.default_value->string_value == value;
        const std::string printed = PrintOp(*op);
        EXPECT_EQ(printed.find(value) != std::string::npos, !is_default)
            << printed << " / " << value;
        ++checked;
      }
      // The default reads as an enumerator too.
      if (spec.default_value.has_value()) {
        std::unique_ptr<Op> op = kernel.CreateOp(info.kind, {}, {}, {});
        EXPECT_EQ(typed->second.get(*op), spec.default_value->string_value);
      }
    }
  }
  EXPECT_GT(checked, 60);
}

// Every enum attribute of real kernels, read through its accessor and
// written back, prints the same text the parser read.
TEST(AttrsTest, ExamplesPrintTheSameAfterTypedRewrite) {
  for (const char* name :
       {"ws_gemm.lowered.kir", "splitk_gemm.lowered.kir",
        "epilogue.lowered.kir", "multicast_gemm.kir", "pingpong_gemm.kir"}) {
    std::ifstream file(std::string(KIR_TESTDATA_DIR) + "/examples/" + name);
    ASSERT_TRUE(file.good()) << name;
    std::stringstream text;
    text << file.rdbuf();
    absl::StatusOr<std::unique_ptr<Module>> module =
        ParseModuleString(text.str());
    ASSERT_TRUE(module.ok()) << name << ": " << module.status();
    const std::string before = PrintModule(**module);
    int rewritten = 0;
    for (const auto& kernel : (*module)->kernels) {
      Walk(kernel->body(), [&](Op& op) {
        for (const AttrSpec& spec : op.info().attrs) {
          if (spec.kind != AttrKind::kEnum || op.FindAttr(spec.name) == nullptr)
            continue;
          const TypedEnum& typed = TypedEnums().at(spec.name);
          ASSERT_TRUE(typed.set(op, typed.get(op)));
          ++rewritten;
        }
      });
    }
    EXPECT_GT(rewritten, 0) << name;
    EXPECT_EQ(PrintModule(**module), before) << name;
  }
}

TEST(AttrsTest, IntsFlagsAndStringsReadDefaultsAndWrites) {
  Kernel kernel("k");
  std::unique_ptr<Op> alloc =
      kernel.CreateOp(OpKind::kAllocShared, {},
                      {Type::Buffer(MemorySpace::kShared, DType::kF32,
                                    {IndexExpr::Constant(64)})},
                      {"s"});
  EXPECT_EQ(alloc->align(), 16);  // ops.def default
  EXPECT_EQ(alloc->swizzle(), 0);
  EXPECT_FALSE(alloc->ring());
  EXPECT_FALSE(alloc->has_swizzle());
  EXPECT_EQ(alloc->offset(), std::nullopt);

  alloc->set_swizzle(128);
  alloc->set_offset(1024);
  alloc->set_ring(true);
  EXPECT_EQ(alloc->swizzle(), 128);
  EXPECT_EQ(alloc->GetInt("swizzle"), 128);
  EXPECT_TRUE(alloc->has_swizzle());
  EXPECT_EQ(alloc->offset(), 1024);
  EXPECT_TRUE(alloc->GetFlag("ring"));

  alloc->clear_offset();
  alloc->clear_swizzle();
  EXPECT_EQ(alloc->offset(), std::nullopt);
  EXPECT_EQ(alloc->FindAttr("offset"), nullptr);
  EXPECT_EQ(alloc->swizzle(), 0);

  std::unique_ptr<Op> role = kernel.CreateOp(OpKind::kRole, {}, {}, {});
  role->set_name("producer");
  EXPECT_EQ(role->name(), "producer");
  EXPECT_EQ(role->GetString("name"), "producer");
  EXPECT_FALSE(role->has_warp_begin());
}

TEST(AttrsTest, BuilderListsMatchTheGenericAttributes) {
  Kernel kernel("k");
  OpBuilder b(kernel.body());
  Op* fence = b.Create(OpKind::kFenceProxyAsync, {},
                       {attr::space(FenceSpace::kGlobal)});
  EXPECT_EQ(fence->GetString("space"), "global");
  EXPECT_EQ(fence->space(), FenceSpace::kGlobal);

  Op* barrier =
      b.Create(OpKind::kBarrierNamed, {}, {attr::id(3), attr::threads(256)});
  EXPECT_EQ(*barrier->FindAttr("id"), Attribute::Int(3));
  EXPECT_EQ(barrier->threads(), 256);

  Value* zero = b.Constant(0, DType::kIndex);
  Value* p = b.Compare(CmpPredicate::kLe, zero, zero);
  EXPECT_EQ(p->defining_op()->GetString("pred"), "le");
  EXPECT_EQ(p->defining_op()->pred(), CmpPredicate::kLe);
  EXPECT_EQ(zero->defining_op()->value(), Attribute::Integer(0));
}

TEST(AttrsDeathTest, AnAttributeTheOpKindLacksIsABrokenInvariant) {
  Kernel kernel("k");
  std::unique_ptr<Op> fence =
      kernel.CreateOp(OpKind::kFenceProxyAsync, {}, {}, {});
  EXPECT_DEATH((void)fence->swizzle(), "has no attribute swizzle");
  EXPECT_DEATH(fence->set_scope(MemoryScope::kGpu), "has no attribute scope");
  // A required attribute without a default that was never set.
  std::unique_ptr<Op> wgmma = kernel.CreateOp(OpKind::kWgmma, {}, {}, {});
  EXPECT_DEATH((void)wgmma->n(), "missing attribute n");
  EXPECT_FALSE(wgmma->has_n());
}

}  // namespace
}  // namespace kir
