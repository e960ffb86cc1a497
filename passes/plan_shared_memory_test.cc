// Unit tests for plan-shared-memory: the examples, lowered in every reuse
// mode (and the GEMM whose epilogue reuses its main loop in both circular
// buffering modes and several stage counts), satisfy the barrier and fence
// checkers, launch with the shared memory the pass reports, and plan again
// to the same text; circular-buffer's estimate equals the pass's plan;
// option errors.
#include "passes/plan_shared_memory.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/sync_check.h"
#include "gtest/gtest.h"
#include "ir/shared_memory.h"
#include "ir/shared_memory_plan.h"
#include "parser/parser.h"
#include "passes/pipeline.h"
#include "passes/test_helpers.h"
#include "printer/cuda_emitter.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

// Runs plan-shared-memory on every kernel of `module` with `options`,
// returning its counters (of the last kernel).
absl::StatusOr<PassStatistics::Counters> Plan(
    Module& module, std::vector<std::pair<std::string, std::string>> options) {
  PassStatistics stats;
  for (auto& kernel : module.kernels) {
    PassStatistics kernel_stats;
    PassContext kernel_context{kernel_stats};
    absl::Status status = PlanSharedMemory(
        *kernel, PassOptions(options, "plan-shared-memory"), kernel_context);
    if (!status.ok()) return status;
    stats = kernel_stats;
  }
  return stats.counters();
}

struct Case {
  const char* file;
  const char* circular_buffer;  // options of circular-buffer
  const char* reuse;
  // 0: fits; otherwise the bytes of the error the pass must report.
  int64_t over_limit = 0;
};

std::string Name(const Case& c) {
  std::string name = absl::StrCat(c.file, "_", c.circular_buffer, "_", c.reuse);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

class ReuseSweepTest : public ::testing::TestWithParam<Case> {};

// The lowered kernel is ordered and fenced as the checkers define it (the
// aliasing included), launches with exactly the bytes the pass reports,
// and a second planning changes nothing.
TEST_P(ReuseSweepTest, LowersCheckedAndLaunchesWithTheReportedBytes) {
  const Case& c = GetParam();
  std::unique_ptr<Module> module = ParseForTest(ReadTestdata(c.file));
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(
      RunPasses(*module,
                absl::StrCat("canonicalize,circular-buffer", c.circular_buffer,
                             ",uniform-predicates,insert-async-waits"))
          .ok());
  absl::StatusOr<PassStatistics::Counters> stats =
      Plan(*module, {{"reuse", c.reuse}});
  if (c.over_limit != 0) {
    ASSERT_FALSE(stats.ok());
    EXPECT_TRUE(absl::StrContains(
        stats.status().message(),
        absl::StrCat("needs ", c.over_limit, " bytes of shared memory")))
        << stats.status();
    return;
  }
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_TRUE(RunPasses(*module, "insert-syncs,insert-proxy-fences,dce").ok());
  const Kernel& kernel = *module->kernels[0];
  EXPECT_TRUE(CheckSyncs(kernel).ok()) << CheckSyncs(kernel);
  EXPECT_TRUE(CheckProxyFences(kernel, FencePlacement::kWriters).ok())
      << CheckProxyFences(kernel, FencePlacement::kWriters);
  for (const Op* alloc : SharedAllocations(kernel)) {
    EXPECT_NE(alloc->FindAttr("offset"), nullptr);
  }
  absl::StatusOr<CudaKernelAbi> abi = GetCudaKernelAbi(kernel);
  ASSERT_TRUE(abi.ok()) << abi.status();
  EXPECT_EQ(abi->dynamic_smem_bytes, stats->at("bytes"));
  EXPECT_LE(stats->at("bytes"), stats->at("bytes-without-reuse"));
  if (std::string(c.reuse) == "never") {
    EXPECT_EQ(stats->at("aliased-pairs"), 0);
    EXPECT_EQ(stats->at("bytes"), stats->at("bytes-without-reuse"));
  }

  const std::string once = PrintModule(*module);
  ASSERT_TRUE(RunPasses(*module, "plan-shared-memory").ok());
  EXPECT_EQ(PrintModule(*module), once);
}

constexpr char kGemm[] = "passes/plan-shared-memory/gemm.kir";

INSTANTIATE_TEST_SUITE_P(
    Examples, ReuseSweepTest,
    ::testing::Values(Case{"examples/epilogue.kir", "", "always"},
                      Case{"examples/epilogue.kir", "", "never"},
                      Case{"examples/transpose.kir", "", "always"},
                      Case{"examples/transpose.kir", "", "auto"},
                      Case{"examples/ws_gemm.kir", "", "always"},
                      Case{"examples/ws_gemm.kir", "{mode=pipelined}",
                           "always"},
                      Case{"passes/circular-buffer/rowsum.kir", "", "always"},
                      Case{"passes/circular-buffer/rowsum.kir",
                           "{mode=warp-specialized}", "always"},
                      Case{kGemm, "", "auto"}, Case{kGemm, "", "always"},
                      Case{kGemm, "", "never", 263168},
                      Case{kGemm, "{mode=pipelined}", "auto"},
                      Case{kGemm, "{stages=3}", "never"},
                      Case{kGemm, "{stages=3}", "auto"},
                      Case{kGemm, "{stages=2,producer=warp}", "always"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return Name(info.param);
    });

// What circular-buffer asks before it grows the GEMM's slices to 4 stages
// is what the pass then lays out: 196672 bytes sharing, 263168 without.
TEST(EstimateTest, CircularBufferAsksWhatThePassLaysOut) {
  std::unique_ptr<Module> unlowered = ParseForTest(ReadTestdata(kGemm));
  ASSERT_NE(unlowered, nullptr);
  const Kernel& kernel = *unlowered->kernels[0];
  SharedMemoryRequest request;
  for (const Op* alloc : SharedAllocations(kernel)) {
    const std::string& name = alloc->result()->name();
    if (name == "sa" || name == "sb") {
      request.bytes[alloc->result()] = *SharedAllocationBytes(*alloc) * 4;
    } else if (name == "bar") {
      request.removed.insert(alloc->result());
    }
  }
  request.added = {{32, 8}, {32, 8}};
  request.added_after = SharedAllocations(kernel)[1]->result();  // %sb
  const SharedMemoryEstimate estimate =
      EstimateSharedMemory(kernel, request, 384, 168);
  EXPECT_EQ(estimate.bytes, 196672);
  EXPECT_EQ(estimate.bytes_without_reuse, 263168);
  EXPECT_EQ(estimate.occupancy.blocks_per_sm, 1);
  EXPECT_EQ(estimate.occupancy_without_reuse.blocks_per_sm, 0);

  std::unique_ptr<Module> lowered = ParseForTest(ReadTestdata(kGemm));
  ASSERT_TRUE(RunPasses(*lowered, "default").ok());
  absl::StatusOr<CudaKernelAbi> abi = GetCudaKernelAbi(*lowered->kernels[0]);
  ASSERT_TRUE(abi.ok()) << abi.status();
  EXPECT_EQ(abi->dynamic_smem_bytes, estimate.bytes);
}

TEST(PlanSharedMemoryTest, RejectsBadOptions) {
  std::unique_ptr<Module> module =
      ParseForTest(ReadTestdata("examples/epilogue.kir"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<PassStatistics::Counters> stats =
      Plan(*module, {{"reuse", "maybe"}});
  ASSERT_FALSE(stats.ok());
  EXPECT_TRUE(absl::StrContains(stats.status().message(),
                                "expects auto, always or never"));
  stats = Plan(*module, {{"regs", "-1"}});
  ASSERT_FALSE(stats.ok());
  EXPECT_TRUE(
      absl::StrContains(stats.status().message(), "an integer from 0 to 256"));
}

}  // namespace
}  // namespace kir
