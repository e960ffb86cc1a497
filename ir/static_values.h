// Values known before the kernel runs: integer constants and the trip
// counts of loops with constant bounds.
#ifndef KIR_IR_STATIC_VALUES_H_
#define KIR_IR_STATIC_VALUES_H_

#include <cstdint>
#include <optional>

#include "ir/ir.h"

namespace kir {

// The value of an integer `const` result; nullopt for anything else.
std::optional<int64_t> IntegerConstant(const Value* value);

// The number of iterations of `for` op `loop` when its bounds and step are
// integer constants (0 when the upper bound is not above the lower one);
// nullopt otherwise.
std::optional<int64_t> TripCount(const Op& loop);

}  // namespace kir

#endif  // KIR_IR_STATIC_VALUES_H_
