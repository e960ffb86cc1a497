// Unit tests for serialize-split-k: the split-K example, lowered by the
// default pipeline in each mode and work type, has no splitk left,
// verifies, satisfies the barrier and fence checkers, emits CUDA with the
// semaphore (or counter) and work buffer as workspaces (and, in the TMA
// modes, the tensor map over the work buffer, the 5-D TMA reduction and a
// wait without .read), and lowers again to the same text; a kernel
// without splitk is left alone.
#include "passes/serialize_split_k.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/sync_check.h"
#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "parser/parser.h"
#include "passes/pipeline.h"
#include "passes/test_helpers.h"
#include "printer/cuda_emitter.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

bool HasSplitK(const Kernel& kernel) {
  bool found = false;
  Walk(kernel.body(),
       [&](const Op& op) { found = found || op.kind() == OpKind::kSplitK; });
  return found;
}

struct ModeAndWork {
  const char* mode;
  const char* work;
};

class SplitKExampleTest : public testing::TestWithParam<ModeAndWork> {};

TEST_P(SplitKExampleTest, DefaultPipelineLowersACheckedKernel) {
  std::unique_ptr<Module> module =
      ParseForTest(ReadTestdata("examples/splitk_gemm.kir"));
  ASSERT_NE(module, nullptr);
  const std::string mode = GetParam().mode;
  const std::string pipeline = absl::StrCat(
      "canonicalize,serialize-split-k{mode=", mode, ",work=", GetParam().work,
      "},circular-buffer,uniform-predicates,insert-async-waits,"
      "plan-shared-memory,insert-syncs,insert-proxy-fences,dce");
  ASSERT_TRUE(RunPasses(*module, pipeline).ok());
  const Kernel& kernel = *module->kernels[0];
  EXPECT_FALSE(HasSplitK(kernel));
  EXPECT_TRUE(Verify(kernel).ok()) << Verify(kernel);
  EXPECT_TRUE(CheckSyncs(kernel).ok()) << CheckSyncs(kernel);
  EXPECT_TRUE(CheckProxyFences(kernel, FencePlacement::kWriters).ok())
      << CheckProxyFences(kernel, FencePlacement::kWriters);
  absl::StatusOr<std::string> cuda = EmitCuda(*module);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  // The semaphore (or arrival counter) and the work buffer.
  EXPECT_TRUE(
      absl::StrContains(*cuda, mode == "tma-atomic" ? "sk_count" : "sk_sem"))
      << *cuda;
  EXPECT_TRUE(absl::StrContains(*cuda, "sk_work")) << *cuda;
  if (mode != "serial") {
    // One TMA reduction per tile through the map over the work buffer,
    // waited for without .read before the release.
    EXPECT_TRUE(absl::StrContains(*cuda, "kir_tensor_map v_sk_work_map"))
        << *cuda;
    EXPECT_TRUE(absl::StrContains(*cuda, "cp.reduce.async.bulk.tensor.5d"))
        << *cuda;
    EXPECT_TRUE(absl::StrContains(*cuda, "cp.async.bulk.wait_group %0;"))
        << *cuda;
    EXPECT_TRUE(absl::StrContains(*cuda, "kir_bulk_wait<0>();")) << *cuda;
    EXPECT_FALSE(absl::StrContains(*cuda, "cp.async.bulk.wait_group.read"))
        << *cuda;
  }

  // A second run finds nothing to lower.
  const std::string once = PrintModule(*module);
  ASSERT_TRUE(RunPasses(*module, "serialize-split-k").ok());
  EXPECT_EQ(PrintModule(*module), once);
}

INSTANTIATE_TEST_SUITE_P(ModesAndWorkTypes, SplitKExampleTest,
                         testing::Values(ModeAndWork{"serial", "f32"},
                                         ModeAndWork{"serial", "bf16"},
                                         ModeAndWork{"serial", "f16"},
                                         ModeAndWork{"tma-serial", "f32"},
                                         ModeAndWork{"tma-serial", "bf16"},
                                         ModeAndWork{"tma-atomic", "f32"},
                                         ModeAndWork{"tma-atomic", "f16"}),
                         [](const testing::TestParamInfo<ModeAndWork>& info) {
                           std::string name = absl::StrCat(info.param.mode, "_",
                                                           info.param.work);
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

// Each TMA mode adds exactly one tensor map parameter, over the work
// buffer it allocates, and keeps the one splitk's counters.
TEST(SerializeSplitKTest, TmaModesMapTheirWorkBuffer) {
  for (const char* mode : {"tma-serial", "tma-atomic"}) {
    std::unique_ptr<Module> module =
        ParseForTest(ReadTestdata("examples/splitk_gemm.kir"));
    ASSERT_NE(module, nullptr);
    const size_t params = module->kernels[0]->params().size();
    ASSERT_TRUE(
        RunPasses(*module, absl::StrCat("serialize-split-k{mode=", mode, "}"))
            .ok());
    const Kernel& kernel = *module->kernels[0];
    ASSERT_EQ(kernel.params().size(), params + 1) << mode;
    const Param& map = kernel.params().back();
    EXPECT_EQ(map.kind, Param::Kind::kTensorMap);
    ASSERT_NE(map.tensor, nullptr);
    EXPECT_EQ(map.tensor->name(), "sk_work");
    EXPECT_EQ(map.tensor->defining_op()->kind(), OpKind::kAllocWorkspace);
    EXPECT_EQ(map.value->type().box(), (std::vector<int64_t>{1, 1, 16, 8, 32}))
        << mode;
    EXPECT_TRUE(Verify(kernel).ok()) << Verify(kernel);
  }
}

TEST(SerializeSplitKTest, KernelWithoutSplitKIsUnchanged) {
  std::unique_ptr<Module> module =
      ParseForTest(ReadTestdata("examples/transpose.kir"));
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  ASSERT_TRUE(RunPasses(*module, "serialize-split-k").ok());
  EXPECT_EQ(PrintModule(*module), before);
}

}  // namespace
}  // namespace kir
