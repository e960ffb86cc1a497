#include "tools/kir-check/layout.h"

#include "ir/check.h"

namespace kir::check {

int64_t SwizzleAddress(int swizzle, int64_t address) {
  if (swizzle == 0) return address;
  const int64_t lines = swizzle / 16;  // 2, 4 or 8 chunks permuted
  return address ^ (((address >> 7) & (lines - 1)) << 4);
}

int64_t SharedLayout::Bytes() const {
  int64_t elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t extent = shape[d];
    if (d + 1 == shape.size()) extent += pad;
    elements *= extent;
  }
  return elements * element_bytes;
}

int64_t SharedLayout::LinearOffset(absl::Span<const int64_t> index) const {
  if (index.size() != shape.size()) return -1;
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape[d]) return -1;
    const int64_t extent = d + 1 == shape.size() ? shape[d] + pad : shape[d];
    offset = offset * extent + index[d];
  }
  return offset;
}

std::pair<int, int> MatrixBoxExtent(int count, bool trans) {
  const int rows = count == 1 ? 8 : 16;
  const int columns = count == 4 ? 16 : 8;
  return trans ? std::make_pair(columns, rows) : std::make_pair(rows, columns);
}

std::pair<int, int> MatrixFragmentElement(int count, bool trans, int lane,
                                          int element) {
  KIR_CHECK(element >= 0 && element < 2 * count);
  const int matrix = element / 2;
  // Matrices ordered down, then across: (0,0), (8,0), (0,8), (8,8).
  const int matrix_row = (matrix % 2) * 8;
  const int matrix_column = (matrix / 2) * 8;
  const int row = matrix_row + lane / 4;
  const int column = matrix_column + 2 * (lane % 4) + element % 2;
  return trans ? std::make_pair(column, row) : std::make_pair(row, column);
}

std::pair<int, int> WgmmaFragmentElement(int warp, int lane, int j) {
  const int row = 16 * warp + lane / 4 + 8 * ((j / 2) % 2);
  const int column = 8 * (j / 4) + 2 * (lane % 4) + j % 2;
  return {row, column};
}

int64_t DenseOffset(const std::vector<int64_t>& index,
                    const std::vector<int64_t>& extent) {
  int64_t offset = 0;
  for (size_t d = 0; d < extent.size(); ++d)
    offset = offset * extent[d] + index[d];
  return offset;
}

}  // namespace kir::check
