#include "tools/kir-check/values.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/check.h"

namespace kir::check {
namespace {

constexpr uint16_t kHalfNan = 0x7fff;

float BitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint32_t FloatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

// Parameters of a 16-bit format: mantissa bits (without the hidden one),
// exponent bias.
struct HalfFormat {
  int mantissa_bits;
  int bias;
  int max_exponent;  // of the largest finite value
};
constexpr HalfFormat kBf16Format = {7, 127, 127};
constexpr HalfFormat kF16Format = {10, 15, 15};

// (hi, lo) = a + b exactly (Knuth's TwoSum).
void TwoSum(double a, double b, double& hi, double& lo) {
  hi = a + b;
  const double bv = hi - a;
  const double av = hi - bv;
  lo = (a - av) + (b - bv);
}

int64_t SignExtend(uint64_t bits, int width) {
  if (width >= 64) return static_cast<int64_t>(bits);
  const uint64_t mask = (uint64_t{1} << width) - 1;
  bits &= mask;
  const uint64_t sign = uint64_t{1} << (width - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

int IntWidth(DType dtype) {
  switch (dtype) {
    case DType::kI1:
      return 1;
    case DType::kI32:
      return 32;
    default:
      return 64;
  }
}

// A float lane as a double (exact for every float type).
double FloatLane(DType dtype, Lane lane) {
  switch (dtype) {
    case DType::kF32:
      return BitsToFloat(static_cast<uint32_t>(lane));
    case DType::kBF16:
      return Bf16ToF32(static_cast<uint16_t>(lane));
    case DType::kF16:
      return F16ToF32(static_cast<uint16_t>(lane));
    default:
      KIR_UNREACHABLE() << "not a float type";
  }
  return 0;
}

// An exact real `hi + lo` rounded once to a float type.
Lane RoundToFloat(DType dtype, double hi, double lo) {
  if (dtype == DType::kF32) {
    // Rounding hi alone is exact enough unless hi sits on a tie of f32.
    const float f = static_cast<float>(hi);
    if (lo != 0 && std::isfinite(hi) && static_cast<double>(f) != hi) {
      // hi is not an f32; if it is exactly halfway between two f32 values,
      // lo decides the direction.
      const float below = std::nextafter(f, -INFINITY);
      const float above = std::nextafter(f, INFINITY);
      const float lower = static_cast<double>(f) < hi ? f : below;
      const float upper = static_cast<double>(f) < hi ? above : f;
      const double mid = (static_cast<double>(lower) + upper) / 2;
      if (hi == mid) return FloatToBits(lo > 0 ? upper : lower);
    }
    return FloatToBits(f);
  }
  return RoundToHalf(hi, lo, dtype == DType::kBF16);
}

Lane FloatResult(DType dtype, double exact) {
  return RoundToFloat(dtype, exact, 0);
}

}  // namespace

uint16_t RoundToHalf(double high, double low, bool bf16) {
  const HalfFormat format = bf16 ? kBf16Format : kF16Format;
  if (std::isnan(high)) return kHalfNan;
  const uint16_t sign = std::signbit(high) ? 0x8000 : 0;
  const uint16_t exponent_mask = static_cast<uint16_t>(
      ((1 << (15 - format.mantissa_bits)) - 1) << format.mantissa_bits);
  if (std::isinf(high)) return sign | exponent_mask;
  if (high == 0) return sign;
  double magnitude = std::fabs(high);
  double tail = std::signbit(high) ? -low : low;
  const int min_exponent = 1 - format.bias;  // of the smallest normal
  int exponent = std::ilogb(magnitude);
  if (exponent < min_exponent) exponent = min_exponent;
  // The spacing of representable values around `magnitude`.
  const double quantum = std::ldexp(1.0, exponent - format.mantissa_bits);
  const double scaled = magnitude / quantum;  // exact: a power of two
  double units = std::floor(scaled);
  const double fraction = scaled - units;
  bool up = fraction > 0.5;
  if (fraction == 0.5) {
    up = tail > 0 ? true : tail < 0 ? false : std::fmod(units, 2.0) != 0;
  }
  if (up) units += 1;
  const double rounded = units * quantum;
  // Overflow: past the largest finite value.
  const double limit = std::ldexp(1.0, format.max_exponent + 1);
  if (rounded >= limit) return sign | exponent_mask;
  const double min_normal = std::ldexp(1.0, min_exponent);
  if (rounded < min_normal) {
    // Subnormal (or zero): units counts multiples of the smallest one.
    return sign | static_cast<uint16_t>(units);
  }
  const int e = std::ilogb(rounded);
  const double mantissa = rounded / std::ldexp(1.0, e - format.mantissa_bits) -
                          std::ldexp(1.0, format.mantissa_bits);
  return sign |
         static_cast<uint16_t>((e + format.bias) << format.mantissa_bits) |
         static_cast<uint16_t>(mantissa);
}

uint16_t F32ToBf16(float value) { return RoundToHalf(value, 0, true); }
uint16_t F32ToF16(float value) { return RoundToHalf(value, 0, false); }

float Bf16ToF32(uint16_t bits) {
  return BitsToFloat(static_cast<uint32_t>(bits) << 16);
}

float F16ToF32(uint16_t bits) {
  const bool negative = bits & 0x8000;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return negative ? -magnitude : magnitude;
}

float LaneToF32(DType dtype, Lane lane) {
  return static_cast<float>(FloatLane(dtype, lane));
}

double LaneToDouble(DType dtype, Lane lane) {
  if (IsFloat(dtype)) return FloatLane(dtype, lane);
  return static_cast<double>(LaneToInt(dtype, lane));
}

int64_t LaneToInt(DType dtype, Lane lane) {
  if (dtype == DType::kI1) return static_cast<int64_t>(lane & 1);
  return SignExtend(lane, IntWidth(dtype));
}

Lane F32ToLane(DType dtype, float value) {
  return RoundToFloat(dtype, value, 0);
}

Lane IntToLane(DType dtype, int64_t value) {
  if (dtype == DType::kI1) return static_cast<uint64_t>(value) & 1;
  return static_cast<Lane>(
      SignExtend(static_cast<uint64_t>(value), IntWidth(dtype)));
}

Lane DoubleToLane(DType dtype, double value) {
  if (IsFloat(dtype)) {
    // Bindings round to f32 first, as the launcher's argument slots do.
    return RoundToFloat(dtype, static_cast<float>(value), 0);
  }
  if (dtype == DType::kI1) return value != 0;
  return IntToLane(dtype, static_cast<int64_t>(value));
}

Lane ConstantLane(DType dtype, double value) {
  return RoundToFloat(dtype, value, 0);
}

void StoreLane(DType dtype, Lane lane, uint8_t* bytes) {
  switch (dtype) {
    case DType::kI1:
      bytes[0] = static_cast<uint8_t>(lane & 1);
      return;
    case DType::kF16:
    case DType::kBF16: {
      const uint16_t h = static_cast<uint16_t>(lane);
      std::memcpy(bytes, &h, 2);
      return;
    }
    case DType::kI32:
    case DType::kF32: {
      const uint32_t w = static_cast<uint32_t>(lane);
      std::memcpy(bytes, &w, 4);
      return;
    }
    default:
      std::memcpy(bytes, &lane, 8);
      return;
  }
}

Lane LoadLane(DType dtype, const uint8_t* bytes) {
  switch (dtype) {
    case DType::kI1:
      return bytes[0] & 1;
    case DType::kF16:
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, bytes, 2);
      return h;
    }
    case DType::kF32: {
      uint32_t w;
      std::memcpy(&w, bytes, 4);
      return w;
    }
    case DType::kI32: {
      int32_t w;
      std::memcpy(&w, bytes, 4);
      return static_cast<Lane>(static_cast<int64_t>(w));
    }
    default: {
      Lane v;
      std::memcpy(&v, bytes, 8);
      return v;
    }
  }
}

namespace {

LaneResult Ok(Lane value) { return LaneResult{value, nullptr}; }
LaneResult Fail(const char* message) { return LaneResult{0, message}; }

LaneResult IntegerArithmetic(OpKind kind, DType dtype, Lane a_lane,
                             Lane b_lane) {
  const int width = IntWidth(dtype);
  const int64_t a = LaneToInt(dtype, a_lane);
  const int64_t b = LaneToInt(dtype, b_lane);
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  const int64_t min_value = width == 64 ? std::numeric_limits<int64_t>::min()
                                        : -(int64_t{1} << (width - 1));
  switch (kind) {
    case OpKind::kAdd:
      return Ok(IntToLane(dtype, static_cast<int64_t>(ua + ub)));
    case OpKind::kSub:
      return Ok(IntToLane(dtype, static_cast<int64_t>(ua - ub)));
    case OpKind::kMul:
      return Ok(IntToLane(dtype, static_cast<int64_t>(ua * ub)));
    case OpKind::kDiv:
    case OpKind::kRem:
      if (b == 0) return Fail("integer division by zero (undefined)");
      if (a == min_value && b == -1) {
        return Fail("integer division of the minimum by -1 (undefined)");
      }
      return Ok(IntToLane(dtype, kind == OpKind::kDiv ? a / b : a % b));
    case OpKind::kMin:
      return Ok(IntToLane(dtype, a < b ? a : b));
    case OpKind::kMax:
      return Ok(IntToLane(dtype, a > b ? a : b));
    case OpKind::kAnd:
      return Ok(IntToLane(dtype, static_cast<int64_t>(ua & ub)));
    case OpKind::kOr:
      return Ok(IntToLane(dtype, static_cast<int64_t>(ua | ub)));
    case OpKind::kXor:
      return Ok(IntToLane(dtype, static_cast<int64_t>(ua ^ ub)));
    case OpKind::kNot:
      return Ok(IntToLane(dtype, static_cast<int64_t>(~ua)));
    case OpKind::kShl:
      if (b < 0 || b >= width) {
        return Fail("shift count outside [0, width) (unsettled)");
      }
      return Ok(IntToLane(dtype, static_cast<int64_t>(ua << b)));
    case OpKind::kShr:
      if (b < 0 || b >= width) {
        return Fail("shift count outside [0, width) (unsettled)");
      }
      if (a < 0) return Fail("shr of a negative value (unsettled)");
      return Ok(IntToLane(dtype, a >> b));
    case OpKind::kNeg:
      return Ok(IntToLane(dtype, static_cast<int64_t>(uint64_t{0} - ua)));
    case OpKind::kAbs:
      return Ok(
          IntToLane(dtype, a < 0 ? static_cast<int64_t>(uint64_t{0} - ua) : a));
    default:
      return Fail("not an integer operation");
  }
}

// PTX min/max: a NaN operand yields the other operand; -0 < +0.
double FloatMinMax(bool is_min, double a, double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) {
    // Equal, possibly zeros of different signs.
    const bool a_neg = std::signbit(a);
    return is_min ? (a_neg ? a : b) : (a_neg ? b : a);
  }
  return is_min ? (a < b ? a : b) : (a > b ? a : b);
}

LaneResult FloatArithmetic(OpKind kind, DType dtype, Lane a_lane, Lane b_lane,
                           Lane c_lane) {
  const double a = FloatLane(dtype, a_lane);
  const double b = FloatLane(dtype, b_lane);
  double hi = 0, lo = 0;
  switch (kind) {
    case OpKind::kAdd:
      TwoSum(a, b, hi, lo);
      return Ok(RoundToFloat(dtype, hi, lo));
    case OpKind::kSub:
      TwoSum(a, -b, hi, lo);
      return Ok(RoundToFloat(dtype, hi, lo));
    case OpKind::kMul: {
      // The product of two floats of at most 24 bits is exact in double.
      return Ok(FloatResult(dtype, a * b));
    }
    case OpKind::kDiv:
      // One rounding through double is exact for p <= 24 (53 >= 2p + 2).
      return Ok(FloatResult(dtype, a / b));
    case OpKind::kRem:
      return Ok(FloatResult(dtype, std::fmod(a, b)));
    case OpKind::kFma: {
      const double c = FloatLane(dtype, c_lane);
      TwoSum(a * b, c, hi, lo);  // a * b exact
      return Ok(RoundToFloat(dtype, hi, lo));
    }
    case OpKind::kMin:
    case OpKind::kMax:
      return Ok(FloatResult(dtype, FloatMinMax(kind == OpKind::kMin, a, b)));
    case OpKind::kNeg:
      // Sign-bit flips, as neg.f32 and the 16-bit forms do (NaN too).
      return Ok(dtype == DType::kF32 ? (a_lane ^ 0x80000000u)
                                     : (a_lane ^ 0x8000u));
    case OpKind::kAbs:
      return Ok(dtype == DType::kF32 ? (a_lane & 0x7fffffffu)
                                     : (a_lane & 0x7fffu));
    case OpKind::kSqrt:
      return Ok(FloatResult(dtype, std::sqrt(a)));
    case OpKind::kExp:
      // The language leaves exp's accuracy open; this is e^x rounded once.
      return Ok(FloatResult(dtype, std::exp(a)));
    default:
      return Fail("not a floating-point operation");
  }
}

}  // namespace

LaneResult Arithmetic(OpKind kind, DType dtype, Lane a, Lane b, Lane c) {
  if (IsFloat(dtype)) return FloatArithmetic(kind, dtype, a, b, c);
  if (dtype == DType::kI1) {
    switch (kind) {
      case OpKind::kAnd:
        return Ok(a & b & 1);
      case OpKind::kOr:
        return Ok((a | b) & 1);
      case OpKind::kXor:
        return Ok((a ^ b) & 1);
      case OpKind::kNot:
        return Ok((a ^ 1) & 1);
      default:
        return Fail("arithmetic on i1");
    }
  }
  return IntegerArithmetic(kind, dtype, a, b);
}

LaneResult Compare(const std::string& pred, DType dtype, Lane a_lane,
                   Lane b_lane) {
  if (IsFloat(dtype)) {
    const double a = FloatLane(dtype, a_lane), b = FloatLane(dtype, b_lane);
    if (pred == "ne") return Ok(!(a == b));  // true with a NaN
    if (std::isnan(a) || std::isnan(b)) return Ok(0);
    if (pred == "eq") return Ok(a == b);
    if (pred == "lt") return Ok(a < b);
    if (pred == "le") return Ok(a <= b);
    if (pred == "gt") return Ok(a > b);
    if (pred == "ge") return Ok(a >= b);
    return Fail("unknown comparison");
  }
  const int64_t a = LaneToInt(dtype, a_lane), b = LaneToInt(dtype, b_lane);
  if (pred == "eq") return Ok(a == b);
  if (pred == "ne") return Ok(a != b);
  if (pred == "lt") return Ok(a < b);
  if (pred == "le") return Ok(a <= b);
  if (pred == "gt") return Ok(a > b);
  if (pred == "ge") return Ok(a >= b);
  return Fail("unknown comparison");
}

Lane Cast(DType from, DType to, Lane lane) {
  if (from == to) return lane;
  if (IsInteger(from)) {
    const int64_t value = LaneToInt(from, lane);
    if (IsInteger(to)) return IntToLane(to, value);  // i1: the low bit
    if (to == DType::kF32) return FloatToBits(static_cast<float>(value));
    // cvt.rn.{f16,bf16}.s64 rounds once: split the integer into a double
    // and the exact remainder so that the rounding sees every bit.
    const double high = static_cast<double>(value);
    const double low = static_cast<double>(static_cast<__int128>(value) -
                                           static_cast<__int128>(high));
    return RoundToHalf(high, low, to == DType::kBF16);
  }
  const double value = FloatLane(from, lane);
  if (to == DType::kI1) return value != 0;
  if (IsFloat(to)) return RoundToFloat(to, value, 0);
  // Truncation toward zero, saturating, NaN to 0 (cvt.rzi).
  if (std::isnan(value)) return 0;
  const double truncated = std::trunc(value);
  if (to == DType::kI32) {
    if (truncated >= 2147483647.0) return IntToLane(to, 2147483647);
    if (truncated <= -2147483648.0) return IntToLane(to, -2147483648LL);
    return IntToLane(to, static_cast<int64_t>(truncated));
  }
  if (truncated >= 9223372036854775807.0) {
    return static_cast<Lane>(std::numeric_limits<int64_t>::max());
  }
  if (truncated <= -9223372036854775808.0) {
    return static_cast<Lane>(std::numeric_limits<int64_t>::min());
  }
  return static_cast<Lane>(static_cast<int64_t>(truncated));
}

std::string LaneToString(DType dtype, Lane lane) {
  if (IsFloat(dtype)) {
    const double value = FloatLane(dtype, lane);
    if (std::isnan(value)) return "nan";
    return absl::StrFormat("%.9g", value);
  }
  if (dtype == DType::kMbarrier) return "mbarrier";
  return absl::StrCat(LaneToInt(dtype, lane));
}

bool SameValue(DType dtype, Lane a, Lane b) {
  if (IsFloat(dtype)) {
    const double x = FloatLane(dtype, a), y = FloatLane(dtype, b);
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return a == b;  // bits, so -0 and +0 differ
  }
  return a == b;
}

}  // namespace kir::check
