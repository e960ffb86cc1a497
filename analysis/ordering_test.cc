// Tests for IncrementalOrdering: after every barrier or fence inserted or
// removed, each of its answers equals a walk from scratch.
#include "analysis/ordering.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/conflicts.h"
#include "analysis/ordering_test_helpers.h"
#include "analysis/thread_analysis.h"
#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/effects.h"
#include "ir/sanitizers.h"
#include "parser/parser.h"
#include "parser/testing/parse_for_test.h"

namespace kir {
namespace {

std::string ReadExample(const std::string& name) {
  std::ifstream file(std::string(KIR_TESTDATA_DIR) + "/examples/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The first ops of the kernels below: the thread's element and its mirror,
// a shared buffer for their units and one for other writes.
constexpr char kHead[] = R"(kernel @k(%g: global f32[128]) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c8 = const 8 : index
  %c127 = const 127 : index
  %c64 = const 64 : index
  %f = const 1.0 : f32
  %tx = thread.id x : index
  %mirror = sub %c127, %tx : index
  %low = cmp lt %tx, %c64 : i1
  %s = alloc.shared : shared f32[128]
  %p = alloc.shared : shared f32[128]
)";

// A write and a read of another thread's element.
std::string Unit(const std::string& value, const std::string& indent) {
  return indent + "store %s[%tx], %f\n" + indent + value +
         " = load %s[%mirror] : f32\n" + indent + "store %g[%tx], " + value +
         "\n";
}

// Straight-line units, some under a condition or in a loop.
std::string StraightKernel(int units) {
  std::string text = kHead;
  for (int u = 0; u < units; ++u) {
    const std::string v = "%v" + std::to_string(u);
    switch (u % 3) {
      case 0:
        text += Unit(v, "  ");
        break;
      case 1:
        text += "  if %low {\n    store %s[%tx], %f\n  }\n  " + v +
                " = load %s[%mirror] : f32\n  store %g[%tx], " + v + "\n";
        break;
      default:
        text += "  for %i" + std::to_string(u) + " = %c0 to %c2 step %c1 {\n" +
                Unit(v, "    ") + "  }\n";
        break;
    }
  }
  return text + "}\n";
}

void CheckAgainstScratch(const std::string& text, int steps,
                         std::optional<FencePlacement> proxy, int seed) {
  std::unique_ptr<Module> module = ParseForTest(text);
  ASSERT_NE(module, nullptr);
  ExpectIncrementalMatchesScratch(*module->kernels[0], steps, proxy, seed);
}

TEST(IncrementalOrderingTest, StraightLineMatchesWalksFromScratch) {
  // One seed of the four under the sanitizers.
  for (int seed = 1; seed <= (kSanitizedBuild ? 1 : 4); ++seed) {
    CheckAgainstScratch(StraightKernel(9), 24, std::nullopt, seed);
  }
}

// The same units inside one loop: the walks that stop at the earliest
// pair within one iteration, and those asking for one pair, skip what
// comes after it in the loop, and still answer as walks from scratch.
TEST(IncrementalOrderingTest, LoopBodyMatchesWalksFromScratch) {
  std::string text = StraightKernel(9);
  const size_t body = text.find("  store");
  text.insert(body, "  for %outer = %c0 to %c2 step %c1 {\n");
  text.insert(text.rfind('}'), "  }\n");
  for (int seed = 1; seed <= 2; ++seed) {
    CheckAgainstScratch(text, SanitizerScaled(20), std::nullopt, seed);
  }
}

TEST(IncrementalOrderingTest, ExamplesMatchWalksFromScratch) {
  for (const char* name : {"epilogue.kir", "transpose.kir", "ws_gemm.kir",
                           "ws_gemm.lowered.kir"}) {
    SCOPED_TRACE(name);
    const std::string text = ReadExample(name);
    ASSERT_FALSE(text.empty());
    CheckAgainstScratch(text, 6, std::nullopt, 7);
    CheckAgainstScratch(text, 6, FencePlacement::kWriters, 7);
    CheckAgainstScratch(text, 6, FencePlacement::kIssuer, 7);
  }
}

// `pending` shared writes that nothing orders, each of its own element,
// then a loop of `body` units.
std::string PendingThenLoop(int pending, int body) {
  std::string text = kHead;
  for (int u = 0; u < pending; ++u) text += "  store %p[%tx], %f\n";
  text += "  for %i = %c0 to %c8 step %c1 {\n";
  for (int u = 0; u < body; ++u) {
    text += Unit("%v" + std::to_string(u), "    ");
  }
  return text + "  }\n}\n";
}

// The ordering dataflow's work for `run`.
template <typename Fn>
int64_t WorkOf(Fn&& run) {
  const int64_t before = OrderingDataflowWork();
  run();
  return OrderingDataflowWork() - before;
}

// The rounds of a loop's fixed point after the first walk only the
// accesses whose state at the top of the body changed: here the loop's own
// (their entries carried one more iteration each round), not the 32
// pending ones from before the loop, which every round used to walk again
// (today about a third of the work).
TEST(OrderingDataflowTest, LoopRoundsWalkOnlyTheAccessesThatChanged) {
  std::unique_ptr<Module> module = ParseForTest(PendingThenLoop(32, 8));
  ASSERT_NE(module, nullptr);
  const Kernel& kernel = *module->kernels[0];
  SyncAnalysisOptions every_class;
  every_class.walk_every_class = true;
  std::vector<UnorderedPair> expected, pairs;
  const int64_t every_work =
      WorkOf([&] { expected = FindUnorderedPairs(kernel, every_class); });
  const int64_t work = WorkOf([&] { pairs = FindUnorderedPairs(kernel); });
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(pairs, expected);
  EXPECT_LT(2 * work, every_work)
      << "every round: " << every_work << ", changed only: " << work;
  CheckAgainstScratch(PendingThenLoop(8, 2), 8, std::nullopt, 3);
}

// Looking for some pairs only (wanted_pairs) finds exactly those of the
// whole answer: here the pairs whose later access reads.
TEST(OrderingDataflowTest, WantedPairsAreThoseOfTheWholeAnswer) {
  size_t wanted = 0, others = 0;
  for (const std::string& text :
       {StraightKernel(9), ReadExample("ws_gemm.lowered.kir"),
        ReadExample("epilogue.lowered.kir")}) {
    std::unique_ptr<Module> module = ParseForTest(text);
    ASSERT_NE(module, nullptr);
    const Kernel& kernel = *module->kernels[0];
    auto later_reads = [](const MemoryEffect&, const MemoryEffect& later) {
      return later.mode == AccessMode::kRead;
    };
    const std::vector<UnorderedPair> all = FindUnorderedPairs(kernel);
    std::vector<UnorderedPair> expected;
    for (const UnorderedPair& pair : all) {
      if (later_reads(MemoryEffectsOf(*pair.first)[pair.first_effect],
                      MemoryEffectsOf(*pair.second)[pair.second_effect])) {
        expected.push_back(pair);
      }
    }
    SyncAnalysisOptions options;
    options.wanted_pairs = later_reads;
    EXPECT_EQ(FindUnorderedPairs(kernel, options), expected);
    wanted += expected.size();
    others += all.size() - expected.size();
  }
  // Both kinds occur.
  EXPECT_GT(wanted, 0u);
  EXPECT_GT(others, 0u);
}

// A kernel with the analyses an IncrementalOrdering needs, and its loop.
struct KeptOrdering {
  // Null when `text` does not parse (the test has failed then).
  static std::unique_ptr<KeptOrdering> Make(const std::string& text) {
    std::unique_ptr<Module> module = ParseForTest(text);
    if (module == nullptr) return nullptr;
    return std::make_unique<KeptOrdering>(std::move(module));
  }

  explicit KeptOrdering(std::unique_ptr<Module> parsed)
      : module(std::move(parsed)),
        kernel(*module->kernels[0]),
        threads(kernel),
        conflicts(kernel, threads),
        options(Options(threads, conflicts)),
        ordering(kernel, options) {}

  static SyncAnalysisOptions Options(const ThreadAnalysis& threads,
                                     const ConflictAnalysis& conflicts) {
    SyncAnalysisOptions options;
    options.threads = &threads;
    options.conflicts = &conflicts;
    return options;
  }

  // Inserts a block barrier at `index` of `region` and tells the analyses.
  Op* InsertBarrier(Region& region, int index) {
    OpBuilder builder(region, index);
    Op* barrier = builder.Create(OpKind::kBarrierBlock, {});
    threads.AddOp(*barrier);
    ordering.Changed(*barrier);
    return barrier;
  }

  // The index of the loop in the kernel body.
  int LoopIndex() const {
    int loop = 0;
    while (kernel.body().op(loop).kind() != OpKind::kFor) ++loop;
    return loop;
  }

  std::unique_ptr<Module> module;
  Kernel& kernel;
  ThreadAnalysis threads;
  ConflictAnalysis conflicts;
  SyncAnalysisOptions options;
  IncrementalOrdering ordering;
};

// Inserting a barrier before the loop walks the loop again only for the
// accesses whose state the barrier changed (the pending writes it orders),
// with the loop's last walk for the others.
TEST(IncrementalOrderingTest, ABarrierBeforeALoopWalksItOnlyForWhatChanged) {
  std::unique_ptr<KeptOrdering> made =
      KeptOrdering::Make(PendingThenLoop(4, 24));
  ASSERT_NE(made, nullptr);
  KeptOrdering& kept = *made;
  const int64_t first = WorkOf([&] { kept.ordering.UnorderedPairs(); });
  kept.InsertBarrier(kept.kernel.body(), kept.LoopIndex());
  std::vector<UnorderedPair> pairs;
  const int64_t again = WorkOf([&] { pairs = kept.ordering.UnorderedPairs(); });
  EXPECT_EQ(pairs, FindUnorderedPairs(kept.kernel, kept.options));
  EXPECT_LT(10 * again, first)
      << "first walk: " << first << ", after the barrier: " << again;
}

// Telling the dataflow of a barrier inserted into a loop body costs no walk
// of the loop: a barrier elects no lane, so the loop's elections stand. (It
// looked for elections in the whole loop per barrier, which made a pass
// placing n barriers in one loop body quadratic before any query.)
TEST(IncrementalOrderingTest, ABarrierInALoopBodyIsToldWithoutAWalk) {
  std::unique_ptr<KeptOrdering> made =
      KeptOrdering::Make(PendingThenLoop(0, 40));
  ASSERT_NE(made, nullptr);
  KeptOrdering& kept = *made;
  kept.ordering.UnorderedPairs();
  Region& loop_body = kept.kernel.body().op(kept.LoopIndex()).region(0);
  OpBuilder builder(loop_body, 1);
  Op* barrier = builder.Create(OpKind::kBarrierBlock, {});
  kept.threads.AddOp(*barrier);
  EXPECT_EQ(WorkOf([&] { kept.ordering.Changed(*barrier); }), 0);
  EXPECT_EQ(kept.ordering.UnorderedPairs(),
            FindUnorderedPairs(kept.kernel, kept.options));
  // And of its removal.
  EXPECT_EQ(WorkOf([&] { kept.ordering.Changed(*barrier); }), 0);
  kept.threads.RemoveOp(*barrier);
  loop_body.Take(1);
  EXPECT_EQ(kept.ordering.UnorderedPairs(),
            FindUnorderedPairs(kept.kernel, kept.options));
}

// A walk that finds nothing to walk again in an op (no access whose state
// changed) takes the op's last walk whole: it used to read the flags the
// last query left, and after a query that stopped early in a loop it took
// the op for one it had stopped in, answering no pairs at all.
TEST(IncrementalOrderingTest, AnOpWithNothingToWalkAgainIsWholeAfterAStop) {
  std::string text = kHead;
  text +=
      "  if %low {\n    store %p[%tx], %f\n  }\n"
      "  for %i = %c0 to %c2 step %c1 {\n" +
      Unit("%v", "    ") + "    store %s[%tx], %f\n  }\n}\n";
  std::unique_ptr<KeptOrdering> made = KeptOrdering::Make(text);
  ASSERT_NE(made, nullptr);
  KeptOrdering& kept = *made;
  int if_index = 0;
  while (kept.kernel.body().op(if_index).kind() != OpKind::kIf) ++if_index;
  Op* barrier = kept.InsertBarrier(kept.kernel.body(), if_index);
  const std::vector<UnorderedPair> pairs = kept.ordering.UnorderedPairs();
  ASSERT_FALSE(pairs.empty());
  // Stops at the loop's first pair within one iteration, past which it
  // looks for no pairs.
  EXPECT_FALSE(
      kept.ordering
          .UnorderedPairs({barrier}, /*stop_at_first_same_iteration=*/true)
          .empty());
  kept.ordering.Changed(*barrier);
  kept.threads.RemoveOp(*barrier);
  kept.kernel.body().Take(if_index);
  EXPECT_EQ(kept.ordering.UnorderedPairs(), pairs);
  EXPECT_EQ(kept.ordering.UnorderedPairs(),
            FindUnorderedPairs(kept.kernel, kept.options));
}

// A barrier inserted near the end of a long loop body: the walk starts its
// first round through the loop at the barrier, from the kept walk, instead
// of at the top of the loop (and the later rounds follow only what came
// round the back edge).
TEST(IncrementalOrderingTest, ABarrierLateInALoopBodyWalksFromIt) {
  std::unique_ptr<KeptOrdering> made =
      KeptOrdering::Make(PendingThenLoop(0, 40));
  ASSERT_NE(made, nullptr);
  KeptOrdering& kept = *made;
  const int64_t first = WorkOf([&] { kept.ordering.UnorderedPairs(); });
  Region& loop_body = kept.kernel.body().op(kept.LoopIndex()).region(0);
  kept.InsertBarrier(loop_body, loop_body.size() - 2);
  std::vector<UnorderedPair> pairs;
  const int64_t again = WorkOf([&] { pairs = kept.ordering.UnorderedPairs(); });
  EXPECT_EQ(pairs, FindUnorderedPairs(kept.kernel, kept.options));
  EXPECT_LT(20 * again, first)
      << "first walk: " << first << ", after the barrier: " << again;
}

// An elected lane's write, fenced by the lane elected later (the fence
// counts for it because the same lane runs both), before a TMA store of
// it, in a loop of the kernel body. A walk starting part-way into the loop
// takes the elections of the ops before its start from the kept walk, as
// a walk from the top would have made them: without them the fence would
// not count, and an unfenced edge would appear.
TEST(IncrementalOrderingTest, AKeptWalkKnowsTheElectionsBeforeItsStart) {
  const std::string text = R"(
kernel @elected_fence(%out: global f32[32, 32],
                      %map: tensormap f32[32, 32] of %out) block(32) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c31 = const 31 : index
  %f = const 1.0 : f32
  %tx = thread.id x : index
  %mirror = sub %c31, %tx : index
  %buf = alloc.shared {align = 128} : shared f32[32, 32]
  %other = alloc.shared : shared f32[32]
  %acc = alloc.reg : reg f32[1]
  for %i = %c0 to %c2 step %c1 {
    %e = elect.sync : i1
    if %e {
      store %buf[%c0, %c0], %f
    }
    store %other[%tx], %f
    %v = load %other[%mirror] : f32
    store %acc[%c0], %v
    %e2 = elect.sync : i1
    if %e2 {
      fence.proxy.async shared_cta
    }
    store %other[%tx], %f
    %w = load %other[%mirror] : f32
    store %acc[%c0], %w
    %e3 = elect.sync : i1
    if %e3 {
      tma.store %map[%c0, %c0], %buf[%c0, %c0]
      %t = bulk.commit : token<bulk>
      bulk.wait %t {read}
    }
  }
}
)";
  for (int seed = 1; seed <= (kSanitizedBuild ? 2 : 12); ++seed) {
    CheckAgainstScratch(text, 12, FencePlacement::kWriters, seed);
    CheckAgainstScratch(text, 12, FencePlacement::kIssuer, seed);
    CheckAgainstScratch(text, 12, std::nullopt, seed);
  }
}

// The kernels of testdata (each part of a split input) that verify and hold
// an op with regions (a loop, a branch, a role).
std::vector<std::unique_ptr<Module>> TestdataKernelsWithRegions() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(KIR_TESTDATA_DIR)) {
    if (entry.path().extension() == ".kir") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::unique_ptr<Module>> modules;
  for (const std::string& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    const std::string whole = text.str();
    for (size_t begin = 0; begin < whole.size();) {
      size_t end = whole.find("// -----", begin);
      if (end == std::string::npos) end = whole.size();
      const std::string part = whole.substr(begin, end - begin);
      begin = end + 8;
      absl::StatusOr<std::unique_ptr<Module>> module =
          ParseModuleString(part, file);
      if (!module.ok() || (*module)->kernels.size() != 1 ||
          !Verify(**module).ok()) {
        continue;
      }
      const Region& body = (*module)->kernels[0]->body();
      for (int i = 0; i < body.size(); ++i) {
        if (body.op(i).num_regions() > 0) {
          modules.push_back(*std::move(module));
          break;
        }
      }
    }
  }
  return modules;
}

// A walk entering a region it enters once (a loop's body in the first
// round, a branch, a role) starts from the kept walk through it, where a
// change could first alter it (and a walk ignoring ops returns to it once
// its state is the kept one): on every such kernel of testdata (about 250),
// with barriers and fences inserted and removed at random, every answer
// equals a walk from scratch. Under the sanitizers, every tenth kernel.
TEST(IncrementalOrderingTest, TestdataKernelsMatchWalksFromScratch) {
  const std::vector<std::unique_ptr<Module>> modules =
      TestdataKernelsWithRegions();
  EXPECT_GT(modules.size(), 200u);
  for (size_t i = 0; i < modules.size(); i += kSanitizedBuild ? 10 : 1) {
    Kernel& kernel = *modules[i]->kernels[0];
    SCOPED_TRACE(kernel.loc().ToString());
    ExpectIncrementalMatchesScratch(kernel, 10, std::nullopt, 1);
    ExpectIncrementalMatchesScratch(kernel, 6, FencePlacement::kWriters, 1);
    ExpectIncrementalMatchesScratch(kernel, 6, FencePlacement::kIssuer, 1);
  }
}

}  // namespace
}  // namespace kir
