// The integer folding rules of canonicalize: what one op simplifies to,
// from the constants that define its operands. Pure functions: they read the
// IR and never change it.
//
// Integer semantics, as on the device (PTX .s32/.s64) and in C:
//   i32 wraps modulo 2^32 and i64/index modulo 2^64, two's complement;
//   div truncates toward zero and rem takes the dividend's sign (unlike the
//   floor division of static shape expressions); nothing is folded for a zero
//   divisor or MIN / -1. shl and shr fold only for 0 <= amount < width, and shr
//   only for a non-negative left operand, so arithmetic and logical shifts
//   agree. Comparisons are signed. i1 folds only through and/or/xor/not and
//   cmp eq/ne. A cast between integer types sign-extends or truncates; i1
//   casts to 0 or 1; casts to i1 and to or from floats are not folded.
//   Floating point is never folded: the device's rounding decides.
#ifndef KIR_PASSES_INTEGER_FOLDING_H_
#define KIR_PASSES_INTEGER_FOLDING_H_

#include <cstdint>
#include <optional>

#include "absl/functional/function_ref.h"
#include "ir/ir.h"

namespace kir {

// The value of a `const` of integer type, wrapped to the type's width (i1:
// 0 or 1); nullopt for any other value.
std::optional<int64_t> IntConstant(const Value* value);

// What an op's single result equals: an existing value, or a constant of
// the result's type to create.
struct Simplification {
  enum Kind {
    kFolded,    // every operand was constant
    kIdentity,  // an algebraic identity (x+0, x*0, select(c, a, a), ...)
  };
  Value* value = nullptr;
  std::optional<int64_t> constant;
  Kind kind = kFolded;
};

// Folds integer arithmetic, cmp, select and integer casts, and applies the
// identities listed in canonicalize.h; nullopt when nothing applies.
std::optional<Simplification> Simplify(const Op& op);

// `(x ± c1) ± c2` as `x ± c`, `(x * c1) * c2` as `x * c`: the operands `op`
// should have instead (it keeps its kind, so the constant takes the sign).
// Only when the inner op's result has one use (`has_one_use`), since
// otherwise the inner op stays and the rewrite would only add a constant.
struct Reassociation {
  Value* base = nullptr;
  int64_t constant = 0;
};
std::optional<Reassociation> Reassociate(
    const Op& op, absl::FunctionRef<bool(const Value*)> has_one_use);

}  // namespace kir

#endif  // KIR_PASSES_INTEGER_FOLDING_H_
