// A check that the tests of the ordering dataflow and of the passes that
// keep it share. Only *_test.cc files include this (it uses GoogleTest).
#ifndef KIR_ANALYSIS_ORDERING_TEST_HELPERS_H_
#define KIR_ANALYSIS_ORDERING_TEST_HELPERS_H_

#include <algorithm>
#include <iterator>
#include <optional>
#include <random>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/conflicts.h"
#include "analysis/ordering.h"
#include "analysis/thread_analysis.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/ir.h"

namespace kir {

// Every region of the kernel and every place in it.
inline std::vector<std::pair<Region*, int>> PlacesIn(Kernel& kernel) {
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

// Inserts and removes barriers (fences, with `proxy`) at random places of
// `kernel`, `steps` times, and after each change expects every answer of an
// IncrementalOrdering kept across the changes to equal a walk from scratch,
// and the walk from scratch to equal one whose loop rounds walk every
// access (walk_every_class).
inline void ExpectIncrementalMatchesScratch(Kernel& kernel, int steps,
                                            std::optional<FencePlacement> proxy,
                                            int seed) {
  ThreadAnalysis threads(kernel);
  ConflictAnalysis conflicts(kernel, threads);
  SyncAnalysisOptions options;
  options.complete_uncommitted_async = !proxy.has_value();
  options.threads = &threads;
  options.conflicts = &conflicts;
  IncrementalOrdering ordering(kernel, options, proxy);
  std::mt19937 random(seed);
  std::vector<Op*> inserted;
  std::vector<UnorderedPair> last_answer;
  // The queries for one edge, and the count, against `edges` (a walk from
  // scratch): asked of the kept dataflow, and first of a new one, which
  // walks only as far as the edge it looks for.
  auto expect_unfenced_queries_match =
      [&](const std::vector<UnfencedPair>& edges) {
        auto same_iteration =
            std::find_if(edges.begin(), edges.end(),
                         [](const UnfencedPair& e) { return !e.pair.carried; });
        std::optional<UnfencedPair> first;
        if (!edges.empty()) {
          first =
              same_iteration != edges.end() ? *same_iteration : edges.front();
        }
        std::set<std::tuple<const Op*, int, const Op*, int>> distinct;
        for (const UnfencedPair& e : edges) {
          distinct.emplace(e.pair.first, e.pair.first_effect, e.pair.second,
                           e.pair.second_effect);
        }
        auto same = [](const std::optional<UnfencedPair>& x,
                       const std::optional<UnfencedPair>& y) {
          return x.has_value() == y.has_value() &&
                 (!x || (!(*x < *y) && !(*y < *x)));
        };
        IncrementalOrdering first_question(kernel, options, proxy);
        EXPECT_TRUE(same(first_question.FirstUnfencedPair(), first));
        EXPECT_TRUE(same(ordering.FirstUnfencedPair(), first));
        EXPECT_EQ(first_question.CountUnfencedEdges(),
                  static_cast<int64_t>(distinct.size()));
        EXPECT_EQ(ordering.CountUnfencedEdges(),
                  static_cast<int64_t>(distinct.size()));
        const size_t stride = std::max<size_t>(1, edges.size() / 4);
        for (size_t i = 0; i < edges.size(); i += stride) {
          IncrementalOrdering asked_first(kernel, options, proxy);
          EXPECT_TRUE(asked_first.ContainsUnfenced(edges[i]));
          EXPECT_TRUE(ordering.ContainsUnfenced(edges[i]));
        }
        // An edge with another need is not one of them.
        for (size_t i = 0; i < edges.size(); i += stride) {
          UnfencedPair other = edges[i];
          other.need = other.need == FenceNeed::kMbarrierInit
                           ? FenceNeed::kSharedProxy
                           : FenceNeed::kMbarrierInit;
          if (std::any_of(edges.begin(), edges.end(),
                          [&](const UnfencedPair& e) {
                            return !(e < other) && !(other < e);
                          })) {
            continue;
          }
          EXPECT_FALSE(ordering.ContainsUnfenced(other));
        }
      };
  auto compare = [&](const std::set<const Op*>& ignored, bool stop) {
    SyncAnalysisOptions scratch = options;
    scratch.ignored = ignored;
    scratch.stop_at_first_same_iteration = stop;
    SyncAnalysisOptions every_class = scratch;
    every_class.walk_every_class = true;
    if (proxy) {
      std::vector<UnfencedPair> a = ordering.UnfencedPairs(ignored);
      std::vector<UnfencedPair> b = FindUnfencedPairs(kernel, *proxy, scratch);
      std::vector<UnfencedPair> c =
          FindUnfencedPairs(kernel, *proxy, every_class);
      EXPECT_EQ(a.size(), b.size());
      EXPECT_EQ(b.size(), c.size());
      for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        EXPECT_FALSE(a[i] < b[i] || b[i] < a[i]) << "pair " << i;
      }
      for (size_t i = 0; i < b.size() && i < c.size(); ++i) {
        EXPECT_FALSE(b[i] < c[i] || c[i] < b[i]) << "pair " << i;
      }
      EXPECT_EQ(ordering.AnyPair(ignored), !b.empty());
      if (ignored.empty()) expect_unfenced_queries_match(b);
      return;
    }
    std::vector<UnorderedPair> expected = FindUnorderedPairs(kernel, scratch);
    EXPECT_EQ(FindUnorderedPairs(kernel, every_class), expected)
        << "ignoring " << ignored.size() << ", stop " << stop;
    EXPECT_EQ(ordering.UnorderedPairs(ignored, stop), expected)
        << "ignoring " << ignored.size() << ", stop " << stop;
    if (!stop) {
      EXPECT_EQ(ordering.AnyPair(ignored), !expected.empty());
      if (!ignored.empty()) return;
      for (const UnorderedPair& pair : expected) {
        EXPECT_TRUE(ordering.Contains(pair));
      }
      // Asked first, before a walk of the whole kernel is kept (for about
      // four pairs of each answer, and those of the last answer that
      // barriers have ordered since).
      const size_t stride = std::max<size_t>(1, expected.size() / 4);
      for (size_t i = 0; i < expected.size(); i += stride) {
        IncrementalOrdering first_question(kernel, options);
        EXPECT_TRUE(first_question.Contains(expected[i]));
      }
      std::vector<UnorderedPair> answer = expected;
      std::sort(answer.begin(), answer.end());
      std::vector<UnorderedPair> ordered_since;
      std::set_difference(last_answer.begin(), last_answer.end(),
                          answer.begin(), answer.end(),
                          std::back_inserter(ordered_since));
      const size_t every = std::max<size_t>(1, ordered_since.size() / 4);
      for (size_t i = 0; i < ordered_since.size(); i += every) {
        IncrementalOrdering first_question(kernel, options);
        EXPECT_FALSE(first_question.Contains(ordered_since[i]));
        EXPECT_FALSE(ordering.Contains(ordered_since[i]));
      }
      last_answer = std::move(answer);
    }
  };
  for (int step = 0; step < steps; ++step) {
    // Every other step asks the stopping queries first, so that they also
    // start from what a change left of a whole walk.
    const bool stop_first = step % 2 == 1;
    compare({}, stop_first);
    compare({}, !stop_first);
    if (!inserted.empty()) {
      Op* some = inserted[random() % inserted.size()];
      compare({some}, stop_first);
      compare({some}, !stop_first);
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
    std::vector<std::pair<Region*, int>> places = PlacesIn(kernel);
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

}  // namespace kir

#endif  // KIR_ANALYSIS_ORDERING_TEST_HELPERS_H_
