#include "analysis/static_values.h"

namespace kir {

std::optional<int64_t> IntegerConstant(const Value* value) {
  if (value == nullptr || value->kind() != Value::Kind::kResult) {
    return std::nullopt;
  }
  const Op* op = value->defining_op();
  if (op->kind() != OpKind::kConst) return std::nullopt;
  const Attribute* attr = op->has_value() ? &op->value() : nullptr;
  if (attr == nullptr || attr->kind != AttrKind::kNumber ||
      !attr->is_integral) {
    return std::nullopt;
  }
  return attr->int_value;
}

std::optional<int64_t> TripCount(int64_t lower, int64_t upper, int64_t step) {
  if (step <= 0) return std::nullopt;
  if (upper <= lower) return 0;
  const uint64_t span =
      static_cast<uint64_t>(upper) - static_cast<uint64_t>(lower);
  const uint64_t steps = static_cast<uint64_t>(step);
  const uint64_t trips = span / steps + (span % steps != 0 ? 1 : 0);
  if (trips > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(trips);
}

std::optional<int64_t> TripCount(const Op& loop) {
  if (loop.kind() != OpKind::kFor || loop.num_operands() < 3) {
    return std::nullopt;
  }
  std::optional<int64_t> lower = IntegerConstant(loop.operand_value(0));
  std::optional<int64_t> upper = IntegerConstant(loop.operand_value(1));
  std::optional<int64_t> step = IntegerConstant(loop.operand_value(2));
  if (!lower || !upper || !step) return std::nullopt;
  return TripCount(*lower, *upper, *step);
}

}  // namespace kir
