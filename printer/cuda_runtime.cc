// Generates the device runtime of emitted CUDA, one primitive at a time.
#include "printer/cuda_runtime.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "ir/check.h"

namespace kir {
namespace {

constexpr char kInline[] = "__device__ __forceinline__ ";

// One inline-asm function. `ptx` holds the instruction lines; operands are
// numbered outputs first, then inputs, as in GCC inline asm.
struct AsmFunction {
  std::string template_header;  // "template <int N>" or empty
  std::string result_type = "void";
  std::string name;
  std::vector<std::string> params;
  std::string prologue;  // statements before the asm, indented
  std::vector<std::string> ptx;
  std::vector<std::string> outputs;
  std::vector<std::string> inputs;
  bool is_volatile = true;
  bool memory = true;
  std::string epilogue;  // statements after the asm, e.g. "return r;"
};

// The asm statement: `asm volatile("..." : outs : ins : "memory");`.
std::string AsmStatement(const std::vector<std::string>& ptx,
                         const std::vector<std::string>& outputs,
                         const std::vector<std::string>& inputs,
                         bool is_volatile, bool memory,
                         absl::string_view indent) {
  std::string text =
      absl::StrCat(indent, is_volatile ? "asm volatile(" : "asm(");
  if (ptx.size() == 1) {
    absl::StrAppend(&text, "\"", ptx[0], "\"");
  } else {
    for (size_t i = 0; i < ptx.size(); ++i) {
      absl::StrAppend(&text, "\n", indent, "    \"", ptx[i],
                      i + 1 < ptx.size() ? "\\n\\t\"" : "\"");
    }
    absl::StrAppend(&text, "\n", indent, "   ");
  }
  const std::string outs = absl::StrJoin(outputs, ", ");
  const std::string ins = absl::StrJoin(inputs, ", ");
  if (!outs.empty()) absl::StrAppend(&text, " : ", outs);
  if (!ins.empty()) absl::StrAppend(&text, outs.empty() ? " :: " : " : ", ins);
  if (memory) {
    if (outs.empty() && ins.empty()) {
      absl::StrAppend(&text, " ::: \"memory\"");
    } else if (ins.empty()) {
      absl::StrAppend(&text, " :: \"memory\"");
    } else {
      absl::StrAppend(&text, " : \"memory\"");
    }
  }
  absl::StrAppend(&text, ");\n");
  return text;
}

// Wraps `ptx` so that it runs only where operand `%predicate` is non-zero:
// one instruction gets an `@p` guard; a block of several is skipped by a
// branch around it.
std::vector<std::string> Predicate(const std::vector<std::string>& ptx,
                                   int predicate) {
  std::vector<std::string> lines = {
      "{", ".reg .pred kir_p;",
      absl::StrCat("setp.ne.b32 kir_p, %", predicate, ", 0;")};
  if (ptx.size() == 1) {
    lines.push_back(absl::StrCat("@kir_p ", ptx[0]));
  } else {
    lines.push_back("@!kir_p bra KIR_SKIP;");
    lines.insert(lines.end(), ptx.begin(), ptx.end());
    lines.push_back("KIR_SKIP:");
  }
  lines.push_back("}");
  return lines;
}

std::string Render(AsmFunction fn, bool predicated) {
  if (predicated) {
    fn.name += "_if";
    fn.params.insert(fn.params.begin(), "kir_u32 issue");
    fn.ptx = Predicate(fn.ptx,
                       static_cast<int>(fn.outputs.size() + fn.inputs.size()));
    fn.inputs.push_back("\"r\"(issue)");
  }
  std::string text;
  if (!fn.template_header.empty())
    absl::StrAppend(&text, fn.template_header, "\n");
  absl::StrAppend(&text, kInline, fn.result_type, " ", fn.name, "(",
                  absl::StrJoin(fn.params, ", "), ") {\n", fn.prologue,
                  AsmStatement(fn.ptx, fn.outputs, fn.inputs, fn.is_volatile,
                               fn.memory, "  "),
                  fn.epilogue, "}\n");
  return text;
}

std::string Suffix(bool predicated) { return predicated ? "_if" : ""; }

// "shared_cta" -> "shared::cta" etc.
std::string PtxSpace(absl::string_view space) {
  if (space == "shared_cta") return ".shared::cta";
  if (space == "shared_cluster") return ".shared::cluster";
  if (space == "global") return ".global";
  return "";
}

const char* HalfName(DType dtype) {
  KIR_CHECK(dtype == DType::kF16 || dtype == DType::kBF16)
      << "not a 16-bit float";
  return dtype == DType::kF16 ? "f16" : "bf16";
}

std::string Coordinates(int rank, int first) {
  std::vector<std::string> coords;
  for (int i = 0; i < rank; ++i) coords.push_back(absl::StrCat("%", first + i));
  return absl::StrCat("{", absl::StrJoin(coords, ", "), "}");
}

std::vector<std::string> CoordinateParams(int rank) {
  std::vector<std::string> params;
  for (int i = 0; i < rank; ++i) params.push_back(absl::StrCat("kir_i32 c", i));
  return params;
}

std::vector<std::string> CoordinateInputs(int rank) {
  std::vector<std::string> inputs;
  for (int i = 0; i < rank; ++i)
    inputs.push_back(absl::StrCat("\"r\"(c", i, ")"));
  return inputs;
}

}  // namespace

std::string CudaPrelude() {
  return R"(// Values the kernels never read (constants of the source, say) are fine.
#pragma nv_diag_suppress 177
#pragma nv_diag_suppress 550

// Fixed-width types: NVRTC has no <cstdint>.
typedef unsigned char kir_u8;
typedef unsigned short kir_u16;
typedef int kir_i32;
typedef unsigned int kir_u32;
typedef long long kir_i64;
typedef unsigned long long kir_u64;
static_assert(sizeof(kir_u16) == 2 && sizeof(kir_i32) == 4 && sizeof(kir_i64) == 8,
              "fixed-width types");

// 16-bit floats are stored as their bits; arithmetic goes through PTX.
struct kir_f16 { kir_u16 bits; };
struct kir_bf16 { kir_u16 bits; };

// A vector of N lanes, aligned to its size (a power of two up to 16 bytes) so
// that vector loads and stores compile to ld/st.v2/v4.
__host__ __device__ constexpr int kir_vec_align(int bytes) {
  return (bytes & -bytes) < 16 ? (bytes & -bytes) : 16;
}
template <typename T, int N>
struct alignas(kir_vec_align(sizeof(T) * N)) kir_vec { T v[N]; };

// The driver's CUtensorMap (cuda.h cannot be included under NVRTC): 128
// opaque bytes, passed as a __grid_constant__ parameter. TMA needs 64-byte
// alignment; CUDA 13's cuda.h declares 128, which is kept here so that the
// parameter layout is the same whichever declaration a launcher sees.
struct alignas(128) kir_tensor_map { kir_u64 opaque[16]; };
#ifndef __CUDACC_RTC__
#include <cuda.h>
static_assert(sizeof(kir_tensor_map) == sizeof(CUtensorMap), "CUtensorMap size");
static_assert(alignof(kir_tensor_map) % alignof(CUtensorMap) == 0, "CUtensorMap alignment");
#endif

// All shared memory is dynamic, laid out by the emitter.
extern __shared__ __align__(1024) kir_u8 kir_smem[];
)";
}

std::string CudaRuntime::Text() const {
  return absl::StrJoin(definitions_, "\n");
}

std::string CudaRuntime::Define(const std::string& name,
                                const std::string& definition) {
  if (names_.insert(name).second) definitions_.push_back(definition);
  return name;
}

// ---------------------------------------------------------------------------
// Addressing.

std::string CudaRuntime::SmemAddress() {
  return Define("kir_smem_u32",
                absl::StrCat(kInline, R"(kir_u32 kir_smem_u32(const void* p) {
  return static_cast<kir_u32>(__cvta_generic_to_shared(p));
}
)"));
}

std::string CudaRuntime::Swizzle() {
  return Define(
      "kir_swizzle",
      R"(// TMA/wgmma swizzle of S bytes (32, 64, 128): the 16-byte chunk index within
// a 128-byte line is XORed with the line index mod S/16 (CUTLASS
// Swizzle<log2(S/16), 4, 3>). Offsets are from a base aligned to 8*S bytes.
template <int S>
__device__ __forceinline__ kir_i32 kir_swizzle(kir_i32 offset) {
  return offset ^ (((offset >> 7) & (S / 16 - 1)) << 4);
}
)");
}

std::string CudaRuntime::FloorDiv() {
  return Define(
      "kir_floordiv",
      absl::StrCat(kInline, R"(kir_i64 kir_floordiv(kir_i64 a, kir_i64 b) {
  const kir_i64 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
)"));
}

std::string CudaRuntime::FloorMod() {
  return Define(
      "kir_floormod",
      absl::StrCat(kInline, R"(kir_i64 kir_floormod(kir_i64 a, kir_i64 b) {
  const kir_i64 r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
)"));
}

std::string CudaRuntime::CeilDiv() {
  FloorDiv();
  return Define(
      "kir_cdiv",
      absl::StrCat(kInline, R"(kir_i64 kir_cdiv(kir_i64 a, kir_i64 b) {
  return -kir_floordiv(-a, b);
}
)"));
}

// ---------------------------------------------------------------------------
// 16-bit floats.

std::string CudaRuntime::ToF32(DType half) {
  const std::string name = absl::StrCat("kir_f32_of_", HalfName(half));
  if (half == DType::kBF16) {
    return Define(name, absl::StrCat(kInline, "float ", name, R"((kir_bf16 x) {
  return __uint_as_float(static_cast<kir_u32>(x.bits) << 16);
}
)"));
  }
  return Define(name, absl::StrCat(kInline, "float ", name, R"((kir_f16 x) {
  float r;
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(x.bits));
  return r;
}
)"));
}

std::string CudaRuntime::FromF32(DType half) {
  const std::string type = HalfName(half);
  const std::string name = absl::StrCat("kir_", type, "_of_f32");
  return Define(
      name,
      absl::StrCat(kInline, "kir_", type, " ", name, "(float x) {\n  kir_",
                   type, " r;\n  asm(\"cvt.rn.", type,
                   ".f32 %0, %1;\" : \"=h\"(r.bits) : \"f\"(x));\n"
                   "  return r;\n}\n"));
}

std::string CudaRuntime::FromInt(DType half, DType integer) {
  const bool wide = integer == DType::kI64 || integer == DType::kIndex;
  const std::string type = HalfName(half);
  const std::string name =
      absl::StrCat("kir_", type, "_of_", wide ? "i64" : "i32");
  return Define(
      name, absl::StrCat(kInline, "kir_", type, " ", name, "(",
                         wide ? "kir_i64" : "kir_i32", " x) {\n  kir_", type,
                         " r;\n  asm(\"cvt.rn.", type, wide ? ".s64" : ".s32",
                         " %0, %1;\" : \"=h\"(r.bits) : \"", wide ? "l" : "r",
                         "\"(x));\n  return r;\n}\n"));
}

std::string CudaRuntime::HalfOp(absl::string_view op, DType half) {
  const std::string type = HalfName(half);
  const std::string ctype = absl::StrCat("kir_", type);
  const std::string name = absl::StrCat("kir_", type, "_", op);
  if (Has(name)) return name;
  // PTX instructions on the 16-bit values.
  auto binary = [&](const std::string& instr) {
    return absl::StrCat(kInline, ctype, " ", name, "(", ctype, " a, ", ctype,
                        " b) {\n  ", ctype, " r;\n  asm(\"", instr,
                        " %0, %1, %2;\" : \"=h\"(r.bits) : \"h\"(a.bits), "
                        "\"h\"(b.bits));\n  return r;\n}\n");
  };
  if (op == "add" || op == "sub" || op == "mul") {
    return Define(name, binary(absl::StrCat(op, ".rn.", type)));
  }
  if (op == "min" || op == "max") {
    return Define(name, binary(absl::StrCat(op, ".", type)));
  }
  if (op == "fma") {
    return Define(
        name, absl::StrCat(
                  kInline, ctype, " ", name, "(", ctype, " a, ", ctype, " b, ",
                  ctype, " c) {\n  ", ctype, " r;\n  asm(\"fma.rn.", type,
                  " %0, %1, %2, %3;\" : \"=h\"(r.bits) : \"h\"(a.bits), "
                  "\"h\"(b.bits), \"h\"(c.bits));\n  return r;\n}\n"));
  }
  if (op == "neg" || op == "abs") {
    return Define(name, absl::StrCat(kInline, ctype, " ", name, "(", ctype,
                                     " a) {\n  ", ctype, " r;\n  r.bits = ",
                                     op == "neg" ? "a.bits ^ 0x8000u"
                                                 : "a.bits & 0x7fffu",
                                     ";\n  return r;\n}\n"));
  }
  // Through f32 (see the header for why one more rounding is exact enough).
  const std::string to = ToF32(half);
  const std::string from = FromF32(half);
  if (op == "div" || op == "rem") {
    const std::string f32 = op == "div" ? "__fdiv_rn" : "fmodf";
    return Define(
        name, absl::StrCat(kInline, ctype, " ", name, "(", ctype, " a, ", ctype,
                           " b) {\n  return ", from, "(", f32, "(", to, "(a), ",
                           to, "(b)));\n}\n"));
  }
  KIR_CHECK(op == "exp" || op == "sqrt") << "unknown 16-bit op " << op;
  const std::string f32 = op == "exp" ? "expf" : "__fsqrt_rn";
  return Define(name, absl::StrCat(kInline, ctype, " ", name, "(", ctype,
                                   " a) {\n  return ", from, "(", f32, "(", to,
                                   "(a)));\n}\n"));
}

std::string CudaRuntime::Pack2() {
  return Define(
      "kir_pack2",
      R"(// Two 16-bit values in one b32 register, the first in the low half.
template <typename H>
__device__ __forceinline__ kir_u32 kir_pack2(H lo, H hi) {
  return static_cast<kir_u32>(lo.bits) | (static_cast<kir_u32>(hi.bits) << 16);
}
)");
}

std::string CudaRuntime::Unpack2() {
  return Define("kir_unpack2", R"(template <typename H>
__device__ __forceinline__ H kir_unpack_lo(kir_u32 x) {
  H h;
  h.bits = static_cast<kir_u16>(x & 0xffffu);
  return h;
}
template <typename H>
__device__ __forceinline__ H kir_unpack_hi(kir_u32 x) {
  H h;
  h.bits = static_cast<kir_u16>(x >> 16);
  return h;
}
)");
}

// ---------------------------------------------------------------------------
// Threads.

std::string CudaRuntime::ElectSync() {
  AsmFunction fn;
  fn.result_type = "bool";
  fn.name = "kir_elect_sync";
  fn.prologue = "  kir_u32 elected;\n";
  fn.ptx = {"{", ".reg .pred p;", "elect.sync _|p, 0xffffffff;",
            "selp.u32 %0, 1, 0, p;", "}"};
  fn.outputs = {"\"=r\"(elected)"};
  fn.memory = false;
  fn.epilogue = "  return elected != 0;\n";
  return Define(fn.name,
                absl::StrCat("// Call with the whole warp converged.\n",
                             Render(fn, false)));
}

std::string CudaRuntime::Shuffle(absl::string_view mode) {
  AsmFunction fn;
  fn.result_type = "kir_u32";
  fn.name = absl::StrCat("kir_shfl_", mode);
  fn.params = {"kir_u32 value", "kir_u32 lane"};
  fn.prologue = "  kir_u32 r;\n";
  fn.ptx = {absl::StrCat("shfl.sync.", mode == "bfly" ? "bfly" : mode,
                         ".b32 %0, %1, %2, ", mode == "up" ? "0x0" : "0x1f",
                         ", 0xffffffff;")};
  fn.outputs = {"\"=r\"(r)"};
  fn.inputs = {"\"r\"(value)", "\"r\"(lane)"};
  fn.memory = false;
  fn.epilogue = "  return r;\n";
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::ClusterCtaId(absl::string_view dim) {
  AsmFunction fn;
  fn.result_type = "kir_u32";
  fn.name = absl::StrCat("kir_cluster_ctaid_", dim);
  fn.prologue = "  kir_u32 r;\n";
  fn.ptx = {absl::StrCat("mov.u32 %0, %%cluster_ctaid.", dim, ";")};
  fn.outputs = {"\"=r\"(r)"};
  fn.is_volatile = false;
  fn.memory = false;
  fn.epilogue = "  return r;\n";
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::ClusterCtaRank() {
  AsmFunction fn;
  fn.result_type = "kir_u32";
  fn.name = "kir_cluster_ctarank";
  fn.prologue = "  kir_u32 r;\n";
  fn.ptx = {"mov.u32 %0, %%cluster_ctarank;"};
  fn.outputs = {"\"=r\"(r)"};
  fn.is_volatile = false;
  fn.memory = false;
  fn.epilogue = "  return r;\n";
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::SetMaxNReg(bool increase) {
  AsmFunction fn;
  fn.template_header = "template <int R>";
  fn.name = increase ? "kir_setmaxnreg_inc" : "kir_setmaxnreg_dec";
  fn.ptx = {absl::StrCat("setmaxnreg.", increase ? "inc" : "dec",
                         ".sync.aligned.u32 %0;")};
  fn.inputs = {"\"n\"(R)"};
  fn.memory = false;  // no memory semantics (as in CUTLASS)
  return Define(fn.name, Render(fn, false));
}

// ---------------------------------------------------------------------------
// Barriers and fences.

std::string CudaRuntime::BarrierBlock() {
  AsmFunction fn;
  fn.name = "kir_barrier_block";
  fn.ptx = {"bar.sync 0;"};
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::BarrierNamed(bool arrive) {
  AsmFunction fn;
  fn.template_header = "template <int ID, int N>";
  fn.name = arrive ? "kir_barrier_arrive" : "kir_barrier_named";
  fn.ptx = {absl::StrCat(arrive ? "bar.arrive" : "bar.sync", " %0, %1;")};
  fn.inputs = {"\"n\"(ID)", "\"n\"(N)"};
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::BarrierReduce(absl::string_view op) {
  const bool count = op == "popc";
  AsmFunction fn;
  fn.template_header = "template <int ID, int N>";
  fn.result_type = count ? "kir_u32" : "bool";
  fn.name = absl::StrCat("kir_barrier_red_", op);
  fn.params = {"bool vote"};
  fn.prologue = "  kir_u32 r;\n";
  // bar.red is bar.sync that also reduces the participants' predicates.
  if (count) {
    fn.ptx = {"{", ".reg .pred p;", "setp.ne.u32 p, %1, 0;",
              "bar.red.popc.u32 %0, %2, %3, p;", "}"};
  } else {
    fn.ptx = {"{",
              ".reg .pred p, q;",
              "setp.ne.u32 p, %1, 0;",
              absl::StrCat("bar.red.", op, ".pred q, %2, %3, p;"),
              "selp.u32 %0, 1, 0, q;",
              "}"};
  }
  fn.outputs = {"\"=r\"(r)"};
  fn.inputs = {"\"r\"(static_cast<kir_u32>(vote))", "\"n\"(ID)", "\"n\"(N)"};
  fn.epilogue = count ? "  return r;\n" : "  return r != 0;\n";
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::ClusterArrive(bool relaxed) {
  AsmFunction fn;
  fn.name = relaxed ? "kir_cluster_arrive_relaxed" : "kir_cluster_arrive";
  fn.ptx = {relaxed ? "barrier.cluster.arrive.relaxed.aligned;"
                    : "barrier.cluster.arrive.aligned;"};
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::ClusterWait() {
  AsmFunction fn;
  fn.name = "kir_cluster_wait";
  fn.ptx = {"barrier.cluster.wait.aligned;"};
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::FenceProxyAsync(absl::string_view space,
                                         bool predicated) {
  AsmFunction fn;
  fn.name = absl::StrCat("kir_fence_proxy_async",
                         space == "all" ? "" : absl::StrCat("_", space));
  fn.ptx = {absl::StrCat("fence.proxy.async", PtxSpace(space), ";")};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::FenceAcqRel(absl::string_view scope, bool predicated) {
  AsmFunction fn;
  fn.name = absl::StrCat("kir_fence_acq_rel_", scope);
  fn.ptx = {absl::StrCat("fence.acq_rel.", scope, ";")};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::FenceMbarrierInit(bool predicated) {
  AsmFunction fn;
  fn.name = "kir_fence_mbarrier_init";
  fn.ptx = {"fence.mbarrier_init.release.cluster;"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

// ---------------------------------------------------------------------------
// mbarriers.

std::string CudaRuntime::MbarrierInit(bool predicated) {
  AsmFunction fn;
  fn.template_header = "template <int COUNT>";
  fn.name = "kir_mbarrier_init";
  fn.params = {"kir_u32 bar"};
  fn.ptx = {"mbarrier.init.shared::cta.b64 [%0], %1;"};
  fn.inputs = {"\"r\"(bar)", "\"n\"(COUNT)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::MbarrierArrive(bool predicated) {
  AsmFunction fn;
  fn.name = "kir_mbarrier_arrive";
  fn.params = {"kir_u32 bar"};
  fn.ptx = {"mbarrier.arrive.shared::cta.b64 _, [%0];"};
  fn.inputs = {"\"r\"(bar)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::MbarrierArriveTx(bool predicated) {
  AsmFunction fn;
  fn.template_header = "template <int BYTES>";
  fn.name = "kir_mbarrier_arrive_expect_tx";
  fn.params = {"kir_u32 bar"};
  fn.ptx = {"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"};
  fn.inputs = {"\"r\"(bar)", "\"n\"(BYTES)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::StoreRemote(int lanes, absl::string_view ptx_type) {
  const bool is_float = ptx_type == "f32";
  AsmFunction fn;
  fn.name = absl::StrCat("kir_store_remote_", lanes, "x", ptx_type);
  fn.params = {"kir_u32 dst", "kir_u32 bar", "kir_u32 cta"};
  std::vector<std::string> values;
  for (int lane = 0; lane < lanes; ++lane) {
    fn.params.push_back(
        absl::StrCat(is_float ? "float" : "kir_u32", " v", lane));
    values.push_back(absl::StrCat("%", lane + 3));
  }
  const std::string list =
      lanes == 1 ? values[0]
                 : absl::StrCat("{", absl::StrJoin(values, ", "), "}");
  fn.ptx = {
      "{",
      ".reg .b32 remote_dst, remote_bar;",
      "mapa.shared::cluster.u32 remote_dst, %0, %2;",
      "mapa.shared::cluster.u32 remote_bar, %1, %2;",
      absl::StrCat("st.async.shared::cluster.mbarrier::complete_tx::bytes",
                   lanes == 1 ? "" : absl::StrCat(".v", lanes), ".", ptx_type,
                   " [remote_dst], ", list, ", [remote_bar];"),
      "}"};
  fn.inputs = {"\"r\"(dst)", "\"r\"(bar)", "\"r\"(cta)"};
  for (int lane = 0; lane < lanes; ++lane) {
    fn.inputs.push_back(
        absl::StrCat(is_float ? "\"f\"(v" : "\"r\"(v", lane, ")"));
  }
  return Define(fn.name, Render(fn, /*predicated=*/false));
}

std::string CudaRuntime::MbarrierArriveRemote(absl::string_view scope,
                                              bool predicated) {
  const bool cluster = scope == "cluster";
  AsmFunction fn;
  fn.name =
      cluster ? "kir_mbarrier_arrive_remote" : "kir_mbarrier_arrive_remote_cta";
  fn.params = {"kir_u32 bar", "kir_u32 cta"};
  // `.release.cta` is PTX's default (CUTLASS's form); `.release.cluster`
  // makes the arriving thread wait until its earlier accesses are visible
  // to the cluster, which measured 0.5 us per k-step on the H100.
  fn.ptx = {"{", ".reg .b32 remote;",
            "mapa.shared::cluster.u32 remote, %0, %1;",
            absl::StrCat("mbarrier.arrive", cluster ? ".release.cluster" : "",
                         ".shared::cluster.b64 _, [remote];"),
            "}"};
  fn.inputs = {"\"r\"(bar)", "\"r\"(cta)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::MbarrierWait(absl::string_view scope) {
  const bool cluster = scope == "cluster";
  AsmFunction fn;
  fn.name = cluster ? "kir_mbarrier_wait_cluster" : "kir_mbarrier_wait";
  fn.params = {"kir_u32 bar", "kir_u32 parity"};
  // try_wait may time out before the phase completes: loop on it. Labels
  // are local to the enclosing braces, so each inlined copy has its own.
  fn.ptx = {"{",
            ".reg .pred done;",
            "KIR_WAIT:",
            absl::StrCat("mbarrier.try_wait.parity",
                         cluster ? ".acquire.cluster" : "",
                         ".shared::cta.b64 done, [%0], %1;"),
            "@!done bra KIR_WAIT;",
            "}"};
  fn.inputs = {"\"r\"(bar)", "\"r\"(parity)"};
  return Define(fn.name, Render(fn, /*predicated=*/false));
}

std::string CudaRuntime::MbarrierInval(bool predicated) {
  AsmFunction fn;
  fn.name = "kir_mbarrier_inval";
  fn.params = {"kir_u32 bar"};
  fn.ptx = {"mbarrier.inval.shared::cta.b64 [%0];"};
  fn.inputs = {"\"r\"(bar)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

// ---------------------------------------------------------------------------
// cp.async.

std::string CudaRuntime::CpAsync(int bytes, bool predicated) {
  AsmFunction fn;
  fn.name = absl::StrCat("kir_cp_async_", bytes);
  fn.params = {"kir_u32 dst", "const void* src"};
  // .cg (L2 only) exists for 16 bytes only.
  fn.ptx = {absl::StrCat("cp.async.", bytes == 16 ? "cg" : "ca",
                         ".shared.global [%0], [%1], ", bytes, ";")};
  fn.inputs = {"\"r\"(dst)", "\"l\"(src)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::CpAsyncCommit(bool predicated) {
  AsmFunction fn;
  fn.name = "kir_cp_async_commit";
  fn.ptx = {"cp.async.commit_group;"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::CpAsyncWait(bool predicated) {
  AsmFunction fn;
  fn.template_header = "template <int N>";
  fn.name = "kir_cp_async_wait";
  fn.ptx = {"cp.async.wait_group %0;"};
  fn.inputs = {"\"n\"(N)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

// ---------------------------------------------------------------------------
// TMA and bulk copies.

std::string CudaRuntime::TmaLoad(int rank, bool multicast, bool predicated) {
  AsmFunction fn;
  fn.name =
      absl::StrCat("kir_tma_load_", rank, "d", multicast ? "_multicast" : "");
  fn.params = {"kir_u32 dst", "const kir_tensor_map* map"};
  for (std::string& param : CoordinateParams(rank)) fn.params.push_back(param);
  fn.params.push_back("kir_u32 bar");
  if (multicast) fn.params.push_back("kir_u16 cta_mask");
  fn.ptx = {
      absl::StrCat("cp.async.bulk.tensor.", rank,
                   "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                   multicast ? ".multicast::cluster" : "", " [%0], [%1, ",
                   Coordinates(rank, 2), "], [%", rank + 2, "]",
                   multicast ? absl::StrCat(", %", rank + 3) : "", ";")};
  fn.inputs = {"\"r\"(dst)", "\"l\"(map)"};
  for (std::string& input : CoordinateInputs(rank)) fn.inputs.push_back(input);
  fn.inputs.push_back("\"r\"(bar)");
  if (multicast) fn.inputs.push_back("\"h\"(cta_mask)");
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::TmaStore(int rank, bool predicated) {
  AsmFunction fn;
  fn.name = absl::StrCat("kir_tma_store_", rank, "d");
  fn.params = {"const kir_tensor_map* map", "kir_u32 src"};
  for (std::string& param : CoordinateParams(rank)) fn.params.push_back(param);
  fn.ptx = {absl::StrCat("cp.async.bulk.tensor.", rank,
                         "d.global.shared::cta.tile.bulk_group [%0, ",
                         Coordinates(rank, 2), "], [%1];")};
  fn.inputs = {"\"l\"(map)", "\"r\"(src)"};
  for (std::string& input : CoordinateInputs(rank)) fn.inputs.push_back(input);
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::TmaReduce(absl::string_view op, int rank,
                                   bool predicated) {
  AsmFunction fn;
  fn.name = absl::StrCat("kir_tma_reduce_", op, "_", rank, "d");
  fn.params = {"const kir_tensor_map* map", "kir_u32 src"};
  for (std::string& param : CoordinateParams(rank)) fn.params.push_back(param);
  // The reduction op comes before .tile in the tensor form.
  fn.ptx = {absl::StrCat("cp.reduce.async.bulk.tensor.", rank,
                         "d.global.shared::cta.", op, ".tile.bulk_group [%0, ",
                         Coordinates(rank, 2), "], [%1];")};
  fn.inputs = {"\"l\"(map)", "\"r\"(src)"};
  for (std::string& input : CoordinateInputs(rank)) fn.inputs.push_back(input);
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::TmaPrefetch(bool predicated) {
  AsmFunction fn;
  fn.name = "kir_tma_prefetch";
  fn.params = {"const kir_tensor_map* map"};
  fn.ptx = {"prefetch.tensormap [%0];"};
  fn.inputs = {"\"l\"(map)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::BulkLoad(bool predicated) {
  AsmFunction fn;
  fn.template_header = "template <int BYTES>";
  fn.name = "kir_bulk_load";
  fn.params = {"kir_u32 dst", "const void* src", "kir_u32 bar"};
  fn.ptx = {
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1], %2, [%3];"};
  fn.inputs = {"\"r\"(dst)", "\"l\"(src)", "\"n\"(BYTES)", "\"r\"(bar)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::BulkStore(bool predicated) {
  AsmFunction fn;
  fn.template_header = "template <int BYTES>";
  fn.name = "kir_bulk_store";
  fn.params = {"void* dst", "kir_u32 src"};
  fn.ptx = {"cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"};
  fn.inputs = {"\"l\"(dst)", "\"r\"(src)", "\"n\"(BYTES)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::BulkCommit(bool predicated) {
  AsmFunction fn;
  fn.name = "kir_bulk_commit";
  fn.ptx = {"cp.async.bulk.commit_group;"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

std::string CudaRuntime::BulkWait(bool read, bool predicated) {
  AsmFunction fn;
  fn.template_header = "template <int N>";
  fn.name = read ? "kir_bulk_wait_read" : "kir_bulk_wait";
  fn.ptx = {
      absl::StrCat("cp.async.bulk.wait_group", read ? ".read" : "", " %0;")};
  fn.inputs = {"\"n\"(N)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

// ---------------------------------------------------------------------------
// wgmma.

std::string CudaRuntime::WgmmaFence() {
  AsmFunction fn;
  fn.name = "kir_wgmma_fence";
  fn.ptx = {"wgmma.fence.sync.aligned;"};
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::WgmmaCommit() {
  AsmFunction fn;
  fn.name = "kir_wgmma_commit";
  fn.ptx = {"wgmma.commit_group.sync.aligned;"};
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::WgmmaWait() {
  AsmFunction fn;
  fn.template_header = "template <int N>";
  fn.name = "kir_wgmma_wait";
  fn.ptx = {"wgmma.wait_group.sync.aligned %0;"};
  fn.inputs = {"\"n\"(N)"};
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::WgmmaDescriptor() {
  return Define(
      "kir_wgmma_desc",
      R"(// A wgmma shared-memory matrix descriptor: start address, leading and stride
// byte offsets (all >> 4) and the layout (1: 128B, 2: 64B, 3: 32B swizzle).
__device__ __forceinline__ kir_u64 kir_wgmma_desc(kir_u32 addr, kir_u32 lbo, kir_u32 sbo,
                                                  kir_u32 layout) {
  return static_cast<kir_u64>((addr & 0x3ffffu) >> 4) |
         (static_cast<kir_u64>((lbo & 0x3ffffu) >> 4) << 16) |
         (static_cast<kir_u64>((sbo & 0x3ffffu) >> 4) << 32) |
         (static_cast<kir_u64>(layout) << 62);
}
)");
}

std::string CudaRuntime::Wgmma(int n, DType dtype, DType accumulator,
                               bool a_in_registers) {
  const std::string type = HalfName(dtype);
  const bool f32_acc = accumulator == DType::kF32;
  const std::string name =
      absl::StrCat("kir_wgmma_m64n", n, "k16_", f32_acc ? "f32" : "f16", "_",
                   type, a_in_registers ? "_rs" : "_ss");
  if (Has(name)) return name;
  // f32 accumulators: N/2 registers; f16: N/4 b32 registers of two halves.
  const int num_d = f32_acc ? n / 2 : n / 4;
  AsmFunction fn;
  fn.template_header = a_in_registers ? "template <int TRANS_B>"
                                      : "template <int TRANS_A, int TRANS_B>";
  fn.name = name;
  std::vector<std::string> d_regs;
  for (int i = 0; i < num_d; ++i) {
    fn.outputs.push_back(
        absl::StrCat(f32_acc ? "\"+f\"(d" : "\"+r\"(d", i, ")"));
    d_regs.push_back(absl::StrCat("%", i));
  }
  std::string a_operand;
  int next = num_d;
  if (a_in_registers) {
    for (int i = 0; i < 4; ++i) {
      fn.params.push_back(absl::StrCat("kir_u32 a", i));
      fn.inputs.push_back(absl::StrCat("\"r\"(a", i, ")"));
    }
    a_operand = absl::StrCat("{%", next, ", %", next + 1, ", %", next + 2,
                             ", %", next + 3, "}");
    next += 4;
  } else {
    fn.params.push_back("kir_u64 desc_a");
    fn.inputs.push_back("\"l\"(desc_a)");
    a_operand = absl::StrCat("%", next++);
  }
  fn.params.push_back("kir_u64 desc_b");
  fn.inputs.push_back("\"l\"(desc_b)");
  const int b = next++;
  fn.params.push_back("kir_u32 scale_d");
  fn.inputs.push_back("\"r\"(scale_d)");
  const int scale = next++;
  std::string trans;
  if (!a_in_registers) {
    fn.inputs.push_back("\"n\"(TRANS_A)");
    trans = absl::StrCat(", %", next++);
  }
  fn.inputs.push_back("\"n\"(TRANS_B)");
  absl::StrAppend(&trans, ", %", next++);
  for (int i = 0; i < num_d; ++i) {
    fn.params.push_back(absl::StrCat(f32_acc ? "float& d" : "kir_u32& d", i));
  }
  const std::string acc = f32_acc ? "f32" : "f16";
  fn.ptx = {
      "{", ".reg .pred p;", absl::StrCat("setp.ne.b32 p, %", scale, ", 0;"),
      absl::StrCat("wgmma.mma_async.sync.aligned.m64n", n, "k16.", acc, ".",
                   type, ".", type, " {", absl::StrJoin(d_regs, ", "), "}, ",
                   a_operand, ", %", b, ", p, 1, 1", trans, ";"),
      "}"};
  return Define(name, Render(fn, false));
}

std::string CudaRuntime::FenceOperands() {
  return Define(
      "kir_fence_operands",
      R"(// Pins register values in program order around wgmma: an access of `r`
// cannot move across this point (CUTLASS warpgroup_fence_operand).
template <int N>
__device__ __forceinline__ void kir_fence_operands(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void kir_fence_operands(kir_u32 (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}
template <typename H, int N>
__device__ __forceinline__ void kir_fence_operands(H (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+h"(r[i].bits)::"memory");
}
)");
}

std::string CudaRuntime::PackedHalves() {
  return Define(
      "kir_packed_get",
      R"(// 16-bit register buffers that are wgmma accumulators hold two elements per
// b32 word, as wgmma writes them: element i is half i % 2 of word i / 2.
template <typename H>
__device__ __forceinline__ H kir_packed_get(const kir_u32* words, kir_i32 i) {
  H h;
  h.bits = static_cast<kir_u16>(words[i >> 1] >> (16 * (i & 1)));
  return h;
}
template <typename H>
__device__ __forceinline__ void kir_packed_set(kir_u32* words, kir_i32 i, H h) {
  const kir_u32 shift = 16 * (i & 1);
  words[i >> 1] = (words[i >> 1] & ~(0xffffu << shift)) | (static_cast<kir_u32>(h.bits) << shift);
}
)");
}

// ---------------------------------------------------------------------------
// ldmatrix / stmatrix.

std::string CudaRuntime::Ldmatrix(int count, bool trans) {
  AsmFunction fn;
  fn.name = absl::StrCat("kir_ldmatrix_x", count, trans ? "_trans" : "");
  fn.params = {"kir_u32 addr"};
  std::vector<std::string> regs;
  for (int i = 0; i < count; ++i) {
    fn.params.push_back(absl::StrCat("kir_u32& r", i));
    fn.outputs.push_back(absl::StrCat("\"=r\"(r", i, ")"));
    regs.push_back(absl::StrCat("%", i));
  }
  fn.ptx = {absl::StrCat("ldmatrix.sync.aligned.m8n8.x", count,
                         trans ? ".trans" : "", ".shared.b16 {",
                         absl::StrJoin(regs, ", "), "}, [%", count, "];")};
  fn.inputs = {"\"r\"(addr)"};
  return Define(fn.name, Render(fn, false));
}

std::string CudaRuntime::Stmatrix(int count, bool trans) {
  AsmFunction fn;
  fn.name = absl::StrCat("kir_stmatrix_x", count, trans ? "_trans" : "");
  fn.params = {"kir_u32 addr"};
  fn.inputs = {"\"r\"(addr)"};
  std::vector<std::string> regs;
  for (int i = 0; i < count; ++i) {
    fn.params.push_back(absl::StrCat("kir_u32 r", i));
    fn.inputs.push_back(absl::StrCat("\"r\"(r", i, ")"));
    regs.push_back(absl::StrCat("%", i + 1));
  }
  fn.ptx = {absl::StrCat("stmatrix.sync.aligned.m8n8.x", count,
                         trans ? ".trans" : "", ".shared.b16 [%0], {",
                         absl::StrJoin(regs, ", "), "};")};
  return Define(fn.name, Render(fn, false));
}

// ---------------------------------------------------------------------------
// Semaphores and atomics.

std::string CudaRuntime::SemWait(absl::string_view scope) {
  AsmFunction fn;
  fn.name = absl::StrCat("kir_sem_wait_", scope);
  fn.params = {"const kir_i32* sem", "kir_i32 value"};
  fn.ptx = {"{",
            ".reg .pred again;",
            ".reg .b32 seen;",
            "KIR_SPIN:",
            absl::StrCat("ld.acquire.", scope, ".global.b32 seen, [%0];"),
            "setp.ne.b32 again, seen, %1;",
            "@again bra KIR_SPIN;",
            "}"};
  fn.inputs = {"\"l\"(sem)", "\"r\"(value)"};
  return Define(fn.name, Render(fn, /*predicated=*/false));
}

std::string CudaRuntime::SemRelease(absl::string_view scope, bool predicated) {
  AsmFunction fn;
  fn.name = absl::StrCat("kir_sem_release_", scope);
  fn.params = {"kir_i32* sem", "kir_i32 value"};
  fn.ptx = {absl::StrCat("st.release.", scope, ".global.b32 [%0], %1;")};
  fn.inputs = {"\"l\"(sem)", "\"r\"(value)"};
  return Define(fn.name + Suffix(predicated), Render(fn, predicated));
}

namespace {

struct AtomicTypes {
  std::string ctype;          // C++ value type
  std::string constraint;     // asm constraint letter
  std::string ptx_type;       // .s32, .u64, .f32, .noftz.bf16, ...
  std::string bits;           // how to get the asm operand from a value `v`
  bool float_minmax = false;  // f32 min/max: done on the integer bits
};

AtomicTypes AtomicTypesFor(absl::string_view op, DType dtype) {
  AtomicTypes t;
  const bool bitwise = op == "and" || op == "or" || op == "exch";
  const bool minmax = op == "min" || op == "max";
  switch (dtype) {
    case DType::kI32:
      t = {"kir_i32", "r", bitwise ? ".b32" : ".s32", "v"};
      break;
    case DType::kI64:
    case DType::kIndex:
      t = {"kir_i64", "l", bitwise ? ".b64" : minmax ? ".s64" : ".u64", "v"};
      break;
    case DType::kF32:
      t = {"float", "f", bitwise ? ".b32" : ".f32", "v"};
      t.float_minmax = minmax;
      break;
    case DType::kF16:
    case DType::kBF16: {
      const std::string half = HalfName(dtype);
      t = {
          absl::StrCat("kir_", half), "h",
          op == "add" ? absl::StrCat(".noftz.", half) : absl::StrCat(".", half),
          "v.bits"};
      break;
    }
    default:
      KIR_UNREACHABLE() << "atomic on " << DTypeName(dtype);
  }
  return t;
}

}  // namespace

std::string CudaRuntime::Atomic(absl::string_view op, DType dtype,
                                MemorySpace space, absl::string_view order,
                                absl::string_view scope) {
  const bool shared = space == MemorySpace::kShared;
  const AtomicTypes t = AtomicTypesFor(op, dtype);
  const std::string name =
      absl::StrCat("kir_atomic_", op, "_", order, "_", scope, "_",
                   shared ? "shared" : "global", "_", DTypeName(dtype));
  if (Has(name)) return name;
  const std::string prefix = absl::StrCat(
      "atom.", order, ".", scope, shared ? ".shared::cta" : ".global", ".");
  const std::string addr_param =
      shared ? "kir_u32 addr" : absl::StrCat(t.ctype, "* addr");
  const std::string addr_input = shared ? "\"r\"(addr)" : "\"l\"(addr)";
  std::string text;
  if (t.float_minmax) {
    // No atom.min/max.f32 on sm_90: order floats by their bits, as signed
    // integers when the operand is non-negative and as unsigned ones with
    // the opposite op when it is negative.
    const std::string flip = op == "min" ? "max" : "min";
    absl::StrAppend(
        &text, kInline, "float ", name, "(", addr_param, ", float v) {\n",
        "  const kir_i32 bits = __float_as_int(v);\n  kir_i32 old;\n",
        "  if (bits >= 0) {\n",
        AsmStatement({absl::StrCat(prefix, op, ".s32 %0, [%1], %2;")},
                     {"\"=r\"(old)"}, {addr_input, "\"r\"(bits)"}, true, true,
                     "    "),
        "  } else {\n",
        AsmStatement({absl::StrCat(prefix, flip, ".u32 %0, [%1], %2;")},
                     {"\"=r\"(old)"}, {addr_input, "\"r\"(bits)"}, true, true,
                     "    "),
        "  }\n  return __int_as_float(old);\n}\n");
    return Define(name, text);
  }
  const bool half = t.constraint == "h";
  AsmFunction fn;
  fn.result_type = t.ctype;
  fn.name = name;
  fn.params = {addr_param, absl::StrCat(t.ctype, " v")};
  fn.prologue = absl::StrCat("  ", t.ctype, " old;\n");
  fn.ptx = {absl::StrCat(prefix, op, t.ptx_type, " %0, [%1], %2;")};
  fn.outputs = {
      absl::StrCat("\"=", t.constraint, "\"(old", half ? ".bits" : "", ")")};
  fn.inputs = {addr_input,
               absl::StrCat("\"", t.constraint, "\"(", t.bits, ")")};
  fn.epilogue = "  return old;\n";
  return Define(name, Render(fn, false));
}

std::string CudaRuntime::Reduce(absl::string_view op, DType dtype,
                                MemorySpace space, absl::string_view order,
                                absl::string_view scope, bool predicated) {
  const bool shared = space == MemorySpace::kShared;
  const AtomicTypes t = AtomicTypesFor(op, dtype);
  const std::string name =
      absl::StrCat("kir_red_", op, "_", order, "_", scope, "_",
                   shared ? "shared" : "global", "_", DTypeName(dtype));
  if (Has(name + Suffix(predicated))) return name + Suffix(predicated);
  const std::string prefix = absl::StrCat(
      "red.", order, ".", scope, shared ? ".shared::cta" : ".global", ".");
  const std::string addr_param =
      shared ? "kir_u32 addr" : absl::StrCat(t.ctype, "* addr");
  const std::string addr_input = shared ? "\"r\"(addr)" : "\"l\"(addr)";
  if (t.float_minmax) {
    const std::string flip = op == "min" ? "max" : "min";
    AsmFunction positive;
    positive.ptx = {absl::StrCat(prefix, op, ".s32 [%0], %1;")};
    positive.inputs = {addr_input, "\"r\"(bits)"};
    AsmFunction negative = positive;
    negative.ptx = {absl::StrCat(prefix, flip, ".u32 [%0], %1;")};
    std::vector<std::string> params = {addr_param, "float v"};
    if (predicated) {
      params.insert(params.begin(), "kir_u32 issue");
      for (AsmFunction* fn : {&positive, &negative}) {
        fn->ptx = Predicate(fn->ptx, 2);
        fn->inputs.push_back("\"r\"(issue)");
      }
    }
    std::string text = absl::StrCat(
        kInline, "void ", name, Suffix(predicated), "(",
        absl::StrJoin(params, ", "), ") {\n",
        "  // No red.min/max.f32 on sm_90: see kir_atomic_min/max on f32.\n",
        "  const kir_i32 bits = __float_as_int(v);\n  if (bits >= 0) {\n",
        AsmStatement(positive.ptx, {}, positive.inputs, true, true, "    "),
        "  } else {\n",
        AsmStatement(negative.ptx, {}, negative.inputs, true, true, "    "),
        "  }\n}\n");
    return Define(name + Suffix(predicated), text);
  }
  AsmFunction fn;
  fn.name = name;
  fn.params = {addr_param, absl::StrCat(t.ctype, " v")};
  fn.ptx = {absl::StrCat(prefix, op, t.ptx_type, " [%0], %1;")};
  fn.inputs = {addr_input,
               absl::StrCat("\"", t.constraint, "\"(", t.bits, ")")};
  return Define(name + Suffix(predicated), Render(fn, predicated));
}

}  // namespace kir
