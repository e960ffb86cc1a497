// Barrier insertion for shared-memory conflicts; see insert_syncs.h.
//
// The pass asks analysis/ordering.h for the conflicting pairs left unordered,
// places one barrier for the first of them, and asks again, until none is
// left; then it drops every inserted barrier without which nothing becomes
// unordered, so the result is minimal. Barriers change neither accesses nor
// values, so the pass keeps the kernel's thread and conflict analyses (it
// tells the thread analysis of each barrier) and its conflict answers
// across rounds, and preserves both analyses. The dataflow is kept too
// (IncrementalOrdering): after a barrier it walks again only from the
// kernel-body op that holds it, and asking whether a barrier is needed
// walks from it until the state is again the kernel's own, so a long
// straight-line kernel costs about linear time, not a walk per barrier.
#include "passes/insert_syncs.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/conflicts.h"
#include "analysis/ordering.h"
#include "analysis/thread_analysis.h"
#include "ir/builder.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"
#include "passes/barrier_ids.h"
#include "passes/op_utils.h"

namespace kir {
namespace {

constexpr char kInsertSyncsPassName[] = "insert-syncs";
constexpr char kBlockBarriers[] = "block-barriers-inserted";
constexpr char kNamedBarriers[] = "named-barriers-inserted";
constexpr char kPairs[] = "pairs-only-one-barrier-orders";
constexpr char kDropped[] = "barriers-dropped";

// Where a barrier goes: before position `index` of `region`.
struct Placement {
  Region* region = nullptr;
  int index = 0;
  const Op* role = nullptr;  // the role around the region, if any
};

// Which regions hold roles. The pass adds none, so each region is looked
// through once, not at every barrier placed in it.
class RegionsWithRoles {
 public:
  bool Has(const Region& region) {
    auto [it, inserted] = has_roles_.emplace(&region, false);
    for (int i = 0; inserted && i < region.size(); ++i) {
      it->second = it->second || region.op(i).kind() == OpKind::kRole;
    }
    return it->second;
  }

 private:
  absl::flat_hash_map<const Region*, bool> has_roles_;
};

// How many places each pair has been given a barrier at. Kept by the later
// access's serial: the pass orders pairs front to back, so it reads the
// entries it wrote last, where a hash map of pairs reads a random slot of
// a table as large as the kernel.
class PlacementAttempts {
 public:
  // The count for `pair`, valid until the next call.
  int& Of(const UnorderedPair& pair) {
    const size_t serial = static_cast<size_t>(pair.second->serial());
    if (serial >= latest_.size()) {
      latest_.resize(std::max(serial + 1, 2 * latest_.size()), -1);
    }
    for (int i = latest_[serial]; i >= 0; i = entries_[i].next) {
      if (entries_[i].pair == pair) return entries_[i].attempts;
    }
    entries_.push_back(Entry{pair, 0, latest_[serial]});
    latest_[serial] = static_cast<int>(entries_.size()) - 1;
    return entries_.back().attempts;
  }

 private:
  struct Entry {
    UnorderedPair pair;
    int attempts = 0;
    int next = -1;  // the previous entry with the same later access
  };
  // By serial of the later access: its last entry, or -1.
  std::vector<int> latest_;
  std::vector<Entry> entries_;
};

// Whether a barrier before position `index` of `region` would sit between
// two of its roles.
bool SplitsRoles(const Region& region, int index, RegionsWithRoles& roles) {
  if (!roles.Has(region)) return false;
  bool before = false, after = false;
  for (int i = 0; i < region.size(); ++i) {
    if (region.op(i).kind() != OpKind::kRole) continue;
    (i < index ? before : after) = true;
  }
  return before && after;
}

// The innermost region holding both accesses. When the earlier access's op
// there precedes the later one's, the barrier goes right before the later
// one (moved up over plain computation, never above the earlier one);
// otherwise the dependence is carried around a loop and the barrier goes at
// the end of the region (`at_end`), or, as a fallback, before the later op.
std::optional<Placement> Place(const UnorderedPair& pair, bool fallback,
                               RegionsWithRoles& roles) {
  Op* first = const_cast<Op*>(pair.first);
  Op* second = const_cast<Op*>(pair.second);
  for (Op* op = second; op != nullptr; op = op->parent_op()) {
    Region* region = op->parent_region();
    // A dependence carried around a loop is ordered in that loop's body, not
    // in a region nested in it that the loop runs many times per iteration.
    if (pair.carried_loop != nullptr && !fallback &&
        region->parent_op() != pair.carried_loop &&
        region->IsInside(*pair.carried_loop)) {
      continue;
    }
    Op* first_ancestor = first->AncestorIn(*region);
    if (first_ancestor == nullptr) continue;
    const int first_index = region->IndexOf(first_ancestor);
    const int second_index = region->IndexOf(op);
    Placement placement;
    placement.region = region;
    placement.role = region->EnclosingOp(OpKind::kRole);
    if (first_index < second_index ||
        (fallback && first_index != second_index)) {
      int index = second_index;
      while (index - 1 > first_index &&
             IsPlainComputation(region->op(index - 1))) {
        --index;
      }
      // Roles of one region run concurrently; a barrier between two of them
      // would make the later wait for the earlier to finish (a deadlock when
      // they talk through mbarriers). Go right after the earlier access.
      if (SplitsRoles(*region, index, roles)) index = first_index + 1;
      placement.index = index;
    } else if (fallback) {
      return std::nullopt;
    } else {
      placement.index = region->size();
      if (placement.index > 0 &&
          region->op(placement.index - 1).kind() == OpKind::kReturn) {
        --placement.index;
      }
      if (SplitsRoles(*region, placement.index, roles)) return std::nullopt;
    }
    return placement;
  }
  return std::nullopt;
}

// Where a barrier can go instead of `base` and still order `pair` on every
// path that runs both accesses: inside an `if` around the later access,
// right before it, or inside an `if` around the earlier access, at the end
// of its branch, so that it runs only when the access does. Deepest first;
// whether the `if` is uniform over the barrier's threads is checked when
// the barrier is inserted.
std::vector<Placement> Narrower(const UnorderedPair& pair,
                                const Placement& base) {
  std::vector<Placement> out;
  if (pair.carried || base.index >= base.region->size()) return out;
  Op* first = const_cast<Op*>(pair.first);
  Op* second = const_cast<Op*>(pair.second);
  Op* first_ancestor = first->AncestorIn(*base.region);
  if (first_ancestor == nullptr ||
      base.region->IndexOf(first_ancestor) >= base.index) {
    return out;
  }
  std::vector<Placement> later, earlier;
  for (Op* op = second->AncestorIn(*base.region);
       op != nullptr && op != second && op->kind() == OpKind::kIf;) {
    Region* branch = nullptr;
    for (int r = 0; r < op->num_regions(); ++r) {
      if (second->AncestorIn(op->region(r)) != nullptr) {
        branch = &op->region(r);
      }
    }
    if (branch == nullptr) break;
    Op* inner = second->AncestorIn(*branch);
    int index = branch->IndexOf(inner);
    while (index > 0 && IsPlainComputation(branch->op(index - 1))) --index;
    later.push_back(Placement{branch, index, base.role});
    op = inner;
  }
  for (Op* op = first_ancestor; op != first && op->kind() == OpKind::kIf;) {
    Region* branch = nullptr;
    for (int r = 0; r < op->num_regions(); ++r) {
      if (first->AncestorIn(op->region(r)) != nullptr) {
        branch = &op->region(r);
      }
    }
    if (branch == nullptr) break;
    int index = branch->size();
    if (index > 0 && branch->op(index - 1).kind() == OpKind::kReturn) break;
    earlier.push_back(Placement{branch, index, base.role});
    op = first->AncestorIn(*branch);
  }
  out.insert(out.end(), later.rbegin(), later.rend());
  out.insert(out.end(), earlier.rbegin(), earlier.rend());
  return out;
}

std::string Where(const Op& op) { return op.loc().LineColumn(); }

absl::Status PairError(const Location& at, const UnorderedPair& pair,
                       const std::string& why) {
  return Error(at)
             .Note(pair.first->loc(),
                   absl::StrCat("the earlier access: ",
                                DescribeAccess(*pair.first, pair.first_effect),
                                pair.carried ? " (an earlier iteration)" : ""))
             .Note(
                 pair.second->loc(),
                 absl::StrCat("the later access: ",
                              DescribeAccess(*pair.second, pair.second_effect)))
         << kInsertSyncsPassName << ": "
         << DescribeAccess(*pair.second, pair.second_effect) << " at "
         << Where(*pair.second) << " must be ordered after "
         << DescribeAccess(*pair.first, pair.first_effect) << " at "
         << Where(*pair.first) << " in other threads, but " << why;
}

class SyncInserter {
 public:
  SyncInserter(Kernel& kernel, PassContext& context)
      : kernel_(kernel),
        context_(context),
        stats_(context.stats),
        ids_(kernel),
        conflicts_(context.Get<ConflictAnalysis>(kernel)),
        threads_(context.Get<ThreadAnalysis>(kernel)) {
    options_.complete_uncommitted_async = true;
    // No ConflictCache: the one dataflow kept across the rounds remembers
    // every answer it computed, so a cache shared between analyses would
    // only be filled (with two thread sets per entry, over 600 bytes per op
    // of a straight-line kernel), never read.
    options_.threads = &threads_;
    options_.conflicts = &conflicts_;
    ordering_ = std::make_unique<IncrementalOrdering>(kernel_, options_);
  }

  absl::Status Run(int64_t drop) {
    if (absl::Status placed = PlaceAll(); !placed.ok()) return placed;
    Minimize();
    MergeBranchBarriers();
    RecordProvenance();
    // Nothing below asks the dataflow, whose kept states are most of the
    // pass's memory.
    ordering_.reset();
    std::vector<Op*> remaining = InProgramOrder(kernel_, inserted_);
    // Barriers change neither accesses nor values: the thread analysis,
    // told of each barrier, and the conflicts stay valid.
    context_.Preserve<ThreadAnalysis>();
    context_.Preserve<ConflictAnalysis>();
    // Without a barrier the kernel is as it was.
    if (remaining.empty()) context_.PreserveAll();
    for (Op* op : remaining) {
      stats_.Add(op->kind() == OpKind::kBarrierBlock ? kBlockBarriers
                                                     : kNamedBarriers);
    }
    if (drop > 0) {
      if (drop > static_cast<int64_t>(remaining.size())) {
        return Error(kernel_.loc())
               << kInsertSyncsPassName << ": drop-sync=" << drop << " but only "
               << remaining.size() << " barrier(s) were inserted";
      }
      Remove(remaining[drop - 1]);
      stats_.Add(kDropped);
    }
    return absl::OkStatus();
  }

 private:
  // Places a barrier for each unordered pair, earliest first, until none
  // is left (or a pair no barrier can order).
  absl::Status PlaceAll() {
    // The pairs tried so far; gone before the later phases, which keep the
    // most memory.
    PlacementAttempts attempts;
    options_.stop_at_first_same_iteration = true;
    for (;;) {
      // Only as far as the earliest pair within one iteration, the one
      // each round orders.
      const std::vector<UnorderedPair> pairs =
          ordering_->UnorderedPairs({}, /*stop_at_first_same_iteration=*/true);
      if (pairs.empty()) break;
      // Pairs within one iteration first: their barriers often order the
      // carried ones too.
      auto same_iteration =
          std::find_if(pairs.begin(), pairs.end(),
                       [](const UnorderedPair& p) { return !p.carried; });
      const UnorderedPair pair =
          same_iteration != pairs.end() ? *same_iteration : pairs.front();
      // Two allocations sharing bytes, accessed in two roles: those run
      // concurrently, so no barrier both reach can order them.
      const Op* first_role = pair.first->EnclosingOp(OpKind::kRole);
      const Op* second_role = pair.second->EnclosingOp(OpKind::kRole);
      if (first_role != nullptr && second_role != nullptr &&
          first_role != second_role) {
        return PairError(
            pair.second->loc(), pair,
            absl::StrCat("they are in roles @", first_role->name(), " and @",
                         second_role->name(),
                         ", which no barrier orders; only an mbarrier the "
                         "program waits on could"));
      }
      int& attempt = attempts.Of(pair);
      std::optional<Placement> placement;
      while (attempt < 2 && !placement) {
        placement = Place(pair, /*fallback=*/attempt == 1, roles_);
        ++attempt;
      }
      if (!placement) {
        // Where the two accesses' common region cannot order them (the
        // earlier one completes at a wait inside the later one's loop),
        // a barrier deeper on the later access's side may.
        absl::StatusOr<bool> deeper = PlaceDeeper(pair);
        if (!deeper.ok()) return deeper.status();
        if (*deeper) continue;
        return PairError(pair.second->loc(), pair,
                         "no barrier can order them: the earlier access is "
                         "not complete in its threads at any place a barrier "
                         "could go (an asynchronous access needs a "
                         "completion wait first)");
      }
      // A narrower place first, kept only when its guards are uniform over
      // the barrier's threads and the pair is then ordered.
      bool placed = false;
      for (const Placement& narrower : Narrower(pair, *placement)) {
        absl::StatusOr<Op*> barrier =
            Insert(narrower, pair, /*report_divergence=*/false);
        if (!barrier.ok()) return barrier.status();
        if (*barrier == nullptr) continue;
        if (!Unordered(pair)) {
          placed = true;
          break;
        }
        inserted_.Erase(*barrier);
        Remove(*barrier);
      }
      if (placed) continue;
      absl::StatusOr<Op*> barrier =
          Insert(*placement, pair, /*report_divergence=*/true);
      if (!barrier.ok()) return barrier.status();
    }
    return absl::OkStatus();
  }

  // Inserts a barrier at `placement` for `pair`. When its guards are not
  // uniform over its threads: an error, or (without `report_divergence`)
  // no barrier (null).
  absl::StatusOr<Op*> Insert(const Placement& placement,
                             const UnorderedPair& pair,
                             bool report_divergence) {
    OpBuilder builder(*placement.region, placement.index);
    builder.set_loc(pair.second->loc());
    builder.set_provenance(Provenance{kInsertSyncsPassName, {}});
    Op* barrier = nullptr;
    if (placement.role != nullptr) {
      const int threads = static_cast<int>(
          (placement.role->warp_end() - placement.role->warp_begin()) * 32);
      std::optional<int> id = ids_.Allocate(placement.role, threads);
      if (!id) {
        return PairError(placement.role->loc(), pair,
                         "all named barrier ids 1..15 are taken");
      }
      barrier = builder.Create(OpKind::kBarrierNamed, {},
                               {attr::id(*id), attr::threads(threads)});
    } else {
      barrier = builder.Create(OpKind::kBarrierBlock, {});
    }
    threads_.AddOp(*barrier);
    ordering_->Changed(*barrier);
    // Every participant must reach it: guards uniform over the block (or
    // the role), and no divergent return before it.
    const ThreadAnalysis& threads = threads_;
    const Op* culprit = nullptr;
    const Scope scope =
        placement.role != nullptr ? Scope::kRole : Scope::kBlock;
    if (!threads.GuardsUniformOver(*barrier, scope, &culprit)) {
      if (!report_divergence) {
        Remove(barrier);
        return nullptr;
      }
      const Location at =
          culprit != nullptr ? culprit->loc() : pair.second->loc();
      std::string over = placement.role != nullptr
                             ? absl::StrCat("role @", placement.role->name())
                             : std::string("the block");
      const bool around = culprit != nullptr && barrier->IsInside(*culprit);
      Remove(barrier);
      std::string why;
      if (culprit == nullptr || around) {
        why = absl::StrCat("the barrier would sit under ",
                           culprit == nullptr
                               ? std::string("control flow")
                               : absl::StrCat("this ", culprit->mnemonic()),
                           ", which is not uniform over ", over,
                           ", so some participants could not reach it");
      } else {
        why =
            absl::StrCat("threads that return under this ", culprit->mnemonic(),
                         " could not reach a barrier over ", over);
      }
      return PairError(at, pair, why);
    }
    inserted_.Insert(barrier);
    return barrier;
  }

  // Tries a barrier right before the later access's ancestor in each region
  // between the two accesses' common region and the later access, outermost
  // first (a loop's body runs it every iteration, so deeper costs more);
  // keeps the first after which the pair is ordered.
  absl::StatusOr<bool> PlaceDeeper(const UnorderedPair& pair) {
    Op* first = const_cast<Op*>(pair.first);
    Op* second = const_cast<Op*>(pair.second);
    std::vector<Region*> chain;  // innermost first
    for (Op* op = second; op != nullptr; op = op->parent_op()) {
      Region* region = op->parent_region();
      if (first->AncestorIn(*region) != nullptr) break;
      chain.push_back(region);
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      Region* region = *it;
      int index = region->IndexOf(second->AncestorIn(*region));
      while (index > 0 && IsPlainComputation(region->op(index - 1))) --index;
      if (SplitsRoles(*region, index, roles_)) continue;
      absl::StatusOr<Op*> barrier = Insert(
          Placement{region, index, region->EnclosingOp(OpKind::kRole)}, pair,
          /*report_divergence=*/false);
      if (!barrier.ok()) return barrier.status();
      if (*barrier == nullptr) continue;
      if (!Unordered(pair)) return true;
      inserted_.Erase(*barrier);
      Remove(*barrier);
    }
    return false;
  }

  // Whether `pair` is still unordered. Every pair is looked for: after a
  // barrier is added the analysis can report a pair it did not report
  // before (kir-check's fuzzer found one: a narrower barrier for one pair
  // made an earlier pair reappear), so the earliest pair left need not be
  // `pair`.
  bool Unordered(const UnorderedPair& pair) {
    return ordering_->Contains(pair);
  }

  // Drops each inserted barrier (in program order) that nothing needs. It
  // asks for every pair a barrier orders, not just whether there is one:
  // RecordProvenance asks again, and the dataflow keeps the answer while
  // the kernel does not change.
  void Minimize() {
    for (Op* barrier : InProgramOrder(kernel_, inserted_)) {
      if (ordering_->UnorderedPairs({barrier}).empty()) {
        inserted_.Erase(barrier);
        Remove(barrier);
      }
    }
  }

  // An `if` whose two branches both start (or both end) with the same
  // inserted barrier runs one either way: one barrier before (or after) the
  // `if` is the same synchronization, written once.
  void MergeBranchBarriers() {
    if (!kernel_.MayHold(OpKind::kIf)) return;
    std::vector<Op*> ifs;
    Walk(kernel_.body(), [&](Op& op) {
      if (op.kind() == OpKind::kIf && op.num_regions() == 2) ifs.push_back(&op);
    });
    // Innermost first, so that merged barriers can merge again outside.
    std::reverse(ifs.begin(), ifs.end());
    for (Op* if_op : ifs) {
      for (const bool at_start : {true, false}) {
        Region& then_region = if_op->region(0);
        Region& else_region = if_op->region(1);
        if (then_region.empty() || else_region.empty()) continue;
        Op& a = at_start ? then_region.op(0)
                         : then_region.op(then_region.size() - 1);
        Op& b = at_start ? else_region.op(0)
                         : else_region.op(else_region.size() - 1);
        if (!inserted_.Contains(&a) || !inserted_.Contains(&b) ||
            a.kind() != b.kind() || a.attrs() != b.attrs()) {
          continue;
        }
        Region& parent = *if_op->parent_region();
        const int index = parent.IndexOf(if_op) + (at_start ? 0 : 1);
        OpBuilder builder(parent, index);
        builder.set_loc(a.loc());
        builder.set_provenance(Provenance{kInsertSyncsPassName, {}});
        Op* merged = builder.Create(a.kind(), {}, a.attrs());
        threads_.AddOp(*merged);
        ordering_->Changed(*merged);
        inserted_.Erase(&a);
        inserted_.Erase(&b);
        Remove(&a);
        Remove(&b);
        inserted_.Insert(merged);
      }
    }
  }

  // Records on each barrier the accesses it alone orders.
  void RecordProvenance() {
    for (Op* barrier : InProgramOrder(kernel_, inserted_)) {
      std::vector<const Op*> because;
      // Every pair it orders. No other barrier orders these, so no pair is
      // counted twice.
      const std::vector<UnorderedPair> pairs =
          ordering_->UnorderedPairs({barrier});
      stats_.Add(kPairs, static_cast<int64_t>(pairs.size()));
      because.reserve(2 * pairs.size());
      for (const UnorderedPair& pair : pairs) {
        because.push_back(pair.first);
        because.push_back(pair.second);
      }
      std::sort(because.begin(), because.end(), [](const Op* a, const Op* b) {
        return std::make_pair(a->loc().line, a->loc().column) <
               std::make_pair(b->loc().line, b->loc().column);
      });
      because.erase(std::unique(because.begin(), because.end()), because.end());
      Provenance provenance{kInsertSyncsPassName, {}};
      provenance.because.reserve(because.size());
      for (const Op* op : because) {
        if (op->loc().known()) provenance.because.push_back(op->loc());
      }
      barrier->set_provenance(std::move(provenance));
    }
  }

  // Takes `op` (an inserted barrier) out of the kernel and the analysis.
  void Remove(Op* op) {
    if (ordering_ != nullptr) ordering_->Changed(*op);
    threads_.RemoveOp(*op);
    RemoveOp(op);
  }

  Kernel& kernel_;
  PassContext& context_;
  PassStatistics& stats_;
  BarrierIdAllocator ids_;
  RegionsWithRoles roles_;
  const ConflictAnalysis& conflicts_;
  ThreadAnalysis& threads_;
  SyncAnalysisOptions options_;
  // The dataflow kept across rounds; told of every barrier added or taken.
  std::unique_ptr<IncrementalOrdering> ordering_;
  OpSet inserted_;
};

}  // namespace

absl::Status InsertSyncs(Kernel& kernel, const PassOptions& options,
                         PassContext& context) {
  for (const char* counter :
       {kBlockBarriers, kNamedBarriers, kPairs, kDropped}) {
    context.stats.Add(counter, 0);
  }
  absl::StatusOr<int64_t> drop = options.GetInt("drop-sync");
  if (!drop.ok()) return drop.status();
  return SyncInserter(kernel, context).Run(*drop);
}

}  // namespace kir
