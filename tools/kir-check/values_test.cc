#include "tools/kir-check/values.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "gtest/gtest.h"

namespace kir::check {
namespace {

Lane F32(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}
float AsF32(Lane lane) { return LaneToF32(DType::kF32, lane); }

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(F32ToBf16(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to the even one, 1.
  EXPECT_EQ(F32ToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6.
  EXPECT_EQ(F32ToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  // Just above the tie rounds up.
  EXPECT_EQ(F32ToBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)),
            0x3f81);
  EXPECT_EQ(F32ToBf16(-2.0f), 0xc000);
  EXPECT_EQ(F32ToBf16(std::numeric_limits<float>::quiet_NaN()), 0x7fff);
  EXPECT_EQ(F32ToBf16(INFINITY), 0x7f80);
  // The largest finite f32 overflows bf16's rounding to infinity.
  EXPECT_EQ(F32ToBf16(std::numeric_limits<float>::max()), 0x7f80);
  // Subnormals keep their bits above the cut.
  EXPECT_EQ(F32ToBf16(std::ldexp(1.0f, -130)), 0x0008);
  EXPECT_EQ(Bf16ToF32(0x3f81), 1.0f + std::ldexp(1.0f, -7));
}

TEST(F16, RoundsToNearestEvenWithSubnormalsAndOverflow) {
  EXPECT_EQ(F32ToF16(1.0f), 0x3c00);
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);  // the largest finite
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00);  // halfway to 65536: infinity
  EXPECT_EQ(F32ToF16(65519.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -24)), 0x0001);      // smallest subnormal
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -25)), 0x0000);      // tie to even: 0
  EXPECT_EQ(F32ToF16(3 * std::ldexp(1.0f, -25)), 0x0002);  // tie to even: 2
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(F16ToF32(0xbc00), -1.0f);
  EXPECT_TRUE(std::isnan(F16ToF32(0x7e00)));
}

TEST(Arithmetic, Bf16AddRoundsOnceFromTheExactSum) {
  // 1 + 2^-8 (exact) rounds to 1 in bf16; the two operands are bf16.
  const Lane one = 0x3f80, tiny = F32ToBf16(std::ldexp(1.0f, -8));
  EXPECT_EQ(Arithmetic(OpKind::kAdd, DType::kBF16, one, tiny, 0).value, 0x3f80);
  // 1 + (2^-8 + 2^-16): just above the tie, rounds up.
  const Lane above = F32ToBf16(std::ldexp(1.0f, -8) + std::ldexp(1.0f, -15));
  EXPECT_EQ(Arithmetic(OpKind::kAdd, DType::kBF16, one, above, 0).value,
            0x3f81);
}

TEST(Arithmetic, FmaRoundsOnce) {
  // a*a + c with a*a = 1 + 2^-11 + 2^-24: a separate f32 multiply rounds
  // the product to 1 + 2^-11 first; fma keeps the low bits.
  const float a = 1.0f + std::ldexp(1.0f, -12);
  const float c = -1.0f;
  const Lane r =
      Arithmetic(OpKind::kFma, DType::kF32, F32(a), F32(a), F32(c)).value;
  const float exact = std::ldexp(1.0f, -11) + std::ldexp(1.0f, -24);
  EXPECT_EQ(AsF32(r), exact);
  volatile float product = a * a;  // rounded on its own: 1 + 2^-11
  EXPECT_NE(AsF32(r), product + c);
}

TEST(Arithmetic, IntegersWrapAndTruncate) {
  auto i32 = [](int64_t v) { return IntToLane(DType::kI32, v); };
  EXPECT_EQ(LaneToInt(DType::kI32, Arithmetic(OpKind::kAdd, DType::kI32,
                                              i32(2147483647), i32(1), 0)
                                       .value),
            -2147483648LL);
  EXPECT_EQ(
      LaneToInt(
          DType::kI32,
          Arithmetic(OpKind::kDiv, DType::kI32, i32(-7), i32(2), 0).value),
      -3);
  EXPECT_EQ(
      LaneToInt(
          DType::kI32,
          Arithmetic(OpKind::kRem, DType::kI32, i32(-7), i32(2), 0).value),
      -1);
  EXPECT_NE(Arithmetic(OpKind::kDiv, DType::kI32, i32(1), i32(0), 0).error,
            nullptr);
  EXPECT_NE(
      Arithmetic(OpKind::kDiv, DType::kI32, i32(-2147483648LL), i32(-1), 0)
          .error,
      nullptr);
  EXPECT_NE(Arithmetic(OpKind::kShl, DType::kI32, i32(1), i32(32), 0).error,
            nullptr);
  EXPECT_NE(Arithmetic(OpKind::kShr, DType::kI32, i32(-8), i32(1), 0).error,
            nullptr);
  EXPECT_EQ(
      LaneToInt(
          DType::kI32,
          Arithmetic(OpKind::kShl, DType::kI32, i32(3), i32(30), 0).value),
      -1073741824LL);
  EXPECT_EQ(LaneToInt(DType::kI32, Arithmetic(OpKind::kAbs, DType::kI32,
                                              i32(-2147483648LL), 0, 0)
                                       .value),
            -2147483648LL);
  EXPECT_EQ(Arithmetic(OpKind::kXor, DType::kI1, 1, 1, 0).value, 0u);
  EXPECT_NE(Arithmetic(OpKind::kAdd, DType::kI1, 1, 1, 0).error, nullptr);
}

TEST(Arithmetic, FloatMinMaxAndCompareFollowPtx) {
  const Lane nan = F32(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(AsF32(Arithmetic(OpKind::kMin, DType::kF32, nan, F32(2), 0).value),
            2.0f);
  EXPECT_EQ(AsF32(Arithmetic(OpKind::kMax, DType::kF32, F32(-1), nan, 0).value),
            -1.0f);
  EXPECT_TRUE(std::signbit(AsF32(
      Arithmetic(OpKind::kMin, DType::kF32, F32(0.0f), F32(-0.0f), 0).value)));
  EXPECT_EQ(Compare("ne", DType::kF32, nan, nan).value, 1u);
  EXPECT_EQ(Compare("eq", DType::kF32, nan, nan).value, 0u);
  EXPECT_EQ(Compare("lt", DType::kF32, nan, F32(1)).value, 0u);
  EXPECT_EQ(Compare("lt", DType::kI32, IntToLane(DType::kI32, -1),
                    IntToLane(DType::kI32, 0))
                .value,
            1u);
}

TEST(Cast, ConvertsAsPtxCvt) {
  // Float to integer: toward zero, saturating, NaN to 0.
  EXPECT_EQ(LaneToInt(DType::kI32, Cast(DType::kF32, DType::kI32, F32(-2.9f))),
            -2);
  EXPECT_EQ(LaneToInt(DType::kI32, Cast(DType::kF32, DType::kI32, F32(1e20f))),
            2147483647);
  EXPECT_EQ(LaneToInt(DType::kI32,
                      Cast(DType::kF32, DType::kI32,
                           F32(std::numeric_limits<float>::quiet_NaN()))),
            0);
  // Integer to narrower integer wraps; to i1 keeps the low bit.
  EXPECT_EQ(
      LaneToInt(DType::kI32, Cast(DType::kI64, DType::kI32, 0x100000001ULL)),
      1);
  EXPECT_EQ(Cast(DType::kI32, DType::kI1, IntToLane(DType::kI32, 2)), 0u);
  EXPECT_EQ(Cast(DType::kF32, DType::kI1, F32(0.5f)), 1u);
  // i1 converts as 0 or 1; integers to floats round once.
  EXPECT_EQ(AsF32(Cast(DType::kI1, DType::kF32, 1)), 1.0f);
  EXPECT_EQ(Cast(DType::kI32, DType::kBF16, IntToLane(DType::kI32, 257)),
            0x4380u);  // 256
  EXPECT_EQ(Cast(DType::kI32, DType::kBF16, IntToLane(DType::kI32, 259)),
            0x4382u);  // 260
  // An int64 just above a bf16 tie must round up (no double rounding).
  const int64_t big = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;
  EXPECT_EQ(Cast(DType::kI64, DType::kBF16, static_cast<Lane>(big)), 0x5e81u);
  EXPECT_EQ(Cast(DType::kF32, DType::kF16, F32(65520.0f)), 0x7c00u);
}

TEST(Memory, LanesRoundTripThroughBytes) {
  uint8_t bytes[8] = {};
  StoreLane(DType::kI32, IntToLane(DType::kI32, -5), bytes);
  EXPECT_EQ(LaneToInt(DType::kI32, LoadLane(DType::kI32, bytes)), -5);
  StoreLane(DType::kBF16, 0xbf80, bytes);
  EXPECT_EQ(bytes[0], 0x80);
  EXPECT_EQ(bytes[1], 0xbf);
  EXPECT_TRUE(SameValue(DType::kF32, F32(NAN), F32(-NAN)));
  EXPECT_FALSE(SameValue(DType::kF32, F32(0.0f), F32(-0.0f)));
}

}  // namespace
}  // namespace kir::check
