// Removes operations whose results are unused and that have no effects.
//
// Pass: dce
// Requires: a verified kernel, in either reading (unlowered or lowered).
// Ensures: every op without side effects (FactsOf(kind).has_side_effects,
//   ir/effects.h) that has results has at least one used result; no `if` has
//   two empty regions and no `for` has an empty body. Iterates to a fixed
//   point, so chains of dead ops go at once.
// Does not: remove ops with side effects, even unused ones (stores, waits,
//   barriers, commits, atomics), raw `ptx` (its text may do more than it
//   declares), ops without results, or `role` and `splitk` regions; it does
//   not fold anything (that is canonicalize).
// Preserves: every analysis when it removes nothing; else none.
#ifndef KIR_PASSES_DCE_H_
#define KIR_PASSES_DCE_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status EliminateDeadCode(Kernel& kernel, const PassOptions& options,
                               PassContext& context);

}  // namespace kir

#endif  // KIR_PASSES_DCE_H_
