// Tests for the static checkers: a barrier, mbarrier or completion wait
// orders each conflicting pair, and its absence is reported.
#include "analysis/sync_check.h"

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "parser/parser.h"
#include "parser/testing/parse_for_test.h"

namespace kir {
namespace {

absl::Status Check(const std::string& text) {
  std::unique_ptr<Module> module = ParseForTest(text);
  if (module == nullptr) return absl::InternalError("parse");
  return CheckSyncs(*module->kernels[0]);
}

TEST(CheckSyncsTest, BarrierOrdersRawAndItsAbsenceIsReported) {
  const std::string ordered = R"(
kernel @k() block(128) {
  %c0 = const 0 : index
  %f = const 1.0 : f32
  %tx = thread.id x : index
  %s = alloc.shared : shared f32[128]
  store %s[%tx], %f
  barrier.block loc(inserted "insert-syncs")
  %r = load %s[%c0] : f32
})";
  EXPECT_TRUE(Check(ordered).ok()) << Check(ordered);
  std::string unordered = ordered;
  unordered.replace(
      unordered.find("  barrier.block"),
      std::string("  barrier.block loc(inserted \"insert-syncs\")\n").size(),
      "");
  absl::Status status = Check(unordered);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("unordered shared-memory accesses"),
            std::string::npos)
      << status;
}

TEST(CheckSyncsTest, UnneededInsertedBarrierIsReported) {
  absl::Status status = Check(R"(
kernel @k() block(128) {
  %f = const 1.0 : f32
  %tx = thread.id x : index
  %s = alloc.shared : shared f32[128]
  store %s[%tx], %f
  barrier.block loc(inserted "insert-syncs")
  %r = load %s[%tx] : f32
})");
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("not needed"), std::string::npos) << status;
}

TEST(CheckSyncsTest, TmaLoadNeedsEveryReaderToWaitOrABarrier) {
  const std::string prefix = R"(
kernel @k(%g: global f32[64, 64], %map: tensormap f32[16, 32] of %g)
    block(128) {
  %c0 = const 0 : index
  %tx = thread.id x : index
  %s = alloc.shared {align = 128} : shared f32[16, 32]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %t0 = cmp eq %tx, %c0 : i1
  if %t0 {
    mbarrier.init %bar[%c0] {count = 1}
  }
  barrier.block
  if %t0 {
    mbarrier.arrive_tx %bar[%c0] {bytes = 2048}
    tma.load %s[%c0, %c0], %map[%c0, %c0], %bar[%c0]
  }
  %p = const 0 : index
)";
  // Every thread waits: no barrier needed.
  EXPECT_TRUE(Check(prefix + R"(
  mbarrier.wait %bar[%c0], %p
  %r = load %s[%c0, %tx] : f32
})")
                  .ok());
  // One thread waits: the others read unordered.
  EXPECT_FALSE(Check(prefix + R"(
  if %t0 {
    mbarrier.wait %bar[%c0], %p
  }
  %r = load %s[%c0, %tx] : f32
})")
                   .ok());
  // One thread waits, then a barrier hands its acquire to the block.
  EXPECT_TRUE(Check(prefix + R"(
  if %t0 {
    mbarrier.wait %bar[%c0], %p
  }
  barrier.block
  %r = load %s[%c0, %tx] : f32
})")
                  .ok());
}

TEST(CheckSyncsTest, AsyncReadCompletesOnlyAtItsWait) {
  const std::string prefix = R"(
kernel @k(%g: global f32[64, 64], %map: tensormap f32[16, 32] of %g)
    block(128) {
  %c0 = const 0 : index
  %f = const 1.0 : f32
  %tx = thread.id x : index
  %s = alloc.shared {align = 128} : shared f32[16, 32]
  %t0 = cmp eq %tx, %c0 : i1
  if %t0 {
    tma.store %map[%c0, %c0], %s[%c0, %c0]
    %t = bulk.commit : token<bulk>
)";
  // The barrier comes before the issuer's wait: the store may still read.
  EXPECT_FALSE(Check(prefix + R"(
  }
  barrier.block
  store %s[%c0, %tx], %f
})")
                   .ok());
  EXPECT_TRUE(Check(prefix + R"(
    bulk.wait %t {read}
  }
  barrier.block
  store %s[%c0, %tx], %f
})")
                  .ok());
}

TEST(CheckSyncsTest, HandLoweredExamplesPass) {
  for (const char* name : {"epilogue.lowered.kir", "splitk_gemm.lowered.kir",
                           "ws_gemm.lowered.kir"}) {
    std::FILE* file = std::fopen(
        absl::StrCat(KIR_TESTDATA_DIR, "/examples/", name).c_str(), "rb");
    ASSERT_NE(file, nullptr) << name;
    std::string text;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
      text.append(buffer, n);
    }
    std::fclose(file);
    std::unique_ptr<Module> module = ParseForTest(text);
    ASSERT_NE(module, nullptr);
    for (const auto& kernel : module->kernels) {
      absl::Status status = CheckSyncs(*kernel);
      EXPECT_TRUE(status.ok()) << name << ": " << status;
    }
  }
}

// A straight-line kernel of `units` units ordered by barriers marked as
// insert-syncs': a shared write, a barrier, a read of another thread's
// element, a barrier before the next write. `extra` adds a barrier after
// the last read, which nothing needs.
std::string OrderedStraightLine(int units, bool extra) {
  std::string text =
      "kernel @k() block(128) {\n"
      "  %c127 = const 127 : index\n  %f = const 1.0 : f32\n"
      "  %tx = thread.id x : index\n  %mirror = sub %c127, %tx : index\n"
      "  %s = alloc.shared : shared f32[128]\n";
  const std::string barrier =
      "  barrier.block loc(inserted \"insert-syncs\")\n";
  for (int u = 0; u < units; ++u) {
    if (u > 0) text += barrier;
    absl::StrAppend(&text, "  store %s[%tx], %f\n", barrier, "  %v", u,
                    " = load %s[%mirror] : f32\n");
  }
  if (extra) text += barrier;
  return text + "}\n";
}

// Whether each inserted barrier is needed is asked of one kept dataflow,
// which walks from the barrier only until the state is the kernel's own:
// about a walk of the kernel in all. (It walked the whole kernel once per
// barrier: 2000 walks here, and 100 s for 10k ops after the pipeline.)
TEST(CheckSyncsTest, CheckingEveryBarrierCostsAboutOneWalk) {
  std::unique_ptr<Module> module =
      ParseForTest(OrderedStraightLine(1000, false));
  ASSERT_NE(module, nullptr);
  const Kernel& kernel = *module->kernels[0];
  int64_t before = OrderingDataflowWork();
  EXPECT_TRUE(FindUnorderedPairs(kernel).empty());
  const int64_t walk = OrderingDataflowWork() - before;
  before = OrderingDataflowWork();
  const absl::Status status = CheckSyncs(kernel);
  const int64_t check = OrderingDataflowWork() - before;
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_GT(walk, 0);
  EXPECT_LT(check, 6 * walk) << "one walk: " << walk << ", check: " << check;
}

// In a long kernel the one barrier nothing needs is still found, and only
// it.
TEST(CheckSyncsTest, UnneededBarrierAmongManyIsReportedAlone) {
  const std::string text = OrderedStraightLine(200, true);
  std::unique_ptr<Module> module = ParseForTest(text);
  ASSERT_NE(module, nullptr);
  const absl::Status status = CheckSyncs(*module->kernels[0]);
  ASSERT_FALSE(status.ok());
  const std::string message(status.message());
  // The extra barrier is the kernel's second-to-last line.
  const int line = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  EXPECT_NE(message.find(absl::StrCat(":", line - 1, ":")), std::string::npos)
      << message;
  size_t count = 0;
  for (size_t at = message.find("not needed"); at != std::string::npos;
       at = message.find("not needed", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 1u) << message;
}

// Without an async access or an mbarrier no proxy edge can exist, so the
// fence check walks nothing (its state, which no barrier empties of
// unfenced generic accesses, grew with the kernel: 64 s for 100k ops).
TEST(CheckProxyFencesTest, KernelWithoutAsyncAccessesCostsNoWalk) {
  std::unique_ptr<Module> module =
      ParseForTest(OrderedStraightLine(1000, false));
  ASSERT_NE(module, nullptr);
  const int64_t before = OrderingDataflowWork();
  const absl::Status status =
      CheckProxyFences(*module->kernels[0], FencePlacement::kWriters);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(OrderingDataflowWork() - before, 0);
}

}  // namespace
}  // namespace kir
