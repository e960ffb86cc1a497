// Tests for the analysis cache: built once, dropped unless preserved (with
// what was built from it), and checked against a fresh build.
#include "analysis/analysis_manager.h"

#include <memory>
#include <string>

#include "analysis/conflicts.h"
#include "analysis/thread_analysis.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "parser/testing/parse_for_test.h"

namespace kir {
namespace {

constexpr char kKernel[] = R"(
kernel @k() block(128) {
  %c0 = const 0 : index
  %c32 = const 32 : index
  %f = const 1.0 : f32
  %tx = thread.id x : index
  %s = alloc.shared : shared f32[128]
  %low = cmp lt %tx, %c32 : i1
  if %low {
    store %s[%tx], %f
  }
  %v = load %s[%c0] : f32
})";

TEST(AnalysisManagerTest, BuildsOnceAndCountsHits) {
  std::unique_ptr<Module> module = ParseForTest(kKernel);
  ASSERT_NE(module, nullptr);
  AnalysisManager analyses(*module->kernels[0]);
  ThreadAnalysis& first = analyses.Get<ThreadAnalysis>();
  ThreadAnalysis& second = analyses.Get<ThreadAnalysis>();
  EXPECT_EQ(&first, &second);
  const auto counts = analyses.TakeCounts();
  EXPECT_EQ(counts.at("thread-analysis").builds, 1);
  EXPECT_EQ(counts.at("thread-analysis").hits, 1);
  EXPECT_TRUE(analyses.TakeCounts().empty());
}

TEST(AnalysisManagerTest, DroppingAnAnalysisDropsWhatWasBuiltFromIt) {
  std::unique_ptr<Module> module = ParseForTest(kKernel);
  ASSERT_NE(module, nullptr);
  AnalysisManager analyses(*module->kernels[0]);
  analyses.Get<ConflictAnalysis>();  // builds the thread analysis too
  EXPECT_EQ(analyses.CachedNames(),
            (std::vector<std::string>{"thread-analysis", "conflict-analysis"}));

  PreservedAnalyses conflicts_only;
  conflicts_only.Preserve<ConflictAnalysis>();
  analyses.Invalidate(conflicts_only);
  EXPECT_EQ(analyses.GetCached<ThreadAnalysis>(), nullptr);
  EXPECT_EQ(analyses.GetCached<ConflictAnalysis>(), nullptr);

  analyses.Get<ConflictAnalysis>();
  PreservedAnalyses threads_only;
  threads_only.Preserve<ThreadAnalysis>();
  analyses.Invalidate(threads_only);
  EXPECT_NE(analyses.GetCached<ThreadAnalysis>(), nullptr);
  EXPECT_EQ(analyses.GetCached<ConflictAnalysis>(), nullptr);

  analyses.Invalidate(PreservedAnalyses::All());
  EXPECT_NE(analyses.GetCached<ThreadAnalysis>(), nullptr);
  analyses.InvalidateAll();
  EXPECT_TRUE(analyses.CachedNames().empty());
}

// The thread analysis keeps the threads per region: a barrier or fence
// placed in a region it knows runs in that region's threads (AddOp is all
// a pass must say); an op in a region it has not seen is a stale analysis,
// which VerifyCached reports.
TEST(AnalysisManagerTest, VerifyCachedFindsARegionTheAnalysisWasNotToldAbout) {
  std::unique_ptr<Module> module = ParseForTest(kKernel);
  ASSERT_NE(module, nullptr);
  Kernel& kernel = *module->kernels[0];
  AnalysisManager analyses(kernel);
  ThreadAnalysis& threads = analyses.Get<ThreadAnalysis>();
  EXPECT_TRUE(analyses.VerifyCached().ok());

  // A barrier inside the `if` runs in threads 0..31 only.
  Op& if_op = kernel.body().op(6);
  ASSERT_EQ(if_op.kind(), OpKind::kIf);
  OpBuilder builder(if_op.region(0), 1);
  Op* barrier = builder.Create(OpKind::kBarrierBlock, {});
  threads.AddOp(*barrier);
  EXPECT_TRUE(analyses.VerifyCached().ok()) << analyses.VerifyCached();
  EXPECT_EQ(threads.ExecutingThreads(*barrier).Count(), 32);
  EXPECT_FALSE(threads.GuardsUniformOver(*barrier, Scope::kBlock));
  threads.RemoveOp(*barrier);
  if_op.region(0).Take(1);
  EXPECT_TRUE(analyses.VerifyCached().ok());

  // A new `if` around a barrier, which the analysis was not told about.
  OpBuilder after(kernel.body(), 7);
  Op* inner = after.If(if_op.operand_value(0));
  OpBuilder(inner->region(0)).Create(OpKind::kBarrierBlock, {});
  absl::Status stale = analyses.VerifyCached();
  EXPECT_FALSE(stale.ok());
  EXPECT_NE(std::string(stale.message()).find("the threads executing"),
            std::string::npos)
      << stale;
}

}  // namespace
}  // namespace kir
