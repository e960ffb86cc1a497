// Scalar semantics of the kir-check interpreter, written from the PTX ISA
// and ir/language.md ("Conventions"), not from the emitter or the passes.
//
// A lane of a value is kept in 64 bits, canonically per type:
//   i1           0 or 1
//   i32          the value sign-extended to 64 bits
//   i64, index   the value
//   f32          the IEEE single bits in the low 32 bits
//   f16, bf16    the 16-bit pattern in the low 16 bits
//
// Floating-point results are rounded once, to nearest even, as the PTX
// instructions the language maps to do (add.rn.bf16, cvt.rn.f16.f32, ...).
// Where the language leaves a result unsettled (division by zero, shift
// counts out of range, ...) the operation reports an error instead of
// picking a value, so a kernel relying on it is flagged, never silently run.
#ifndef KIR_TOOLS_KIR_CHECK_VALUES_H_
#define KIR_TOOLS_KIR_CHECK_VALUES_H_

#include <cstdint>
#include <string>

#include "ir/ir.h"
#include "ir/types.h"

namespace kir::check {

using Lane = uint64_t;

// 16-bit float encodings.
uint16_t F32ToBf16(float value);  // cvt.rn.bf16.f32; NaN -> 0x7fff
uint16_t F32ToF16(float value);   // cvt.rn.f16.f32; NaN -> 0x7fff
float Bf16ToF32(uint16_t bits);
float F16ToF32(uint16_t bits);
// Rounds the exact value `high + low` (|low| at most half an ulp of `high`
// in double, as TwoSum leaves it) once, to nearest even, to bf16 or f16.
uint16_t RoundToHalf(double high, double low, bool bf16);

// Lane <-> numbers.
float LaneToF32(DType dtype, Lane lane);      // float types only
double LaneToDouble(DType dtype, Lane lane);  // any numeric type
int64_t LaneToInt(DType dtype, Lane lane);    // integer types only
Lane F32ToLane(DType dtype, float value);     // float types; one rounding
Lane IntToLane(DType dtype, int64_t value);   // integer types; wraps
// For run directive bindings: the value a scalar parameter holds, given as
// a double (floats round to nearest even, integers truncate toward zero).
Lane DoubleToLane(DType dtype, double value);

// The lane of a float constant of the text: rounded once from the literal.
Lane ConstantLane(DType dtype, double value);

// Memory encoding of one element (little-endian, DTypeBytes wide; i1 is a
// byte holding 0 or 1).
void StoreLane(DType dtype, Lane lane, uint8_t* bytes);
Lane LoadLane(DType dtype, const uint8_t* bytes);

// The result of an operation, or why the language gives it no value.
struct LaneResult {
  Lane value = 0;
  const char* error = nullptr;  // a static message
};

// Arithmetic on one lane of `dtype`. `kind` is one of the arithmetic op
// kinds of ops.def (kAdd ... kFma, kNot, kNeg, kAbs, kExp, kSqrt, kMin,
// kMax, kAnd, kOr, kXor, kShl, kShr). Unary ops ignore `b` and `c`.
LaneResult Arithmetic(OpKind kind, DType dtype, Lane a, Lane b, Lane c);
// `cmp pred`: pred is one of eq ne lt le gt ge.
LaneResult Compare(const std::string& pred, DType dtype, Lane a, Lane b);
// `cast` of one lane from `from` to `to`.
Lane Cast(DType from, DType to, Lane lane);

// Printable value of a lane ("1.5", "-3", "nan").
std::string LaneToString(DType dtype, Lane lane);

// Whether two lanes of `dtype` hold the same value for comparing outputs:
// identical bits, or both NaN.
bool SameValue(DType dtype, Lane a, Lane b);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_VALUES_H_
