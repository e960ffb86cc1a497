// The static checkers; see sync_check.h.
#include "analysis/sync_check.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/conflicts.h"
#include "analysis/static_values.h"
#include "analysis/thread_analysis.h"
#include "ir/check.h"
#include "ir/diagnostics.h"

namespace kir {

namespace {

const char* FenceNeedName(FenceNeed need) {
  switch (need) {
    case FenceNeed::kSharedProxy:
      return "fence.proxy.async shared_cta";
    case FenceNeed::kGlobalProxy:
      return "fence.proxy.async global";
    case FenceNeed::kMbarrierInit:
      return "fence.mbarrier_init";
  }
  return "a fence";
}

// The analyses the checks' queries share. Whether each inserted barrier or
// fence is needed is asked of one kept dataflow (IncrementalOrdering), which
// walks from that op only until the state is the kernel's own again: a walk
// of the whole kernel per barrier made --check-syncs quadratic (100 s for
// 10k straight-line ops).
struct CheckerAnalyses {
  explicit CheckerAnalyses(const Kernel& kernel)
      : threads(kernel), conflicts(kernel, threads) {
    options.threads = &threads;
    options.conflicts = &conflicts;
  }
  ThreadAnalysis threads;
  ConflictAnalysis conflicts;
  SyncAnalysisOptions options;
};

// The pairs (or edges) themselves come from a walk from scratch; the kept
// dataflow must give the same answer before it is asked about each op.
template <typename Pair>
absl::Status SameAnswer(const std::vector<Pair>& incremental,
                        const std::set<Pair>& from_scratch) {
  const std::set<Pair> kept(incremental.begin(), incremental.end());
  // Equal as the sets order them (the pairs define only `<`).
  auto same = [](const Pair& a, const Pair& b) { return !(a < b || b < a); };
  if (std::equal(kept.begin(), kept.end(), from_scratch.begin(),
                 from_scratch.end(), same)) {
    return absl::OkStatus();
  }
  return absl::InternalError(absl::StrCat(
      "the kept ordering dataflow found ", incremental.size(),
      " pair(s) where a walk from scratch found ", from_scratch.size(),
      "; the checker cannot tell which inserted synchronization is needed"));
}

}  // namespace

absl::Status CheckProxyFences(const Kernel& kernel, FencePlacement placement) {
  std::vector<absl::Status> errors;
  std::vector<UnfencedPair> pairs = FindUnfencedPairs(kernel, placement);
  const char* model =
      placement == FencePlacement::kWriters ? "writers" : "issuer";
  std::set<std::tuple<const Op*, int, const Op*, int, FenceNeed>> reported;
  for (const UnfencedPair& unfenced : pairs) {
    const UnorderedPair& pair = unfenced.pair;
    // One error per pair of accesses, whatever the loops it straddles.
    if (!reported
             .emplace(pair.first, pair.first_effect, pair.second,
                      pair.second_effect, unfenced.need)
             .second) {
      continue;
    }
    errors.push_back(
        Error(pair.second->loc())
            .Note(pair.first->loc(),
                  absl::StrCat(DescribeAccess(*pair.first, pair.first_effect),
                               pair.carried ? ", in an earlier iteration" : "",
                               ", here"))
        << "missing proxy fence: "
        << DescribeAccess(*pair.second, pair.second_effect)
        << " is ordered after the "
        << DescribeAccess(*pair.first, pair.first_effect) << " at "
        << pair.first->loc().LineColumn() << " but no "
        << FenceNeedName(unfenced.need)
        << " orders them on every path (placement model: " << model << ")");
  }
  // Every fence insert-proxy-fences added must be needed by some edge.
  const std::set<UnfencedPair> base(pairs.begin(), pairs.end());
  std::vector<const Op*> fences;
  Walk(kernel.body(), [&](const Op& op) {
    const SyncKind sync = FactsOf(op.kind()).sync;
    if ((sync == SyncKind::kProxyFence ||
         sync == SyncKind::kMbarrierInitFence) &&
        op.provenance().pass == "insert-proxy-fences") {
      fences.push_back(&op);
    }
  });
  if (fences.empty()) return JoinStatuses(errors);
  CheckerAnalyses analyses(kernel);
  IncrementalOrdering ordering(kernel, analyses.options, placement);
  if (absl::Status same = SameAnswer(ordering.UnfencedPairs(), base);
      !same.ok()) {
    return same;
  }
  for (const Op* fence : fences) {
    bool needed = false;
    for (const UnfencedPair& pair : ordering.UnfencedPairs({fence})) {
      if (!base.count(pair)) needed = true;
    }
    const Op& op = *fence;
    if (!needed) {
      errors.push_back(Error(op.loc())
                       << "fence inserted by insert-proxy-fences is not "
                          "needed: every generic-async edge stays fenced "
                          "without it (placement model: "
                       << model << ")");
    }
  }
  return JoinStatuses(errors);
}

absl::Status CheckSyncs(const Kernel& kernel) {
  std::vector<absl::Status> errors;
  std::vector<UnorderedPair> pairs = FindUnorderedPairs(kernel);
  for (const UnorderedPair& pair : pairs) {
    errors.push_back(
        Error(pair.second->loc())
            .Note(pair.first->loc(),
                  absl::StrCat(DescribeAccess(*pair.first, pair.first_effect),
                               pair.carried ? ", in an earlier iteration" : "",
                               ", here"))
        << "unordered "
        << (MemoryEffectsOf(*pair.second)[pair.second_effect].space ==
                    MemorySpace::kGlobal
                ? "global-memory"
                : "shared-memory")
        << " accesses: " << DescribeAccess(*pair.second, pair.second_effect)
        << " may touch "
        << "what another thread's "
        << DescribeAccess(*pair.first, pair.first_effect) << " at "
        << pair.first->loc().LineColumn()
        << " touched, and no barrier, mbarrier wait or completion wait "
           "orders them on every path");
  }
  // Every barrier insert-syncs added must be needed by some pair.
  const std::set<UnorderedPair> base(pairs.begin(), pairs.end());
  std::vector<const Op*> barriers;
  Walk(kernel.body(), [&](const Op& op) {
    const SyncKind sync = FactsOf(op.kind()).sync;
    if ((sync == SyncKind::kBlockBarrier || sync == SyncKind::kNamedBarrier) &&
        op.provenance().pass == "insert-syncs") {
      barriers.push_back(&op);
    }
  });
  if (barriers.empty()) return JoinStatuses(errors);
  CheckerAnalyses analyses(kernel);
  IncrementalOrdering ordering(kernel, analyses.options);
  if (absl::Status same = SameAnswer(ordering.UnorderedPairs(), base);
      !same.ok()) {
    return same;
  }
  for (const Op* barrier : barriers) {
    bool needed = false;
    for (const UnorderedPair& pair : ordering.UnorderedPairs({barrier})) {
      if (!base.count(pair)) needed = true;
    }
    if (!needed) {
      errors.push_back(Error(barrier->loc())
                       << "barrier inserted by insert-syncs is not needed: "
                          "every conflicting pair stays ordered without it");
    }
  }
  return JoinStatuses(errors);
}

}  // namespace kir
