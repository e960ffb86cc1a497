// Integer arithmetic that reports overflow instead of wrapping (or being
// undefined): static sizes, trip counts and byte counts come from user
// input, so any of them may be near the int64 limits.
#ifndef KIR_IR_CHECKED_MATH_H_
#define KIR_IR_CHECKED_MATH_H_

#include <cstdint>
#include <optional>

namespace kir {

// a + b, a - b, a * b; nullopt when the exact result does not fit int64.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}
inline std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_sub_overflow(a, b, &result)) return std::nullopt;
  return result;
}
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// The product of `values`; nullopt when it does not fit int64.
template <typename Range>
std::optional<int64_t> CheckedProduct(const Range& values) {
  int64_t product = 1;
  for (int64_t value : values) {
    std::optional<int64_t> next = CheckedMul(product, value);
    if (!next) return std::nullopt;
    product = *next;
  }
  return product;
}

}  // namespace kir

#endif  // KIR_IR_CHECKED_MATH_H_
