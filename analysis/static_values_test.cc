// Unit tests for static values: integer constants and trip counts.
#include "analysis/static_values.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace kir {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(TripCountTest, CountsCeilingOfSpanOverStep) {
  EXPECT_EQ(TripCount(0, 8, 1), 8);
  EXPECT_EQ(TripCount(0, 8, 3), 3);
  EXPECT_EQ(TripCount(-5, 5, 5), 2);
  EXPECT_EQ(TripCount(8, 8, 1), 0);
  EXPECT_EQ(TripCount(9, 8, 1), 0);
  EXPECT_EQ(TripCount(0, 8, 0), std::nullopt);
  EXPECT_EQ(TripCount(0, 8, -1), std::nullopt);
}

// `(upper - lower + step - 1) / step` in int64 overflowed here (undefined;
// in practice a negative count, which dropped a loop-carried barrier).
TEST(TripCountTest, ExactOrUnknownNearTheLimits) {
  EXPECT_EQ(TripCount(0, kMax, 1), kMax);
  EXPECT_EQ(TripCount(0, kMax, kMax), 1);
  EXPECT_EQ(TripCount(kMax - 1, kMax, kMax), 1);
  EXPECT_EQ(TripCount(kMin, kMax, 2), std::nullopt);         // 2^63 trips
  EXPECT_EQ(TripCount(kMin, kMax, 3), 6148914691236517205);  // (2^64 - 1) / 3
  EXPECT_EQ(TripCount(-kMax, kMax, 1), std::nullopt);        // 2^64 - 2 trips
  EXPECT_EQ(TripCount(kMin, kMax, 1), std::nullopt);
  EXPECT_EQ(TripCount(kMin, 0, 1), std::nullopt);  // 2^63 trips
  EXPECT_EQ(TripCount(kMin + 1, 0, 1), kMax);
  EXPECT_EQ(TripCount(kMin, kMax, kMax), 3);
}

}  // namespace
}  // namespace kir
