#include "ir/types.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "ir/checked_math.h"
#include "ir/ir.h"

namespace kir {

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kI1: return "i1";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kIndex: return "index";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kF32: return "f32";
    case DType::kMbarrier: return "mbarrier";
  }
  KIR_UNREACHABLE();
  return "";
}

std::optional<DType> ParseDType(absl::string_view name) {
  for (DType dtype : {DType::kI1, DType::kI32, DType::kI64, DType::kIndex,
                      DType::kF16, DType::kBF16, DType::kF32,
                      DType::kMbarrier}) {
    if (name == DTypeName(dtype)) return dtype;
  }
  return std::nullopt;
}

int DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::kI1: return 1;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kIndex: return 8;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kF32: return 4;
    case DType::kMbarrier: return 8;
  }
  KIR_UNREACHABLE();
  return 0;
}

bool IsFloat(DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16 || dtype == DType::kF32;
}

bool IsInteger(DType dtype) {
  return dtype == DType::kI1 || dtype == DType::kI32 || dtype == DType::kI64 ||
         dtype == DType::kIndex;
}

const char* MemorySpaceName(MemorySpace space) {
  switch (space) {
    case MemorySpace::kGlobal: return "global";
    case MemorySpace::kShared: return "shared";
    case MemorySpace::kRegister: return "reg";
  }
  KIR_UNREACHABLE();
  return "";
}

const char* TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kBulk: return "bulk";
    case TokenKind::kWgmma: return "wgmma";
    case TokenKind::kCpAsync: return "cp_async";
  }
  KIR_UNREACHABLE();
  return "";
}

// ---------------------------------------------------------------------------
// IndexExpr.

double FloatOverflowThreshold(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return 65520.0;
    case DType::kBF16:
      return std::ldexp(1.0, 128) - std::ldexp(1.0, 119);
    case DType::kF32:
      return std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
    default:
      KIR_UNREACHABLE() << "FloatOverflowThreshold of " << DTypeName(dtype);
  }
  return 0;
}

IndexExpr IndexExpr::Constant(int64_t value) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kConstant;
  node->constant = value;
  return IndexExpr(std::move(node));
}

IndexExpr IndexExpr::Size(const Value* size) {
  KIR_CHECK(size != nullptr);
  auto node = std::make_shared<Node>();
  node->kind = Kind::kSize;
  node->size = size;
  return IndexExpr(std::move(node));
}

namespace {

// Floor division and modulo; b != 0 and not (a == INT64_MIN && b == -1).
int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

// Null on division by zero and when the exact result does not fit int64.
std::optional<int64_t> Fold(IndexExpr::Kind kind, int64_t a, int64_t b) {
  using Kind = IndexExpr::Kind;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  switch (kind) {
    case Kind::kAdd: return CheckedAdd(a, b);
    case Kind::kSub: return CheckedSub(a, b);
    case Kind::kMul: return CheckedMul(a, b);
    case Kind::kDiv:
      if (b == 0 || (a == kMin && b == -1)) return std::nullopt;
      return FloorDiv(a, b);
    case Kind::kCeilDiv:
      // -floor(-a / b), so -a and the quotient's negation must exist.
      if (b == 0 || a == kMin) return std::nullopt;
      if (std::optional<int64_t> q = Fold(Kind::kDiv, -a, b)) {
        return CheckedSub(0, *q);
      }
      return std::nullopt;
    case Kind::kMod:
      if (b == 0) return std::nullopt;
      if (b == -1) return 0;
      return FloorMod(a, b);
    case Kind::kMin: return a < b ? a : b;
    case Kind::kMax: return a > b ? a : b;
    default: break;
  }
  return std::nullopt;
}

}  // namespace

IndexExpr IndexExpr::Binary(Kind kind, IndexExpr lhs, IndexExpr rhs) {
  KIR_CHECK(kind != Kind::kConstant && kind != Kind::kSize);
  if (lhs.is_constant() && rhs.is_constant()) {
    if (auto folded = Fold(kind, lhs.constant(), rhs.constant())) {
      return Constant(*folded);
    }
  }
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->lhs = std::make_shared<const IndexExpr>(std::move(lhs));
  node->rhs = std::make_shared<const IndexExpr>(std::move(rhs));
  return IndexExpr(std::move(node));
}

std::optional<int64_t> IndexExpr::AsConstant() const {
  if (is_constant()) return constant();
  return std::nullopt;
}

std::optional<int64_t> IndexExpr::Evaluate(
    const std::function<std::optional<int64_t>(const Value*)>& size_value)
    const {
  switch (kind()) {
    case Kind::kConstant: return constant();
    case Kind::kSize: return size_value(size());
    default: break;
  }
  std::optional<int64_t> a = lhs().Evaluate(size_value);
  std::optional<int64_t> b = rhs().Evaluate(size_value);
  if (!a || !b) return std::nullopt;
  return Fold(kind(), *a, *b);
}

void IndexExpr::CollectSizes(std::vector<const Value*>& sizes) const {
  if (kind() == Kind::kSize) {
    sizes.push_back(size());
  } else if (kind() != Kind::kConstant) {
    lhs().CollectSizes(sizes);
    rhs().CollectSizes(sizes);
  }
}

const char* IndexExpr::FunctionName(Kind kind) {
  switch (kind) {
    case Kind::kCeilDiv: return "cdiv";
    case Kind::kMin: return "min";
    case Kind::kMax: return "max";
    default: return nullptr;
  }
}

const char* IndexExpr::OperatorName(Kind kind) {
  switch (kind) {
    case Kind::kAdd: return "+";
    case Kind::kSub: return "-";
    case Kind::kMul: return "*";
    case Kind::kDiv: return "/";
    case Kind::kMod: return "%";
    default: return nullptr;
  }
}

namespace {

// Binding strength for printing: additive 1, multiplicative 2, atoms 3.
int Precedence(IndexExpr::Kind kind) {
  using Kind = IndexExpr::Kind;
  switch (kind) {
    case Kind::kAdd:
    case Kind::kSub: return 1;
    case Kind::kMul:
    case Kind::kDiv:
    case Kind::kMod: return 2;
    default: return 3;
  }
}

void Print(const IndexExpr& e, std::string& out) {
  using Kind = IndexExpr::Kind;
  switch (e.kind()) {
    case Kind::kConstant:
      absl::StrAppend(&out, e.constant());
      return;
    case Kind::kSize:
      absl::StrAppend(&out, "%", e.size()->name());
      return;
    default: break;
  }
  if (const char* function = IndexExpr::FunctionName(e.kind())) {
    absl::StrAppend(&out, function, "(");
    Print(e.lhs(), out);
    out += ", ";
    Print(e.rhs(), out);
    out += ")";
    return;
  }
  int precedence = Precedence(e.kind());
  // Left-associative: the right operand needs parentheses at equal strength.
  // A negative constant on either side is parenthesised too.
  auto operand = [&](const IndexExpr& side, bool right) {
    bool parens = Precedence(side.kind()) < precedence ||
                  (right && Precedence(side.kind()) == precedence) ||
                  (side.is_constant() && side.constant() < 0);
    if (parens) out += "(";
    Print(side, out);
    if (parens) out += ")";
  };
  operand(e.lhs(), false);
  absl::StrAppend(&out, " ", IndexExpr::OperatorName(e.kind()), " ");
  operand(e.rhs(), true);
}

}  // namespace

std::string IndexExpr::ToString() const {
  std::string out;
  Print(*this, out);
  return out;
}

bool SameIndexExpr(const IndexExpr& a, const IndexExpr& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case IndexExpr::Kind::kConstant: return a.constant() == b.constant();
    case IndexExpr::Kind::kSize: return a.size() == b.size();
    default:
      return SameIndexExpr(a.lhs(), b.lhs()) && SameIndexExpr(a.rhs(), b.rhs());
  }
}

// ---------------------------------------------------------------------------
// Type.

Type Type::Scalar(DType dtype) {
  Type type;
  type.kind_ = Kind::kScalar;
  type.dtype_ = dtype;
  return type;
}

Type Type::Vector(DType dtype, int lanes) {
  Type type;
  type.kind_ = Kind::kVector;
  type.dtype_ = dtype;
  type.lanes_ = lanes;
  return type;
}

const std::vector<IndexExpr>& Type::shape() const {
  static const std::vector<IndexExpr>* const kNone =
      new std::vector<IndexExpr>();
  return extents_ ? extents_->shape : *kNone;
}

const std::vector<int64_t>& Type::box() const {
  static const std::vector<int64_t>* const kNone = new std::vector<int64_t>();
  return extents_ ? extents_->box : *kNone;
}

Type Type::Buffer(MemorySpace space, DType element,
                  std::vector<IndexExpr> shape) {
  Type type;
  type.kind_ = Kind::kBuffer;
  type.space_ = space;
  type.dtype_ = element;
  type.extents_ = std::make_shared<const Extents>(Extents{std::move(shape), {}});
  return type;
}

Type Type::TensorMap(DType element, std::vector<int64_t> box) {
  Type type;
  type.kind_ = Kind::kTensorMap;
  type.dtype_ = element;
  type.extents_ = std::make_shared<const Extents>(Extents{{}, std::move(box)});
  return type;
}

Type Type::Token(TokenKind kind) {
  Type type;
  type.kind_ = Kind::kToken;
  type.token_ = kind;
  return type;
}

std::optional<int64_t> Type::StaticElementCount() const {
  if (is_tensor_map()) return CheckedProduct(box());
  std::vector<int64_t> extents;
  for (const IndexExpr& d : shape()) {
    if (!d.is_constant()) return std::nullopt;
    extents.push_back(d.constant());
  }
  return CheckedProduct(extents);
}

std::string Type::ToString() const {
  switch (kind_) {
    case Kind::kScalar: return DTypeName(dtype_);
    case Kind::kVector:
      return absl::StrCat("vec<", lanes_, "x", DTypeName(dtype_), ">");
    case Kind::kBuffer: {
      std::string out =
          absl::StrCat(MemorySpaceName(space_), " ", DTypeName(dtype_), "[");
      for (size_t i = 0; i < shape().size(); ++i) {
        if (i) out += ", ";
        out += shape()[i].ToString();
      }
      return out + "]";
    }
    case Kind::kTensorMap:
      return absl::StrCat("tensormap ", DTypeName(dtype_), "[",
                          absl::StrJoin(box(), ", "), "]");
    case Kind::kToken:
      return absl::StrCat("token<", TokenKindName(token_), ">");
  }
  KIR_UNREACHABLE();
  return "";
}

bool Type::operator==(const Type& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::kScalar: return dtype_ == other.dtype_;
    case Kind::kVector:
      return dtype_ == other.dtype_ && lanes_ == other.lanes_;
    case Kind::kBuffer:
      if (space_ != other.space_ || dtype_ != other.dtype_ ||
          shape().size() != other.shape().size()) {
        return false;
      }
      for (size_t i = 0; i < shape().size(); ++i) {
        if (!SameIndexExpr(shape()[i], other.shape()[i])) return false;
      }
      return true;
    case Kind::kTensorMap:
      return dtype_ == other.dtype_ && box() == other.box();
    case Kind::kToken: return token_ == other.token_;
  }
  return false;
}

}  // namespace kir
