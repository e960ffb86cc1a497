// Emits kir kernels as CUDA C++ for sm_90a: values become const locals, ops
// become expressions or calls into the generated device runtime.
#include "printer/cuda_emitter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/async_groups.h"
#include "analysis/verifier.h"
#include "ir/check.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"
#include "ir/shared_memory.h"
#include "printer/cuda_runtime.h"

namespace kir {
namespace {

#define KIR_RETURN_IF_ERROR(expr)              \
  do {                                         \
    absl::Status kir_status_ = (expr);         \
    if (!kir_status_.ok()) return kir_status_; \
  } while (false)

// ---------------------------------------------------------------------------
// Names, types and literals.

std::string Var(const Value* value) {
  return absl::StrCat("v_", value->name());
}

const char* ScalarCType(DType dtype) {
  switch (dtype) {
    case DType::kI1:
      return "bool";
    case DType::kI32:
      return "kir_i32";
    case DType::kI64:
    case DType::kIndex:
      return "kir_i64";
    case DType::kF16:
      return "kir_f16";
    case DType::kBF16:
      return "kir_bf16";
    case DType::kF32:
      return "float";
    case DType::kMbarrier:
      return "kir_u64";
  }
  KIR_UNREACHABLE();
  return "";
}

std::string CType(const Type& type) {
  if (type.is_vector()) {
    return absl::StrCat("kir_vec<", ScalarCType(type.dtype()), ", ",
                        type.lanes(), ">");
  }
  return ScalarCType(type.dtype());
}

bool IsHalf(DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16;
}
bool IsWideInt(DType dtype) {
  return dtype == DType::kI64 || dtype == DType::kIndex;
}
const char* UnsignedOf(DType dtype) {
  return IsWideInt(dtype) ? "kir_u64" : "kir_u32";
}

std::string IntLiteral(int64_t value, DType dtype) {
  switch (dtype) {
    case DType::kI1:
      return value != 0 ? "true" : "false";
    case DType::kI32: {
      // i32 also takes 0x80000000..0xffffffff (their two's-complement bits).
      if (value >= std::numeric_limits<int32_t>::min() &&
          value <= std::numeric_limits<int32_t>::max()) {
        if (value == std::numeric_limits<int32_t>::min()) {
          return "(-2147483647 - 1)";
        }
        return absl::StrCat(value);
      }
      return absl::StrFormat("static_cast<kir_i32>(0x%xu)",
                             static_cast<uint32_t>(value));
    }
    default:
      if (value == std::numeric_limits<int64_t>::min()) {
        return "(-9223372036854775807LL - 1)";
      }
      return absl::StrCat(value, "LL");
  }
}

// Rounds `value` to the nearest even 16-bit float (f16 or bf16) and returns
// its bits; one rounding, from the double.
uint16_t RoundToHalfBits(double value, DType dtype) {
  const bool bf16 = dtype == DType::kBF16;
  const int mantissa_bits = bf16 ? 7 : 10;
  const int exponent_bias = bf16 ? 127 : 15;
  const int max_exponent = bf16 ? 127 : 15;
  const int min_exponent = 1 - exponent_bias;  // of normal numbers
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const uint16_t inf = bf16 ? 0x7f80 : 0x7c00;
  if (std::isnan(value)) return bf16 ? 0x7fc0 : 0x7e00;
  double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return sign | inf;
  if (magnitude == 0) return sign;
  int exponent;
  std::frexp(magnitude,
             &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1)
  exponent -= 1;          // magnitude = g * 2^exponent, g in [1, 2)
  if (exponent < min_exponent) exponent = min_exponent;  // subnormal quantum
  const double quantum = std::ldexp(1.0, exponent - mantissa_bits);
  double steps = std::nearbyint(magnitude / quantum);  // ties to even
  // Rounding may carry into the next binade.
  if (steps >= std::ldexp(1.0, mantissa_bits + 1)) {
    steps /= 2;
    exponent += 1;
  }
  if (exponent > max_exponent) return sign | inf;
  const uint64_t significand = static_cast<uint64_t>(steps);
  if (significand < (uint64_t{1} << mantissa_bits)) {
    return sign | static_cast<uint16_t>(significand);  // subnormal (or zero)
  }
  const uint64_t biased = static_cast<uint64_t>(exponent + exponent_bias);
  return sign | static_cast<uint16_t>(
                    (biased << mantissa_bits) |
                    (significand & ((uint64_t{1} << mantissa_bits) - 1)));
}

std::string FloatLiteral(double value, DType dtype) {
  if (dtype == DType::kF32) {
    const float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    return absl::StrFormat("__uint_as_float(0x%08xu) /* %s */", bits,
                           absl::StrCat(f));
  }
  return absl::StrFormat("%s{0x%04x} /* %s */", ScalarCType(dtype),
                         RoundToHalfBits(value, dtype), absl::StrCat(value));
}

std::string EscapeCppString(absl::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The kernel's extern "C" name: its kir name with '.' replaced, moved out
// of the way of C++ keywords and the runtime's names.
std::string KernelSymbol(const std::string& name) {
  static const std::set<std::string>* const kReserved =
      new std::set<std::string>{
          "alignas",  "alignof",  "and",       "asm",       "auto",
          "bool",     "break",    "case",      "catch",     "char",
          "class",    "const",    "constexpr", "continue",  "decltype",
          "default",  "delete",   "do",        "double",    "else",
          "enum",     "explicit", "extern",    "false",     "float",
          "for",      "friend",   "goto",      "if",        "inline",
          "int",      "long",     "main",      "mutable",   "namespace",
          "new",      "noexcept", "not",       "nullptr",   "operator",
          "or",       "private",  "protected", "public",    "register",
          "return",   "short",    "signed",    "sizeof",    "static",
          "struct",   "switch",   "template",  "this",      "throw",
          "true",     "try",      "typedef",   "typename",  "union",
          "unsigned", "using",    "virtual",   "void",      "volatile",
          "while",    "xor",      "blockIdx",  "threadIdx", "blockDim",
          "gridDim",  "warpSize"};
  std::string symbol = name;
  for (char& c : symbol) {
    if (c == '.') c = '_';
  }
  if (kReserved->count(symbol) > 0 || symbol.rfind("kir_", 0) == 0 ||
      symbol.rfind("__", 0) == 0) {
    symbol = absl::StrCat("kir_kernel_", symbol);
  }
  return symbol;
}

// `text` in parentheses unless it is a single name, number or already
// parenthesized expression.
std::string Parenthesized(const std::string& text) {
  if (text.find(' ') == std::string::npos) return text;
  if (text.front() == '(' && text.back() == ')') {
    int depth = 0;
    bool closes_early = false;
    for (size_t i = 0; i + 1 < text.size(); ++i) {
      depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
      if (depth == 0) closes_early = true;
    }
    if (!closes_early) return text;
  }
  return absl::StrCat("(", text, ")");
}

// A linear integer expression: constant + sum(coefficient * term).
struct Linear {
  int64_t constant = 0;
  std::vector<std::pair<int64_t, std::string>> terms;

  static Linear Of(int64_t value) { return Linear{value, {}}; }
  static Linear Of(std::string term) {
    return Linear{0, {{1, std::move(term)}}};
  }
  Linear& operator+=(const Linear& other) {
    constant += other.constant;
    terms.insert(terms.end(), other.terms.begin(), other.terms.end());
    return *this;
  }
  Linear& operator*=(int64_t factor) {
    constant *= factor;
    for (auto& term : terms) term.first *= factor;
    return *this;
  }
  std::string ToString() const {
    std::vector<std::string> parts;
    for (const auto& [coefficient, term] : terms) {
      if (coefficient == 0) continue;
      const std::string factor =
          term.find_first_of(" +-*/%&|^<>?") != std::string::npos
              ? absl::StrCat("(", term, ")")
              : term;
      parts.push_back(
          coefficient == 1 ? factor : absl::StrCat(factor, " * ", coefficient));
    }
    if (constant != 0 || parts.empty()) parts.push_back(absl::StrCat(constant));
    return absl::StrJoin(parts, " + ");
  }
};

// ---------------------------------------------------------------------------
// Shared memory layout.

// The emitter decides no layout: it reads the offsets plan-shared-memory
// wrote (or the author did), and a shared allocation without one is an
// error.
absl::StatusOr<SharedLayout> ReadSharedLayout(const Kernel& kernel) {
  SharedLayout layout = LayoutWithoutReuse(kernel);
  if (!layout.unsized.empty()) {
    const Op& alloc = *layout.unsized.front();
    return Error(alloc.loc()) << "shared allocation %" << alloc.result()->name()
                              << " needs a constant positive shape";
  }
  for (const SharedPlacement& placed : layout.placements) {
    if (!placed.explicit_offset) {
      return Error(placed.alloc->loc())
             << "shared allocation %" << placed.alloc->result()->name()
             << " has no offset: plan-shared-memory places shared memory "
                "(add it to the pipeline; reuse=never keeps every allocation "
                "apart)";
    }
  }
  for (const SharedPlacement& placed : layout.placements) {
    if (placed.offset < 0 || placed.offset % placed.align != 0) {
      return Error(placed.alloc->loc())
             << "shared allocation %" << placed.alloc->result()->name()
             << " has offset " << placed.offset
             << ", not a multiple of its alignment " << placed.align;
    }
  }
  if (layout.total > kMaxSharedBytes) {
    return Error(kernel.loc())
           << "kernel @" << kernel.name() << " needs " << layout.total
           << " bytes of shared memory, more than " << kMaxSharedBytes;
  }
  return layout;
}

// ---------------------------------------------------------------------------
// Output.

class CodeWriter {
 public:
  explicit CodeWriter(bool line_directives)
      : line_directives_(line_directives) {}

  void Line(absl::string_view text) {
    absl::StrAppend(&text_, std::string(2 * indent_, ' '), text, "\n");
  }
  void Raw(absl::string_view text) { absl::StrAppend(&text_, text); }
  // `#line N "file"` for the op at `loc`.
  void LineDirective(const Location& loc) {
    if (!line_directives_ || !loc.known()) return;
    absl::StrAppend(&text_, "#line ", loc.line, " \"",
                    EscapeCppString(loc.file_name()), "\"\n");
  }
  void Indent() { ++indent_; }
  void Dedent() { --indent_; }
  std::string& text() { return text_; }

 private:
  bool line_directives_;
  int indent_ = 1;
  std::string text_;
};

// ---------------------------------------------------------------------------
// Kernels.

struct WgmmaOperandLayout {
  int64_t lbo = 0;
  int64_t sbo = 0;
  int layout_type = 0;
  bool mn_major = false;
};

class KernelEmitter {
 public:
  KernelEmitter(const Kernel& kernel, const CudaKernelAbi& abi,
                const CudaEmitOptions& options, CudaRuntime& runtime)
      : kernel_(kernel),
        abi_(abi),
        options_(options),
        runtime_(runtime),
        body_(options.line_directives) {
    for (const CudaSharedAllocation& placed : abi.shared) {
      shared_offsets_[placed.buffer] = placed.offset;
    }
    Walk(kernel.body(), [&](const Op& op) {
      if (op.kind() == OpKind::kConst &&
          IsInteger(op.result()->type().dtype())) {
        const Attribute& value = op.value();
        if (value.is_integral) constants_[op.result()] = value.int_value;
      }
      if (op.kind() == OpKind::kWgmma) {
        const Value* accumulator = op.operand_value(0);
        if (accumulator->type().is_buffer() &&
            accumulator->type().space() == MemorySpace::kRegister &&
            IsHalf(accumulator->type().dtype())) {
          packed_.insert(accumulator);
        }
        for (int slot = 0; slot < 2; ++slot) {
          const Value* buffer = op.operand_value(slot);
          if (buffer->type().is_buffer() &&
              buffer->type().space() == MemorySpace::kRegister &&
              std::find(wgmma_registers_.begin(), wgmma_registers_.end(),
                        buffer) == wgmma_registers_.end()) {
            wgmma_registers_.push_back(buffer);
          }
        }
      }
    });
  }

  absl::Status Emit(std::string& out);

 private:
  // Statements.
  absl::Status EmitRegion(const Region& region);
  absl::Status EmitOp(const Op& op);
  absl::Status EmitArithmetic(const Op& op);
  absl::Status EmitCast(const Op& op);
  absl::Status EmitLoad(const Op& op);
  absl::Status EmitStore(const Op& op);
  absl::Status EmitMatrix(const Op& op);
  absl::Status EmitTma(const Op& op);
  absl::Status EmitBulk(const Op& op);
  absl::Status EmitWgmma(const Op& op);
  absl::Status EmitWgmmaWait(const Op& op);
  absl::Status EmitMbarrier(const Op& op);
  absl::Status EmitAtomic(const Op& op);
  absl::Status EmitPtx(const Op& op);
  absl::Status EmitFor(const Op& op);
  absl::Status EmitIf(const Op& op);
  absl::Status EmitRole(const Op& op);

  // Expressions.
  std::string Scalar(OpKind kind, DType dtype,
                     const std::vector<std::string>& args, const Op& op);
  std::string Lane(const Value* value, int lane) const {
    return value->type().is_vector()
               ? absl::StrCat(Var(value), ".v[", lane, "]")
               : Var(value);
  }
  // An index value: its constant when it is one, else the variable.
  Linear Index(const Value* value, bool narrow) const {
    auto constant = constants_.find(value);
    if (constant != constants_.end()) return Linear::Of(constant->second);
    return Linear::Of(narrow ? absl::StrCat("(kir_i32)", Var(value))
                             : Var(value));
  }
  std::vector<Linear> Indices(const Operand& operand, bool narrow) const {
    std::vector<Linear> indices;
    for (const Value* index : operand.indices)
      indices.push_back(Index(index, narrow));
    return indices;
  }
  // Element offset in a global buffer (tensor parameter or workspace).
  std::string GlobalOffset(const Value* buffer,
                           const std::vector<Linear>& indices);
  // A static index expression over the sizes (floor division, as in types).
  std::string IndexExprCuda(const IndexExpr& expr);
  std::string GlobalPointer(const Operand& operand) {
    return absl::StrCat(
        "(", Var(operand.value), " + ",
        Parenthesized(GlobalOffset(operand.value, Indices(operand, false))),
        ")");
  }
  // Element offset in a shared or register buffer (row-major, padded).
  Linear LocalElementOffset(const Value* buffer,
                            const std::vector<Linear>& indices) const;
  // Byte offset in the shared window of the element at `indices`, swizzled
  // (the element's true place) or not (the box start TMA and wgmma take).
  std::string SharedOffset(const Value* buffer,
                           const std::vector<Linear>& indices,
                           bool swizzled) const;
  std::string SharedPointer(const Operand& operand, const Type& element) const {
    return absl::StrCat(
        "reinterpret_cast<", CType(element), "*>(kir_smem + (",
        SharedOffset(operand.value, Indices(operand, true), true), "))");
  }
  std::string SharedAddress(const Value* buffer,
                            const std::vector<Linear>& indices, bool swizzled) {
    need_smem_base_ = true;
    return absl::StrCat("kir_smem_base + static_cast<kir_u32>(",
                        SharedOffset(buffer, indices, swizzled), ")");
  }
  std::string SharedAddress(const Operand& operand, bool swizzled) {
    return SharedAddress(operand.value, Indices(operand, true), swizzled);
  }
  std::string MapPointer(const Operand& operand) const {
    return absl::StrCat("&", Var(operand.value));
  }
  // TMA coordinates, innermost first.
  std::vector<std::string> Coordinates(const Operand& operand) const {
    std::vector<std::string> coords;
    for (auto it = operand.indices.rbegin(); it != operand.indices.rend();
         ++it) {
      coords.push_back(absl::StrCat("(kir_i32)", Var(*it)));
    }
    return coords;
  }
  // Element `offset` of a register buffer, read and written.
  std::string RegisterRead(const Value* buffer, const Linear& offset) {
    if (packed_.count(buffer) > 0) {
      return absl::StrCat(runtime_.PackedHalves(), "<",
                          ScalarCType(buffer->type().dtype()), ">(",
                          Var(buffer), ", ", offset.ToString(), ")");
    }
    return absl::StrCat(Var(buffer), "[", offset.ToString(), "]");
  }
  std::string RegisterWrite(const Value* buffer, const Linear& offset,
                            const std::string& value) {
    if (packed_.count(buffer) > 0) {
      runtime_.PackedHalves();
      return absl::StrCat("kir_packed_set(", Var(buffer), ", ",
                          offset.ToString(), ", ", value, ");");
    }
    return absl::StrCat(Var(buffer), "[", offset.ToString(), "] = ", value,
                        ";");
  }
  // Word `index` of a packed buffer whose element offset is `origin` + 2 *
  // index.
  static Linear PackedWord(const Linear& origin, int index) {
    if (origin.terms.empty()) return Linear::Of(origin.constant / 2 + index);
    Linear word = Linear::Of(absl::StrCat("(", origin.ToString(), ") >> 1"));
    word += Linear::Of(index);
    return word;
  }
  absl::StatusOr<WgmmaOperandLayout> WgmmaLayout(const Op& op, int slot,
                                                 bool mn_major,
                                                 int64_t mn_extent);

  std::string Temp(absl::string_view hint) {
    return absl::StrCat("kir_", hint, next_temp_++);
  }
  bool predicated() const { return !issue_.empty(); }
  // `function<template_args>(issue, args...)`, the issue predicate only in
  // an elected region.
  void Call(const std::string& function, const std::vector<std::string>& args,
            const std::string& template_args = "") {
    std::vector<std::string> all;
    if (predicated())
      all.push_back(absl::StrCat("static_cast<kir_u32>(", issue_, ")"));
    all.insert(all.end(), args.begin(), args.end());
    Line(absl::StrCat(function, template_args, "(", absl::StrJoin(all, ", "),
                      ");"));
  }
  void Line(absl::string_view text) { body_.Line(text); }

  const Kernel& kernel_;
  const CudaKernelAbi& abi_;
  const CudaEmitOptions& options_;
  CudaRuntime& runtime_;
  CodeWriter body_;
  std::map<const Value*, int64_t> shared_offsets_;
  std::map<const Value*, int64_t> constants_;
  std::vector<const Value*> wgmma_registers_;  // accumulators and A fragments
  // 16-bit register buffers that are wgmma accumulators: stored two elements
  // per b32 word, the layout wgmma writes, so that wgmma updates them in place.
  std::set<const Value*> packed_;
  std::string issue_;  // the elect.sync predicate of the current region
  int next_temp_ = 0;
  bool need_tid_ = false;
  bool need_lane_ = false;
  bool need_warp_ = false;
  bool need_smem_base_ = false;
};

std::string KernelEmitter::IndexExprCuda(const IndexExpr& expr) {
  using Kind = IndexExpr::Kind;
  switch (expr.kind()) {
    case Kind::kConstant:
      return IntLiteral(expr.constant(), DType::kIndex);
    case Kind::kSize:
      return Var(expr.size());
    default:
      break;
  }
  const std::string a = IndexExprCuda(expr.lhs());
  const std::string b = IndexExprCuda(expr.rhs());
  switch (expr.kind()) {
    case Kind::kAdd:
      return absl::StrCat("(", a, " + ", b, ")");
    case Kind::kSub:
      return absl::StrCat("(", a, " - ", b, ")");
    case Kind::kMul:
      return absl::StrCat("(", a, " * ", b, ")");
    case Kind::kDiv:
      return absl::StrCat(runtime_.FloorDiv(), "(", a, ", ", b, ")");
    case Kind::kMod:
      return absl::StrCat(runtime_.FloorMod(), "(", a, ", ", b, ")");
    case Kind::kCeilDiv:
      return absl::StrCat(runtime_.CeilDiv(), "(", a, ", ", b, ")");
    case Kind::kMin:
      return absl::StrCat("(", a, " < ", b, " ? ", a, " : ", b, ")");
    case Kind::kMax:
      return absl::StrCat("(", a, " > ", b, " ? ", a, " : ", b, ")");
    default:
      break;
  }
  KIR_UNREACHABLE();
  return "";
}

std::string KernelEmitter::GlobalOffset(const Value* buffer,
                                        const std::vector<Linear>& indices) {
  const Param* param = kernel_.FindParam(buffer);
  const std::vector<IndexExpr>& shape = buffer->type().shape();
  auto dim = [&](int i) {
    std::optional<int64_t> constant = shape[i].AsConstant();
    if (constant.has_value()) return absl::StrCat(*constant);
    return IndexExprCuda(shape[i]);
  };
  const int rank = static_cast<int>(indices.size());
  auto paren = [](const std::string& text) { return Parenthesized(text); };
  if (param != nullptr && param->layout == TensorLayout::kStrided) {
    std::vector<std::string> terms;
    for (int i = 0; i < rank; ++i) {
      terms.push_back(absl::StrCat(paren(indices[i].ToString()), " * ",
                                   paren(IndexExprCuda(param->strides[i]))));
    }
    return absl::StrJoin(terms, " + ");
  }
  const bool column_major =
      param != nullptr && param->layout == TensorLayout::kColumnMajor;
  bool constant_dims = true;
  // The outermost dimension (innermost for col-major) is never a factor.
  for (int step = 1; step < rank; ++step) {
    constant_dims &=
        shape[column_major ? rank - 1 - step : step].AsConstant().has_value();
  }
  if (constant_dims) {
    Linear offset;
    for (int step = 0; step < rank; ++step) {
      const int i = column_major ? rank - 1 - step : step;
      if (step > 0) offset *= *shape[i].AsConstant();
      offset += indices[i];
    }
    return offset.ToString();
  }
  // Horner's rule from the outermost varying dimension.
  std::string offset;
  for (int step = 0; step < rank; ++step) {
    const int i = column_major ? rank - 1 - step : step;
    if (step == 0) {
      offset = indices[i].ToString();
    } else {
      offset = absl::StrCat(paren(offset), " * ", paren(dim(i)), " + ",
                            indices[i].ToString());
    }
  }
  return offset.empty() ? "0" : offset;
}

Linear KernelEmitter::LocalElementOffset(
    const Value* buffer, const std::vector<Linear>& indices) const {
  const Type& type = buffer->type();
  int64_t pad = 0;
  if (const Op* alloc = buffer->defining_op()) {
    if (alloc->kind() == OpKind::kAllocShared) pad = alloc->pad();
  }
  Linear offset;
  for (int i = 0; i < type.rank() && i < static_cast<int>(indices.size());
       ++i) {
    int64_t extent = type.shape()[i].AsConstant().value_or(1);
    if (i + 1 == type.rank()) extent += pad;
    offset *= extent;
    offset += indices[i];
  }
  return offset;
}

std::string KernelEmitter::SharedOffset(const Value* buffer,
                                        const std::vector<Linear>& indices,
                                        bool swizzled) const {
  Linear bytes = LocalElementOffset(buffer, indices);
  bytes *= DTypeBytes(buffer->type().dtype());
  const Op* alloc = buffer->defining_op();
  const int64_t swizzle = alloc != nullptr ? alloc->swizzle() : 0;
  auto offset = shared_offsets_.find(buffer);
  const int64_t base = offset != shared_offsets_.end() ? offset->second : 0;
  if (swizzled && swizzle > 0) {
    const std::string swizzle_fn = runtime_.Swizzle();
    std::string text =
        absl::StrCat(swizzle_fn, "<", swizzle, ">(", bytes.ToString(), ")");
    return base == 0 ? text : absl::StrCat(base, " + ", text);
  }
  bytes += Linear::Of(base);
  return bytes.ToString();
}

absl::Status KernelEmitter::Emit(std::string& out) {
  KIR_RETURN_IF_ERROR(EmitRegion(kernel_.body()));

  // Signature.
  CodeWriter head(options_.line_directives);
  head.LineDirective(kernel_.loc());
  std::string attributes;
  if (abi_.launch_bound_threads.has_value()) {
    attributes = abi_.min_blocks_one
                     ? absl::StrCat(" __launch_bounds__(",
                                    *abi_.launch_bound_threads, ", 1)")
                     : absl::StrCat(" __launch_bounds__(",
                                    *abi_.launch_bound_threads, ")");
  }
  if (abi_.cluster != std::array<int64_t, 3>{1, 1, 1}) {
    absl::StrAppend(&attributes, " __cluster_dims__(", abi_.cluster[0], ", ",
                    abi_.cluster[1], ", ", abi_.cluster[2], ")");
  }
  std::vector<std::string> params;
  for (const CudaKernelArg& arg : abi_.args) {
    params.push_back(absl::StrCat(arg.cuda_type, " v_", arg.name));
  }
  head.Raw(absl::StrCat("extern \"C\" __global__ void", attributes, " ",
                        abi_.symbol, "(", params.empty() ? "" : "\n    ",
                        absl::StrJoin(params, ",\n    "), ") {\n"));

  // Per-thread constants the body uses.
  const Dim3& block = kernel_.block;
  const bool one_dimensional =
      block.y.AsConstant() == std::optional<int64_t>(1) &&
      block.z.AsConstant() == std::optional<int64_t>(1);
  if (need_warp_ || need_lane_) need_tid_ = true;
  if (need_tid_) {
    head.Line(
        one_dimensional
            ? "const kir_i32 kir_tid = static_cast<kir_i32>(threadIdx.x);"
            : "const kir_i32 kir_tid = static_cast<kir_i32>(threadIdx.x + "
              "blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));");
  }
  if (need_lane_) head.Line("const kir_i32 kir_lane = kir_tid & 31;");
  if (need_warp_) {
    // Broadcast from lane 0 so that ptxas sees a warp-uniform value (R11),
    // when every warp is whole; computed at entry, where warps are converged.
    const std::optional<int64_t> threads = block.StaticVolume();
    if (threads.has_value() && *threads % 32 == 0) {
      head.Line(absl::StrCat(
          "const kir_i32 kir_warp = static_cast<kir_i32>(",
          runtime_.Shuffle("idx"),
          "(static_cast<kir_u32>(kir_tid >> 5), 0));  // warp-uniform"));
    } else {
      head.Line("const kir_i32 kir_warp = kir_tid >> 5;");
    }
  }
  if (need_smem_base_) {
    head.Line(absl::StrCat("const kir_u32 kir_smem_base = ",
                           runtime_.SmemAddress(), "(kir_smem);"));
  }
  absl::StrAppend(&out, head.text(), body_.text(), "}\n");
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitRegion(const Region& region) {
  for (const auto& op : region.ops()) KIR_RETURN_IF_ERROR(EmitOp(*op));
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitOp(const Op& op) {
  body_.LineDirective(op.loc());
  const Value* result = op.num_results() > 0 ? op.result() : nullptr;
  auto define = [&](const std::string& expr) {
    Line(absl::StrCat("const ", CType(result->type()), " ", Var(result), " = ",
                      expr, ";"));
  };
  switch (op.kind()) {
    case OpKind::kConst: {
      const Attribute& value = op.value();
      const DType dtype = result->type().dtype();
      if (IsFloat(dtype)) {
        define(FloatLiteral(value.is_integral
                                ? static_cast<double>(value.int_value)
                                : value.float_value,
                            dtype));
      } else {
        define(IntLiteral(value.int_value, dtype));
      }
      return absl::OkStatus();
    }
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kRem:
    case OpKind::kMin:
    case OpKind::kMax:
    case OpKind::kAnd:
    case OpKind::kOr:
    case OpKind::kXor:
    case OpKind::kShl:
    case OpKind::kShr:
    case OpKind::kNot:
    case OpKind::kNeg:
    case OpKind::kAbs:
    case OpKind::kExp:
    case OpKind::kSqrt:
    case OpKind::kFma:
      return EmitArithmetic(op);
    case OpKind::kCmp: {
      static const std::map<std::string, std::string>* const kOperators =
          new std::map<std::string, std::string>{{"eq", "=="}, {"ne", "!="},
                                                 {"lt", "<"},  {"le", "<="},
                                                 {"gt", ">"},  {"ge", ">="}};
      const DType dtype = op.operand_value(0)->type().dtype();
      std::string a = Var(op.operand_value(0));
      std::string b = Var(op.operand_value(1));
      if (IsHalf(dtype)) {
        // Exactly representable in f32, where comparisons are IEEE.
        const std::string to_f32 = runtime_.ToF32(dtype);
        a = absl::StrCat(to_f32, "(", a, ")");
        b = absl::StrCat(to_f32, "(", b, ")");
      }
      define(absl::StrCat("(", a, " ", kOperators->at(EnumName(op.pred())), " ",
                          b, ")"));
      return absl::OkStatus();
    }
    case OpKind::kSelect:
      define(absl::StrCat("(", Var(op.operand_value(0)), " ? ",
                          Var(op.operand_value(1)), " : ",
                          Var(op.operand_value(2)), ")"));
      return absl::OkStatus();
    case OpKind::kCast:
      return EmitCast(op);
    case OpKind::kVecFrom: {
      std::vector<std::string> lanes;
      for (const Operand& operand : op.operands())
        lanes.push_back(Var(operand.value));
      define(absl::StrCat("{{", absl::StrJoin(lanes, ", "), "}}"));
      return absl::OkStatus();
    }
    case OpKind::kVecExtract:
      define(absl::StrCat(Var(op.operand_value(0)), ".v[", op.lane(), "]"));
      return absl::OkStatus();

    case OpKind::kThreadId:
      define(absl::StrCat("static_cast<kir_i64>(threadIdx.", EnumName(op.dim()),
                          ")"));
      return absl::OkStatus();
    case OpKind::kBlockId:
      define(absl::StrCat("static_cast<kir_i64>(blockIdx.", EnumName(op.dim()),
                          ")"));
      return absl::OkStatus();
    case OpKind::kBlockDim:
      define(absl::StrCat("static_cast<kir_i64>(blockDim.", EnumName(op.dim()),
                          ")"));
      return absl::OkStatus();
    case OpKind::kGridDim:
      define(absl::StrCat("static_cast<kir_i64>(gridDim.", EnumName(op.dim()),
                          ")"));
      return absl::OkStatus();
    case OpKind::kClusterCtaId:
      define(absl::StrCat("static_cast<kir_i64>(",
                          runtime_.ClusterCtaId(EnumName(op.dim())), "())"));
      return absl::OkStatus();
    case OpKind::kClusterCtaRank:
      define(absl::StrCat("static_cast<kir_i64>(", runtime_.ClusterCtaRank(),
                          "())"));
      return absl::OkStatus();
    case OpKind::kLaneId:
      need_lane_ = true;
      define("static_cast<kir_i64>(kir_lane)");
      return absl::OkStatus();
    case OpKind::kWarpId:
      need_warp_ = true;
      define("static_cast<kir_i64>(kir_warp)");
      return absl::OkStatus();

    case OpKind::kAllocShared: {
      const int64_t offset = shared_offsets_.at(result);
      std::string note =
          absl::StrCat("// %", result->name(), ": ", result->type().ToString(),
                       " at kir_smem[", offset, "]");
      if (op.swizzle() > 0) {
        absl::StrAppend(&note, ", ", op.swizzle(), "-byte swizzle");
      }
      if (op.pad() > 0) absl::StrAppend(&note, ", pad ", op.pad());
      Line(note);
      return absl::OkStatus();
    }
    case OpKind::kAllocReg: {
      std::optional<int64_t> count = result->type().StaticElementCount();
      if (!count.has_value()) {
        return Error(op.loc()) << "register buffer %" << result->name()
                               << " needs a constant shape";
      }
      if (packed_.count(result) > 0) {
        Line(absl::StrCat("kir_u32 ", Var(result), "[", (*count + 1) / 2,
                          "];  // ", result->type().ToString(),
                          ", two elements per word"));
        return absl::OkStatus();
      }
      Line(absl::StrCat(ScalarCType(result->type().dtype()), " ", Var(result),
                        "[", *count, "];  // ", result->type().ToString()));
      return absl::OkStatus();
    }
    case OpKind::kAllocWorkspace:
      Line(absl::StrCat("// %", result->name(), ": ", result->type().ToString(),
                        ", the kernel argument ", Var(result)));
      return absl::OkStatus();

    case OpKind::kLoad:
      return EmitLoad(op);
    case OpKind::kStore:
      return EmitStore(op);
    case OpKind::kStoreRemote: {
      const Value* value = op.operand_value(1);
      const bool is_float = value->type().dtype() == DType::kF32;
      std::vector<std::string> args = {
          SharedAddress(op.operand(0), true),
          SharedAddress(op.operand(2), false),
          absl::StrCat("static_cast<kir_u32>(", Var(op.operand_value(3)), ")")};
      for (int lane = 0; lane < value->type().lanes(); ++lane) {
        args.push_back(is_float ? Lane(value, lane)
                                : absl::StrCat("static_cast<kir_u32>(",
                                               Lane(value, lane), ")"));
      }
      Call(
          runtime_.StoreRemote(value->type().lanes(), is_float ? "f32" : "b32"),
          args);
      return absl::OkStatus();
    }
    case OpKind::kCpAsync: {
      const int bytes = static_cast<int>(op.bytes());
      Call(runtime_.CpAsync(bytes, predicated()),
           {SharedAddress(op.operand(0), true), GlobalPointer(op.operand(1))});
      return absl::OkStatus();
    }
    case OpKind::kCpAsyncCommit:
      Call(runtime_.CpAsyncCommit(predicated()), {});
      return absl::OkStatus();
    case OpKind::kCpAsyncWait:
    case OpKind::kBulkWait:
    case OpKind::kBulkCommit:
    case OpKind::kTmaLoad:
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce:
    case OpKind::kTmaPrefetch:
    case OpKind::kBulkLoad:
    case OpKind::kBulkStore:
      if (op.kind() == OpKind::kCpAsyncWait) {
        const int pending = PendingGroupsAfterWait(op).value_or(0);
        Call(runtime_.CpAsyncWait(predicated()), {},
             absl::StrCat("<", pending, ">"));
        return absl::OkStatus();
      }
      if (op.kind() == OpKind::kTmaLoad || op.kind() == OpKind::kTmaStore ||
          op.kind() == OpKind::kTmaReduce ||
          op.kind() == OpKind::kTmaPrefetch) {
        return EmitTma(op);
      }
      return EmitBulk(op);
    case OpKind::kLdmatrix:
    case OpKind::kStmatrix:
      return EmitMatrix(op);

    case OpKind::kWgmmaFence:
      Line(absl::StrCat(runtime_.WgmmaFence(), "();"));
      return absl::OkStatus();
    case OpKind::kWgmma:
      return EmitWgmma(op);
    case OpKind::kWgmmaCommit:
      Line(absl::StrCat(runtime_.WgmmaCommit(), "();"));
      return absl::OkStatus();
    case OpKind::kWgmmaWait:
      return EmitWgmmaWait(op);

    case OpKind::kBarrierBlock:
      Line(absl::StrCat(runtime_.BarrierBlock(), "();"));
      return absl::OkStatus();
    case OpKind::kBarrierNamed:
    case OpKind::kBarrierArrive:
      Line(absl::StrCat(
          runtime_.BarrierNamed(op.kind() == OpKind::kBarrierArrive), "<",
          op.id(), ", ", op.threads(), ">();"));
      return absl::OkStatus();
    case OpKind::kBarrierRed: {
      std::string call =
          absl::StrCat(runtime_.BarrierReduce(EnumName(op.op())), "<", op.id(),
                       ", ", op.threads(), ">(", Var(op.operand_value(0)), ")");
      if (op.op() == CombineOp::kPopc) {
        call = absl::StrCat("static_cast<", CType(op.result()->type()), ">(",
                            call, ")");
      }
      define(call);
      return absl::OkStatus();
    }
    case OpKind::kClusterArrive:
      Line(absl::StrCat(runtime_.ClusterArrive(op.relaxed()), "();"));
      return absl::OkStatus();
    case OpKind::kClusterWait:
      Line(absl::StrCat(runtime_.ClusterWait(), "();"));
      return absl::OkStatus();
    case OpKind::kFenceProxyAsync:
      Call(runtime_.FenceProxyAsync(EnumName(op.space()), predicated()), {});
      return absl::OkStatus();
    case OpKind::kFenceAcqRel:
      Call(runtime_.FenceAcqRel(EnumName(op.scope()), predicated()), {});
      return absl::OkStatus();
    case OpKind::kFenceMbarrierInit:
      Call(runtime_.FenceMbarrierInit(predicated()), {});
      return absl::OkStatus();
    case OpKind::kMbarrierInit:
    case OpKind::kMbarrierArrive:
    case OpKind::kMbarrierArriveTx:
    case OpKind::kMbarrierArriveRemote:
    case OpKind::kMbarrierWait:
    case OpKind::kMbarrierInval:
      return EmitMbarrier(op);
    case OpKind::kElectSync:
      define(absl::StrCat(runtime_.ElectSync(), "()"));
      return absl::OkStatus();
    case OpKind::kShflSync: {
      const Value* value = op.operand_value(0);
      const bool is_float = value->type().is_scalar(DType::kF32);
      const std::string bits =
          is_float ? absl::StrCat("__float_as_uint(", Var(value), ")")
                   : absl::StrCat("static_cast<kir_u32>(", Var(value), ")");
      const std::string shuffled = absl::StrCat(
          runtime_.Shuffle(EnumName(op.mode())), "(", bits,
          ", static_cast<kir_u32>(", Var(op.operand_value(1)), "))");
      define(is_float ? absl::StrCat("__uint_as_float(", shuffled, ")")
                      : absl::StrCat("static_cast<kir_i32>(", shuffled, ")"));
      return absl::OkStatus();
    }
    case OpKind::kSetMaxNReg:
      Line(
          absl::StrCat(runtime_.SetMaxNReg(op.action() == RegisterAction::kInc),
                       "<", op.regs(), ">();"));
      return absl::OkStatus();
    case OpKind::kSemWait:
    case OpKind::kSemRelease: {
      const bool wait = op.kind() == OpKind::kSemWait;
      // A semaphore wait is a spin loop: in an elected region the whole
      // warp spins, as for an mbarrier wait (EmitMbarrier says why).
      const std::string issue =
          wait ? std::exchange(issue_, "") : std::string(issue_);
      const std::string fn =
          wait ? runtime_.SemWait(EnumName(op.scope()))
               : runtime_.SemRelease(EnumName(op.scope()), predicated());
      Call(fn, {GlobalPointer(op.operand(0)), Var(op.operand_value(1))});
      issue_ = issue;
      return absl::OkStatus();
    }
    case OpKind::kAtomic:
    case OpKind::kReduce:
      return EmitAtomic(op);
    case OpKind::kPtx:
      return EmitPtx(op);
    case OpKind::kFor:
      return EmitFor(op);
    case OpKind::kIf:
      return EmitIf(op);
    case OpKind::kRole:
      return EmitRole(op);
    case OpKind::kSplitK:
      return Error(op.loc())
             << "splitk must be lowered by serialize-split-k before emission";
    case OpKind::kReturn:
      Line("return;");
      return absl::OkStatus();
  }
  KIR_UNREACHABLE();
  return absl::OkStatus();
}

std::string KernelEmitter::Scalar(OpKind kind, DType dtype,
                                  const std::vector<std::string>& args,
                                  const Op& op) {
  const std::string& a = args[0];
  const std::string b = args.size() > 1 ? args[1] : "";
  if (IsHalf(dtype)) {
    static const std::map<OpKind, std::string>* const kNames =
        new std::map<OpKind, std::string>{
            {OpKind::kAdd, "add"},   {OpKind::kSub, "sub"},
            {OpKind::kMul, "mul"},   {OpKind::kDiv, "div"},
            {OpKind::kRem, "rem"},   {OpKind::kMin, "min"},
            {OpKind::kMax, "max"},   {OpKind::kNeg, "neg"},
            {OpKind::kAbs, "abs"},   {OpKind::kExp, "exp"},
            {OpKind::kSqrt, "sqrt"}, {OpKind::kFma, "fma"}};
    return absl::StrCat(runtime_.HalfOp(kNames->at(kind), dtype), "(",
                        absl::StrJoin(args, ", "), ")");
  }
  if (dtype == DType::kF32) {
    switch (kind) {
      case OpKind::kAdd:
        return absl::StrCat("__fadd_rn(", a, ", ", b, ")");
      case OpKind::kSub:
        return absl::StrCat("__fsub_rn(", a, ", ", b, ")");
      case OpKind::kMul:
        return absl::StrCat("__fmul_rn(", a, ", ", b, ")");
      case OpKind::kDiv:
        return absl::StrCat("__fdiv_rn(", a, ", ", b, ")");
      case OpKind::kRem:
        return absl::StrCat("fmodf(", a, ", ", b, ")");
      case OpKind::kMin:
        return absl::StrCat("fminf(", a, ", ", b, ")");
      case OpKind::kMax:
        return absl::StrCat("fmaxf(", a, ", ", b, ")");
      case OpKind::kNeg:
        return absl::StrCat("(-", a, ")");
      case OpKind::kAbs:
        return absl::StrCat("fabsf(", a, ")");
      case OpKind::kExp:
        return absl::StrCat("expf(", a, ")");
      case OpKind::kSqrt:
        return absl::StrCat("__fsqrt_rn(", a, ")");
      case OpKind::kFma:
        return absl::StrCat("__fmaf_rn(", a, ", ", b, ", ", args[2], ")");
      default:
        break;
    }
    KIR_UNREACHABLE() << "f32 " << Mnemonic(kind);
  }
  if (dtype == DType::kI1) {
    switch (kind) {
      case OpKind::kAnd:
        return absl::StrCat("(", a, " && ", b, ")");
      case OpKind::kOr:
        return absl::StrCat("(", a, " || ", b, ")");
      case OpKind::kXor:
        return absl::StrCat("(", a, " != ", b, ")");
      case OpKind::kNot:
        return absl::StrCat("(!", a, ")");
      default:
        break;
    }
    KIR_UNREACHABLE() << "i1 " << Mnemonic(kind);
  }
  // Integers: wrapping arithmetic goes through the unsigned type.
  const std::string s = ScalarCType(dtype);
  const std::string u = UnsignedOf(dtype);
  auto wrap = [&](const std::string& expr) {
    return absl::StrCat("static_cast<", s, ">(", expr, ")");
  };
  auto unsigned_of = [&](const std::string& x) {
    return absl::StrCat("static_cast<", u, ">(", x, ")");
  };
  switch (kind) {
    case OpKind::kAdd:
      return wrap(absl::StrCat(unsigned_of(a), " + ", unsigned_of(b)));
    case OpKind::kSub:
      return wrap(absl::StrCat(unsigned_of(a), " - ", unsigned_of(b)));
    case OpKind::kMul:
      return wrap(absl::StrCat(unsigned_of(a), " * ", unsigned_of(b)));
    case OpKind::kDiv:
      return absl::StrCat("(", a, " / ", b, ")");
    case OpKind::kRem:
      return absl::StrCat("(", a, " % ", b, ")");
    case OpKind::kMin:
      return absl::StrCat("(", a, " < ", b, " ? ", a, " : ", b, ")");
    case OpKind::kMax:
      return absl::StrCat("(", a, " > ", b, " ? ", a, " : ", b, ")");
    case OpKind::kAnd:
      return absl::StrCat("(", a, " & ", b, ")");
    case OpKind::kOr:
      return absl::StrCat("(", a, " | ", b, ")");
    case OpKind::kXor:
      return absl::StrCat("(", a, " ^ ", b, ")");
    case OpKind::kShl:
      return wrap(absl::StrCat(unsigned_of(a), " << ", b));
    case OpKind::kShr:
      return absl::StrCat("(", a, " >> ", b, ")");
    case OpKind::kNot:
      return absl::StrCat("(~", a, ")");
    case OpKind::kNeg:
      return wrap(absl::StrCat("0u - ", unsigned_of(a)));
    case OpKind::kAbs:
      return absl::StrCat("(", a, " < 0 ? ",
                          wrap(absl::StrCat("0u - ", unsigned_of(a))), " : ", a,
                          ")");
    case OpKind::kFma:
      return wrap(absl::StrCat(unsigned_of(a), " * ", unsigned_of(b), " + ",
                               unsigned_of(args[2])));
    default:
      break;
  }
  KIR_UNREACHABLE() << "integer " << Mnemonic(kind) << " at "
                    << op.loc().ToString();
  return "";
}

absl::Status KernelEmitter::EmitArithmetic(const Op& op) {
  const Value* result = op.result();
  const Type& type = result->type();
  if (!type.is_vector()) {
    std::vector<std::string> args;
    for (const Operand& operand : op.operands())
      args.push_back(Var(operand.value));
    Line(absl::StrCat("const ", CType(type), " ", Var(result), " = ",
                      Scalar(op.kind(), type.dtype(), args, op), ";"));
    return absl::OkStatus();
  }
  // Lane by lane.
  Line(absl::StrCat(CType(type), " ", Var(result), ";"));
  for (int lane = 0; lane < type.lanes(); ++lane) {
    std::vector<std::string> args;
    for (const Operand& operand : op.operands())
      args.push_back(Lane(operand.value, lane));
    Line(absl::StrCat(Var(result), ".v[", lane,
                      "] = ", Scalar(op.kind(), type.dtype(), args, op), ";"));
  }
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitCast(const Op& op) {
  const Value* source = op.operand_value(0);
  const Value* result = op.result();
  const DType from = source->type().dtype();
  const DType to = result->type().dtype();
  auto convert = [&](const std::string& x) -> std::string {
    if (from == to) return x;
    if (to == DType::kI1) {
      if (IsInteger(from)) return absl::StrCat("((", x, " & 1) != 0)");
      if (IsHalf(from))
        return absl::StrCat("(", runtime_.ToF32(from), "(", x, ") != 0.0f)");
      return absl::StrCat("(", x, " != 0.0f)");
    }
    // Booleans convert as 0 or 1.
    if (from == DType::kI1 && IsInteger(to)) {
      return absl::StrCat("static_cast<", ScalarCType(to), ">(", x, ")");
    }
    const DType source_type = from == DType::kI1 ? DType::kI32 : from;
    const std::string value =
        from == DType::kI1 ? absl::StrCat("static_cast<kir_i32>(", x, ")") : x;
    if (IsInteger(source_type)) {
      if (IsInteger(to))
        return absl::StrCat("static_cast<", ScalarCType(to), ">(", value, ")");
      if (to == DType::kF32)
        return absl::StrCat("static_cast<float>(", value, ")");
      return absl::StrCat(runtime_.FromInt(to, source_type), "(", value, ")");
    }
    // Floats: widen 16-bit ones exactly to f32 first.
    const std::string f32 =
        IsHalf(source_type)
            ? absl::StrCat(runtime_.ToF32(source_type), "(", value, ")")
            : value;
    if (to == DType::kF32) return f32;
    if (IsHalf(to)) return absl::StrCat(runtime_.FromF32(to), "(", f32, ")");
    // Truncation toward zero; cvt.rzi saturates and maps NaN to 0.
    return to == DType::kI32 ? absl::StrCat("__float2int_rz(", f32, ")")
                             : absl::StrCat("__float2ll_rz(", f32, ")");
  };
  if (!result->type().is_vector()) {
    Line(absl::StrCat("const ", CType(result->type()), " ", Var(result), " = ",
                      convert(Var(source)), ";"));
    return absl::OkStatus();
  }
  Line(absl::StrCat(CType(result->type()), " ", Var(result), ";"));
  for (int lane = 0; lane < result->type().lanes(); ++lane) {
    Line(absl::StrCat(Var(result), ".v[", lane,
                      "] = ", convert(Lane(source, lane)), ";"));
  }
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitLoad(const Op& op) {
  const Operand& ref = op.operand(0);
  const Value* result = op.result();
  const std::string type = CType(result->type());
  switch (ref.value->type().space()) {
    case MemorySpace::kGlobal:
      if (!result->type().is_vector()) {
        Line(absl::StrCat("const ", type, " ", Var(result), " = ",
                          Var(ref.value), "[",
                          GlobalOffset(ref.value, Indices(ref, false)), "];"));
        break;
      }
      Line(absl::StrCat("const ", type, " ", Var(result),
                        " = *reinterpret_cast<const ", type, "*>",
                        GlobalPointer(ref), ";"));
      break;
    case MemorySpace::kShared:
      Line(absl::StrCat("const ", type, " ", Var(result), " = *",
                        SharedPointer(ref, result->type()), ";"));
      break;
    case MemorySpace::kRegister: {
      const Linear offset = LocalElementOffset(ref.value, Indices(ref, true));
      if (!result->type().is_vector()) {
        Line(absl::StrCat("const ", type, " ", Var(result), " = ",
                          RegisterRead(ref.value, offset), ";"));
        break;
      }
      std::vector<std::string> lanes;
      for (int lane = 0; lane < result->type().lanes(); ++lane) {
        Linear at = offset;
        at += Linear::Of(lane);
        lanes.push_back(RegisterRead(ref.value, at));
      }
      Line(absl::StrCat("const ", type, " ", Var(result), " = {{",
                        absl::StrJoin(lanes, ", "), "}};"));
      break;
    }
  }
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitStore(const Op& op) {
  const Operand& ref = op.operand(0);
  const Value* value = op.operand_value(1);
  const std::string type = CType(value->type());
  switch (ref.value->type().space()) {
    case MemorySpace::kGlobal:
      if (!value->type().is_vector()) {
        Line(absl::StrCat(Var(ref.value), "[",
                          GlobalOffset(ref.value, Indices(ref, false)),
                          "] = ", Var(value), ";"));
        break;
      }
      Line(absl::StrCat("*reinterpret_cast<", type, "*>", GlobalPointer(ref),
                        " = ", Var(value), ";"));
      break;
    case MemorySpace::kShared:
      Line(absl::StrCat("*", SharedPointer(ref, value->type()), " = ",
                        Var(value), ";"));
      break;
    case MemorySpace::kRegister: {
      const Linear offset = LocalElementOffset(ref.value, Indices(ref, true));
      for (int lane = 0; lane < value->type().lanes(); ++lane) {
        Linear at = offset;
        at += Linear::Of(lane);
        Line(RegisterWrite(ref.value, at, Lane(value, lane)));
      }
      break;
    }
  }
  return absl::OkStatus();
}

// ldmatrix / stmatrix: lanes 8i..8i+7 give the row addresses of matrix i
// (ir/language.md, Fragments): matrix i sits at rows 8*(i%2), columns
// 8*(i/2) of the box for count 4, rows 8*i for count 2; with `trans` the
// box is transposed in memory, so the row and column offsets swap.
absl::Status KernelEmitter::EmitMatrix(const Op& op) {
  const bool load = op.kind() == OpKind::kLdmatrix;
  const Operand& ref = op.operand(0);
  const int count = static_cast<int>(op.count());
  const bool trans = op.trans();
  const Value* value = load ? op.result() : op.operand_value(1);
  const int rank = ref.value->type().rank();
  if (rank < 2) {
    return Error(op.loc()) << Mnemonic(op.kind())
                           << " needs a buffer of rank >= 2";
  }
  need_lane_ = true;
  // Which matrix this lane addresses, and that matrix's place in the box.
  Linear row_block = Linear::Of(0);
  Linear col_block = Linear::Of(0);
  if (count > 1) {
    const std::string matrix = Temp("matrix");
    Line(absl::StrCat("const kir_i32 ", matrix, " = (kir_lane >> 3) & ",
                      count - 1, ";"));
    if (count == 4) {
      row_block = Linear::Of(absl::StrCat(matrix, " & 1"));
      col_block = Linear::Of(absl::StrCat(matrix, " >> 1"));
      col_block *= 8;
    } else {
      row_block = Linear::Of(matrix);
    }
    row_block *= 8;
  }
  std::vector<Linear> indices = Indices(ref, true);
  Linear row_index = indices[rank - 2];
  row_index += trans ? col_block : row_block;
  row_index += Linear::Of("kir_lane & 7");
  Linear col_index = indices[rank - 1];
  col_index += trans ? row_block : col_block;
  const std::string row = Temp("row");
  const std::string col = Temp("col");
  Line(absl::StrCat("const kir_i32 ", row, " = ", row_index.ToString(), ";"));
  Line(absl::StrCat("const kir_i32 ", col, " = ", col_index.ToString(), ";"));
  indices[rank - 2] = Linear::Of(row);
  indices[rank - 1] = Linear::Of(col);
  const std::string address = SharedAddress(ref.value, indices, true);
  const bool packed = value->type().dtype() == DType::kI32;  // vec<count x i32>
  const std::string half = CType(value->type().ElementType());
  if (load) {
    std::vector<std::string> regs;
    for (int i = 0; i < count; ++i) regs.push_back(Temp("r"));
    Line(absl::StrCat("kir_u32 ", absl::StrJoin(regs, ", "), ";"));
    Line(absl::StrCat(runtime_.Ldmatrix(count, trans), "(", address, ", ",
                      absl::StrJoin(regs, ", "), ");"));
    std::vector<std::string> lanes;
    for (int i = 0; i < count; ++i) {
      if (packed) {
        lanes.push_back(absl::StrCat("static_cast<kir_i32>(", regs[i], ")"));
      } else {
        runtime_.Unpack2();
        lanes.push_back(
            absl::StrCat("kir_unpack_lo<", half, ">(", regs[i], ")"));
        lanes.push_back(
            absl::StrCat("kir_unpack_hi<", half, ">(", regs[i], ")"));
      }
    }
    Line(absl::StrCat("const ", CType(value->type()), " ", Var(value), " = {{",
                      absl::StrJoin(lanes, ", "), "}};"));
    return absl::OkStatus();
  }
  std::vector<std::string> args = {address};
  for (int i = 0; i < count; ++i) {
    if (packed) {
      args.push_back(
          absl::StrCat("static_cast<kir_u32>(", Lane(value, i), ")"));
    } else {
      args.push_back(absl::StrCat(runtime_.Pack2(), "(", Lane(value, 2 * i),
                                  ", ", Lane(value, 2 * i + 1), ")"));
    }
  }
  Line(absl::StrCat(runtime_.Stmatrix(count, trans), "(",
                    absl::StrJoin(args, ", "), ");"));
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitTma(const Op& op) {
  switch (op.kind()) {
    case OpKind::kTmaLoad: {
      const Operand& map = op.operand(1);
      const int rank = static_cast<int>(map.indices.size());
      const std::optional<int64_t> multicast = op.multicast();
      std::vector<std::string> args = {SharedAddress(op.operand(0), false),
                                       MapPointer(map)};
      for (std::string& c : Coordinates(map)) args.push_back(c);
      args.push_back(SharedAddress(op.operand(2), false));
      if (multicast.has_value()) {
        args.push_back(absl::StrCat("static_cast<kir_u16>(", *multicast, ")"));
      }
      Call(runtime_.TmaLoad(rank, multicast.has_value(), predicated()), args);
      return absl::OkStatus();
    }
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce: {
      const Operand& map = op.operand(0);
      const int rank = static_cast<int>(map.indices.size());
      std::vector<std::string> args = {MapPointer(map),
                                       SharedAddress(op.operand(1), false)};
      for (std::string& c : Coordinates(map)) args.push_back(c);
      Call(op.kind() == OpKind::kTmaStore
               ? runtime_.TmaStore(rank, predicated())
               : runtime_.TmaReduce(EnumName(op.op()), rank, predicated()),
           args);
      return absl::OkStatus();
    }
    default:
      Call(runtime_.TmaPrefetch(predicated()), {MapPointer(op.operand(0))});
      return absl::OkStatus();
  }
}

absl::Status KernelEmitter::EmitBulk(const Op& op) {
  auto bytes = [&] { return absl::StrCat("<", op.bytes(), ">"); };
  switch (op.kind()) {
    case OpKind::kBulkLoad:
      Call(runtime_.BulkLoad(predicated()),
           {SharedAddress(op.operand(0), false), GlobalPointer(op.operand(1)),
            SharedAddress(op.operand(2), false)},
           bytes());
      return absl::OkStatus();
    case OpKind::kBulkStore:
      Call(runtime_.BulkStore(predicated()),
           {GlobalPointer(op.operand(0)), SharedAddress(op.operand(1), false)},
           bytes());
      return absl::OkStatus();
    case OpKind::kBulkCommit: {
      // In an elected region the whole warp commits and waits: the other
      // lanes commit empty groups and their waits return at once, so the
      // meaning is the same, while a predicated commit or wait is one ptxas
      // cannot predicate and wraps in a BSSY/BSYNC region (measured).
      const std::string issue = std::exchange(issue_, "");
      Call(runtime_.BulkCommit(false), {});
      issue_ = issue;
      return absl::OkStatus();
    }
    default: {
      const int pending = PendingGroupsAfterWait(op).value_or(0);
      const std::string issue = std::exchange(issue_, "");
      Call(runtime_.BulkWait(op.read(), false), {},
           absl::StrCat("<", pending, ">"));
      issue_ = issue;
      return absl::OkStatus();
    }
  }
}

absl::StatusOr<WgmmaOperandLayout> KernelEmitter::WgmmaLayout(
    const Op& op, int slot, bool mn_major, int64_t mn_extent) {
  const Value* buffer = op.operand_value(slot);
  const Op* alloc = buffer->defining_op();
  const int64_t swizzle = alloc != nullptr ? alloc->swizzle() : 0;
  const char* name = slot == 1 ? "A" : "B";
  if (swizzle == 0) {
    return Error(op.loc())
           << "wgmma operand " << name << " (%" << buffer->name()
           << ") must be a swizzled shared allocation (32, 64 or "
              "128 bytes): the unswizzled layout stores each 8x8 "
              "core matrix contiguously, which no row-major "
              "buffer does";
  }
  const Type& type = buffer->type();
  const int64_t row_bytes =
      (type.shape().back().AsConstant().value_or(0) + alloc->pad()) *
      DTypeBytes(type.dtype());
  if (row_bytes != swizzle) {
    return Error(op.loc()) << "wgmma operand " << name << " (%"
                           << buffer->name() << ") has rows of " << row_bytes
                           << " bytes; its " << swizzle
                           << "-byte swizzle needs rows of exactly " << swizzle
                           << " bytes (the TMA box width)";
  }
  if (mn_major && mn_extent * DTypeBytes(type.dtype()) != swizzle) {
    return Error(op.loc()) << "wgmma operand " << name << " (%"
                           << buffer->name() << ") is M/N-major with "
                           << mn_extent << " elements per row of the box; a "
                           << swizzle << "-byte swizzle atom holds exactly "
                           << swizzle / DTypeBytes(type.dtype());
  }
  WgmmaOperandLayout layout;
  layout.layout_type = swizzle == 128 ? 1 : swizzle == 64 ? 2 : 3;
  layout.mn_major = mn_major;
  // Groups of 8 rows (along M/N for K-major, along K for M/N-major) are
  // 8 swizzle lines apart. The leading offset is unused by these layouts
  // (one swizzle atom across K, or across M/N); CUTLASS encodes 1.
  layout.sbo = 8 * swizzle;
  layout.lbo = 16;
  return layout;
}

absl::Status KernelEmitter::EmitWgmma(const Op& op) {
  const int n = static_cast<int>(op.n());
  const Operand& acc = op.operand(0);
  const Operand& a = op.operand(1);
  const Operand& b = op.operand(2);
  const DType dtype = b.value->type().dtype();
  const DType acc_type = acc.value->type().dtype();
  if (!IsHalf(dtype) || (acc_type != DType::kF32 && acc_type != DType::kF16)) {
    return Error(op.loc()) << "wgmma of " << DTypeName(dtype) << " into "
                           << DTypeName(acc_type)
                           << " is not supported by the emitter";
  }
  const bool a_in_registers = a.value->type().space() == MemorySpace::kRegister;
  const bool b_n_major = op.b_major() == Major::kN;
  const bool a_m_major = op.a_major() == Major::kM;
  absl::StatusOr<WgmmaOperandLayout> b_layout =
      WgmmaLayout(op, 2, b_n_major, n);
  if (!b_layout.ok()) return b_layout.status();
  const std::string desc_fn = runtime_.WgmmaDescriptor();
  auto descriptor = [&](const Operand& operand,
                        const WgmmaOperandLayout& layout) {
    const std::string name = Temp("desc");
    Line(absl::StrCat("const kir_u64 ", name, " = ", desc_fn, "(",
                      SharedAddress(operand, false), ", ", layout.lbo, ", ",
                      layout.sbo, ", ", layout.layout_type, ");"));
    return name;
  };
  std::vector<std::string> args;
  if (a_in_registers) {
    // The A fragment: K/2 = 8 elements, packed by pairs into 4 registers.
    const Linear origin = LocalElementOffset(a.value, Indices(a, true));
    for (int i = 0; i < 4; ++i) {
      if (packed_.count(a.value) > 0) {
        args.push_back(absl::StrCat(Var(a.value), "[",
                                    PackedWord(origin, i).ToString(), "]"));
        continue;
      }
      Linear lo = origin;
      lo += Linear::Of(2 * i);
      Linear hi = origin;
      hi += Linear::Of(2 * i + 1);
      args.push_back(absl::StrCat(runtime_.Pack2(), "(",
                                  RegisterRead(a.value, lo), ", ",
                                  RegisterRead(a.value, hi), ")"));
    }
  } else {
    absl::StatusOr<WgmmaOperandLayout> a_layout =
        WgmmaLayout(op, 1, a_m_major, 64);
    if (!a_layout.ok()) return a_layout.status();
    args.push_back(descriptor(a, *a_layout));
  }
  args.push_back(descriptor(b, *b_layout));
  if (op.num_operands() > 3) {  // zero-init where the predicate holds
    args.push_back(
        absl::StrCat("static_cast<kir_u32>(!", Var(op.operand_value(3)), ")"));
  } else {
    args.push_back(op.zero_init() ? "0u" : "1u");  // scale-d
  }
  // The accumulator fragment, in place: N/2 f32 elements, or N/4 words of
  // two f16 elements (origin even).
  const Linear origin = LocalElementOffset(acc.value, Indices(acc, true));
  for (int j = 0; j < (acc_type == DType::kF32 ? n / 2 : n / 4); ++j) {
    Linear at = origin;
    at += Linear::Of(j);
    args.push_back(absl::StrCat(
        Var(acc.value), "[",
        (acc_type == DType::kF32 ? at : PackedWord(origin, j)).ToString(),
        "]"));
  }
  const std::string trans =
      a_in_registers
          ? absl::StrCat("<", b_n_major ? 1 : 0, ">")
          : absl::StrCat("<", a_m_major ? 1 : 0, ", ", b_n_major ? 1 : 0, ">");
  Line(absl::StrCat(runtime_.Wgmma(n, dtype, acc_type, a_in_registers), trans,
                    "(", absl::StrJoin(args, ", "), ");"));
  return absl::OkStatus();
}

// Whether `value`'s definition is visible at `op` (an enclosing region, or
// the kernel body, holds the definition).
bool DefinitionVisibleAt(const Value* value, const Op& op) {
  const Op* def = value->defining_op();
  if (def == nullptr) return true;
  for (const Region* region = op.parent_region(); region != nullptr;) {
    if (def->parent_region() == region) return true;
    const Op* parent = region->parent_op();
    region = parent != nullptr ? parent->parent_region() : nullptr;
  }
  return false;
}

absl::Status KernelEmitter::EmitWgmmaWait(const Op& op) {
  const int pending = PendingGroupsAfterWait(op).value_or(0);
  Line(absl::StrCat(runtime_.WgmmaWait(), "<", pending, ">();"));
  // The wgmma asm "writes" its registers when issued; keep every later
  // access of them after the wait.
  for (const Value* registers : wgmma_registers_) {
    if (!DefinitionVisibleAt(registers, op)) continue;
    Line(absl::StrCat(runtime_.FenceOperands(), "(", Var(registers), ");"));
  }
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitMbarrier(const Op& op) {
  const std::string bar = SharedAddress(op.operand(0), false);
  switch (op.kind()) {
    case OpKind::kMbarrierInit:
      Call(runtime_.MbarrierInit(predicated()), {bar},
           absl::StrCat("<", op.count(), ">"));
      break;
    case OpKind::kMbarrierArrive:
      Call(runtime_.MbarrierArrive(predicated()), {bar});
      break;
    case OpKind::kMbarrierArriveTx:
      Call(runtime_.MbarrierArriveTx(predicated()), {bar},
           absl::StrCat("<", op.bytes(), ">"));
      break;
    case OpKind::kMbarrierArriveRemote:
      Call(runtime_.MbarrierArriveRemote(EnumName(op.scope()), predicated()),
           {bar, absl::StrCat("static_cast<kir_u32>(", Var(op.operand_value(1)),
                              ")")});
      break;
    case OpKind::kMbarrierWait: {
      // A wait is a loop; predicated on the elected lane, ptxas wraps it in
      // a BSSY/BSYNC region and then ran a following TMA store in the other
      // lanes too, with a coordinate only the elected lane had set
      // (measured: another tile written over tile 0 in every launch,
      // testdata/passes/insert-syncs/gpu_global.kir). In an elected region
      // the whole warp waits instead: every lane waits for the same phase,
      // which changes nothing but the waiting.
      const std::string issue = std::exchange(issue_, "");
      Call(runtime_.MbarrierWait(EnumName(op.scope())),
           {bar, absl::StrCat("static_cast<kir_u32>(", Var(op.operand_value(1)),
                              ")")});
      issue_ = issue;
      break;
    }
    default:
      Call(runtime_.MbarrierInval(predicated()), {bar});
      break;
  }
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitAtomic(const Op& op) {
  const Operand& ref = op.operand(0);
  const Value* value = op.operand_value(1);
  const DType dtype = value->type().dtype();
  const CombineOp combine = op.op();
  const std::string reduction = EnumName(combine);
  if (dtype == DType::kI1 || value->type().is_vector() ||
      (IsHalf(dtype) && combine != CombineOp::kAdd &&
       combine != CombineOp::kMin && combine != CombineOp::kMax)) {
    return Error(op.loc()) << Mnemonic(op.kind()) << " " << reduction << " on "
                           << value->type().ToString() << " is not supported";
  }
  const MemorySpace space = ref.value->type().space();
  const std::string address = space == MemorySpace::kShared
                                  ? SharedAddress(ref, true)
                                  : GlobalPointer(ref);
  const std::string order = EnumName(op.order());
  const std::string scope = EnumName(op.scope());
  if (op.kind() == OpKind::kAtomic) {
    Line(absl::StrCat("const ", CType(op.result()->type()), " ",
                      Var(op.result()), " = ",
                      runtime_.Atomic(reduction, dtype, space, order, scope),
                      "(", address, ", ", Var(value), ");"));
    return absl::OkStatus();
  }
  Call(runtime_.Reduce(reduction, dtype, space, order, scope, predicated()),
       {address, Var(value)});
  return absl::OkStatus();
}

// Raw PTX: `$k` names result k, then the inputs; a vector expands to
// `{%a, %b, ...}` and i1 travels as a b32 0 or 1. The `reads` and `writes`
// buffers are not operands: the "memory" clobber orders the text with every
// other access (R12).
absl::Status KernelEmitter::EmitPtx(const Op& op) {
  std::vector<std::string> outputs, inputs, after;
  std::vector<std::vector<int>> kir_operands;  // asm operand numbers of each
  auto constraint = [](DType dtype) {
    switch (dtype) {
      case DType::kI64:
      case DType::kIndex:
        return "l";
      case DType::kF32:
        return "f";
      case DType::kF16:
      case DType::kBF16:
        return "h";
      default:
        return "r";
    }
  };
  auto lane_ref = [](const std::string& base, const Type& type, int lane) {
    std::string ref =
        type.is_vector() ? absl::StrCat(base, ".v[", lane, "]") : base;
    if (IsHalf(type.dtype())) absl::StrAppend(&ref, ".bits");
    return ref;
  };
  int number = 0;
  for (int i = 0; i < op.num_results(); ++i) {
    const Value* result = op.result(i);
    const Type& type = result->type();
    if (type.is_scalar(DType::kI1)) {
      const std::string temp = Temp("ptx_out");
      Line(absl::StrCat("kir_u32 ", temp, ";"));
      outputs.push_back(absl::StrCat("\"=r\"(", temp, ")"));
      after.push_back(
          absl::StrCat("const bool ", Var(result), " = ", temp, " != 0;"));
      kir_operands.push_back({number++});
      continue;
    }
    Line(absl::StrCat(CType(type), " ", Var(result), ";"));
    std::vector<int> numbers;
    for (int lane = 0; lane < type.lanes(); ++lane) {
      outputs.push_back(absl::StrCat("\"=", constraint(type.dtype()), "\"(",
                                     lane_ref(Var(result), type, lane), ")"));
      numbers.push_back(number++);
    }
    kir_operands.push_back(numbers);
  }
  const int num_inputs =
      op.num_operands() - static_cast<int>(op.reads() + op.writes());
  for (int i = 0; i < num_inputs; ++i) {
    const Value* value = op.operand_value(i);
    const Type& type = value->type();
    std::vector<int> numbers;
    if (type.is_scalar(DType::kI1)) {
      inputs.push_back(
          absl::StrCat("\"r\"(static_cast<kir_u32>(", Var(value), "))"));
      numbers.push_back(number++);
    } else {
      for (int lane = 0; lane < type.lanes(); ++lane) {
        inputs.push_back(absl::StrCat("\"", constraint(type.dtype()), "\"(",
                                      lane_ref(Var(value), type, lane), ")"));
        numbers.push_back(number++);
      }
    }
    kir_operands.push_back(numbers);
  }
  // Rewrite the text: `$k` -> operand, `%` -> `%%`.
  const absl::string_view text = op.text();
  std::string rewritten;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%') {
      rewritten += "%%";
    } else if (text[i] == '$' && i + 1 < text.size() &&
               std::isdigit(text[i + 1])) {
      size_t end = i + 1;
      int k = 0;
      while (end < text.size() && std::isdigit(text[end])) {
        k = k * 10 + (text[end] - '0');
        if (k > 100000) break;
        ++end;
      }
      if (k >= static_cast<int>(kir_operands.size())) {
        return Error(op.loc()) << "ptx text names $" << k << ", but the op has "
                               << kir_operands.size() << " operands";
      }
      std::vector<std::string> names;
      for (int n : kir_operands[k]) names.push_back(absl::StrCat("%", n));
      rewritten += names.size() == 1
                       ? names[0]
                       : absl::StrCat("{", absl::StrJoin(names, ", "), "}");
      i = end - 1;
    } else {
      rewritten += text[i];
    }
  }
  std::string statement =
      absl::StrCat("asm volatile(\"", EscapeCppString(rewritten), "\"");
  if (outputs.empty() && inputs.empty()) {
    absl::StrAppend(&statement, " ::: \"memory\");");
  } else {
    absl::StrAppend(&statement, " : ", absl::StrJoin(outputs, ", "),
                    outputs.empty() ? ": " : " : ", absl::StrJoin(inputs, ", "),
                    inputs.empty() ? ": \"memory\");" : " : \"memory\");");
  }
  Line(statement);
  for (const std::string& line : after) Line(line);
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitFor(const Op& op) {
  const Value* iv = op.region(0).argument(0);
  // `unroll = N`: `#pragma unroll N` (1 keeps the loop rolled); 0, the
  // default: the compiler decides.
  const int64_t unroll = op.unroll();
  if (unroll > 0) body_.Raw(absl::StrCat("#pragma unroll ", unroll, "\n"));
  Line(absl::StrCat("for (kir_i64 ", Var(iv), " = ", Var(op.operand_value(0)),
                    "; ", Var(iv), " < ", Var(op.operand_value(1)), "; ",
                    Var(iv), " += ", Var(op.operand_value(2)), ") {"));
  body_.Indent();
  KIR_RETURN_IF_ERROR(EmitRegion(op.region(0)));
  body_.Dedent();
  Line("}");
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitIf(const Op& op) {
  const Value* condition = op.operand_value(0);
  // `if %e {predicated}`: uniform-predicates decided it and the verifier
  // (V55) checks it; checked again for a module emitted unverified.
  if (op.predicated()) {
    std::string why;
    if (predicated() || !CanIssuePredicated(op, &why)) {
      return Error(op.loc()) << "if {predicated} cannot be issued branch-free: "
                             << (why.empty() ? "it is nested in another" : why);
    }
    Line(absl::StrCat("{  // issued by the ", Var(condition),
                      " lane: each instruction under @p"));
    body_.Indent();
    issue_ = Var(condition);
    absl::Status status = EmitRegion(op.region(0));
    issue_.clear();
    KIR_RETURN_IF_ERROR(status);
    body_.Dedent();
    Line("}");
    return absl::OkStatus();
  }
  Line(absl::StrCat("if (", Var(condition), ") {"));
  body_.Indent();
  KIR_RETURN_IF_ERROR(EmitRegion(op.region(0)));
  body_.Dedent();
  if (!op.region(1).empty()) {
    Line("} else {");
    body_.Indent();
    KIR_RETURN_IF_ERROR(EmitRegion(op.region(1)));
    body_.Dedent();
  }
  Line("}");
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitRole(const Op& op) {
  need_warp_ = true;
  Line(absl::StrCat("if (kir_warp >= ", op.warp_begin(), " && kir_warp < ",
                    op.warp_end(), ") {  // role @", op.name()));
  body_.Indent();
  KIR_RETURN_IF_ERROR(EmitRegion(op.region(0)));
  body_.Dedent();
  Line("}");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CudaKernelAbi> GetCudaKernelAbi(const Kernel& kernel) {
  CudaKernelAbi abi;
  abi.kernel = kernel.name();
  abi.symbol = KernelSymbol(kernel.name());
  for (const Param& param : kernel.params()) {
    CudaKernelArg arg;
    arg.name = param.value->name();
    arg.value = param.value;
    arg.dtype = param.value->type().dtype();
    switch (param.kind) {
      case Param::Kind::kTensor:
        arg.kind = CudaKernelArg::Kind::kTensor;
        arg.cuda_type = absl::StrCat(ScalarCType(arg.dtype), "*");
        arg.size_bytes = arg.align_bytes = 8;
        break;
      case Param::Kind::kTensorMap:
        arg.kind = CudaKernelArg::Kind::kTensorMap;
        arg.cuda_type = "const __grid_constant__ kir_tensor_map";
        arg.size_bytes = 128;
        arg.align_bytes = 128;
        break;
      case Param::Kind::kScalar:
        arg.kind = CudaKernelArg::Kind::kScalar;
        arg.cuda_type = ScalarCType(arg.dtype);
        arg.size_bytes = arg.align_bytes =
            arg.dtype == DType::kI1 ? 1 : DTypeBytes(arg.dtype);
        break;
    }
    abi.args.push_back(arg);
  }
  for (const auto& size : kernel.sizes()) {
    CudaKernelArg arg;
    arg.kind = CudaKernelArg::Kind::kSize;
    arg.name = size->name();
    arg.value = size.get();
    arg.dtype = DType::kIndex;
    arg.cuda_type = "kir_i64";
    arg.size_bytes = arg.align_bytes = 8;
    abi.args.push_back(arg);
  }
  Walk(kernel.body(), [&](const Op& op) {
    if (op.kind() != OpKind::kAllocWorkspace) return;
    const Type& type = op.result()->type();
    CudaKernelArg arg;
    arg.kind = CudaKernelArg::Kind::kWorkspace;
    arg.name = op.result()->name();
    arg.value = op.result();
    arg.dtype = type.dtype();
    arg.cuda_type = absl::StrCat(ScalarCType(type.dtype()), "*");
    arg.size_bytes = arg.align_bytes = 8;
    IndexExpr bytes = IndexExpr::Constant(DTypeBytes(type.dtype()));
    for (const IndexExpr& dim : type.shape()) {
      bytes = IndexExpr::Binary(IndexExpr::Kind::kMul, bytes, dim);
    }
    arg.workspace_bytes = bytes;
    arg.workspace_align = op.align();
    abi.args.push_back(arg);
  });
  absl::StatusOr<SharedLayout> shared = ReadSharedLayout(kernel);
  if (!shared.ok()) return shared.status();
  for (const SharedPlacement& placed : shared->placements) {
    CudaSharedAllocation allocation;
    allocation.buffer = placed.alloc->result();
    allocation.offset = placed.offset;
    allocation.bytes = placed.bytes;
    allocation.align = placed.align;
    abi.shared.push_back(allocation);
  }
  abi.dynamic_smem_bytes = shared->total;
  const bool setmaxnreg = FindFirst(kernel.body(), [](const Op& op) {
                            return op.kind() == OpKind::kSetMaxNReg;
                          }) != nullptr;
  abi.launch_bound_threads = kernel.block.StaticVolume();
  abi.min_blocks_one = setmaxnreg && abi.launch_bound_threads.has_value();
  for (int i = 0; i < 3; ++i) {
    abi.cluster[i] = kernel.cluster[i].AsConstant().value_or(1);
  }
  return abi;
}

absl::StatusOr<std::string> EmitCuda(const Module& module,
                                     const CudaEmitOptions& options) {
  if (options.verify) {
    absl::Status verified = Verify(module);
    if (!verified.ok()) return verified;
  }
  CudaRuntime runtime;
  std::string kernels;
  std::set<std::string> symbols;
  for (const auto& kernel : module.kernels) {
    absl::StatusOr<CudaKernelAbi> abi = GetCudaKernelAbi(*kernel);
    if (!abi.ok()) return abi.status();
    if (!symbols.insert(abi->symbol).second) {
      return Error(kernel->loc())
             << "kernel @" << kernel->name()
             << " has the same CUDA name as an earlier one: " << abi->symbol;
    }
    KernelEmitter emitter(*kernel, *abi, options, runtime);
    absl::StrAppend(&kernels, "\n");
    KIR_RETURN_IF_ERROR(emitter.Emit(kernels));
  }
  std::string source =
      module.source != nullptr ? module.source->name : "<module>";
  return absl::StrCat("// CUDA C++ for sm_90a generated by kir from ", source,
                      ". Do not edit.\n", CudaPrelude(), "\n", runtime.Text(),
                      kernels);
}

}  // namespace kir
