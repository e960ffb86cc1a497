// Sizes and alignments of shared allocations, as the emitter lays them out.
// Shared by the emitter and the passes that ask whether buffers fit.
#ifndef KIR_IR_SHARED_MEMORY_H_
#define KIR_IR_SHARED_MEMORY_H_

#include <cstdint>
#include <optional>

#include "ir/ir.h"

namespace kir {

// What a block can use (227 KiB), as V23.
inline constexpr int64_t kMaxSharedBytes = 232448;

// The base alignment of `alloc` (an alloc.shared) in bytes: its `align`,
// at least its element size, and 8 lines of the swizzle span when swizzled
// (TMA and wgmma apply the pattern to address bits).
int64_t SharedAllocationAlignment(const Op& alloc);

// The bytes of `alloc` (`pad` counts once per innermost row), or nullopt
// when its shape is not constant and positive.
std::optional<int64_t> SharedAllocationBytes(const Op& alloc);

}  // namespace kir

#endif  // KIR_IR_SHARED_MEMORY_H_
