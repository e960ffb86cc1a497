// Tests for IncrementalOrdering: after every barrier or fence inserted or
// removed, each of its answers equals a walk from scratch.
#include "analysis/ordering.h"

#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/conflicts.h"
#include "analysis/test_helpers.h"
#include "analysis/thread_analysis.h"
#include "gtest/gtest.h"
#include "ir/builder.h"

namespace kir {
namespace {

std::string ReadExample(const std::string& name) {
  std::ifstream file(std::string(KIR_TESTDATA_DIR) + "/examples/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Straight-line units of a write and a read of another thread's element,
// some under a condition or in a loop.
std::string StraightKernel(int units) {
  std::string text = R"(kernel @k(%g: global f32[128]) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c127 = const 127 : index
  %c64 = const 64 : index
  %f = const 1.0 : f32
  %tx = thread.id x : index
  %mirror = sub %c127, %tx : index
  %low = cmp lt %tx, %c64 : i1
  %s = alloc.shared : shared f32[128]
)";
  for (int u = 0; u < units; ++u) {
    const std::string v = "%v" + std::to_string(u);
    switch (u % 3) {
      case 0:
        text += "  store %s[%tx], %f\n  " + v +
                " = load %s[%mirror] : f32\n  store %g[%tx], " + v + "\n";
        break;
      case 1:
        text += "  if %low {\n    store %s[%tx], %f\n  }\n  " + v +
                " = load %s[%mirror] : f32\n  store %g[%tx], " + v + "\n";
        break;
      default:
        text += "  for %i" + std::to_string(u) +
                " = %c0 to %c2 step %c1 {\n    store %s[%tx], %f\n    " + v +
                " = load %s[%mirror] : f32\n    store %g[%tx], " + v +
                "\n  }\n";
        break;
    }
  }
  return text + "}\n";
}

// Every region of the kernel and every place in it.
std::vector<std::pair<Region*, int>> Places(Kernel& kernel) {
  std::vector<std::pair<Region*, int>> places;
  std::vector<Region*> regions = {&kernel.body()};
  Walk(kernel.body(), [&](Op& op) {
    for (int r = 0; r < op.num_regions(); ++r) regions.push_back(&op.region(r));
  });
  for (Region* region : regions) {
    for (int i = 0; i <= region->size(); ++i) places.emplace_back(region, i);
  }
  return places;
}

void CheckAgainstScratch(const std::string& text, int steps,
                         std::optional<FencePlacement> proxy, int seed) {
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  Kernel& kernel = *module->kernels[0];
  ThreadAnalysis threads(kernel);
  ConflictAnalysis conflicts(kernel, threads);
  SyncAnalysisOptions options;
  options.complete_uncommitted_async = !proxy.has_value();
  options.threads = &threads;
  options.conflicts = &conflicts;
  IncrementalOrdering ordering(kernel, options, proxy);
  std::mt19937 random(seed);
  std::vector<Op*> inserted;
  auto compare = [&](const std::set<const Op*>& ignored, bool stop) {
    SyncAnalysisOptions scratch = options;
    scratch.ignored = ignored;
    scratch.stop_at_first_same_iteration = stop;
    if (proxy) {
      EXPECT_EQ(ordering.UnfencedPairs(ignored).size(),
                FindUnfencedPairs(kernel, *proxy, scratch).size());
      std::vector<UnfencedPair> a = ordering.UnfencedPairs(ignored);
      std::vector<UnfencedPair> b = FindUnfencedPairs(kernel, *proxy, scratch);
      for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        EXPECT_FALSE(a[i] < b[i] || b[i] < a[i]) << "pair " << i;
      }
      EXPECT_EQ(ordering.AnyPair(ignored), !b.empty());
      return;
    }
    std::vector<UnorderedPair> expected = FindUnorderedPairs(kernel, scratch);
    EXPECT_EQ(ordering.UnorderedPairs(ignored, stop), expected)
        << "ignoring " << ignored.size() << ", stop " << stop;
    if (!stop) {
      EXPECT_EQ(ordering.AnyPair(ignored), !expected.empty());
      for (const UnorderedPair& pair : expected) {
        if (ignored.empty()) EXPECT_TRUE(ordering.Contains(pair));
      }
    }
  };
  for (int step = 0; step < steps; ++step) {
    compare({}, false);
    compare({}, true);
    if (!inserted.empty()) {
      Op* some = inserted[random() % inserted.size()];
      compare({some}, false);
      compare({some}, true);
    }
    if (!inserted.empty() && random() % 4 == 0) {
      // Take one out again.
      const size_t which = random() % inserted.size();
      Op* op = inserted[which];
      inserted.erase(inserted.begin() + which);
      ordering.Changed(*op);
      threads.RemoveOp(*op);
      op->parent_region()->Take(op->parent_region()->IndexOf(op));
      continue;
    }
    std::vector<std::pair<Region*, int>> places = Places(kernel);
    auto [region, index] = places[random() % places.size()];
    // Not after a return, and barriers only where the whole block is.
    if (index > 0 && region->op(index - 1).kind() == OpKind::kReturn) {
      continue;
    }
    OpBuilder builder(*region, index);
    Op* op = proxy ? builder.Create(OpKind::kFenceProxyAsync, {},
                                    {{"space", Attribute::Enum("all")}})
                   : builder.Create(OpKind::kBarrierBlock, {});
    threads.AddOp(*op);
    ordering.Changed(*op);
    inserted.push_back(op);
  }
}

TEST(IncrementalOrderingTest, StraightLineMatchesWalksFromScratch) {
  for (int seed = 1; seed <= 4; ++seed) {
    CheckAgainstScratch(StraightKernel(9), 24, std::nullopt, seed);
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

}  // namespace
}  // namespace kir
