#include "tools/kir-check/layout.h"

#include "gtest/gtest.h"

namespace kir::check {
namespace {

// PTX ISA, "Tensor swizzling modes": with 128-byte swizzling, the 16-byte
// chunk j of 128-byte row r of a 1024-byte-aligned block is stored at
// chunk j ^ (r % 8) of that row: row 0 is unchanged, row 1 swaps chunks
// pairwise (1 0 3 2 5 4 7 6), ..., row 7 reverses them (7 6 5 4 3 2 1 0).
TEST(Swizzle, Mode128MatchesThePtxFigure) {
  const int expected[8][8] = {
      {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6},
      {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4},
      {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
      {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};
  for (int row = 0; row < 8; ++row) {
    for (int chunk = 0; chunk < 8; ++chunk) {
      const int64_t address = 1024 * 3 + 128 * row + 16 * chunk + 6;
      EXPECT_EQ(SwizzleAddress(128, address),
                1024 * 3 + 128 * row + 16 * expected[row][chunk] + 6)
          << "row " << row << " chunk " << chunk;
    }
  }
}

// 64-byte swizzling: a 512-byte pattern of 64-byte rows; chunk j (0..3) of
// row r moves to j ^ ((r / 2) % 4).
TEST(Swizzle, Mode64MatchesThePtxFigure) {
  for (int row = 0; row < 8; ++row) {
    for (int chunk = 0; chunk < 4; ++chunk) {
      const int64_t address = 64 * row + 16 * chunk;
      EXPECT_EQ(SwizzleAddress(64, address),
                64 * row + 16 * (chunk ^ ((row / 2) % 4)));
    }
  }
}

// 32-byte swizzling: 32-byte rows, a 256-byte pattern; chunk j (0..1) of
// row r moves to j ^ ((r / 4) % 2).
TEST(Swizzle, Mode32MatchesThePtxFigure) {
  for (int row = 0; row < 8; ++row) {
    for (int chunk = 0; chunk < 2; ++chunk) {
      EXPECT_EQ(SwizzleAddress(32, 32 * row + 16 * chunk),
                32 * row + 16 * (chunk ^ ((row / 4) % 2)));
    }
  }
  EXPECT_EQ(SwizzleAddress(0, 1234), 1234);
}

TEST(SharedLayout, PadsRowsAndSwizzles) {
  SharedLayout layout;
  layout.base = 1024;
  layout.shape = {4, 32};
  layout.pad = 1;
  layout.element_bytes = 4;
  EXPECT_EQ(layout.Bytes(), 4 * 33 * 4);
  EXPECT_EQ(layout.LinearOffset({1, 0}), 33);
  EXPECT_EQ(layout.LinearOffset({3, 31}), 3 * 33 + 31);
  EXPECT_EQ(layout.LinearOffset({4, 0}), -1);
  EXPECT_EQ(layout.LinearOffset({0, 32}), -1);
  SharedLayout swizzled;
  swizzled.base = 2048;
  swizzled.shape = {8, 64};
  swizzled.element_bytes = 2;
  swizzled.swizzle = 128;
  // Element (1, 0): byte 128 of the buffer, row 1 chunk 0 -> chunk 1.
  EXPECT_EQ(swizzled.Address(swizzled.LinearOffset({1, 0})), 2048 + 128 + 16);
}

// PTX ldmatrix: lane l holds, of matrix i, row l / 4 and columns
// 2 * (l % 4) and 2 * (l % 4) + 1. Matrices of x4 are ordered down, then
// across (ir/language.md, "Fragments").
TEST(MatrixFragment, LanesHoldTheDocumentedElements) {
  EXPECT_EQ(MatrixFragmentElement(1, false, 0, 0), std::make_pair(0, 0));
  EXPECT_EQ(MatrixFragmentElement(1, false, 0, 1), std::make_pair(0, 1));
  EXPECT_EQ(MatrixFragmentElement(1, false, 5, 0), std::make_pair(1, 2));
  EXPECT_EQ(MatrixFragmentElement(1, false, 31, 1), std::make_pair(7, 7));
  // x4, lane 9: r = 2, c = 2; the value's elements are (r, c), (r, c+1),
  // (r+8, c), (r+8, c+1), (r, c+8), (r, c+9), (r+8, c+8), (r+8, c+9).
  const std::pair<int, int> x4[8] = {{2, 2},  {2, 3},  {10, 2},  {10, 3},
                                     {2, 10}, {2, 11}, {10, 10}, {10, 11}};
  for (int e = 0; e < 8; ++e)
    EXPECT_EQ(MatrixFragmentElement(4, false, 9, e), x4[e]) << e;
  // trans reads the transposed box: (row, col) -> (col, row).
  EXPECT_EQ(MatrixFragmentElement(2, true, 9, 2), std::make_pair(2, 10));
  EXPECT_EQ(MatrixBoxExtent(2, false), std::make_pair(16, 8));
  EXPECT_EQ(MatrixBoxExtent(2, true), std::make_pair(8, 16));
  EXPECT_EQ(MatrixBoxExtent(4, false), std::make_pair(16, 16));
}

// PTX wgmma, "Register fragments" for the m64nNk16 accumulator: thread T0
// of warp 0 holds d0, d1 at row 0 columns 0, 1; d2, d3 at row 8; d4, d5 at
// row 0 columns 8, 9. T5 starts at row 1, column 2; warp w adds 16 rows.
TEST(WgmmaFragment, MatchesThePtxFigure) {
  EXPECT_EQ(WgmmaFragmentElement(0, 0, 0), std::make_pair(0, 0));
  EXPECT_EQ(WgmmaFragmentElement(0, 0, 1), std::make_pair(0, 1));
  EXPECT_EQ(WgmmaFragmentElement(0, 0, 2), std::make_pair(8, 0));
  EXPECT_EQ(WgmmaFragmentElement(0, 0, 3), std::make_pair(8, 1));
  EXPECT_EQ(WgmmaFragmentElement(0, 0, 4), std::make_pair(0, 8));
  EXPECT_EQ(WgmmaFragmentElement(0, 5, 0), std::make_pair(1, 2));
  EXPECT_EQ(WgmmaFragmentElement(2, 31, 63),
            std::make_pair(32 + 7 + 8, 8 * 15 + 6 + 1));
  // Every element of a 64x128 tile is held exactly once.
  std::vector<int> seen(64 * 128, 0);
  for (int w = 0; w < 4; ++w)
    for (int l = 0; l < 32; ++l)
      for (int j = 0; j < 64; ++j) {
        auto [r, c] = WgmmaFragmentElement(w, l, j);
        ++seen[r * 128 + c];
      }
  for (int count : seen) EXPECT_EQ(count, 1);
}

}  // namespace
}  // namespace kir::check
