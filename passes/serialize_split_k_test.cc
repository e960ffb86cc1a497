// Unit tests for serialize-split-k: the split-K example, lowered alone and
// by the default pipeline in each work type, has no splitk left, verifies,
// satisfies the barrier and fence checkers, emits CUDA with the semaphore
// and work buffer as workspaces, and lowers again to the same text; a
// kernel without splitk is left alone.
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

class SplitKExampleTest : public testing::TestWithParam<const char*> {};

TEST_P(SplitKExampleTest, DefaultPipelineLowersACheckedKernel) {
  std::unique_ptr<Module> module =
      Parse(ReadTestdata("examples/splitk_gemm.kir"));
  ASSERT_NE(module, nullptr);
  const std::string pipeline =
      absl::StrCat("canonicalize,serialize-split-k{work=", GetParam(),
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
  // The semaphore spin, the releasing reduction and the reset.
  EXPECT_TRUE(absl::StrContains(*cuda, "sk_sem")) << *cuda;
  EXPECT_TRUE(absl::StrContains(*cuda, "sk_work")) << *cuda;

  // A second run finds nothing to lower.
  const std::string once = PrintModule(*module);
  ASSERT_TRUE(RunPasses(*module, "serialize-split-k").ok());
  EXPECT_EQ(PrintModule(*module), once);
}

INSTANTIATE_TEST_SUITE_P(WorkTypes, SplitKExampleTest,
                         testing::Values("f32", "bf16", "f16"));

TEST(SerializeSplitKTest, KernelWithoutSplitKIsUnchanged) {
  std::unique_ptr<Module> module =
      Parse(ReadTestdata("examples/transpose.kir"));
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  ASSERT_TRUE(RunPasses(*module, "serialize-split-k").ok());
  EXPECT_EQ(PrintModule(*module), before);
}

}  // namespace
}  // namespace kir
