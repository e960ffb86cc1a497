// Where data lives: shared-memory addresses with TMA's swizzle, the boxes
// and lane layouts of the warp and warpgroup collectives. Written from the
// PTX ISA ("Tensor swizzling modes", ldmatrix/stmatrix, wgmma register
// fragments) and ir/language.md ("Fragments").
#ifndef KIR_TOOLS_KIR_CHECK_LAYOUT_H_
#define KIR_TOOLS_KIR_CHECK_LAYOUT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace kir::check {

// The physical shared-memory byte address of `address` under a swizzle of
// `swizzle` bytes (0, 32, 64, 128): within each 128-byte line, the 16-byte
// chunk index is XORed with the line index modulo swizzle / 16. The pattern
// repeats every 8 * swizzle bytes and is taken on absolute addresses.
int64_t SwizzleAddress(int swizzle, int64_t address);

// A shared allocation: `shape` elements of `element_bytes` each, row-major,
// `pad` extra elements after every innermost row, starting at byte `base`
// of the block's shared memory, laid out in `swizzle`.
struct SharedLayout {
  int64_t base = 0;
  std::vector<int64_t> shape;
  int64_t pad = 0;
  int element_bytes = 1;
  int swizzle = 0;

  // Bytes covered, padding included.
  int64_t Bytes() const;
  // Row-major element offset of `index` (outermost first), padding
  // included; -1 when an index is out of range.
  int64_t LinearOffset(absl::Span<const int64_t> index) const;
  // The unswizzled byte address of an element offset.
  int64_t PlainAddress(int64_t linear) const {
    return base + linear * element_bytes;
  }
  // The physical byte address of an element offset.
  int64_t Address(int64_t linear) const {
    return SwizzleAddress(swizzle, PlainAddress(linear));
  }
};

// ldmatrix / stmatrix (m8n8, 16-bit elements): the box is count = 1: 8x8,
// 2: 16x8, 4: 16x16 (rows x columns; `trans` swaps the two). Returns the
// (row, column) inside the box of element `element` (0 .. 2*count-1) of
// lane `lane`'s value.
std::pair<int, int> MatrixFragmentElement(int count, bool trans, int lane,
                                          int element);
std::pair<int, int> MatrixBoxExtent(int count, bool trans);

// wgmma register fragments (accumulator, and A from registers with K as
// the column count): element `j` of lane `lane` of warp `warp` (0..3) of
// the warpgroup sits at (row, column) of the 64-row tile.
std::pair<int, int> WgmmaFragmentElement(int warp, int lane, int j);

// Row-major offset of `index` in a box of `extent`.
int64_t DenseOffset(const std::vector<int64_t>& index,
                    const std::vector<int64_t>& extent);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_LAYOUT_H_
