// Types and static index expressions.
//
// Scalars: i1 i32 i64 index f16 bf16 f32. `index` is the type of loop
// counters, thread indices and buffer indices (64-bit, signed).
// Vectors: vec<4xf32>, for vector loads and stores and matrix fragments.
// Buffers: `<space> <element>[d0, d1, ...]`, shapes outermost-first, where a
// dimension is a static IndexExpr over integer constants and the kernel's
// symbolic sizes. The element may be `mbarrier` in shared memory.
// Tensor maps: `tensormap <element>[box...]`, the TMA box shape.
// Tokens: `token<bulk|wgmma|cp_async>`, returned by a group commit.
#ifndef KIR_IR_TYPES_H_
#define KIR_IR_TYPES_H_

#include <cstdint>
#include <functional>
#include "absl/strings/string_view.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kir {

class Value;

enum class DType : uint8_t {
  kI1, kI32, kI64, kIndex, kF16, kBF16, kF32, kMbarrier
};

// "f32", "mbarrier", ...
const char* DTypeName(DType dtype);
std::optional<DType> ParseDType(absl::string_view name);
// Size in bytes in memory (i1 is stored as a byte; mbarrier is 8 bytes).
int DTypeBytes(DType dtype);
bool IsFloat(DType dtype);
bool IsInteger(DType dtype);  // i1, i32, i64, index
// The smallest magnitude that rounds to infinity in float type `dtype`
// (halfway between its largest finite value and the next power of two:
// 65520 for f16, 2^128 - 2^119 for bf16, 2^128 - 2^103 for f32).
double FloatOverflowThreshold(DType dtype);

enum class MemorySpace : uint8_t { kGlobal, kShared, kRegister };
const char* MemorySpaceName(MemorySpace space);  // "global" "shared" "reg"

enum class TokenKind : uint8_t { kBulk, kWgmma, kCpAsync };
const char* TokenKindName(TokenKind kind);  // "bulk" "wgmma" "cp_async"

// A static integer expression over constants and the kernel's symbolic sizes,
// used in shapes, strides and launch dimensions. Immutable and shared.
// Division is floor division; `cdiv(a, b)` is ceiling division.
class IndexExpr {
 public:
  enum class Kind { kConstant, kSize, kAdd, kSub, kMul, kDiv, kCeilDiv, kMod,
                    kMin, kMax };

  IndexExpr() : IndexExpr(Constant(0)) {}
  static IndexExpr Constant(int64_t value);
  static IndexExpr Size(const Value* size);
  // Builds a binary expression, folding constant operands.
  static IndexExpr Binary(Kind kind, IndexExpr lhs, IndexExpr rhs);

  Kind kind() const { return node_->kind; }
  int64_t constant() const { return node_->constant; }
  const Value* size() const { return node_->size; }
  const IndexExpr& lhs() const { return *node_->lhs; }
  const IndexExpr& rhs() const { return *node_->rhs; }

  bool is_constant() const { return kind() == Kind::kConstant; }
  std::optional<int64_t> AsConstant() const;
  // Evaluates with the given value for each size; nullopt on division by 0
  // and when a result does not fit int64.
  std::optional<int64_t> Evaluate(
      const std::function<std::optional<int64_t>(const Value*)>& size_value)
      const;
  // Appends every size this expression refers to.
  void CollectSizes(std::vector<const Value*>& sizes) const;
  // Printed form, e.g. "cdiv(%N, 64) * 2".
  std::string ToString() const;

  static const char* FunctionName(Kind kind);  // "cdiv", "min", "max" or null
  static const char* OperatorName(Kind kind);  // "+", "-", "*", "/", "%" or null

 private:
  struct Node {
    Kind kind;
    int64_t constant = 0;
    const Value* size = nullptr;
    std::shared_ptr<const IndexExpr> lhs, rhs;
  };
  explicit IndexExpr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
};

class Type {
 public:
  enum class Kind : uint8_t { kScalar, kVector, kBuffer, kTensorMap, kToken };

  Type() = default;  // i32, from the member initializers below
  static Type Scalar(DType dtype);
  static Type Vector(DType dtype, int lanes);
  static Type Buffer(MemorySpace space, DType element,
                     std::vector<IndexExpr> shape);
  static Type TensorMap(DType element, std::vector<int64_t> box);
  static Type Token(TokenKind kind);

  Kind kind() const { return kind_; }
  bool is_scalar() const { return kind_ == Kind::kScalar; }
  bool is_vector() const { return kind_ == Kind::kVector; }
  bool is_buffer() const { return kind_ == Kind::kBuffer; }
  bool is_tensor_map() const { return kind_ == Kind::kTensorMap; }
  bool is_token() const { return kind_ == Kind::kToken; }
  bool is_scalar(DType dtype) const { return is_scalar() && dtype_ == dtype; }
  bool is_index() const { return is_scalar(DType::kIndex); }
  bool is_integer_scalar() const { return is_scalar() && IsInteger(dtype_); }

  // Scalar type, vector or buffer element type, tensor map element type.
  DType dtype() const { return dtype_; }
  int lanes() const { return lanes_; }  // 1 for a scalar
  MemorySpace space() const { return space_; }
  const std::vector<IndexExpr>& shape() const;
  int rank() const { return static_cast<int>(shape().size()); }
  const std::vector<int64_t>& box() const;
  TokenKind token_kind() const { return token_; }

  // The type of one element: a scalar for vectors and buffers.
  Type ElementType() const { return Scalar(dtype_); }
  // Product of the shape when every dimension is constant (and the product
  // fits int64).
  std::optional<int64_t> StaticElementCount() const;

  std::string ToString() const;
  // Structural equality; sizes in shapes compare by identity.
  bool operator==(const Type& other) const;
  bool operator!=(const Type& other) const { return !(*this == other); }

 private:
  // One byte each, so that a type is 24 bytes.
  Kind kind_ = Kind::kScalar;
  DType dtype_ = DType::kI32;
  MemorySpace space_ = MemorySpace::kGlobal;
  TokenKind token_ = TokenKind::kBulk;
  int lanes_ = 1;
  // A buffer's shape or a tensor map's box, shared by the copies of a type
  // and absent for the scalars most values have: a value's type stays small.
  struct Extents {
    std::vector<IndexExpr> shape;
    std::vector<int64_t> box;
  };
  std::shared_ptr<const Extents> extents_;
};

// Structural equality of index expressions (sizes compare by identity).
bool SameIndexExpr(const IndexExpr& a, const IndexExpr& b);

}  // namespace kir

#endif  // KIR_IR_TYPES_H_
