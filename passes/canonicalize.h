// Folds constants and simplifies integer and index arithmetic.
//
// Pass: canonicalize
// Requires: a verified kernel, in either reading (unlowered or lowered).
// Ensures: no integer op whose operands are all constants is left where
//   its result is defined (passes/integer_folding.h); identities are gone (x+0,
//   x-0, x-x, x*1, x*0, x/1, x%1, min/max(x,x), x&x, x|x, x^x, x&0, x|0, x^0,
//   shifts by 0, cmp x,x, select with a constant or twice the same operand, a
//   cast to its own type); chains `(x ± c1) ± c2` and `(x * c1) * c2` use one
//   constant; equal constants in one region scope are one op (the first); an
//   `if` on a constant is replaced by the region taken; a `for` whose constant
//   bounds give zero trips is gone; `if %c { wgmma X {zero_init} } else {
//   wgmma X }` (the same wgmma: operands, n and majors) is one `wgmma X, %c`
//   whose zero-init predicate operand is %c (`not %c` when the else side
//   zeroes). Ops left unused by these rewrites are removed.
//   The wgmma select is here because it is a local rewrite of an `if` into
//   one op that means the same, like the constant `if`, and the default
//   pipeline runs this pass first: every later pass (insert-async-waits'
//   fences, the ordering of accumulator accesses) sees one wgmma, and the
//   emitter prints its scale-d operand instead of recognizing the pair.
// Does not: fold floating point (the device's rounding decides), fold casts
//   to or from floats or to i1, remove ops that were unused on input (that
//   is dce), move ops between regions other than an inlined `if` or a fused
//   wgmma select, or unroll loops with one trip.
// Errors (located, with a note at the rank's computation): a remote access
//   (mbarrier.arrive_remote, store.remote) whose CTA rank folds to a
//   constant that names no CTA of the kernel's cluster. The verifier rejects
//   such a constant (V53); folding only shows what the input computed.
// Preserves: every analysis when it changes nothing; else none.
//
// The integer semantics the folds follow (truncating division as in C,
// wrapping at the type's width) are spelled out in passes/integer_folding.h.
#ifndef KIR_PASSES_CANONICALIZE_H_
#define KIR_PASSES_CANONICALIZE_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status Canonicalize(Kernel& kernel, const PassOptions& options,
                          PassContext& context);

}  // namespace kir

#endif  // KIR_PASSES_CANONICALIZE_H_
