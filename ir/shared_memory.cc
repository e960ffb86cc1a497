#include "ir/shared_memory.h"

#include <algorithm>

namespace kir {

int64_t SharedAllocationAlignment(const Op& alloc) {
  const Type& type = alloc.result()->type();
  int64_t align =
      std::max<int64_t>(alloc.GetInt("align"), DTypeBytes(type.dtype()));
  const int64_t swizzle = alloc.GetInt("swizzle");
  // The swizzle pattern repeats every 8 lines of 128 bytes; the TMA and
  // wgmma apply it to address bits, so the base must be aligned to it.
  if (swizzle > 0) align = std::max<int64_t>(align, 8 * swizzle);
  return align;
}

std::optional<int64_t> SharedAllocationBytes(const Op& alloc) {
  const Type& type = alloc.result()->type();
  int64_t elements = 1;
  for (int i = 0; i < type.rank(); ++i) {
    std::optional<int64_t> extent = type.shape()[i].AsConstant();
    if (!extent.has_value() || *extent <= 0) return std::nullopt;
    if (i + 1 == type.rank()) *extent += alloc.GetInt("pad");
    elements *= *extent;
    if (elements > kMaxSharedBytes) break;
  }
  return elements * DTypeBytes(type.dtype());
}

}  // namespace kir
