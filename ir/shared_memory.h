// Sizes, alignments and offsets of shared allocations, and how many blocks
// of a kernel fit on an SM. One definition for the emitter, the verifier
// (V23), plan-shared-memory and the passes that ask whether buffers fit.
#ifndef KIR_IR_SHARED_MEMORY_H_
#define KIR_IR_SHARED_MEMORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace kir {

// What a block can use (227 KiB), as V23.
inline constexpr int64_t kMaxSharedBytes = 232448;

// The most an mbarrier counts: arrivals (init) and transaction bytes
// (arrive_tx), as V29.
inline constexpr int64_t kMbarrierCountLimit = (int64_t{1} << 20) - 1;

// The base alignment of `alloc` (an alloc.shared) in bytes: its `align`,
// at least its element size, and 8 lines of the swizzle span when swizzled
// (TMA and wgmma apply the pattern to address bits).
int64_t SharedAllocationAlignment(const Op& alloc);

// The bytes of `alloc` (`pad` counts once per innermost row), or nullopt
// when its shape is not constant and positive.
std::optional<int64_t> SharedAllocationBytes(const Op& alloc);

// Every alloc.shared of `kernel`, in program order.
std::vector<const Op*> SharedAllocations(const Kernel& kernel);

int64_t AlignUp(int64_t value, int64_t align);

// Where one allocation lives in the block's dynamic shared memory.
struct SharedPlacement {
  const Op* alloc = nullptr;  // null for an allocation a variant adds
  int64_t offset = 0;
  int64_t bytes = 0;
  int64_t align = 0;
  bool explicit_offset = false;  // from its `offset` attribute
};

// `alloc` with `bytes`, its alignment, and its `offset` if it has one.
SharedPlacement PlacementOf(const Op& alloc, int64_t bytes);

struct SharedLayout {
  std::vector<SharedPlacement> placements;  // program order
  int64_t total = 0;  // the largest end: the dynamic shared memory to launch
  // Allocations without a constant positive shape (V20), left out.
  std::vector<const Op*> unsized;
};

// The layout of `kernel` as it stands, without reuse: an allocation with an
// `offset` (written by plan-shared-memory, or by the author) stays there;
// the others follow the last explicitly placed byte, in program order, each
// at its alignment. plan-shared-memory{reuse=never} writes exactly these
// offsets; the CUDA emitter launches with this layout and V23 checks it, so
// both count the same alignment padding.
SharedLayout LayoutWithoutReuse(const Kernel& kernel);
// The same over `allocations`, every alloc.shared of a kernel in program
// order (for a caller that has them already).
SharedLayout LayoutWithoutReuse(const std::vector<const Op*>& allocations);

// Writes LayoutWithoutReuse's offset on every shared allocation of `kernel`
// that has none: what plan-shared-memory{reuse=never} writes, for callers
// below the passes (tests of the emitter, which places nothing itself).
void WriteLayoutWithoutReuse(Kernel& kernel);

// The same rule over any list of placements (program order; those with
// `explicit_offset` keep their offset): fills in the others' offsets and
// returns the total.
int64_t PlaceWithoutReuse(std::vector<SharedPlacement>& placements);

// ---------------------------------------------------------------------------
// Occupancy on an H100 (sm_90): how many blocks of a kernel an SM holds,
// as the CUDA occupancy calculator counts them (cuda_occupancy.h; the unit
// test compares against it): warps (64 per SM), blocks (32), registers (64K
// per SM in 4 partitions, allocated per warp in units of 256), shared memory
// (228 KiB per SM, 1 KiB reserved per block, 128-byte granules) and named
// barriers (64 per SM). Dynamic shared memory beyond 48 KiB is assumed to be
// opted into (kir-run does).
struct BlockResources {
  int64_t threads = 0;
  int64_t registers = 0;     // per thread; 0: not counted
  int64_t shared_bytes = 0;  // dynamic plus static
  int barriers = 0;          // hardware barriers the kernel uses; 0: none
};

struct Occupancy {
  int blocks_per_sm = 0;
  // What limits it: "threads", "registers", "shared memory", "barriers" or
  // "blocks" (the per-SM block limit).
  std::string limited_by;
};

Occupancy BlocksPerSm(const BlockResources& resources);

// Hardware barriers `kernel` uses: the largest barrier id of its
// barrier.block (id 0), barrier.named and barrier.arrive ops, plus one; 0
// when it has none.
int BarriersUsed(const Kernel& kernel);

}  // namespace kir

#endif  // KIR_IR_SHARED_MEMORY_H_
