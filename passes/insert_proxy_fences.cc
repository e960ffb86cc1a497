// Proxy fence insertion; see insert_proxy_fences.h.
//
// The pass asks analysis/ordering.h for the generic -> async edges left
// unfenced in the placement model, and for the first of them tries the
// model's candidate positions, most hoisted first: a fence is kept at the
// first position after which that edge is fenced. It repeats until no edge
// is left, then (hoist=true) drops every inserted fence that no edge needs.
// Checking each position with the analysis keeps the placement heuristics
// honest: a hoisted position that does not order the edge on every path
// (a generic write inside the loop, a concurrently writing role, a barrier
// inside the write loop) is simply not taken. As in insert-syncs, the
// thread and conflict analyses and the dataflow are kept across the
// queries (and the two analyses preserved): each query walks only from the
// first kernel-body op that changed, and only as far as the edge it asks
// about (the first edge left, or whether the one just fenced still is).
#include "passes/insert_proxy_fences.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/conflicts.h"
#include "analysis/ordering.h"
#include "analysis/thread_analysis.h"
#include "ir/builder.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"
#include "passes/op_utils.h"

namespace kir {
namespace {

constexpr char kInsertProxyFencesPassName[] = "insert-proxy-fences";
constexpr char kSharedFences[] = "shared-fences-inserted";
constexpr char kGlobalFences[] = "global-fences-inserted";
constexpr char kInitFences[] = "mbarrier-init-fences-inserted";
constexpr char kEdges[] = "unfenced-edges";

struct Options {
  FencePlacement placement = FencePlacement::kWriters;
  bool hoist = true;
  bool predicate = true;
  FenceSpace shared_space = FenceSpace::kSharedCta;
};

// The values are checked against passes.def (choices, and predicate only
// with placement=issuer) when the pipeline is parsed.
absl::StatusOr<Options> ParseOptions(const PassOptions& pass_options) {
  Options options;
  absl::StatusOr<std::string> placement = pass_options.GetString("placement");
  if (!placement.ok()) return placement.status();
  if (*placement == "issuer") options.placement = FencePlacement::kIssuer;
  absl::StatusOr<std::string> space = pass_options.GetString("space");
  if (!space.ok()) return space.status();
  if (*space == "all") options.shared_space = FenceSpace::kAll;
  absl::StatusOr<bool> hoist = pass_options.GetBool("hoist");
  if (!hoist.ok()) return hoist.status();
  options.hoist = *hoist;
  absl::StatusOr<bool> predicate = pass_options.GetBool("predicate");
  if (!predicate.ok()) return predicate.status();
  options.predicate = *predicate;
  return options;
}

// Where a fence goes: before position `index` of `region`.
struct FencePosition {
  Region* region = nullptr;
  int index = 0;
  bool operator==(const FencePosition& other) const {
    return region == other.region && index == other.index;
  }
};

FencePosition Before(Op* op) {
  Region* region = op->parent_region();
  return FencePosition{region, region->IndexOf(op)};
}

FencePosition After(Op* op) {
  Region* region = op->parent_region();
  return FencePosition{region, region->IndexOf(op) + 1};
}

// The first op of `region` that is not plain computation, or null.
const Op* FirstEffectful(const Region& region) {
  for (int i = 0; i < region.size(); ++i) {
    if (!IsPlainComputation(region.op(i))) return &region.op(i);
  }
  return nullptr;
}

bool AccessesAsyncData(const Op& op) {
  for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
    if (effect.proxy == Proxy::kAsync &&
        effect.space != MemorySpace::kRegister) {
      return true;
    }
  }
  return false;
}

// Whether some op in `region` (at any depth) writes `buffer` through the
// generic proxy.
bool WritesGeneric(const Region& region, const Value* buffer) {
  bool writes = false;
  Walk(region, [&](const Op& op) {
    for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
      if (effect.proxy == Proxy::kGeneric && effect.writes() &&
          (effect.buffer == buffer || effect.whole_buffer)) {
        writes = true;
      }
    }
  });
  return writes;
}

// After `anchor`, or after a loop around it, staying inside the region that
// also holds `second` and inside the anchor's guards. Most hoisted first.
std::vector<FencePosition> PositionsAfter(Op* anchor, Op* second, bool hoist) {
  std::vector<FencePosition> positions = {After(anchor)};
  if (!hoist) return positions;
  // The innermost region holding both bounds the hoisting.
  const Op* top = nullptr;
  for (Op* op = second; op != nullptr && top == nullptr; op = op->parent_op()) {
    top = anchor->AncestorIn(*op->parent_region());
  }
  for (Op* op = anchor->parent_op(); op != nullptr; op = op->parent_op()) {
    if (top != nullptr && op != top && top->IsInside(*op)) break;
    if (op->kind() == OpKind::kFor) positions.push_back(After(op));
    if (op == top) break;
  }
  std::reverse(positions.begin(), positions.end());
  return positions;
}

// Writers: after the generic access, once it is complete in its thread. An
// immediate access is complete where it runs; a cp.async write only after
// a wait for its group (a fence before that orders nothing of it), so the
// positions follow each such wait, in program order.
std::vector<FencePosition> WriterPositions(const Kernel& kernel,
                                           const UnorderedPair& pair,
                                           bool hoist) {
  Op* first = const_cast<Op*>(pair.first);
  Op* second = const_cast<Op*>(pair.second);
  const OpFacts& facts = FactsOf(first->kind());
  if (facts.completion == Completion::kImmediate || !facts.group) {
    return PositionsAfter(first, second, hoist);
  }
  std::vector<FencePosition> positions;
  bool after_first = false;
  Walk(kernel.body(), [&](const Op& op) {
    if (&op == first) after_first = true;
    const OpFacts& wait = FactsOf(op.kind());
    if (!after_first || wait.sync != SyncKind::kGroupWait ||
        wait.group != facts.group) {
      return;
    }
    for (const FencePosition& p :
         PositionsAfter(const_cast<Op*>(&op), second, hoist)) {
      positions.push_back(p);
    }
  });
  return positions;
}

// Issuer: right before the async op (predicate=true) or before the
// outermost `if` guarding it that does not hold the generic access
// (predicate=false); hoisted before an `if`
// whose branches both start with async ops, and before loops that hold
// neither the generic access nor a generic write of the consumed buffer.
std::vector<FencePosition> IssuerPositions(const UnfencedPair& unfenced,
                                           bool hoist, bool predicate) {
  Op* first = const_cast<Op*>(unfenced.pair.first);
  Op* anchor = const_cast<Op*>(unfenced.pair.second);
  const MemoryEffects effects = MemoryEffectsOf(*anchor);
  const Value* consumed =
      unfenced.pair.second_effect < static_cast<int>(effects.size())
          ? effects[unfenced.pair.second_effect].buffer
          : nullptr;
  if (!predicate) {
    // Not above an `if` that also holds the generic access (an acquire in
    // the issuing thread): a fence there would precede the access.
    while (anchor->parent_op() != nullptr &&
           anchor->parent_op()->kind() == OpKind::kIf &&
           !first->IsInside(*anchor->parent_op())) {
      anchor = anchor->parent_op();
    }
  }
  std::vector<FencePosition> positions = {Before(anchor)};
  if (!hoist) return positions;
  while (Op* parent = anchor->parent_op()) {
    const Region& region = *anchor->parent_region();
    if (parent->kind() == OpKind::kIf && FirstEffectful(region) == anchor &&
        parent->num_regions() == 2 && parent->region(0).size() > 0 &&
        parent->region(1).size() > 0) {
      const Region& other =
          &parent->region(0) == &region ? parent->region(1) : parent->region(0);
      const Op* other_first = FirstEffectful(other);
      if (other_first != nullptr && AccessesAsyncData(*other_first)) {
        anchor = parent;
        continue;
      }
    }
    if (parent->kind() == OpKind::kFor && !first->IsInside(*parent) &&
        (consumed == nullptr || !WritesGeneric(parent->region(0), consumed))) {
      anchor = parent;
      continue;
    }
    break;
  }
  if (!(Before(anchor) == positions.front())) {
    positions.insert(positions.begin(), Before(anchor));
  }
  return positions;
}

class FenceInserter {
 public:
  FenceInserter(Kernel& kernel, const Options& options, PassContext& context)
      : kernel_(kernel),
        options_(options),
        context_(context),
        stats_(context.stats),
        conflicts_(context.Get<ConflictAnalysis>(kernel)),
        threads_(context.Get<ThreadAnalysis>(kernel)) {
    analyses_.threads = &threads_;
    analyses_.conflicts = &conflicts_;
    ordering_ = std::make_unique<IncrementalOrdering>(kernel_, analyses_,
                                                      options_.placement);
  }

  absl::Status Run() {
    stats_.Add(kEdges, ordering_->CountUnfencedEdges());
    // Edges within one iteration first: their fences often cover the
    // carried ones too.
    while (std::optional<UnfencedPair> unfenced =
               ordering_->FirstUnfencedPair()) {
      if (!Place(*unfenced)) return PlacementError(*unfenced);
    }
    if (options_.hoist) Minimize();
    RecordProvenance();
    // Fences change neither accesses nor values: the thread analysis, told
    // of each fence, and the conflicts stay valid. Without one the kernel
    // is as it was.
    context_.Preserve<ThreadAnalysis>();
    context_.Preserve<ConflictAnalysis>();
    if (inserted_.empty()) context_.PreserveAll();
    for (Op* fence : InProgramOrder(kernel_, inserted_)) {
      if (fence->kind() == OpKind::kFenceMbarrierInit) {
        stats_.Add(kInitFences);
      } else if (fence->space() == FenceSpace::kGlobal) {
        stats_.Add(kGlobalFences);
      } else {
        stats_.Add(kSharedFences);
      }
    }
    return absl::OkStatus();
  }

 private:
  std::vector<FencePosition> Candidates(const UnfencedPair& unfenced) const {
    if (unfenced.need == FenceNeed::kMbarrierInit ||
        options_.placement == FencePlacement::kWriters) {
      return WriterPositions(kernel_, unfenced.pair, options_.hoist);
    }
    return IssuerPositions(unfenced, options_.hoist, options_.predicate);
  }

  // Keeps a fence at the first candidate position that fences `unfenced`;
  // false when no position does.
  bool Place(const UnfencedPair& unfenced) {
    for (const FencePosition& position : Candidates(unfenced)) {
      Op* fence = CreateFence(position, unfenced);
      threads_.AddOp(*fence);
      ordering_->Changed(*fence);
      if (!ordering_->ContainsUnfenced(unfenced)) {
        inserted_.Insert(fence);
        return true;
      }
      Remove(fence);
    }
    return false;
  }

  Op* CreateFence(const FencePosition& position, const UnfencedPair& unfenced) {
    OpBuilder builder(*position.region, position.index);
    const bool at_issuer = options_.placement == FencePlacement::kIssuer &&
                           unfenced.need != FenceNeed::kMbarrierInit;
    builder.set_loc(at_issuer ? unfenced.pair.second->loc()
                              : unfenced.pair.first->loc());
    builder.set_provenance(Provenance{kInsertProxyFencesPassName, {}});
    switch (unfenced.need) {
      case FenceNeed::kMbarrierInit:
        return builder.Create(OpKind::kFenceMbarrierInit, {});
      case FenceNeed::kGlobalProxy:
        return builder.Create(OpKind::kFenceProxyAsync, {},
                              {attr::space(FenceSpace::kGlobal)});
      case FenceNeed::kSharedProxy:
        break;
    }
    return builder.Create(OpKind::kFenceProxyAsync, {},
                          {attr::space(options_.shared_space)});
  }

  absl::Status PlacementError(const UnfencedPair& unfenced) const {
    const UnorderedPair& pair = unfenced.pair;
    return Error(pair.second->loc())
               .Note(
                   pair.first->loc(),
                   absl::StrCat("the generic access: ",
                                DescribeAccess(*pair.first, pair.first_effect),
                                pair.carried ? " (an earlier iteration)" : ""))
           << kInsertProxyFencesPassName << ": "
           << DescribeAccess(*pair.second, pair.second_effect) << " at "
           << pair.second->loc().LineColumn() << " must be fenced after "
           << DescribeAccess(*pair.first, pair.first_effect) << " at "
           << pair.first->loc().LineColumn()
           << ", but no fence position of the "
           << (options_.placement == FencePlacement::kWriters ? "writers"
                                                              : "issuer")
           << " placement orders them (they need a barrier or release "
              "between them that a fence can precede)";
  }

  // Drops each inserted fence (in program order) that no edge needs (every
  // edge asked for, as in insert-syncs: RecordProvenance asks again).
  void Minimize() {
    for (Op* fence : InProgramOrder(kernel_, inserted_)) {
      if (ordering_->UnfencedPairs({fence}).empty()) {
        inserted_.Erase(fence);
        Remove(fence);
      }
    }
  }

  // Records on each fence the accesses it alone fences.
  void RecordProvenance() {
    for (Op* fence : InProgramOrder(kernel_, inserted_)) {
      std::vector<const Op*> because;
      for (const UnfencedPair& p : ordering_->UnfencedPairs({fence})) {
        because.push_back(p.pair.first);
        because.push_back(p.pair.second);
      }
      std::sort(because.begin(), because.end(), [](const Op* a, const Op* b) {
        return std::make_pair(a->loc().line, a->loc().column) <
               std::make_pair(b->loc().line, b->loc().column);
      });
      because.erase(std::unique(because.begin(), because.end()), because.end());
      Provenance provenance{kInsertProxyFencesPassName, {}};
      for (const Op* op : because) {
        if (op->loc().known()) provenance.because.push_back(op->loc());
      }
      fence->set_provenance(std::move(provenance));
    }
  }

  // Takes `op` (an inserted fence) out of the kernel and the analysis.
  void Remove(Op* op) {
    ordering_->Changed(*op);
    threads_.RemoveOp(*op);
    RemoveOp(op);
  }

  Kernel& kernel_;
  const Options& options_;
  PassContext& context_;
  PassStatistics& stats_;
  const ConflictAnalysis& conflicts_;
  ThreadAnalysis& threads_;
  // The analyses every query uses.
  SyncAnalysisOptions analyses_;
  // The dataflow kept across placements; told of every fence added or taken.
  std::unique_ptr<IncrementalOrdering> ordering_;
  OpSet inserted_;
};

}  // namespace

absl::Status InsertProxyFences(Kernel& kernel, const PassOptions& options,
                               PassContext& context) {
  for (const char* counter :
       {kSharedFences, kGlobalFences, kInitFences, kEdges}) {
    context.stats.Add(counter, 0);
  }
  absl::StatusOr<Options> parsed = ParseOptions(options);
  if (!parsed.ok()) return parsed.status();
  return FenceInserter(kernel, *parsed, context).Run();
}

}  // namespace kir
