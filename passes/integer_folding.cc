// The integer folding rules of canonicalize; see integer_folding.h for the
// semantics they implement.
#include "passes/integer_folding.h"

#include <algorithm>
#include <cstdint>

namespace kir {
namespace {

int BitWidth(DType dtype) {
  switch (dtype) {
    case DType::kI1:
      return 1;
    case DType::kI32:
      return 32;
    default:
      return 64;
  }
}

// `value` modulo 2^width, sign-extended to 64 bits; i1 is 0 or 1.
int64_t Wrap(uint64_t value, DType dtype) {
  switch (dtype) {
    case DType::kI1:
      return static_cast<int64_t>(value & 1);
    case DType::kI32:
      return static_cast<int64_t>(
          static_cast<int32_t>(static_cast<uint32_t>(value)));
    default:
      return static_cast<int64_t>(value);
  }
}

int64_t MinValue(DType dtype) {
  return dtype == DType::kI32 ? INT32_MIN : INT64_MIN;
}

}  // namespace

std::optional<int64_t> IntConstant(const Value* value) {
  if (value == nullptr || value->kind() != Value::Kind::kResult ||
      !value->type().is_integer_scalar()) {
    return std::nullopt;
  }
  const Op* def = value->defining_op();
  if (def == nullptr || def->kind() != OpKind::kConst) return std::nullopt;
  const Attribute* attr = def->has_value() ? &def->value() : nullptr;
  if (attr == nullptr || attr->kind != AttrKind::kNumber ||
      !attr->is_integral) {
    return std::nullopt;
  }
  return Wrap(static_cast<uint64_t>(attr->int_value), value->type().dtype());
}

namespace {

std::optional<int64_t> FoldBinary(OpKind kind, DType dtype, int64_t a,
                                  int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a);
  const uint64_t ub = static_cast<uint64_t>(b);
  if (dtype == DType::kI1) {
    switch (kind) {
      case OpKind::kAnd:
        return a & b;
      case OpKind::kOr:
        return a | b;
      case OpKind::kXor:
        return a ^ b;
      default:
        return std::nullopt;
    }
  }
  const int width = BitWidth(dtype);
  switch (kind) {
    case OpKind::kAdd:
      return Wrap(ua + ub, dtype);
    case OpKind::kSub:
      return Wrap(ua - ub, dtype);
    case OpKind::kMul:
      return Wrap(ua * ub, dtype);
    case OpKind::kDiv:
    case OpKind::kRem:
      if (b == 0 || (a == MinValue(dtype) && b == -1)) return std::nullopt;
      // C++ division truncates toward zero, as PTX div.s32/rem.s32 do.
      return kind == OpKind::kDiv ? a / b : a % b;
    case OpKind::kMin:
      return std::min(a, b);
    case OpKind::kMax:
      return std::max(a, b);
    case OpKind::kAnd:
      return Wrap(ua & ub, dtype);
    case OpKind::kOr:
      return Wrap(ua | ub, dtype);
    case OpKind::kXor:
      return Wrap(ua ^ ub, dtype);
    case OpKind::kShl:
      if (b < 0 || b >= width) return std::nullopt;
      return Wrap(ua << b, dtype);
    case OpKind::kShr:
      if (b < 0 || b >= width || a < 0) return std::nullopt;
      return a >> b;
    default:
      return std::nullopt;
  }
}

std::optional<int64_t> FoldUnary(OpKind kind, DType dtype, int64_t a) {
  const uint64_t ua = static_cast<uint64_t>(a);
  if (dtype == DType::kI1) {
    if (kind == OpKind::kNot) return 1 - a;
    return std::nullopt;
  }
  switch (kind) {
    case OpKind::kNot:
      return Wrap(~ua, dtype);
    case OpKind::kNeg:
      return Wrap(0 - ua, dtype);
    case OpKind::kAbs:
      return a < 0 ? Wrap(0 - ua, dtype) : a;
    default:
      return std::nullopt;
  }
}

std::optional<bool> FoldCompare(CmpPredicate pred, DType dtype, int64_t a,
                                int64_t b) {
  const bool ordered = dtype != DType::kI1;
  switch (pred) {
    case CmpPredicate::kEq:
      return a == b;
    case CmpPredicate::kNe:
      return a != b;
    case CmpPredicate::kLt:
      if (ordered) return a < b;
      break;
    case CmpPredicate::kLe:
      if (ordered) return a <= b;
      break;
    case CmpPredicate::kGt:
      if (ordered) return a > b;
      break;
    case CmpPredicate::kGe:
      if (ordered) return a >= b;
      break;
  }
  return std::nullopt;
}

// What `cmp pred x, x` is for integers.
bool CompareWithItself(CmpPredicate pred) {
  switch (pred) {
    case CmpPredicate::kEq:
    case CmpPredicate::kLe:
    case CmpPredicate::kGe:
      return true;
    case CmpPredicate::kNe:
    case CmpPredicate::kLt:
    case CmpPredicate::kGt:
      return false;
  }
  return false;
}

Simplification Existing(Value* value) {
  return {value, std::nullopt, Simplification::kIdentity};
}
Simplification NewConstant(int64_t value, Simplification::Kind kind) {
  return {nullptr, value, kind};
}

// The identities of canonicalize.h for a binary integer op `x op y` where
// at most one side is constant.
std::optional<Simplification> BinaryIdentity(OpKind kind, DType dtype, Value* x,
                                             Value* y) {
  const std::optional<int64_t> cx = IntConstant(x);
  const std::optional<int64_t> cy = IntConstant(y);
  const int64_t all_ones = Wrap(~uint64_t{0}, dtype);
  const bool same = x == y;
  const bool i1 = dtype == DType::kI1;
  switch (kind) {
    case OpKind::kAdd:
      if (i1) break;
      if (cy == 0) return Existing(x);
      if (cx == 0) return Existing(y);
      break;
    case OpKind::kSub:
      if (i1) break;
      if (cy == 0) return Existing(x);
      if (same) return NewConstant(0, Simplification::kIdentity);
      break;
    case OpKind::kMul:
      if (i1) break;
      if (cy == 1) return Existing(x);
      if (cx == 1) return Existing(y);
      if (cx == 0 || cy == 0) return NewConstant(0, Simplification::kIdentity);
      break;
    case OpKind::kDiv:
      if (!i1 && cy == 1) return Existing(x);
      break;
    case OpKind::kRem:
      if (!i1 && (cy == 1 || cy == -1))
        return NewConstant(0, Simplification::kIdentity);
      break;
    case OpKind::kMin:
    case OpKind::kMax:
      if (!i1 && same) return Existing(x);
      break;
    case OpKind::kAnd:
      if (same || cy == all_ones) return Existing(x);
      if (cx == all_ones) return Existing(y);
      if (cx == 0 || cy == 0) return NewConstant(0, Simplification::kIdentity);
      break;
    case OpKind::kOr:
      if (same || cy == 0) return Existing(x);
      if (cx == 0) return Existing(y);
      if (cx == all_ones || cy == all_ones) {
        return NewConstant(all_ones, Simplification::kIdentity);
      }
      break;
    case OpKind::kXor:
      if (same) return NewConstant(0, Simplification::kIdentity);
      if (cy == 0) return Existing(x);
      if (cx == 0) return Existing(y);
      break;
    case OpKind::kShl:
    case OpKind::kShr:
      if (!i1 && cy == 0) return Existing(x);
      break;
    default:
      break;
  }
  return std::nullopt;
}

// `value` as `base + sign * constant` when defined by add/sub/mul with one
// constant operand.
struct ConstantTerm {
  Value* base = nullptr;
  int64_t constant = 0;
  int64_t sign = 1;  // -1 for `base - constant`
};

std::optional<ConstantTerm> MatchConstantTerm(Value* value, OpKind want) {
  if (value->kind() != Value::Kind::kResult) return std::nullopt;
  const Op* def = value->defining_op();
  if (def == nullptr || def->num_operands() != 2) return std::nullopt;
  Value* lhs = def->operand_value(0);
  Value* rhs = def->operand_value(1);
  std::optional<int64_t> clhs = IntConstant(lhs);
  std::optional<int64_t> crhs = IntConstant(rhs);
  if (clhs.has_value() == crhs.has_value()) return std::nullopt;
  if (def->kind() == want && crhs) return ConstantTerm{lhs, *crhs, 1};
  if (def->kind() == want && clhs) return ConstantTerm{rhs, *clhs, 1};
  if (want == OpKind::kAdd && def->kind() == OpKind::kSub && crhs) {
    return ConstantTerm{lhs, *crhs, -1};
  }
  return std::nullopt;
}

}  // namespace

std::optional<Simplification> Simplify(const Op& op) {
  if (op.num_results() != 1) return std::nullopt;
  const Type& type = op.result()->type();
  const OpKind kind = op.kind();
  if (kind == OpKind::kSelect && op.num_operands() == 3) {
    Value* a = op.operand_value(1);
    Value* b = op.operand_value(2);
    if (std::optional<int64_t> cond = IntConstant(op.operand_value(0))) {
      return Existing(*cond != 0 ? a : b);
    }
    if (a == b) return Existing(a);
    return std::nullopt;
  }
  if (kind == OpKind::kCast && op.num_operands() == 1) {
    Value* source = op.operand_value(0);
    if (source->type() == type) return Existing(source);
    std::optional<int64_t> value = IntConstant(source);
    if (value && type.is_integer_scalar() && type.dtype() != DType::kI1) {
      return NewConstant(Wrap(static_cast<uint64_t>(*value), type.dtype()),
                         Simplification::kFolded);
    }
    return std::nullopt;
  }
  if (kind == OpKind::kCmp && op.num_operands() == 2) {
    Value* x = op.operand_value(0);
    Value* y = op.operand_value(1);
    if (!x->type().is_integer_scalar() || x->type() != y->type()) {
      return std::nullopt;
    }
    const CmpPredicate pred = op.pred();
    std::optional<int64_t> cx = IntConstant(x);
    std::optional<int64_t> cy = IntConstant(y);
    if (cx && cy) {
      if (auto result = FoldCompare(pred, x->type().dtype(), *cx, *cy)) {
        return NewConstant(*result ? 1 : 0, Simplification::kFolded);
      }
    } else if (x == y && x->type().dtype() != DType::kI1) {
      return NewConstant(CompareWithItself(pred) ? 1 : 0,
                         Simplification::kIdentity);
    }
    return std::nullopt;
  }
  if (!type.is_integer_scalar()) return std::nullopt;
  for (const Operand& operand : op.operands()) {
    if (operand.indexed || operand.value == nullptr ||
        operand.value->type() != type) {
      return std::nullopt;
    }
  }
  const DType dtype = type.dtype();
  if (op.num_operands() == 1) {
    std::optional<int64_t> a = IntConstant(op.operand_value(0));
    if (!a) return std::nullopt;
    if (auto result = FoldUnary(kind, dtype, *a)) {
      return NewConstant(*result, Simplification::kFolded);
    }
    return std::nullopt;
  }
  if (op.num_operands() != 2) return std::nullopt;
  Value* x = op.operand_value(0);
  Value* y = op.operand_value(1);
  std::optional<int64_t> cx = IntConstant(x);
  std::optional<int64_t> cy = IntConstant(y);
  if (cx && cy) {
    if (auto result = FoldBinary(kind, dtype, *cx, *cy)) {
      return NewConstant(*result, Simplification::kFolded);
    }
    return std::nullopt;
  }
  return BinaryIdentity(kind, dtype, x, y);
}

std::optional<Reassociation> Reassociate(
    const Op& op, absl::FunctionRef<bool(const Value*)> has_one_use) {
  if (op.num_results() != 1 || op.num_operands() != 2) return std::nullopt;
  const Type& type = op.result()->type();
  if (!type.is_integer_scalar() || type.dtype() == DType::kI1) {
    return std::nullopt;
  }
  const DType dtype = type.dtype();
  Value* lhs = op.operand_value(0);
  Value* rhs = op.operand_value(1);
  std::optional<int64_t> clhs = IntConstant(lhs);
  std::optional<int64_t> crhs = IntConstant(rhs);
  if (clhs.has_value() == crhs.has_value()) return std::nullopt;
  const bool commutative =
      op.kind() == OpKind::kAdd || op.kind() == OpKind::kMul;
  if (!crhs && !commutative) return std::nullopt;
  Value* inner = crhs ? lhs : rhs;
  if (!has_one_use(inner)) return std::nullopt;
  const uint64_t c2 = static_cast<uint64_t>(crhs ? *crhs : *clhs);
  const OpKind chain = op.kind() == OpKind::kMul ? OpKind::kMul : OpKind::kAdd;
  if (op.kind() != OpKind::kAdd && op.kind() != OpKind::kSub &&
      op.kind() != OpKind::kMul) {
    return std::nullopt;
  }
  std::optional<ConstantTerm> term = MatchConstantTerm(inner, chain);
  if (!term || term->base->type() != type) return std::nullopt;
  const uint64_t c1 = static_cast<uint64_t>(term->constant);
  const uint64_t signed_c1 = term->sign < 0 ? 0 - c1 : c1;
  switch (op.kind()) {
    case OpKind::kMul:
      return Reassociation{term->base, Wrap(c1 * c2, dtype)};
    case OpKind::kAdd:  // x + s*c1 + c2
      return Reassociation{term->base, Wrap(signed_c1 + c2, dtype)};
    default:  // x + s*c1 - c2 == x - (c2 - s*c1)
      return Reassociation{term->base, Wrap(c2 - signed_c1, dtype)};
  }
}

}  // namespace kir
