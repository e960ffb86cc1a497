// Builds one instance of every op kind with the C++ builder, prints it,
// parses it back and compares. Fails when ops.def gains a kind that is not
// built here.
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/equal.h"
#include "ir/ir.h"
#include "parser/parser.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

Type Scalar(DType dtype) { return Type::Scalar(dtype); }
Type Shared(DType dtype, std::vector<int64_t> shape) {
  std::vector<IndexExpr> dims;
  for (int64_t d : shape) dims.push_back(IndexExpr::Constant(d));
  return Type::Buffer(MemorySpace::kShared, dtype, std::move(dims));
}

// Builds a kernel that uses every op kind at least once.
std::unique_ptr<Module> BuildAllOps() {
  auto module = std::make_unique<Module>();
  module->kernels.push_back(std::make_unique<Kernel>("all_ops"));
  Kernel& kernel = *module->kernels.back();
  Value* m = kernel.AddSize("M");
  Value* n = kernel.AddSize("N");
  Param tensor;
  tensor.kind = Param::Kind::kTensor;
  Value* x =
      kernel
          .AddParam("x",
                    Type::Buffer(MemorySpace::kGlobal, DType::kBF16,
                                 {IndexExpr::Size(m), IndexExpr::Size(n)}),
                    tensor)
          .value;
  Param strided;
  strided.kind = Param::Kind::kTensor;
  strided.layout = TensorLayout::kStrided;
  strided.strides = {IndexExpr::Constant(1), IndexExpr::Size(m)};
  strided.align = 128;
  Value* out =
      kernel
          .AddParam("out",
                    Type::Buffer(MemorySpace::kGlobal, DType::kF32,
                                 {IndexExpr::Size(m), IndexExpr::Size(n)}),
                    strided)
          .value;
  Param map;
  map.kind = Param::Kind::kTensorMap;
  map.tensor = x;
  map.swizzle = 128;
  map.oob = OobFill::kNan;
  Value* tm =
      kernel.AddParam("tm", Type::TensorMap(DType::kBF16, {64, 64}), map).value;
  Param col;
  col.kind = Param::Kind::kTensor;
  col.layout = TensorLayout::kColumnMajor;
  Value* sem =
      kernel
          .AddParam("sem",
                    Type::Buffer(MemorySpace::kGlobal, DType::kI32,
                                 {IndexExpr::Binary(IndexExpr::Kind::kCeilDiv,
                                                    IndexExpr::Size(m),
                                                    IndexExpr::Constant(128))}),
                    col)
          .value;
  Param scalar;
  Value* alpha = kernel.AddParam("alpha", Scalar(DType::kF32), scalar).value;
  kernel.grid.x = IndexExpr::Binary(
      IndexExpr::Kind::kCeilDiv, IndexExpr::Size(n), IndexExpr::Constant(64));
  kernel.grid.z = IndexExpr::Constant(4);
  kernel.block.x = IndexExpr::Constant(384);
  kernel.cluster.x = IndexExpr::Constant(2);

  OpBuilder b(kernel.body());
  const Type index = Scalar(DType::kIndex);
  const Type i32 = Scalar(DType::kI32);
  const Type f32 = Scalar(DType::kF32);
  auto one = [&](OpKind kind, std::vector<Operand> operands, AttrList attrs,
                 Type type, std::string name) {
    return b
        .Create(kind, std::move(operands), std::move(attrs), {type},
                {std::move(name)})
        ->result();
  };
  auto none = [&](OpKind kind, std::vector<Operand> operands,
                  AttrList attrs = {}) {
    b.Create(kind, std::move(operands), std::move(attrs));
  };
  auto dim = [](const char* d) {
    return AttrList{{"dim", Attribute::Enum(d)}};
  };

  // Thread and block indices.
  Value* tid = one(OpKind::kThreadId, {}, dim("x"), index, "tid");
  one(OpKind::kBlockId, {}, dim("y"), index, "bid");
  one(OpKind::kBlockDim, {}, dim("z"), index, "bdim");
  one(OpKind::kGridDim, {}, dim("x"), index, "gdim");
  one(OpKind::kClusterCtaId, {}, dim("x"), index, "cta");
  Value* rank = one(OpKind::kClusterCtaRank, {}, {}, i32, "rank");
  Value* lane = one(OpKind::kLaneId, {}, {}, i32, "lane");
  one(OpKind::kWarpId, {}, {}, i32, "warp");

  // Constants and arithmetic.
  Value* c0 = b.Constant(0, DType::kIndex, "c0");
  Value* c1 = b.Constant(1, DType::kIndex, "c1");
  Value* c64 = b.Constant(64, DType::kIndex, "c64");
  Value* big = b.Constant(-9223372036854775807 - 1, DType::kI64, "big");
  Value* half = b.FloatConstant(0.5, DType::kF32, "half");
  Value* third = b.FloatConstant(1.0 / 3.0, DType::kF32, "third");
  b.FloatConstant(-1e300, DType::kF32, "huge");
  b.FloatConstant(-0.0, DType::kF32, "negzero");
  b.FloatConstant(std::numeric_limits<double>::infinity(), DType::kF32, "inf");
  b.FloatConstant(std::numeric_limits<double>::quiet_NaN(), DType::kF32, "nan");
  b.FloatConstant(100.0, DType::kF32, "hundred");
  b.FloatConstant(5e-324, DType::kF32, "denormal");
  for (OpKind kind : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv,
                      OpKind::kRem, OpKind::kMin, OpKind::kMax, OpKind::kAnd,
                      OpKind::kOr, OpKind::kXor, OpKind::kShl, OpKind::kShr}) {
    b.Binary(kind, rank, lane, std::string(Mnemonic(kind)));
  }
  b.Binary(OpKind::kAdd, big, big, "add");  // "add" is taken: add_1
  for (OpKind kind : {OpKind::kNot, OpKind::kNeg, OpKind::kAbs}) {
    one(kind, {Use(rank)}, {}, i32, std::string(Mnemonic(kind)));
  }
  one(OpKind::kExp, {Use(half)}, {}, f32, "exp");
  one(OpKind::kSqrt, {Use(third)}, {}, f32, "sqrt");
  Value* fma =
      one(OpKind::kFma, {Use(half), Use(third), Use(alpha)}, {}, f32, "fma");
  Value* p = b.Compare(CmpPredicate::kLt, tid, c64);
  one(OpKind::kSelect, {Use(p), Use(half), Use(fma)}, {}, f32, "sel");
  one(OpKind::kCast, {Use(rank)}, {}, f32, "cast");
  Value* vec =
      one(OpKind::kVecFrom, {Use(half), Use(third), Use(fma), Use(fma)}, {},
          Type::Vector(DType::kF32, 4), "vec");
  one(OpKind::kVecExtract, {Use(vec)}, {{"lane", Attribute::Int(3)}}, f32,
      "lane3");

  // Allocations.
  Value* smem = one(OpKind::kAllocShared, {},
                    {{"align", Attribute::Int(128)},
                     {"swizzle", Attribute::Int(128)},
                     {"pad", Attribute::Int(0)},  // the default: not printed
                     {"offset", Attribute::Int(1024)}},
                    Shared(DType::kBF16, {64, 64}), "smem");
  Value* acc =
      one(OpKind::kAllocShared, {}, {}, Shared(DType::kF32, {64, 64}), "acc");
  Value* bar = one(OpKind::kAllocShared, {}, {{"align", Attribute::Int(8)}},
                   Shared(DType::kMbarrier, {2}), "bar");
  Value* regs = one(OpKind::kAllocReg, {}, {},
                    Type::Buffer(MemorySpace::kRegister, DType::kF32,
                                 {IndexExpr::Constant(32)}),
                    "regs");
  Value* ws = one(
      OpKind::kAllocWorkspace, {}, {{"align", Attribute::Int(256)}},
      Type::Buffer(MemorySpace::kGlobal, DType::kF32,
                   {IndexExpr::Binary(IndexExpr::Kind::kMul, IndexExpr::Size(m),
                                      IndexExpr::Size(n))}),
      "ws");

  // Memory.
  Value* v = one(OpKind::kLoad, {Ref(regs, {c0})}, {}, f32, "v");
  none(OpKind::kStore, {Ref(out, {tid, c0}), Use(v)});
  none(OpKind::kCpAsync, {Ref(smem, {tid, c0}), Ref(x, {tid, c0})},
       {{"bytes", Attribute::Int(8)}});
  Value* cp = one(OpKind::kCpAsyncCommit, {}, {},
                  Type::Token(TokenKind::kCpAsync), "cp");
  none(OpKind::kCpAsyncWait, {Use(cp)});
  Value* frag =
      one(OpKind::kLdmatrix, {Ref(smem, {tid, c0})},
          {{"count", Attribute::Int(2)}, {"trans", Attribute::Flag(true)}},
          Type::Vector(DType::kI32, 2), "frag");
  none(OpKind::kStmatrix, {Ref(smem, {tid, c0}), Use(frag)},
       {{"trans", Attribute::Flag(false)}});
  none(OpKind::kTmaLoad,
       {Ref(smem, {c0, c0}), Ref(tm, {c0, c64}), Ref(bar, {c0})},
       {{"multicast", Attribute::Int(3)}});
  none(OpKind::kTmaStore, {Ref(tm, {c0, c0}), Ref(smem, {c0, c0})});
  none(OpKind::kTmaReduce, {Ref(tm, {c0, c0}), Ref(acc, {c0, c0})},
       {{"op", Attribute::Enum("add")}});
  none(OpKind::kTmaPrefetch, {Use(tm)});
  none(OpKind::kBulkLoad, {Ref(acc, {c0, c0}), Ref(ws, {c0}), Ref(bar, {c1})},
       {{"bytes", Attribute::Int(256)}});
  none(OpKind::kBulkStore, {Ref(ws, {c0}), Ref(acc, {c0, c0})},
       {{"bytes", Attribute::Int(256)}});
  Value* bulk =
      one(OpKind::kBulkCommit, {}, {}, Type::Token(TokenKind::kBulk), "bulk");
  none(OpKind::kBulkWait, {Use(bulk)}, {{"read", Attribute::Flag(true)}});

  // Warpgroup MMA.
  none(OpKind::kWgmmaFence, {});
  none(OpKind::kWgmma,
       {Ref(regs, {c0}), Ref(smem, {c0, c0}), Ref(smem, {c0, c0})},
       {{"n", Attribute::Int(64)},
        {"a_major", Attribute::Enum("m")},
        {"b_major", Attribute::Enum("k")},
        {"zero_init", Attribute::Flag(true)}});
  Value* mma =
      one(OpKind::kWgmmaCommit, {}, {}, Type::Token(TokenKind::kWgmma), "mma");
  none(OpKind::kWgmmaWait, {Use(mma)});

  // Synchronization.
  none(OpKind::kBarrierBlock, {});
  none(OpKind::kBarrierNamed, {},
       {{"id", Attribute::Int(1)}, {"threads", Attribute::Int(256)}});
  none(OpKind::kBarrierArrive, {},
       {{"id", Attribute::Int(2)}, {"threads", Attribute::Int(128)}});
  none(OpKind::kClusterArrive, {}, {{"relaxed", Attribute::Flag(true)}});
  none(OpKind::kClusterWait, {});
  none(OpKind::kFenceProxyAsync, {},
       {{"space", Attribute::Enum("shared_cta")}});
  none(OpKind::kFenceAcqRel, {}, {{"scope", Attribute::Enum("gpu")}});
  none(OpKind::kFenceMbarrierInit, {});
  none(OpKind::kMbarrierInit, {Ref(bar, {c0})}, {{"count", Attribute::Int(1)}});
  none(OpKind::kMbarrierArrive, {Ref(bar, {c0})});
  none(OpKind::kMbarrierArriveTx, {Ref(bar, {c0})},
       {{"bytes", Attribute::Int(8192)}});
  none(OpKind::kMbarrierArriveRemote, {Ref(bar, {c0}), Use(rank)});
  none(OpKind::kStoreRemote,
       {Ref(acc, {c0, c0}), Use(v), Ref(bar, {c0}), Use(rank)});
  Value* phase = b.Constant(0, DType::kI32, "phase");
  none(OpKind::kMbarrierWait, {Ref(bar, {c0}), Use(phase)});
  none(OpKind::kMbarrierInval, {Ref(bar, {c1})});
  Value* elected =
      one(OpKind::kElectSync, {}, {}, Scalar(DType::kI1), "elected");
  one(OpKind::kShflSync, {Use(v), Use(lane)},
      {{"mode", Attribute::Enum("bfly")}}, f32, "shfl");
  one(OpKind::kBarrierRed, {Use(elected)},
      {{"op", Attribute::Enum("popc")},
       {"id", Attribute::Int(3)},
       {"threads", Attribute::Int(256)}},
      Scalar(DType::kI32), "voters");
  none(OpKind::kSetMaxNReg, {},
       {{"action", Attribute::Enum("inc")}, {"regs", Attribute::Int(240)}});
  none(OpKind::kSemWait, {Ref(sem, {c0}), Use(rank)},
       {{"scope", Attribute::Enum("cluster")}});
  none(OpKind::kSemRelease, {Ref(sem, {c0}), Use(rank)});
  one(OpKind::kAtomic, {Ref(sem, {c1}), Use(rank)},
      {{"op", Attribute::Enum("exch")},
       {"order", Attribute::Enum("acq_rel")},
       {"scope", Attribute::Enum("sys")}},
      i32, "old");
  none(OpKind::kReduce, {Ref(out, {c0, c1}), Use(v)},
       {{"op", Attribute::Enum("max")}, {"order", Attribute::Enum("release")}});

  // Raw PTX: two inputs, one read buffer, one written buffer, two results.
  b.Create(OpKind::kPtx, {Use(rank), Use(half), Use(smem), Use(acc)},
           {{"text", Attribute::String("mov.b32 $0, $1;\n\t// \"quoted\" \\")},
            {"proxy", Attribute::Enum("async")},
            {"reads", Attribute::Int(1)},
            {"writes", Attribute::Int(1)}},
           {i32, f32}, {"r0", "r1"});
  b.Create(OpKind::kPtx, {}, {{"text", Attribute::String("membar.gl;")}});

  // Structured control flow; a wait names the previous iteration's token.
  Op* loop = b.For(c0, c64, c1, "k", /*unroll=*/2);
  {
    OpBuilder body(loop->region(0));
    Value* early = nullptr;
    // The wait comes first and uses the commit below from one iteration back.
    Op* wait = body.Create(OpKind::kBulkWait, {Use(c0)});
    Value* token = body.Create(OpKind::kBulkCommit, {}, {},
                               {Type::Token(TokenKind::kBulk)}, {"t"})
                       ->result();
    wait->mutable_operand(0) = Use(token);
    wait->mutable_operand(0).distance = 1;
    (void)early;
    Op* inner = body.If(elected);
    OpBuilder then_branch(inner->region(0));
    then_branch.Create(OpKind::kStore,
                       {Ref(out, {loop->region(0).argument(0), c0}), Use(v)});
    OpBuilder else_branch(inner->region(1));
    else_branch.Create(OpKind::kBarrierBlock, {});
  }
  Op* plain_if = b.If(p);  // empty else: not printed
  OpBuilder(plain_if->region(0)).Create(OpKind::kReturn, {});
  Op* role = b.Role("producer", 0, 4);
  {
    OpBuilder body(role->region(0));
    body.set_provenance(Provenance{"warp-specialize", {}});
    body.Create(
        OpKind::kSetMaxNReg, {},
        {{"action", Attribute::Enum("dec")}, {"regs", Attribute::Int(40)}});
  }
  Op* split = b.SplitK(acc, Dim::kY, CombineOp::kMax);
  OpBuilder(split->region(0)).Create(OpKind::kWgmmaFence, {});
  OpBuilder(split->region(1)).Create(OpKind::kBarrierBlock, {});
  // An op a pass inserted, with the accesses that required it.
  Provenance provenance;
  provenance.pass = "insert-fences";
  Location because;
  because.line = 12;
  because.column = 5;
  provenance.because = {because, because};
  b.set_provenance(provenance);
  none(OpKind::kFenceProxyAsync, {}, {{"space", Attribute::Enum("global")}});
  b.set_provenance({});
  none(OpKind::kReturn, {});
  return module;
}

TEST(AllOpsTest, EveryKindIsBuiltPrintedAndParsedBack) {
  std::unique_ptr<Module> built = BuildAllOps();
  std::set<OpKind> kinds;
  Walk(built->kernels[0]->body(),
       [&](const Op& op) { kinds.insert(op.kind()); });
  for (int i = 0; i < kNumOpKinds; ++i) {
    EXPECT_TRUE(kinds.count(static_cast<OpKind>(i)))
        << "op kind '" << Mnemonic(static_cast<OpKind>(i))
        << "' is not built in BuildAllOps; add an instance";
  }

  PrintOptions options;
  options.provenance = true;
  const std::string printed = PrintModule(*built, options);
  absl::StatusOr<std::unique_ptr<Module>> parsed =
      ParseModuleString(printed, "all_ops.kir");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << printed;
  std::string why;
  EXPECT_TRUE(StructurallyEqual(*built, **parsed, &why)) << why << "\n"
                                                         << printed;
  EXPECT_EQ(PrintModule(**parsed, options), printed);
}

TEST(AllOpsTest, PrintsCanonicalForms) {
  std::unique_ptr<Module> built = BuildAllOps();
  PrintOptions options;
  options.provenance = true;
  const std::string printed = PrintModule(*built, options);
  for (
      const char* expected : {
          "kernel @all_ops sizes(%M, %N) (\n"
          "    %x: global bf16[%M, %N],\n"
          "    %out: global f32[%M, %N] {strides = [1, %M], align = 128},\n"
          "    %tm: tensormap bf16[64, 64] of %x {swizzle = 128, oob = nan},\n"
          "    %sem: global i32[cdiv(%M, 128)] {layout = col_major},\n"
          "    %alpha: f32) grid(cdiv(%N, 64), 1, 4) block(384) cluster(2) {\n",
          "  %tid = thread.id x : index\n",
          "  %big = const -9223372036854775808 : i64\n",
          "  %half = const 0.5 : f32\n",
          "  %third = const 0.3333333333333333 : f32\n",
          "  %huge = const -1e+300 : f32\n",
          "  %negzero = const -0.0 : f32\n",
          "  %inf = const inf : f32\n",
          "  %nan = const nan : f32\n",
          "  %hundred = const 100.0 : f32\n",
          "  %denormal = const 5e-324 : f32\n",
          "  %add_1 = add %big, %big : i64\n",
          "  %p = cmp lt %tid, %c64 : i1\n",
          "  %smem = alloc.shared {align = 128, swizzle = 128, offset = 1024} "
          ": "
          "shared bf16[64, 64]\n",
          "  %ws = alloc.workspace {align = 256} : global f32[%M * %N]\n",
          "  %frag = ldmatrix %smem[%tid, %c0] {count = 2, trans} : "
          "vec<2xi32>\n",
          "  stmatrix %smem[%tid, %c0], %frag\n",
          "  tma.load %smem[%c0, %c0], %tm[%c0, %c64], %bar[%c0] "
          "{multicast = 3}\n",
          "  tma.reduce add %tm[%c0, %c0], %acc[%c0, %c0]\n",
          "  tma.prefetch %tm\n",
          "  bulk.wait %bulk {read}\n",
          "  wgmma %regs[%c0], %smem[%c0, %c0], %smem[%c0, %c0] "
          "{n = 64, a_major = m, zero_init}\n",
          "  fence.acq_rel gpu\n",
          "  %old = atomic exch %sem[%c1], %rank {order = acq_rel, scope = "
          "sys} "
          ": i32\n",
          "  sem.release %sem[%c0], %rank\n",
          "  %r0, %r1 = ptx \"mov.b32 $0, $1;\\n\\t// \\\"quoted\\\" \\\\\" "
          "(%rank, %half) reads(%smem) writes(%acc) {proxy = async} : i32, "
          "f32\n",
          "  ptx \"membar.gl;\" ()\n",
          "  for %k = %c0 to %c64 step %c1 {unroll = 2} {\n"
          "    bulk.wait %t@1\n"
          "    %t = bulk.commit : token<bulk>\n"
          "    if %elected {\n"
          "      store %out[%k, %c0], %v\n"
          "    } else {\n"
          "      barrier.block\n"
          "    }\n"
          "  }\n",
          "  if %p {\n    return\n  }\n",
          "  role @producer warps[0, 4) {\n"
          "    setmaxnreg dec {regs = 40} loc(inserted \"warp-specialize\")\n"
          "  }\n",
          "  splitk %acc {dim = y, op = max} body {\n"
          "    wgmma.fence\n"
          "  } epilogue {\n"
          "    barrier.block\n"
          "  }\n",
          "  fence.proxy.async global loc(inserted \"insert-fences\" for 12:5, "
          "12:5)\n",
      }) {
    EXPECT_NE(printed.find(expected), std::string::npos)
        << "missing:\n"
        << expected << "\nin:\n"
        << printed;
  }
  // Without the option, provenance is not printed.
  EXPECT_EQ(PrintModule(*built).find("loc("), std::string::npos);
}

}  // namespace
}  // namespace kir
