#include "ir/shared_memory.h"

#include <algorithm>

namespace kir {

int64_t SharedAllocationAlignment(const Op& alloc) {
  const Type& type = alloc.result()->type();
  // An align or swizzle V22 rejects (not a power of two, too large) is
  // clamped, so that layout arithmetic over an unverified kernel stays
  // defined.
  constexpr int64_t kMaxAlign = int64_t{1} << 30;
  int64_t align = std::clamp<int64_t>(alloc.align(), 1, kMaxAlign);
  align = std::max<int64_t>(align, DTypeBytes(type.dtype()));
  const int64_t swizzle = std::clamp<int64_t>(alloc.swizzle(), 0, 128);
  // The swizzle pattern repeats every 8 lines of 128 bytes; the TMA and
  // wgmma apply it to address bits, so the base must be aligned to it.
  if (swizzle > 0) align = std::max<int64_t>(align, 8 * swizzle);
  return align;
}

namespace {

// Sizes from user-written shapes and offsets saturate here instead of
// overflowing; every limit compared against is far below.
constexpr int64_t kSaturated = int64_t{1} << 62;

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum) || sum > kSaturated) return kSaturated;
  return sum;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || product > kSaturated) {
    return kSaturated;
  }
  return product;
}

}  // namespace

std::optional<int64_t> SharedAllocationBytes(const Op& alloc) {
  const Type& type = alloc.result()->type();
  int64_t elements = 1;
  for (int i = 0; i < type.rank(); ++i) {
    std::optional<int64_t> extent = type.shape()[i].AsConstant();
    if (!extent.has_value() || *extent <= 0) return std::nullopt;
    if (i + 1 == type.rank()) {
      extent = SaturatingAdd(*extent, std::max<int64_t>(alloc.pad(), 0));
    }
    elements = SaturatingMul(elements, *extent);
  }
  return SaturatingMul(elements, DTypeBytes(type.dtype()));
}

std::vector<const Op*> SharedAllocations(const Kernel& kernel) {
  std::vector<const Op*> allocs;
  Walk(kernel.body(), [&](const Op& op) {
    if (op.kind() == OpKind::kAllocShared) allocs.push_back(&op);
  });
  return allocs;
}

int64_t AlignUp(int64_t value, int64_t align) {
  return (value + align - 1) / align * align;
}

SharedPlacement PlacementOf(const Op& alloc, int64_t bytes) {
  SharedPlacement placed;
  placed.alloc = &alloc;
  placed.bytes = bytes;
  placed.align = SharedAllocationAlignment(alloc);
  if (const std::optional<int64_t> offset = alloc.offset()) {
    placed.offset = *offset;
    placed.explicit_offset = true;
  }
  return placed;
}

void WriteLayoutWithoutReuse(Kernel& kernel) {
  for (const SharedPlacement& placed : LayoutWithoutReuse(kernel).placements) {
    if (placed.explicit_offset) continue;
    const_cast<Op*>(placed.alloc)->set_offset(placed.offset);
  }
}

int64_t PlaceWithoutReuse(std::vector<SharedPlacement>& placements) {
  int64_t explicit_end = 0;
  for (const SharedPlacement& placed : placements) {
    if (placed.explicit_offset) {
      explicit_end =
          std::max(explicit_end, SaturatingAdd(placed.offset, placed.bytes));
    }
  }
  int64_t next = explicit_end;
  int64_t total = 0;
  for (SharedPlacement& placed : placements) {
    if (!placed.explicit_offset) {
      placed.offset = AlignUp(next, placed.align);
      next = SaturatingAdd(placed.offset, placed.bytes);
    }
    total = std::max(total, SaturatingAdd(placed.offset, placed.bytes));
  }
  return total;
}

SharedLayout LayoutWithoutReuse(const Kernel& kernel) {
  return LayoutWithoutReuse(SharedAllocations(kernel));
}

SharedLayout LayoutWithoutReuse(const std::vector<const Op*>& allocations) {
  SharedLayout layout;
  for (const Op* alloc : allocations) {
    std::optional<int64_t> bytes;
    if (alloc->num_results() == 1 && alloc->result()->type().is_buffer()) {
      bytes = SharedAllocationBytes(*alloc);
    }
    if (!bytes) {
      layout.unsized.push_back(alloc);
      continue;
    }
    layout.placements.push_back(PlacementOf(*alloc, *bytes));
  }
  layout.total = PlaceWithoutReuse(layout.placements);
  return layout;
}

// ---------------------------------------------------------------------------
// Occupancy.

namespace {

// sm_90, as cuda_occupancy.h describes it.
constexpr int kWarpSize = 32;
constexpr int kMaxWarpsPerSm = 64;
constexpr int kMaxBlocksPerSm = 32;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int64_t kRegistersPerSm = 65536;
constexpr int64_t kRegistersPerBlock = 65536;
constexpr int64_t kRegisterGranule = 256;  // per warp
constexpr int64_t kMaxRegistersPerThread = 256;
constexpr int64_t kSubPartitions = 4;
constexpr int64_t kSharedPerSm = 233472;           // 228 KiB
constexpr int64_t kReservedSharedPerBlock = 1024;  // the driver's
constexpr int64_t kSharedGranule = 128;
constexpr int kBarriersPerSm = 2 * kMaxBlocksPerSm;

}  // namespace

Occupancy BlocksPerSm(const BlockResources& resources) {
  Occupancy occupancy;
  occupancy.blocks_per_sm = kMaxBlocksPerSm;
  occupancy.limited_by = "blocks";
  auto limit = [&](int64_t blocks, const char* by) {
    if (blocks < occupancy.blocks_per_sm) {
      occupancy.blocks_per_sm = static_cast<int>(std::max<int64_t>(blocks, 0));
      occupancy.limited_by = by;
    }
  };
  if (resources.threads < 1 || resources.threads > kMaxThreadsPerBlock) {
    limit(0, "threads");
    return occupancy;
  }
  const int64_t warps = (resources.threads + kWarpSize - 1) / kWarpSize;
  limit(kMaxWarpsPerSm / warps, "threads");
  if (resources.registers > 0) {
    const int64_t per_warp =
        AlignUp(resources.registers * kWarpSize, kRegisterGranule);
    // The hardware checks a block as if its warps filled every partition.
    const int64_t assumed = per_warp * AlignUp(warps, kSubPartitions);
    if (resources.registers > kMaxRegistersPerThread ||
        assumed > kRegistersPerBlock || per_warp * warps > kRegistersPerBlock) {
      limit(0, "registers");
    } else {
      const int64_t warps_per_partition =
          kRegistersPerSm / kSubPartitions / per_warp;
      limit(warps_per_partition * kSubPartitions / warps, "registers");
    }
  }
  const int64_t shared =
      AlignUp(resources.shared_bytes + kReservedSharedPerBlock, kSharedGranule);
  if (resources.shared_bytes > kMaxSharedBytes) {
    limit(0, "shared memory");
  } else {
    limit(kSharedPerSm / shared, "shared memory");
  }
  if (resources.barriers > 0) {
    limit(kBarriersPerSm / resources.barriers, "barriers");
  }
  return occupancy;
}

int BarriersUsed(const Kernel& kernel) {
  int used = 0;
  Walk(kernel.body(), [&](const Op& op) {
    switch (op.kind()) {
      case OpKind::kBarrierBlock:
        used = std::max(used, 1);
        break;
      case OpKind::kBarrierNamed:
      case OpKind::kBarrierArrive:
      case OpKind::kBarrierRed:
        used = std::max<int>(used, static_cast<int>(op.id()) + 1);
        break;
      default:
        break;
    }
  });
  return used;
}

}  // namespace kir
