// Tests for shared-memory layouts, the occupancy model (against CUDA's own
// occupancy calculator, cuda_occupancy.h, where the toolkit is installed)
// and the lifetimes and reusing layouts of ir/shared_memory_plan.h.
#include "ir/shared_memory.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/shared_memory_plan.h"
#include "parser/parser.h"
#include "parser/testing/parse_for_test.h"

#if defined(KIR_HAVE_CUDA_OCCUPANCY)
#include <cuda_occupancy.h>
#endif

namespace kir {
namespace {

const Op* Alloc(const Kernel& kernel, absl::string_view name) {
  for (const Op* alloc : SharedAllocations(kernel)) {
    if (alloc->result()->name() == name) return alloc;
  }
  ADD_FAILURE() << "no allocation %" << name;
  return nullptr;
}

TEST(SharedLayoutTest, ExplicitOffsetsStayAndTheRestFollowInProgramOrder) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k() block(128) {
  %bars = alloc.shared {align = 8, offset = 0} : shared mbarrier[4]
  %tile = alloc.shared {align = 128, swizzle = 128} : shared bf16[64, 64]
  %fixed = alloc.shared {offset = 512} : shared f32[16]
  %odd = alloc.shared {pad = 3} : shared i32[3, 5]
}
)");
  const SharedLayout layout = LayoutWithoutReuse(*module->kernels[0]);
  ASSERT_EQ(layout.placements.size(), 4u);
  // %fixed ends at 576; the swizzled tile is 1024-aligned.
  EXPECT_EQ(layout.placements[0].offset, 0);
  EXPECT_EQ(layout.placements[1].offset, 1024);
  EXPECT_EQ(layout.placements[1].align, 1024);
  EXPECT_EQ(layout.placements[2].offset, 512);
  EXPECT_TRUE(layout.placements[2].explicit_offset);
  EXPECT_EQ(layout.placements[3].offset, 9216);
  EXPECT_EQ(layout.placements[3].bytes, 3 * 8 * 4);  // pad per row
  EXPECT_EQ(layout.total, 9216 + 96);
}

TEST(SharedLayoutTest, HugeShapesAndOffsetsSaturateInsteadOfOverflowing) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k() block(32) {
  %a = alloc.shared : shared f32[4611686018427387904, 4611686018427387904]
  %b = alloc.shared {offset = 9223372036854775792} : shared f32[4]
}
)");
  const SharedLayout layout = LayoutWithoutReuse(*module->kernels[0]);
  ASSERT_EQ(layout.placements.size(), 2u);
  EXPECT_GT(layout.placements[0].bytes, kMaxSharedBytes);
  EXPECT_GT(layout.total, kMaxSharedBytes);
}

// Hardware barriers in use: barrier 0 for barrier.block, and every named
// barrier id up to the highest, barrier.red's included.
TEST(OccupancyTest, BarriersUsedCountsEveryBarrierOp) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k() block(128) {
  %c0 = const 0 : index
  %tid = thread.id x : index
  %first = cmp eq %tid, %c0 : i1
  barrier.block
  barrier.named {id = 2, threads = 128}
  %any = barrier.red or %first {id = 5, threads = 128} : i1
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(BarriersUsed(*module->kernels[0]), 6);
}

TEST(OccupancyTest, KnownKernels) {
  // The warp-specialized GEMM: 384 threads, 168 registers, 131136 bytes.
  Occupancy gemm = BlocksPerSm({384, 168, 131136, 1});
  EXPECT_EQ(gemm.blocks_per_sm, 1);
  // The epilogue: 128 threads, 40 registers, 8 KiB: 12 blocks (a warp takes
  // 1280 registers, a partition of 16K holds 12 warps).
  Occupancy epilogue = BlocksPerSm({128, 40, 8192, 1});
  EXPECT_EQ(epilogue.blocks_per_sm, 12);
  EXPECT_EQ(epilogue.limited_by, "registers");
  EXPECT_EQ(BlocksPerSm({128, 0, 8192, 1}).blocks_per_sm, 16);
  EXPECT_EQ(BlocksPerSm({128, 0, 8192, 1}).limited_by, "threads");
  // Two 100 KiB blocks fit in 228 KiB with their 1 KiB reservations.
  EXPECT_EQ(BlocksPerSm({128, 0, 102400, 0}).blocks_per_sm, 2);
  EXPECT_EQ(BlocksPerSm({128, 0, 115712, 0}).blocks_per_sm, 2);
  EXPECT_EQ(BlocksPerSm({128, 0, 115713, 0}).blocks_per_sm, 1);
  EXPECT_EQ(BlocksPerSm({128, 0, 115713, 0}).limited_by, "shared memory");
  EXPECT_EQ(BlocksPerSm({128, 0, kMaxSharedBytes + 1, 0}).blocks_per_sm, 0);
  EXPECT_EQ(BlocksPerSm({1025, 0, 0, 0}).blocks_per_sm, 0);
  EXPECT_EQ(BlocksPerSm({32, 0, 0, 0}).blocks_per_sm, 32);
  EXPECT_EQ(BlocksPerSm({32, 0, 0, 0}).limited_by, "blocks");
  EXPECT_EQ(BlocksPerSm({32, 0, 0, 8}).blocks_per_sm, 8);
  EXPECT_EQ(BlocksPerSm({256, 255, 0, 1}).blocks_per_sm, 1);
}

#if defined(KIR_HAVE_CUDA_OCCUPANCY)
// The model against the CUDA toolkit's occupancy calculator for an H100
// (sm_90, 132 SMs), over block shapes, register counts, shared memory and
// barrier counts, with dynamic shared memory opted in as kir-run does.
TEST(OccupancyTest, AgreesWithCudaOccupancyCalculator) {
  cudaOccDeviceProp device;
  device.computeMajor = 9;
  device.computeMinor = 0;
  device.maxThreadsPerBlock = 1024;
  device.maxThreadsPerMultiprocessor = 2048;
  device.regsPerBlock = 65536;
  device.regsPerMultiprocessor = 65536;
  device.warpSize = 32;
  device.sharedMemPerBlock = 49152;
  device.sharedMemPerMultiprocessor = 233472;
  device.numSms = 132;
  device.sharedMemPerBlockOptin = 232448;
  device.reservedSharedMemPerBlock = 1024;
  cudaOccDeviceState state;
  int compared = 0;
  for (int threads :
       {1, 32, 64, 96, 128, 160, 192, 256, 288, 384, 512, 640, 768, 1024}) {
    for (int registers : {0, 16, 24, 32, 40, 48, 64, 72, 96, 128, 160, 168, 200,
                          232, 255, 256}) {
      for (int64_t shared :
           {0, 1, 1000, 8192, 16384, 49152, 49153, 65536, 100000, 113664,
            115712, 116736, 131136, 196672, 214016, 232448, 232449}) {
        for (int barriers : {0, 1, 2, 3, 4, 16}) {
          cudaOccFuncAttributes function;
          function.maxThreadsPerBlock = 1024;
          function.numRegs = registers;
          function.sharedSizeBytes = 0;
          function.partitionedGCConfig = PARTITIONED_GC_OFF;
          function.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
          function.maxDynamicSharedSizeBytes =
              static_cast<size_t>(std::max<int64_t>(shared, 49152));
          function.numBlockBarriers = barriers;
          cudaOccResult result;
          ASSERT_EQ(cudaOccMaxActiveBlocksPerMultiprocessor(
                        &result, &device, &function, &state, threads,
                        static_cast<size_t>(shared)),
                    CUDA_OCC_SUCCESS);
          const Occupancy model =
              BlocksPerSm({threads, registers, shared, barriers});
          EXPECT_EQ(model.blocks_per_sm, result.activeBlocksPerMultiprocessor)
              << threads << " threads, " << registers << " registers, "
              << shared << " bytes, " << barriers << " barriers";
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 20000);
}
#else
TEST(OccupancyTest, AgreesWithCudaOccupancyCalculator) {
  GTEST_SKIP() << "cuda_occupancy.h is not available (no CUDA toolkit)";
}
#endif

// ---------------------------------------------------------------------------
// Lifetimes.

std::string Lifetime(const Kernel& kernel, const SharedLifetimes& lifetimes,
                     absl::string_view name) {
  return lifetimes.Describe(Alloc(kernel, name));
}

TEST(SharedLifetimesTest, AccessesWidenToTheTopLevelOpAroundThem) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k(%out: global f32[128]) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c4 = const 4 : index
  %a = alloc.shared : shared f32[128]
  %b = alloc.shared : shared f32[128]
  %c = alloc.shared : shared f32[128]
  %unused = alloc.shared : shared f32[128]
  %tid = thread.id x : index
  %v = const 1.0 : f32
  for %i = %c0 to %c4 step %c1 {
    store %a[%tid], %v
    %x = load %a[%tid] : f32
    store %b[%tid], %x
  }
  %y = load %b[%tid] : f32
  store %c[%tid], %y
  %z = load %c[%tid] : f32
  store %out[%tid], %z
}
)");
  const Kernel& kernel = *module->kernels[0];
  const SharedLifetimes lifetimes(kernel, {});
  EXPECT_EQ(Lifetime(kernel, lifetimes, "a"), "top [9, 9]");
  EXPECT_EQ(Lifetime(kernel, lifetimes, "b"), "top [9, 10]");
  EXPECT_EQ(Lifetime(kernel, lifetimes, "c"), "top [11, 12]");
  EXPECT_EQ(Lifetime(kernel, lifetimes, "unused"), "never accessed");
  EXPECT_FALSE(lifetimes.Disjoint(Alloc(kernel, "a"), Alloc(kernel, "b")));
  EXPECT_TRUE(lifetimes.Disjoint(Alloc(kernel, "a"), Alloc(kernel, "c")));
  EXPECT_TRUE(lifetimes.Disjoint(Alloc(kernel, "b"), Alloc(kernel, "c")));
  EXPECT_TRUE(lifetimes.Disjoint(Alloc(kernel, "unused"), Alloc(kernel, "c")));
}

// A TMA store's read lasts until the wait that retires its group; an
// mbarrier-completed load until the wait on its barrier.
constexpr char kAsyncKernel[] = R"(
kernel @k sizes(%n) (%x: global f32[%n, 32], %y: global f32[%n, 32],
    %x_map: tensormap f32[32, 32] of %x, %y_map: tensormap f32[32, 32] of %y)
    block(128) {
  %c0 = const 0 : index
  %in = alloc.shared {align = 128} : shared f32[32, 32]
  %out = alloc.shared {align = 128} : shared f32[32, 32]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %tid = thread.id x : index
  %t0 = cmp eq %tid, %c0 : i1
  if %t0 {
    mbarrier.init %bar[%c0] {count = 1}
    mbarrier.arrive_tx %bar[%c0] {bytes = 4096}
    tma.load %in[%c0, %c0], %x_map[%c0, %c0], %bar[%c0]
  }
  %p = const 0 : index
  mbarrier.wait %bar[%c0], %p
  %v = load %in[%c0, %c0] : f32
  if %t0 {
    store %out[%c0, %c0], %v
    tma.store %y_map[%c0, %c0], %out[%c0, %c0]
    %t = bulk.commit : token<bulk>
  }
  %w = const 2.0 : f32
  if %t0 {
    bulk.wait %t {read}
  }
}
)";

TEST(SharedLifetimesTest, AsyncAccessesLastUntilTheirWaits) {
  std::unique_ptr<Module> module = ParseForTest(kAsyncKernel);
  const Kernel& kernel = *module->kernels[0];
  const SharedLifetimes lifetimes(kernel, {});
  // The load into %in at 6 ends at the wait at 8 (and the read at 9).
  EXPECT_EQ(Lifetime(kernel, lifetimes, "in"), "top [6, 9]");
  // The store's read of %out at 10 lasts until the wait at 12.
  EXPECT_EQ(Lifetime(kernel, lifetimes, "out"), "top [10, 12]");
  EXPECT_TRUE(lifetimes.Disjoint(Alloc(kernel, "in"), Alloc(kernel, "out")));
  EXPECT_FALSE(lifetimes.Disjoint(Alloc(kernel, "bar"), Alloc(kernel, "out")));
}

TEST(SharedLifetimesTest, UncommittedAsyncAccessesLiveToTheEndUnlessAsked) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k sizes(%n) (%y: global f32[%n, 32],
    %y_map: tensormap f32[32, 32] of %y) block(128) {
  %c0 = const 0 : index
  %out = alloc.shared {align = 128} : shared f32[32, 32]
  %tid = thread.id x : index
  %t0 = cmp eq %tid, %c0 : i1
  if %t0 {
    tma.store %y_map[%c0, %c0], %out[%c0, %c0]
  }
  %v = const 1.0 : f32
  %w = const 2.0 : f32
}
)");
  const Kernel& kernel = *module->kernels[0];
  EXPECT_EQ(Lifetime(kernel, SharedLifetimes(kernel, {}), "out"), "top [4, 6]");
  SharedLifetimeOptions unlowered;
  unlowered.uncommitted_async_complete = true;
  EXPECT_EQ(Lifetime(kernel, SharedLifetimes(kernel, unlowered), "out"),
            "top [4, 4]");
}

// Roles: a load one role issues and another waits for is live in the other
// role from its start to that wait; a role between two live points holds
// the allocation throughout.
TEST(SharedLifetimesTest, RolesAndStageLoads) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k sizes(%n) (%x: global f32[%n, 32], %out: global f32[256],
    %x_map: tensormap f32[32, 32] of %x) block(256) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c4 = const 4 : index
  %ring = alloc.shared {align = 128} : shared f32[32, 32]
  %late = alloc.shared {align = 128} : shared f32[32, 32]
  %long = alloc.shared {align = 128} : shared f32[32, 32]
  %full = alloc.shared {align = 8} : shared mbarrier[1]
  %tid = thread.id x : index
  %t0 = cmp eq %tid, %c0 : i1
  %v = const 1.0 : f32
  store %long[%c0, %c0], %v
  role @producer warps[0, 4) {
    if %t0 {
      mbarrier.arrive_tx %full[%c0] {bytes = 4096}
      tma.load %ring[%c0, %c0], %x_map[%c0, %c0], %full[%c0]
    }
  }
  role @consumer warps[4, 8) {
    %p = const 0 : index
    %u = const 1 : index
    mbarrier.wait %full[%c0], %p
    %r = load %ring[%c0, %c1] : f32
    %w = const 3 : index
    store %late[%c0, %c0], %r
    %q = load %late[%c0, %c0] : f32
    store %out[%c0], %q
  }
  %z = load %long[%c0, %c0] : f32
}
)");
  const Kernel& kernel = *module->kernels[0];
  const SharedLifetimes lifetimes(kernel, {});
  // The producer never waits: the load may be in flight to its end and
  // after it; the consumer has it until its wait, then reads it.
  EXPECT_EQ(Lifetime(kernel, lifetimes, "ring"),
            "top [11, 13], @producer [0, 0], @consumer [0, 3]");
  EXPECT_EQ(Lifetime(kernel, lifetimes, "late"),
            "top [12, 12], @consumer [5, 6]");
  EXPECT_EQ(Lifetime(kernel, lifetimes, "long"),
            "top [10, 13], @producer [0, 0], @consumer [0, 7]");
  EXPECT_TRUE(lifetimes.Disjoint(Alloc(kernel, "ring"), Alloc(kernel, "late")));
  EXPECT_FALSE(
      lifetimes.Disjoint(Alloc(kernel, "long"), Alloc(kernel, "late")));
}

TEST(SharedLayoutPlanTest, LargestFirstLowestOffsetAndFallback) {
  std::unique_ptr<Module> module = ParseForTest(R"(
kernel @k(%out: global f32[128]) block(128) {
  %small = alloc.shared : shared f32[128]
  %big = alloc.shared {align = 1024} : shared f32[1024]
  %tid = thread.id x : index
  %v = const 1.0 : f32
  store %big[%tid], %v
  %x = load %big[%tid] : f32
  store %small[%tid], %x
  %y = load %small[%tid] : f32
  store %out[%tid], %y
}
)");
  const Kernel& kernel = *module->kernels[0];
  const SharedLifetimes lifetimes(kernel, {});
  // %big lives at [4, 5] and %small at [6, 7]: largest first, both at 0.
  SharedMemoryRequest request;
  SharedLayoutPlan plan = PlanSharedLayout(kernel, lifetimes, request);
  ASSERT_EQ(plan.aliased.size(), 1u);
  EXPECT_EQ(plan.placements[0].offset, 0);
  EXPECT_EQ(plan.placements[1].offset, 0);
  EXPECT_EQ(plan.total, 4096);
  EXPECT_EQ(plan.total_without_reuse, 1024 + 4096);  // %big 1024-aligned

  // Kept apart (no ordering found), the layout is the program-order one.
  request.kept_apart.insert({Alloc(kernel, "small"), Alloc(kernel, "big")});
  plan = PlanSharedLayout(kernel, lifetimes, request);
  EXPECT_TRUE(plan.aliased.empty());
  EXPECT_EQ(plan.placements[0].offset, 0);
  EXPECT_EQ(plan.placements[1].offset, 1024);
  EXPECT_EQ(plan.total, plan.total_without_reuse);

  // A variant: %big twice as large, plus an added 64-byte allocation
  // (live throughout, never shared), placed after the others.
  request.kept_apart.clear();
  request.bytes[Alloc(kernel, "big")->result()] = 8192;
  request.added = {{64, 8}};
  plan = PlanSharedLayout(kernel, lifetimes, request);
  EXPECT_EQ(plan.total_without_reuse, 1024 + 8192 + 64);
  EXPECT_EQ(plan.total, 8192 + 64);
  const SharedMemoryEstimate estimate =
      EstimateSharedMemory(kernel, request, 128, 0);
  EXPECT_EQ(estimate.bytes, plan.total);
  EXPECT_EQ(estimate.bytes_without_reuse, plan.total_without_reuse);
  EXPECT_EQ(estimate.occupancy.blocks_per_sm, 16);
  request.reuse = SharedReuse::kNever;
  EXPECT_EQ(PlanSharedLayout(kernel, lifetimes, request).total,
            1024 + 8192 + 64);
  // Without reuse no lifetime is read: the plan without them is the same.
  const SharedLayoutPlan with = PlanSharedLayout(kernel, lifetimes, request);
  const SharedLayoutPlan without =
      PlanSharedLayoutWithoutReuse(kernel, request);
  EXPECT_EQ(without.total, with.total);
  EXPECT_EQ(without.total_without_reuse, with.total_without_reuse);
  ASSERT_EQ(without.placements.size(), with.placements.size());
  for (size_t i = 0; i < with.placements.size(); ++i) {
    EXPECT_EQ(without.placements[i].alloc, with.placements[i].alloc);
    EXPECT_EQ(without.placements[i].offset, with.placements[i].offset);
  }
  EXPECT_TRUE(without.aliased.empty());
}

}  // namespace
}  // namespace kir
