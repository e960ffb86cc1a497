// Values known before the kernel runs: integer constants and the trip
// counts of loops with constant bounds.
#ifndef KIR_ANALYSIS_STATIC_VALUES_H_
#define KIR_ANALYSIS_STATIC_VALUES_H_

#include <cstdint>
#include <optional>

#include "ir/ir.h"

namespace kir {

// The value of an integer `const` result; nullopt for anything else.
std::optional<int64_t> IntegerConstant(const Value* value);

// The number of iterations of a loop from `lower` while below `upper` by
// `step`: 0 when `upper <= lower`; nullopt when `step <= 0` or when the
// count does not fit int64 (callers must then assume "many"). Exact for
// every int64 input: the difference of the bounds is taken unsigned.
std::optional<int64_t> TripCount(int64_t lower, int64_t upper, int64_t step);

// TripCount of `for` op `loop` when its bounds and step are integer
// constants; nullopt otherwise.
std::optional<int64_t> TripCount(const Op& loop);

}  // namespace kir

#endif  // KIR_ANALYSIS_STATIC_VALUES_H_
