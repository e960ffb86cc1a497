// The ordering dataflow; see ordering.h.
#include "analysis/ordering.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <numeric>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "analysis/static_values.h"
#include "ir/check.h"
#include "ir/diagnostics.h"

namespace kir {

// Indices of checkpoints, ascending. Checkpoints are completed in order and
// dropped from the end, so the indices are added in order and erased as a
// suffix: a sorted vector, without a tree node per index.
class CheckpointIndices {
 public:
  using const_iterator = std::vector<int>::const_iterator;
  void Add(int index) {
    KIR_CHECK(indices_.empty() || indices_.back() < index)
        << "checkpoint " << index << " completed out of order";
    indices_.push_back(index);
  }
  void EraseFrom(int index) { indices_.erase(LowerBound(index), end()); }
  const_iterator LowerBound(int index) const {
    return std::lower_bound(indices_.begin(), indices_.end(), index);
  }
  bool empty() const { return indices_.empty(); }
  int front() const { return indices_.front(); }
  const_iterator end() const { return indices_.end(); }

 private:
  std::vector<int> indices_;
};

// ---------------------------------------------------------------------------
// The ordering dataflow.

namespace {

// What a release (arrive) hands over and an acquire (wait) takes.
struct SyncKey {
  enum Kind { kMbarrier, kNamedBarrier, kCluster };
  Kind kind = kMbarrier;
  const Value* buffer = nullptr;
  std::vector<const Value*> indices;
  int64_t id = 0;
  bool operator<(const SyncKey& o) const {
    return std::tie(kind, buffer, indices, id) <
           std::tie(o.kind, o.buffer, o.indices, o.id);
  }
};

// The states below hold thread sets and sets of sync keys by number: a
// state then copies, compares and joins as a flat array, and the few
// distinct sets of a kernel are combined once each. Number 0 is the empty
// set in both tables.
using SetId = int32_t;
constexpr SetId kEmptySet = 0;

uint64_t PairKey(SetId a, SetId b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) |
         static_cast<uint32_t>(b);
}

class ThreadSetTable {
 public:
  ThreadSetTable() { Intern(ThreadBits()); }

  SetId Intern(const ThreadBits& bits) {
    auto [it, inserted] =
        ids_.try_emplace(bits, static_cast<SetId>(sets_.size()));
    if (inserted) sets_.push_back(bits);
    return it->second;
  }
  const ThreadBits& Bits(SetId id) const { return sets_[id]; }

  SetId Or(SetId a, SetId b) {
    if (a == b || b == kEmptySet) return a;
    if (a == kEmptySet) return b;
    return Memo(or_, a, b, [&] { return Bits(a) | Bits(b); });
  }
  SetId And(SetId a, SetId b) {
    if (a == b) return a;
    if (a == kEmptySet || b == kEmptySet) return kEmptySet;
    return Memo(and_, a, b, [&] { return Bits(a) & Bits(b); });
  }
  // a & ~b.
  SetId Minus(SetId a, SetId b) {
    if (a == b || a == kEmptySet) return kEmptySet;
    if (b == kEmptySet) return a;
    return Memo(minus_, a, b, [&] { return Bits(a) & ~Bits(b); });
  }
  bool Subset(SetId a, SetId b) { return Minus(a, b) == kEmptySet; }

 private:
  template <typename Fn>
  SetId Memo(absl::flat_hash_map<uint64_t, SetId>& memo, SetId a, SetId b,
             Fn&& compute) {
    auto it = memo.find(PairKey(a, b));
    if (it != memo.end()) return it->second;
    const SetId id = Intern(compute());
    memo.emplace(PairKey(a, b), id);
    return id;
  }

  std::deque<ThreadBits> sets_;  // references stay valid as it grows
  absl::flat_hash_map<ThreadBits, SetId, std::hash<ThreadBits>> ids_;
  absl::flat_hash_map<uint64_t, SetId> or_, and_, minus_;
};

class SyncKeySetTable {
 public:
  SyncKeySetTable() { Intern({}); }

  int KeyId(const SyncKey& key) {
    auto [it, inserted] =
        key_ids_.try_emplace(key, static_cast<int>(keys_.size()));
    if (inserted) keys_.push_back(key);
    return it->second;
  }
  const SyncKey& Key(int id) const { return keys_[id]; }
  // The key numbers of a set, ascending.
  const std::vector<int>& Keys(SetId set) const { return sets_[set]; }

  SetId Intern(std::vector<int> sorted_keys) {
    auto [it, inserted] =
        set_ids_.try_emplace(sorted_keys, static_cast<SetId>(sets_.size()));
    if (inserted) sets_.push_back(std::move(sorted_keys));
    return it->second;
  }
  bool Contains(SetId set, int key) const {
    const std::vector<int>& keys = sets_[set];
    return std::binary_search(keys.begin(), keys.end(), key);
  }
  SetId Insert(SetId set, int key) {
    auto it = insert_.find(PairKey(set, key));
    if (it != insert_.end()) return it->second;
    std::vector<int> keys = sets_[set];
    auto at = std::lower_bound(keys.begin(), keys.end(), key);
    if (at == keys.end() || *at != key) keys.insert(at, key);
    const SetId id = Intern(std::move(keys));
    insert_.emplace(PairKey(set, key), id);
    return id;
  }
  SetId Intersect(SetId a, SetId b) {
    if (a == b) return a;
    if (a == kEmptySet || b == kEmptySet) return kEmptySet;
    auto it = intersect_.find(PairKey(a, b));
    if (it != intersect_.end()) return it->second;
    std::vector<int> common;
    std::set_intersection(sets_[a].begin(), sets_[a].end(), sets_[b].begin(),
                          sets_[b].end(), std::back_inserter(common));
    const SetId id = Intern(std::move(common));
    intersect_.emplace(PairKey(a, b), id);
    return id;
  }

 private:
  std::vector<SyncKey> keys_;
  std::map<SyncKey, int> key_ids_;
  std::deque<std::vector<int>> sets_;
  std::map<std::vector<int>, SetId> set_ids_;
  absl::flat_hash_map<uint64_t, SetId> insert_, intersect_;
};

enum class Stage {
  kComplete,     // done in its threads
  kUncommitted,  // async, waiting for its group's commit
  kCommitted,    // async, in a committed group not yet waited for
  kMbarrier,     // async, completes on an mbarrier
};

struct EntryKey {
  const Op* op = nullptr;
  int effect = 0;
  // The outermost loop the access was carried around (none: a null loop).
  CarriedLoop carried{nullptr, 0};
  Stage stage = Stage::kComplete;
  const Op* commit = nullptr;
  int group_distance = 0;

  bool is_carried() const { return carried.loop != nullptr; }
  absl::Span<const CarriedLoop> carried_loops() const {
    return is_carried() ? absl::Span<const CarriedLoop>(&carried, 1)
                        : absl::Span<const CarriedLoop>();
  }
  // The access and the loop it was carried around, whatever its stage.
  auto Access() const {
    return std::make_tuple(op, effect, carried.loop, carried.distance);
  }
  auto Tie() const {
    return std::make_tuple(op, effect, carried.loop, carried.distance, stage,
                           commit, group_distance);
  }
  bool operator<(const EntryKey& o) const {
    if (op != o.op) return op < o.op;
    if (effect != o.effect) return effect < o.effect;
    if (carried.loop != o.carried.loop) return carried.loop < o.carried.loop;
    if (carried.distance != o.carried.distance) {
      return carried.distance < o.carried.distance;
    }
    if (stage != o.stage) return stage < o.stage;
    if (commit != o.commit) return commit < o.commit;
    return group_distance < o.group_distance;
  }
  bool operator==(const EntryKey& o) const { return Tie() == o.Tie(); }
};

struct EntryState {
  SetId threads = kEmptySet;  // ran the access
  SetId observed =
      kEmptySet;              // know it complete (issuers, or mbarrier waiters)
  SetId ordered = kEmptySet;  // later accesses by these threads are ordered
  SetId released = kEmptySet;  // sync keys
  // The proxy rule (tracked only when a placement model is asked for):
  SetId fenced = kEmptySet;  // threads of the access that fenced after it
  // Threads whose later async accesses are fenced after it in the model.
  SetId proxy_ordered = kEmptySet;
  // Warps whose elected lane fenced after being ordered after it (issuer
  // model): counts for that lane's later elected accesses only.
  SetId elected_proxy_ordered = kEmptySet;
  SetId proxy_released = kEmptySet;  // released with every thread fenced
  bool operator==(const EntryState& o) const {
    return threads == o.threads && observed == o.observed &&
           ordered == o.ordered && released == o.released &&
           fenced == o.fenced && proxy_ordered == o.proxy_ordered &&
           elected_proxy_ordered == o.elected_proxy_ordered &&
           proxy_released == o.proxy_released;
  }
};

struct Entry {
  EntryKey key;
  EntryState state;
  // MemoryEffectsOf(*key.op)[key.effect], kept by the analysis (follows
  // from the key, so it takes no part in comparisons).
  const MemoryEffect* effect = nullptr;
  bool ring_fill = false;  // IsRingFill(*effect)
  bool operator==(const Entry& o) const {
    return key == o.key && state == o.state;
  }
};

// The pending accesses, sorted by key, one entry per key.
using State = std::vector<Entry>;

// An access and the loop it was carried around (EntryKey::Access()): the
// unit the dataflow is separable in. Every transfer acts on each entry
// alone and entries join only with entries of their own key; within the
// body of a loop no entry that came in through the loop's entry or back
// edge changes its class (only entries made in the body are carried around
// loops inside it), and within an op of the kernel body no entry of an
// earlier op does. A state's entries of one class (or one access) are
// adjacent, as the key sorts by them first.
using AccessClass = std::tuple<const Op*, int, const Op*, int>;
using Access = std::pair<const Op*, int>;

AccessClass ClassOf(const Entry& entry) { return entry.key.Access(); }
Access AccessOf(const Entry& entry) {
  return Access(entry.key.op, entry.key.effect);
}

// The units (ClassOf or AccessOf: `unit_of`) whose entries differ between
// `a` and `b`, sorted.
template <typename UnitOf>
auto ChangedUnits(const State& a, const State& b, UnitOf unit_of) {
  std::vector<decltype(unit_of(a.front()))> changed;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const auto unit =
        j == b.size() || (i < a.size() && unit_of(a[i]) < unit_of(b[j]))
            ? unit_of(a[i])
            : unit_of(b[j]);
    bool same = true;
    while (i < a.size() && j < b.size() && unit_of(a[i]) == unit &&
           unit_of(b[j]) == unit) {
      same = same && a[i] == b[j];
      ++i;
      ++j;
    }
    for (; i < a.size() && unit_of(a[i]) == unit; ++i) same = false;
    for (; j < b.size() && unit_of(b[j]) == unit; ++j) same = false;
    if (!same) changed.push_back(unit);
  }
  return changed;
}

// The entries of `state` whose unit is among `units` (sorted).
template <typename Unit, typename UnitOf>
State Restrict(const State& state, const std::vector<Unit>& units,
               UnitOf unit_of) {
  State out;
  auto u = units.begin();
  for (const Entry& entry : state) {
    const Unit unit = unit_of(entry);
    while (u != units.end() && *u < unit) ++u;
    if (u == units.end()) break;
    if (*u == unit) out.push_back(entry);
  }
  return out;
}

// `base` with the entries of `units` (sorted) replaced by `part`, whose
// entries are all of those units.
template <typename Unit, typename UnitOf>
State Replace(const State& base, const State& part,
              const std::vector<Unit>& units, UnitOf unit_of) {
  State out;
  out.reserve(base.size() + part.size());
  auto u = units.begin();
  auto p = part.begin();
  for (const Entry& entry : base) {
    const Unit unit = unit_of(entry);
    while (u != units.end() && *u < unit) ++u;
    if (u != units.end() && *u == unit) continue;
    while (p != part.end() && p->key < entry.key) out.push_back(*p++);
    out.push_back(entry);
  }
  out.insert(out.end(), p, part.end());
  return out;
}

bool IsMbarrier(const MemoryEffect& effect) {
  return effect.buffer != nullptr && effect.buffer->type().is_buffer() &&
         effect.buffer->type().dtype() == DType::kMbarrier;
}

// A stage load of a circular buffer: an mbarrier-completed write of a
// `ring` allocation. Its order with the buffer's other accesses is the
// ring's mbarrier protocol (full and empty barriers, their phases), which
// the circular-buffer pass owns: neither barriers nor fences are placed for
// it.
bool IsRingFill(const MemoryEffect& effect) {
  const Value* buffer = effect.buffer;
  return effect.completion == Completion::kMbarrier && effect.writes() &&
         buffer != nullptr && buffer->kind() == Value::Kind::kResult &&
         buffer->defining_op()->kind() == OpKind::kAllocShared &&
         buffer->defining_op()->ring();
}

// A generic-proxy access of data (not of an mbarrier object).
bool IsGenericData(const MemoryEffect& effect) {
  return effect.proxy == Proxy::kGeneric && !IsMbarrier(effect) &&
         effect.space != MemorySpace::kRegister;
}

// Memory the threads of one block share: shared memory, and global memory,
// of which the block's own accesses are ordered like shared ones (other
// blocks are the program's business: semaphores, atomics, split-K).
bool IsBlockMemory(const MemoryEffect& effect) {
  return effect.space == MemorySpace::kShared ||
         effect.space == MemorySpace::kGlobal;
}

bool IsGlobalAcquire(const MemoryEffect& effect) {
  return effect.space == MemorySpace::kGlobal &&
         (effect.order == MemoryOrder::kAcquire ||
          effect.order == MemoryOrder::kAcqRel);
}

// OrderingDataflowWork(). Per thread and plain: a walk adds to it at every
// op, and an atomic add there (a locked instruction) took a fifth of the
// time of a long loop body's walks.
thread_local int64_t dataflow_work = 0;
// OrderingOverlapQuestions(), per thread like dataflow_work.
thread_local int64_t overlap_questions = 0;
// OrderingEdgesGathered(), likewise.
thread_local int64_t edges_gathered = 0;

// Facts derived once per op and kept until the analysis ends, carved from
// large chunks: a kernel of a million ops costs a few hundred allocations
// instead of one or two per op, and the facts of ops walked one after
// the other lie together in memory. Addresses stay valid.
template <typename T>
class ChunkedStore {
 public:
  T& Add(T&& item) { return Reserve(1)[0] = std::move(item); }
  // Moves `items` (a vector or inlined vector) into consecutive slots.
  template <typename Items>
  absl::Span<const T> Append(Items&& items) {
    if (items.empty()) return {};
    T* slots = Reserve(items.size());
    std::move(items.begin(), items.end(), slots);
    return absl::MakeConstSpan(slots, items.size());
  }

 private:
  static constexpr size_t kChunk = 1024;
  T* Reserve(size_t count) {
    if (used_ + count > capacity_) {
      capacity_ = std::max(kChunk, count);
      chunks_.push_back(std::make_unique<T[]>(capacity_));
      used_ = 0;
    }
    T* slots = chunks_.back().get() + used_;
    used_ += count;
    return slots;
  }
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t used_ = 0;
  size_t capacity_ = 0;
};

class OrderingAnalysis {
 public:
  OrderingAnalysis(const Kernel& kernel, const SyncAnalysisOptions& options,
                   std::optional<FencePlacement> proxy = std::nullopt)
      : kernel_(kernel),
        options_(options),
        proxy_(proxy),
        own_threads_(options.conflicts == nullptr
                         ? std::make_unique<ThreadAnalysis>(kernel)
                         : nullptr),
        own_conflicts_(
            options.conflicts == nullptr
                ? std::make_unique<ConflictAnalysis>(kernel, *own_threads_)
                : nullptr),
        threads_(options.conflicts != nullptr ? *options.threads
                                              : *own_threads_),
        conflicts_(options.conflicts != nullptr ? *options.conflicts
                                                : *own_conflicts_) {
    Walk(kernel.body(), [&](const Op& op) {
      if (FactsOf(op.kind()).sync == SyncKind::kGroupCommit &&
          FactsOf(op.kind()).group) {
        committed_kinds_.insert(*FactsOf(op.kind()).group);
      }
    });
    ThreadBits all;
    for (int t = 0; t < conflicts_.num_threads(); ++t) all.set(t);
    all_ = sets_.Intern(all);
  }

  std::vector<UnorderedPair> Run() {
    loop_entry_.clear();
    State state;
    VisitRegion(kernel_.body(), state);
    return std::vector<UnorderedPair>(pairs_.begin(), pairs_.end());
  }

  std::vector<UnfencedPair> RunProxy() {
    loop_entry_.clear();
    State state;
    VisitRegion(kernel_.body(), state);
    return std::vector<UnfencedPair>(unfenced_.begin(), unfenced_.end());
  }

  // For IncrementalOrdering: one top-level op at a time, from a state
  // kept from an earlier walk.
  // `any_pair`: stop at the first pair (or unfenced edge) found, wherever
  // it is; the walk's state is then of no use.
  // `bound`: only pairs whose later access comes no later than it (in
  // program order) are wanted, and (unless `carried_wanted`) only pairs
  // within one iteration; the walk finds those and may skip the rest.
  void StartWalk(std::set<const Op*> ignored, bool stop, int start,
                 bool any_pair = false, const Op* bound = nullptr,
                 bool carried_wanted = true) {
    given_bound_ = bound;
    pair_bound_ = bound;
    given_keeps_entries_ = carried_wanted;
    bound_keeps_entries_ = carried_wanted;
    elected_.clear();
    ScanElections();
    dataflow_work += static_cast<int64_t>(elections_.size());
    for (const auto& [top, elections] : elections_) {
      if (kernel_.body().IndexOf(top) >= start) continue;
      for (const auto& [threads, warp] : elections) {
        elected_.emplace(threads, warp);
      }
    }
    options_.ignored = std::move(ignored);
    options_.stop_at_first_same_iteration = stop;
    stop_at_any_pair_ = any_pair;
    loop_entry_.clear();
    pairs_.clear();
    unfenced_.clear();
    found_same_iteration_ = false;
    loops_entered_ = 0;
    later_rounds_ = 0;
    stopped_ = false;
    skipped_ = false;
    truncated_ = false;
  }
  // Visits `op` of the kernel body, as VisitRegion would. `classes`: the
  // state holds the entries of these classes (sorted) only, all of ops
  // before `op`; the walk follows them, as a walk of the whole state would.
  void VisitTop(const Op& op, State& state,
                const std::vector<AccessClass>* classes = nullptr) {
    skipped_ = false;
    truncated_ = false;
    const std::vector<AccessClass>* saved = active_;
    if (classes != nullptr) active_ = classes;
    VisitOp(op, state);
    active_ = saved;
    stopped_ = stopped_ || (found_same_iteration_ && loops_entered_ == 0);
  }
  // The elections in `op` of the kernel body, for a walk that takes its
  // state after `op` from elsewhere.
  void AddElections(const Op& op) {
    ScanElections();
    auto it = elections_.find(&op);
    if (it == elections_.end()) return;
    for (const auto& [threads, warp] : it->second) {
      elected_.emplace(threads, warp);
    }
  }
  // Keeps the walks through the regions entered once (see KeptWalk)
  // across walks, for IncrementalOrdering, which tells Forget of every
  // change.
  void KeepRegionWalks() { keep_region_walks_ = true; }
  // Forgets what the walk found since the last op of the kernel body, to
  // walk the next op again.
  void RetryTop() {
    pair_bound_ = given_bound_;
    bound_keeps_entries_ = given_keeps_entries_;
    truncated_ = false;
    pairs_.clear();
    unfenced_.clear();
    loop_entry_.clear();
    found_same_iteration_ = false;
    stopped_ = false;
  }
  bool found_same_iteration() const { return found_same_iteration_; }
  // Whether the walk stopped (stop_at_first_same_iteration, or any pair),
  // and whether the last VisitTop left ops unvisited for that.
  bool stopped() const { return stopped_; }
  bool skipped() const { return skipped_; }
  // Whether the last VisitTop skipped the pairs of an op past the bound
  // (StartWalk's, or the first pair within one iteration of a walk that
  // stops there): what it found is then not all the op holds.
  bool truncated() const { return truncated_; }
  std::set<UnorderedPair>& pairs() { return pairs_; }
  std::set<UnfencedPair>& unfenced() { return unfenced_; }
  // `op` was inserted or is about to be removed: what was derived from it
  // no longer holds.
  void Forget(const Op& op) {
    const Op* top = op.TopLevelAncestor();
    ForgetInKeptWalks(op);
    if (auto live = live_ops_.find(op.parent_region());
        live != live_ops_.end() && !Inert(op)) {
      // Inserted, or about to be removed.
      std::vector<const Op*>& ops = live->second;
      auto at = LiveLowerBound(*op.parent_region(), ops,
                               op.parent_region()->IndexOf(&op));
      if (at != ops.end() && *at == &op) {
        ops.erase(at);
      } else {
        ops.insert(at, &op);
      }
    }
    if (op.serial() < static_cast<int>(ops_.size()))
      ops_[op.serial()] = nullptr;
    // An op inserted or removed inside `top` is synchronization, which
    // elects nothing: `top` keeps its elections, without a walk of it (the
    // whole kernel, when its body is one loop or role) per barrier.
    if (top != &op && ElectedWarp(op) < 0) return;
    elections_.erase(top);
    if (elections_scanned_ && top != &op) {
      std::vector<std::pair<SetId, int>> elections = ElectionsIn(*top, &op);
      if (!elections.empty()) elections_.emplace(top, std::move(elections));
    }
  }

 private:
  // A walk through a region that the walk enters once (not in a later round
  // of a loop around it: the body of a loop in its first round, a branch, a
  // role), as the kernel's own walk (nothing ignored, every access
  // followed) went through it: the state before each op of the region and
  // what the walk found within it, as far as a walk went. A walk that
  // enters the region in the state (and with the elections) this was made
  // from starts at the first op that a change may have altered, taking what
  // was found and elected before it from here, and a walk ignoring ops of
  // the region goes back to these states once its own equals one past
  // them. So a pass placing barriers in a long loop body or role walks from
  // the last one, not from the top. Of a loop only the first round is kept:
  // the later rounds start from the state it leaves and walk only the
  // accesses that came round the back edge (VisitLoop), which a barrier
  // soon orders.
  struct KeptFindings {
    std::set<UnorderedPair> pairs;
    std::set<UnfencedPair> unfenced;
  };
  struct KeptStep {
    std::shared_ptr<const State> before;  // before op i of the region
    std::unique_ptr<KeptFindings> found;  // within op i; null: nothing
  };
  struct KeptWalk {
    // The state and the elections at the top of the region it was made
    // from.
    std::shared_ptr<const State> entry;
    absl::flat_hash_map<SetId, int> entry_elected;
    // steps[i] for each op i walked, and one more before the next op.
    std::vector<KeptStep> steps;
    // The steps that found something, and those that found a pair within
    // one iteration.
    CheckpointIndices found_at, same_iteration_at;
    // The ops of the region with elections (ElectionsIn) and theirs, once
    // looked for; inserting or removing synchronization changes none.
    std::vector<std::pair<const Op*, std::vector<std::pair<SetId, int>>>>
        electing;
    bool electing_known = false;

    int walked() const { return static_cast<int>(steps.size()) - 1; }
    void Restart(const State& state,
                 const absl::flat_hash_map<SetId, int>& elected) {
      entry = std::make_shared<const State>(state);
      entry_elected = elected;
      steps.clear();
      steps.push_back(KeptStep{entry, nullptr});
      found_at.EraseFrom(0);
      same_iteration_at.EraseFrom(0);
    }
    // Op `index` of the region changed: the states before it still hold.
    void TruncateAt(int index) {
      if (index >= walked()) return;
      steps.resize(index + 1);
      steps[index].found.reset();
      found_at.EraseFrom(index);
      same_iteration_at.EraseFrom(index);
    }
  };
  // Regions shorter than this are walked whole: keeping them costs more
  // than it saves.
  static constexpr int kMinKeptOps = 8;

  // `op` was inserted or is about to be removed: the kept walks of the
  // regions holding it hold up to its ancestor there.
  void ForgetInKeptWalks(const Op& op) {
    if (kept_walks_.empty()) return;
    for (int r = 0; r < op.num_regions(); ++r) {
      kept_walks_.erase(&op.region(r));
    }
    const bool elects = ElectedWarp(op) >= 0;
    for (const Op* child = &op; child->parent_op() != nullptr;
         child = child->parent_op()) {
      const Region& region = *child->parent_region();
      auto kept = kept_walks_.find(&region);
      if (kept == kept_walks_.end()) continue;
      kept->second.TruncateAt(region.IndexOf(child));
      if (elects) kept->second.electing_known = false;
    }
  }

  // Adds the elections of ops [begin, end) of `region`.
  void AddKeptElections(KeptWalk& kept, const Region& region, int begin,
                        int end) {
    if (!kept.electing_known) {
      kept.electing.clear();
      for (int i = 0; i < region.size(); ++i) {
        std::vector<std::pair<SetId, int>> elections =
            ElectionsIn(region.op(i));
        if (!elections.empty()) {
          kept.electing.emplace_back(&region.op(i), std::move(elections));
        }
      }
      kept.electing_known = true;
    }
    for (const auto& [op, elections] : kept.electing) {
      const int index = region.IndexOf(op);
      if (index < begin || index >= end) continue;
      for (const auto& [threads, warp] : elections) {
        elected_.emplace(threads, warp);
      }
    }
  }

  // Adds what the kept walk found within ops [begin, end).
  void AddKeptFindings(const KeptWalk& kept, int begin, int end) {
    for (auto it = kept.found_at.LowerBound(begin);
         it != kept.found_at.end() && *it < end; ++it) {
      const KeptFindings& found = *kept.steps[*it].found;
      pairs_.insert(found.pairs.begin(), found.pairs.end());
      unfenced_.insert(found.unfenced.begin(), found.unfenced.end());
    }
  }

  // Walks `region` from `state` as VisitRegion would, with
  // its KeptWalk; false (nothing done) where none applies: a short
  // region, one in a later round of a loop around it, a walk of some
  // classes or for any pair, a region the bound lies before, or a walk
  // ignoring ops that enters the region in another state than the kept
  // one's.
  bool VisitKeptRegion(const Region& region, State& state) {
    if (!keep_region_walks_ || active_ != nullptr || stop_at_any_pair_ ||
        stopped_ || later_rounds_ > 0 || region.size() < kMinKeptOps) {
      return false;
    }
    // The bound inside the region, or none before it (the whole region
    // past the bound makes fewer pairs and entries than the kept walk).
    const Op* bound_at =
        pair_bound_ != nullptr ? pair_bound_->AncestorIn(region) : nullptr;
    if (pair_bound_ != nullptr && bound_at == nullptr &&
        pair_bound_->IsBefore(region.op(0))) {
      return false;
    }
    const bool own = options_.ignored.empty();
    auto found = kept_walks_.find(&region);
    auto fits = [&](const KeptWalk& kept) {
      return kept.entry != nullptr && *kept.entry == state &&
             kept.entry_elected == elected_;
    };
    if (!own && (found == kept_walks_.end() || !fits(found->second))) {
      return false;
    }
    KeptWalk& kept =
        found != kept_walks_.end() ? found->second : kept_walks_[&region];
    if (!fits(kept)) kept.Restart(state, elected_);
    // Where this walk leaves the kept walk: at the first op not walked;
    // at the bound (past it the walk makes fewer pairs and entries); at
    // the first pair within one iteration of a walk that stops there (it
    // bounds the walk's pairs); at the first op ignored.
    int start = kept.walked();
    if (bound_at != nullptr) start = std::min(start, region.IndexOf(bound_at));
    if (options_.stop_at_first_same_iteration &&
        !kept.same_iteration_at.empty()) {
      start = std::min(start, kept.same_iteration_at.front());
    }
    int last_ignored = -1;
    for (const Op* ignored : options_.ignored) {
      const Op* at = ignored->AncestorIn(region);
      if (at == nullptr) continue;
      const int index = region.IndexOf(at);
      start = std::min(start, index);
      last_ignored = std::max(last_ignored, index);
    }
    AddKeptFindings(kept, 0, start);
    AddKeptElections(kept, region, 0, start);
    state = *kept.steps[start].before;
    bool recording = own;
    for (int i = start; i < region.size(); ++i) {
      // Past every ignored op, a state equal to the kept one makes the
      // rest of the region (up to the first pair within one iteration of a
      // walk that stops there, which bounds what follows) the kept one.
      if (!own && i > last_ignored && pair_bound_ == nullptr &&
          i < kept.walked() && state == *kept.steps[i].before) {
        int end = kept.walked();
        if (options_.stop_at_first_same_iteration) {
          auto next = kept.same_iteration_at.LowerBound(i);
          if (next != kept.same_iteration_at.end()) end = *next;
        }
        AddKeptFindings(kept, i, end);
        AddKeptElections(kept, region, i, end);
        state = *kept.steps[end].before;
        i = end;
        if (i == region.size()) break;
      }
      i = NextToVisit(region, i);
      if (i == region.size()) break;
      const Op& op = region.op(i);
      // What op i finds is kept apart while it is recorded.
      const bool record = recording && i == kept.walked();
      KeptFindings within;
      if (record) {
        std::swap(pairs_, within.pairs);
        std::swap(unfenced_, within.unfenced);
      }
      VisitOp(op, state);
      if (record) {
        std::swap(pairs_, within.pairs);
        std::swap(unfenced_, within.unfenced);
        pairs_.insert(within.pairs.begin(), within.pairs.end());
        unfenced_.insert(within.unfenced.begin(), within.unfenced.end());
      }
      StopAfter(region, i);
      // Kept only when no op of it lies past the bound (which may have
      // moved to this op).
      recording =
          record && (pair_bound_ == nullptr || pair_bound_ == &op ||
                     (op.IsBefore(*pair_bound_) && !pair_bound_->IsInside(op)));
      if (recording) {
        KeptStep& step = kept.steps[i];
        if (!within.pairs.empty() || !within.unfenced.empty()) {
          const bool same_iteration =
              std::any_of(within.pairs.begin(), within.pairs.end(),
                          [](const UnorderedPair& p) { return !p.carried; });
          step.found = std::make_unique<KeptFindings>(std::move(within));
          kept.found_at.Add(i);
          if (same_iteration) kept.same_iteration_at.Add(i);
        }
        std::shared_ptr<const State> after =
            state == *step.before ? step.before
                                  : std::make_shared<const State>(state);
        kept.steps.push_back(KeptStep{std::move(after), nullptr});
      }
      if (stopped_) break;
    }
    return true;
  }

  // Whether `op` is a leaf that synchronizes nothing and whose accesses
  // (if any) elect no lane: past the pair bound, in a walk that makes no
  // entries there, it leaves the state as it found it.
  static bool InertLeaf(const Op& op, int elected_warp) {
    return op.num_regions() == 0 && op.kind() != OpKind::kFor &&
           op.kind() != OpKind::kIf && op.kind() != OpKind::kRole &&
           FactsOf(op.kind()).sync == SyncKind::kNone && elected_warp < 0;
  }
  // InertLeaf, from the thread analysis (for an op being inserted or
  // removed, whose facts are not derived) or from the op's derived facts.
  bool Inert(const Op& op) const { return InertLeaf(op, ElectedWarp(op)); }
  bool InertByInfo(const Op& op) {
    return InertLeaf(op, op.num_regions() == 0 ? Info(op).elected_warp : -1);
  }

  // The ops of `region` that are not inert leaves, in order: made when
  // first asked for, and kept up to date by Forget.
  std::vector<const Op*>& LiveOps(const Region& region) {
    auto [it, inserted] = live_ops_.try_emplace(&region);
    if (inserted) {
      for (int i = 0; i < region.size(); ++i) {
        const Op& op = region.op(i);
        if (!InertByInfo(op)) it->second.push_back(&op);
      }
    }
    return it->second;
  }
  // The first of `ops` (LiveOps of `region`) at `index` or after.
  static std::vector<const Op*>::iterator LiveLowerBound(
      const Region& region, std::vector<const Op*>& ops, int index) {
    return std::lower_bound(
        ops.begin(), ops.end(), index,
        [&](const Op* op, int i) { return region.IndexOf(op) < i; });
  }

  // The index of the next op of `region` from `i` that the walk must visit:
  // `i`, unless the walk is past the pair bound and makes no entries there
  // (and follows no proxy rule), where it skips the inert leaves, noting
  // that it skipped pairs past the bound as their visits would. A pass
  // placing barriers front to back leaves the rest of a long loop body
  // past the first pair it finds, all of it inert.
  int NextToVisit(const Region& region, int i) {
    if (pair_bound_ == nullptr || bound_keeps_entries_ || proxy_) return i;
    const Op& op = region.op(i);
    if (!InertByInfo(op) || pair_bound_ == &op || !pair_bound_->IsBefore(op)) {
      return i;
    }
    std::vector<const Op*>& live = LiveOps(region);
    auto next = LiveLowerBound(region, live, i + 1);
    truncated_ = true;
    return next == live.end() ? region.size() : region.IndexOf(*next);
  }

  // What the walk asks of one op, derived once. Ops without effects (most
  // of them barriers a pass placed) share one per distinct set of facts.
  struct OpInfo {
    // In effects_; without the trailing register accesses (DeriveInfo).
    absl::Span<const MemoryEffect> effects;
    // IsRingFill of each effect, in ring_fills_.
    const bool* ring_fill = nullptr;
    const Op* role = nullptr;
    SetId executing = kEmptySet;
    int elected_warp = -1;
    // The sync key of the mbarrier element an async access of the op
    // completes on, or -1.
    int completion_barrier = -1;
    bool single_thread = false;
  };
  // One per op of the kernel walked: keep it small.
  static_assert(sizeof(OpInfo) <= 48, "OpInfo grew");

  // Asked for every op a walk visits: the lookup inline, the derivation
  // (with its large frame) out of line.
  const OpInfo& Info(const Op& op) {
    if (op.serial() < static_cast<int>(ops_.size())) {
      if (const OpInfo* known = ops_[op.serial()]) return *known;
    }
    return DeriveInfo(op);
  }

  ABSL_ATTRIBUTE_NOINLINE const OpInfo& DeriveInfo(const Op& op) {
    if (op.serial() >= static_cast<int>(ops_.size())) {
      ops_.resize(std::max(kernel_.op_serial_bound(), op.serial() + 1),
                  nullptr);
    }
    OpInfo info;
    MemoryEffects effects = MemoryEffectsOf(op);
    // No walk reads an access of registers (other than an mbarrier's,
    // which none is): the trailing ones are not kept, so that a register
    // store shares the facts of an op without effects. The others keep
    // their indices.
    while (!effects.empty() && effects.back().space == MemorySpace::kRegister &&
           !IsMbarrier(effects.back())) {
      effects.pop_back();
    }
    info.effects = effects_.Append(std::move(effects));
    if (!info.effects.empty()) {
      absl::InlinedVector<bool, 4> ring_fill;
      for (const MemoryEffect& effect : info.effects) {
        ring_fill.push_back(IsRingFill(effect));
      }
      info.ring_fill = ring_fills_.Append(ring_fill).data();
    }
    info.executing = sets_.Intern(conflicts_.Executing(op));
    info.single_thread = threads_.IsSingleThread(op);
    info.elected_warp = ElectedWarp(op);
    info.role = threads_.EnclosingRole(op);
    if (std::optional<SyncKey> key = CompletionBarrier(info.effects)) {
      info.completion_barrier = keys_.KeyId(*key);
    }
    if (info.effects.empty()) {
      const OpInfo*& shared = effectless_infos_[std::make_tuple(
          info.executing, info.single_thread, info.elected_warp, info.role,
          info.completion_barrier)];
      if (shared == nullptr) shared = &infos_.Add(std::move(info));
      ops_[op.serial()] = shared;
      return *shared;
    }
    const OpInfo& kept = infos_.Add(std::move(info));
    ops_[op.serial()] = &kept;
    return kept;
  }

  // The elections a walk through `top` (an op of the kernel body) records:
  // one per tracked effect of an access issued by the elected lane of a
  // warp (VisitLeaf). Leaves out `except` (an op about to be removed).
  std::vector<std::pair<SetId, int>> ElectionsIn(const Op& top,
                                                 const Op* except = nullptr) {
    std::vector<std::pair<SetId, int>> elections;
    auto visit = [&](const Op& op) {
      ++dataflow_work;
      if (&op == except || op.num_regions() > 0 || op.kind() == OpKind::kFor ||
          op.kind() == OpKind::kIf || op.kind() == OpKind::kRole) {
        return;
      }
      const OpInfo& info = Info(op);
      if (info.elected_warp < 0) return;
      for (const MemoryEffect& effect : info.effects) {
        if (Tracked(effect)) {
          elections.emplace_back(info.executing, info.elected_warp);
        }
      }
    };
    visit(top);
    for (int r = 0; r < top.num_regions(); ++r) Walk(top.region(r), visit);
    return elections;
  }

  // Fills elections_, once.
  void ScanElections() {
    if (elections_scanned_) return;
    for (int k = 0; k < kernel_.body().size(); ++k) {
      const Op& top = kernel_.body().op(k);
      std::vector<std::pair<SetId, int>> elections = ElectionsIn(top);
      if (!elections.empty()) elections_.emplace(&top, std::move(elections));
    }
    elections_scanned_ = true;
  }

  // Whether the walk keeps an entry for `effect`. The proxy rule follows
  // generic accesses of global memory only (its edges start at a generic
  // access).
  bool Tracked(const MemoryEffect& effect) const {
    return effect.space == MemorySpace::kShared ||
           (effect.space == MemorySpace::kGlobal &&
            (!proxy_ || IsGenericData(effect)));
  }

  // Whether `op` comes after the pair bound; notes that pairs were skipped.
  bool PastPairBound(const Op& op) {
    if (pair_bound_ == nullptr || pair_bound_ == &op ||
        !pair_bound_->IsBefore(op)) {
      return false;
    }
    truncated_ = true;
    return true;
  }

  // Whether `op`, which the threads `executing` may run, runs in only one
  // of them.
  bool OneLaneOf(const Op& op, SetId executing) {
    return Info(op).single_thread && sets_.Bits(executing).count() > 1;
  }

  int ElectedWarp(const Op& op) const {
    if (!threads_.IsSingleThread(op)) return -1;
    const ThreadSet& set = threads_.ExecutingThreads(op);
    if (!set.known() || set.Count() <= 1) return -1;
    std::vector<int> warps = set.Warps();
    return warps.size() == 1 && set.Count() == 32 ? warps[0] : -1;
  }

  // The lattice join of two entries of one key.
  void MergeInto(EntryState& into, const EntryState& entry) {
    if (into == entry) return;
    into.threads = sets_.Or(into.threads, entry.threads);
    into.observed = sets_.And(into.observed, entry.observed);
    into.ordered = sets_.And(into.ordered, entry.ordered);
    into.released = keys_.Intersect(into.released, entry.released);
    into.fenced = sets_.And(into.fenced, entry.fenced);
    into.proxy_ordered = sets_.And(into.proxy_ordered, entry.proxy_ordered);
    into.elected_proxy_ordered =
        sets_.And(into.elected_proxy_ordered, entry.elected_proxy_ordered);
    into.proxy_released =
        keys_.Intersect(into.proxy_released, entry.proxy_released);
  }

  void JoinInto(State& into, const Entry& entry) {
    auto it = std::lower_bound(
        into.begin(), into.end(), entry.key,
        [](const Entry& e, const EntryKey& key) { return e.key < key; });
    if (it != into.end() && it->key == entry.key) {
      MergeInto(it->state, entry.state);
      return;
    }
    into.insert(it, entry);
  }

  State Join(const State& a, const State& b) {
    State out;
    out.reserve(std::max(a.size(), b.size()));
    auto x = a.begin(), y = b.begin();
    while (x != a.end() && y != b.end()) {
      if (x->key < y->key) {
        out.push_back(*x++);
      } else if (y->key < x->key) {
        out.push_back(*y++);
      } else {
        out.push_back(*x++);
        MergeInto(out.back().state, (y++)->state);
      }
    }
    out.insert(out.end(), x, a.end());
    out.insert(out.end(), y, b.end());
    return out;
  }

  // Sorts entries whose keys changed, joining those that now share a key.
  // Keys change in their carried loop and stage only, so each access's
  // entries stay together and are sorted among themselves.
  void Normalize(State& state) {
    for (size_t begin = 0; begin < state.size();) {
      size_t end = begin + 1;
      while (end < state.size() && state[end].key.op == state[begin].key.op &&
             state[end].key.effect == state[begin].key.effect) {
        ++end;
      }
      // Insertion sort: a few entries per access.
      for (size_t i = begin + 1; i < end; ++i) {
        for (size_t j = i; j > begin && state[j].key < state[j - 1].key; --j) {
          std::swap(state[j], state[j - 1]);
        }
      }
      begin = end;
    }
    size_t kept = 0;
    for (size_t i = 0; i < state.size(); ++i) {
      if (kept > 0 && state[kept - 1].key == state[i].key) {
        MergeInto(state[kept - 1].state, state[i].state);
      } else {
        if (kept != i) state[kept] = state[i];
        ++kept;
      }
    }
    state.resize(kept);
  }

  void VisitRegion(const Region& region, State& state) {
    if (stopped_ && region.size() > 0) skipped_ = true;
    for (int i = 0; i < region.size() && !stopped_; ++i) {
      // A walk of some classes follows only their entries, and makes none
      // (the walk through every class already took the elections): once
      // they are all ordered there is nothing left to follow.
      if (active_ != nullptr && state.empty()) return;
      i = NextToVisit(region, i);
      if (i == region.size()) break;
      VisitOp(region.op(i), state);
      StopAfter(region, i);
    }
  }

  // Whether the walk stops after op `i` of `region`. Inside a loop, a later
  // round of its fixed point can still find an earlier access's pair (an
  // async access's group changes stage around the back edge), so the walk
  // stops only outside loops (or, asked for any pair at all, at the
  // first).
  bool StopAfter(const Region& region, int i) {
    stopped_ = stopped_ || (found_same_iteration_ && loops_entered_ == 0);
    if (stopped_ && i + 1 < region.size()) skipped_ = true;
    return stopped_;
  }

  // VisitRegion of `region`, from its kept walk where one applies.
  void VisitNested(const Region& region, State& state) {
    if (!VisitKeptRegion(region, state)) VisitRegion(region, state);
  }

  // A pair or edge was found.
  void Found() {
    if (stop_at_any_pair_) stopped_ = true;
  }

  void VisitOp(const Op& op, State& state) {
    dataflow_work += static_cast<int64_t>(state.size()) + 1;
    if (!options_.ignored.empty() && options_.ignored.count(&op)) return;
    switch (op.kind()) {
      case OpKind::kFor:
        VisitLoop(op, state);
        return;
      case OpKind::kIf: {
        State then_state = state;
        if (op.num_regions() > 0) VisitNested(op.region(0), then_state);
        if (op.num_regions() > 1) VisitNested(op.region(1), state);
        if (!ConditionDecidesSides(op)) {
          // Takes() would answer -1 for every access: the plain join.
          state = Join(then_state, state);
          return;
        }
        state = JoinPaths(
            std::move(then_state), std::move(state),
            [&](const EntryState& e) { return Takes(op, e.threads); });
        return;
      }
      case OpKind::kRole: {
        State inside = state;
        if (op.num_regions() > 0) VisitNested(op.region(0), inside);
        const SetId members = RoleMembers(op);
        state = JoinPaths(
            std::move(inside), std::move(state), [&](const EntryState& e) {
              return e.threads != kEmptySet && sets_.Subset(e.threads, members)
                         ? 1
                         : 0;
            });
        return;
      }
      default:
        break;
    }
    if (op.num_regions() > 0) {
      // splitk: the body, then the epilogue.
      for (int r = 0; r < op.num_regions(); ++r) {
        VisitNested(op.region(r), state);
      }
      return;
    }
    VisitLeaf(op, state);
  }

  SetId RoleMembers(const Op& role) {
    auto it = role_members_.find(&role);
    if (it != role_members_.end()) return it->second;
    ThreadBits bits;
    const int64_t begin = role.warp_begin();
    const int64_t end = role.warp_end();
    for (int t = 0; t < conflicts_.num_threads(); ++t) {
      bits[t] = t / 32 >= begin && t / 32 < end;
    }
    return role_members_.emplace(&role, sets_.Intern(bits)).first->second;
  }

  // Which side of `if_op` the threads in `threads` (those that ran one
  // access) take: 1 when all take the then side, 0 when all take the else
  // side, -1 when unknown or mixed. Exact conditions are evaluated; an
  // elect.sync condition is taken by the elected lane of each full warp,
  // the same lane every time, so a single-thread access issued under an
  // election in that warp takes it.
  int Takes(const Op& if_op, SetId threads) {
    if (if_op.num_operands() == 0 || threads == kEmptySet) return -1;
    // What the condition's values say depends only on the op and the
    // threads; whether an election covers them depends on the walk.
    auto [known, inserted] =
        takes_.try_emplace(std::make_pair(&if_op, threads), -1);
    if (inserted) known->second = TakesByValues(if_op, threads);
    if (known->second != kByElection) return known->second;
    auto elected = elected_.find(threads);
    if (elected == elected_.end()) return -1;
    // The election runs in full warps (V33); `threads` is one warp whose
    // elected lane issued the access.
    const int warp = elected->second;
    const ThreadBits& reaching = sets_.Bits(Info(if_op).executing);
    for (int t = warp * 32; t < warp * 32 + 32 && t < conflicts_.num_threads();
         ++t) {
      if (!reaching[t]) return -1;
    }
    return 1;
  }

  static constexpr int kByElection = 2;

  // Whether Takes() can say a side for some threads: the condition has
  // per-thread values, or is an election.
  bool ConditionDecidesSides(const Op& if_op) {
    if (if_op.num_operands() == 0) return false;
    auto [it, inserted] = decides_sides_.try_emplace(&if_op, false);
    if (inserted) {
      const Value* condition = if_op.operand_value(0);
      it->second = threads_.PerThreadValues(condition) != nullptr ||
                   (condition->kind() == Value::Kind::kResult &&
                    condition->defining_op()->kind() == OpKind::kElectSync);
    }
    return it->second;
  }

  // Takes() as far as the condition's per-thread values decide it; or
  // kByElection for an elect.sync condition.
  int TakesByValues(const Op& if_op, SetId threads_id) {
    const Value* condition = if_op.operand_value(0);
    const SetId reaching = Info(if_op).executing;
    if (!sets_.Subset(threads_id, reaching)) return -1;
    const ThreadBits& threads = sets_.Bits(threads_id);
    if (const std::vector<int64_t>* values =
            threads_.PerThreadValues(condition)) {
      bool any_true = false, any_false = false;
      for (int t = 0; t < conflicts_.num_threads(); ++t) {
        if (!threads[t]) continue;
        ((*values)[t] != 0 ? any_true : any_false) = true;
      }
      if (any_true != any_false) return any_true ? 1 : 0;
      return -1;
    }
    if (condition->kind() == Value::Kind::kResult &&
        condition->defining_op()->kind() == OpKind::kElectSync) {
      return kByElection;
    }
    return -1;
  }

  // Joins the states after the two sides of a branch. `side_of(entry)` says
  // which side every thread of an access takes (1: first, 0: second, -1:
  // unknown); for such an access, the other side's copy only speaks for
  // other threads, so its stage and completion come from the taken side and
  // only what other threads know (ordered, released) is intersected.
  template <typename SideOf>
  State JoinPaths(State a, State b, SideOf&& side_of) {
    // Entries of one access (adjacent) share their threads: the side is
    // asked once per run of them.
    SetId last_threads = -1;
    int last_side = -1;
    auto side = [&](const EntryState& entry) {
      if (entry.threads != last_threads) {
        last_threads = entry.threads;
        last_side = side_of(entry);
      }
      return last_side;
    };
    auto fold = [&](State& skipped, State& taken, int taken_side) {
      size_t kept = 0;
      for (size_t s = 0; s < skipped.size(); ++s) {
        const Entry& entry = skipped[s];
        bool merged = false;
        if (side(entry.state) == taken_side) {
          // The taken side's entries of the same access (and carried
          // loop) are adjacent: the key sorts by those first.
          auto it =
              std::lower_bound(taken.begin(), taken.end(), entry.key.Access(),
                               [](const Entry& e, const auto& access) {
                                 return e.key.Access() < access;
                               });
          for (; it != taken.end() && it->key.Access() == entry.key.Access();
               ++it) {
            EntryState& into = it->state;
            into.ordered = sets_.And(into.ordered, entry.state.ordered);
            into.released =
                keys_.Intersect(into.released, entry.state.released);
            into.proxy_ordered =
                sets_.And(into.proxy_ordered, entry.state.proxy_ordered);
            into.elected_proxy_ordered = sets_.And(
                into.elected_proxy_ordered, entry.state.elected_proxy_ordered);
            into.proxy_released = keys_.Intersect(into.proxy_released,
                                                  entry.state.proxy_released);
            merged = true;
          }
        }
        if (merged) continue;
        if (kept != s) skipped[kept] = skipped[s];
        ++kept;
      }
      skipped.resize(kept);
    };
    fold(b, a, 1);
    fold(a, b, 0);
    if (b.empty()) return a;
    if (a.empty()) return b;
    return Join(a, b);
  }

  void VisitLoop(const Op& loop, State& state) {
    if (loop.num_regions() == 0) return;
    const State before = state;
    // Within one run a loop's entry state only grows (the rounds of the
    // loops around it are monotone), so the fixed point found for the last
    // entry state is below the next one's: starting there instead of from
    // scratch reaches the same fixed point in fewer rounds, which otherwise
    // multiply with the nesting depth. A walk of only some classes (see
    // active_) starts from those classes of it.
    State body_in = before;
    if (auto cached = loop_entry_.find(&loop); cached != loop_entry_.end()) {
      body_in = Join(before, active_ != nullptr
                                 ? Restrict(cached->second, *active_, ClassOf)
                                 : cached->second);
    }
    State body_out = body_in;
    ++loops_entered_;
    const bool kept = VisitKeptRegion(loop.region(0), body_out);
    --loops_entered_;
    if (!kept) VisitBody(loop, body_out, nullptr);
    if (stopped_) return;  // found a pair, and any pair was asked for
    // Each further round walks only the classes whose entry state changed:
    // the others would leave the body as they did in the last round (and
    // find the same pairs), and the entries the body makes are the same
    // every round. At most 64 rounds, as when every round walks everything.
    for (int round = 0; round < 64; ++round) {
      State next = Join(before, Carry(body_out, loop));
      std::vector<AccessClass> changed = ChangedUnits(next, body_in, ClassOf);
      if (changed.empty()) break;
      body_in = std::move(next);
      if (round == 63) break;
      // The regions inside are entered again: their kept walks (made in
      // the first round) do not apply.
      ++later_rounds_;
      if (options_.walk_every_class) {
        body_out = body_in;
        VisitBody(loop, body_out, nullptr);
        --later_rounds_;
        if (stopped_) return;
        continue;
      }
      State part = Restrict(body_in, changed, ClassOf);
      VisitBody(loop, part, &changed);
      --later_rounds_;
      if (stopped_) return;
      body_out = Replace(body_out, part, changed, ClassOf);
    }
    if (active_ != nullptr) {
      // The cache keeps the other classes' fixed points.
      if (auto cached = loop_entry_.find(&loop); cached != loop_entry_.end()) {
        body_in = Replace(cached->second, body_in, *active_, ClassOf);
      }
    }
    loop_entry_[&loop] = std::move(body_in);
    // A loop that surely runs leaves through its body only: what a barrier
    // in the body ordered stays ordered after it.
    std::optional<int64_t> trips = TripCount(loop);
    state = trips && *trips >= 1 ? std::move(body_out) : Join(before, body_out);
  }

  // One round through the body of `loop`; `classes`: only those classes
  // are in `state`, and the body makes no entries.
  void VisitBody(const Op& loop, State& state,
                 const std::vector<AccessClass>* classes) {
    const std::vector<AccessClass>* saved = active_;
    if (classes != nullptr) active_ = classes;
    ++loops_entered_;
    VisitRegion(loop.region(0), state);
    --loops_entered_;
    active_ = saved;
  }

  // `released` without the releases to an mbarrier chosen by the values of
  // one iteration of `loop`.
  SetId DropIterationKeys(SetId released, const Op& loop) {
    if (released == kEmptySet) return released;
    auto [it, inserted] =
        drop_iteration_keys_.try_emplace(std::make_pair(released, &loop), 0);
    if (!inserted) return it->second;
    std::vector<int> kept;
    for (int key : keys_.Keys(released)) {
      bool stale = false;
      for (const Value* index : keys_.Key(key).indices) {
        stale = stale || loop.DefinesInside(*index);
      }
      if (!stale) kept.push_back(key);
    }
    it->second = keys_.Intern(std::move(kept));
    return it->second;
  }

  // The state at the top of the next iteration of `loop`.
  State Carry(const State& state, const Op& loop) {
    State out = state;
    bool rekeyed = false;
    for (Entry& entry : out) {
      EntryKey& next = entry.key;
      // Only the outermost loop an access was carried around relates it to
      // a later access (the iterations of loops inside it ran in another
      // execution, so their distances say nothing); keeping just that one
      // keeps the state linear in the nesting depth.
      if (next.op->IsInside(loop)) {
        const AccessClass before = next.Access();
        if (!next.is_carried() || next.carried.loop->IsInside(loop)) {
          next.carried = CarriedLoop{&loop, 1};
          rekeyed = true;
        } else if (next.carried.loop == &loop) {
          next.carried.distance =
              std::min(next.carried.distance + 1, CarriedLoop::kMaxDistance);
          rekeyed = true;
        }
        // A walk of some classes holds none that a loop inside it carries
        // (see AccessClass).
        KIR_CHECK(active_ == nullptr || next.Access() == before)
            << "a class changed in a walk of some classes";
      }
      if (next.stage == Stage::kCommitted && next.commit != nullptr &&
          next.commit->EnclosingOp(OpKind::kFor) == &loop) {
        next.group_distance =
            std::min(next.group_distance + 1, CarriedLoop::kMaxDistance);
        rekeyed = true;
      }
      // A release to an mbarrier chosen by this iteration's values says
      // nothing about the one the next iteration names.
      entry.state.released = DropIterationKeys(entry.state.released, loop);
      entry.state.proxy_released =
          DropIterationKeys(entry.state.proxy_released, loop);
    }
    if (rekeyed) Normalize(out);
    return out;
  }

  // The mbarrier element an async access with `effects` completes on.
  static std::optional<SyncKey> CompletionBarrier(
      absl::Span<const MemoryEffect> effects) {
    for (const MemoryEffect& effect : effects) {
      if (effect.buffer != nullptr && effect.buffer->type().is_buffer() &&
          effect.buffer->type().dtype() == DType::kMbarrier &&
          !effect.whole_buffer) {
        SyncKey key;
        key.kind = SyncKey::kMbarrier;
        key.buffer = effect.buffer;
        key.indices.assign(effect.origin.begin(), effect.origin.end());
        return key;
      }
    }
    return std::nullopt;
  }

  std::optional<SyncKey> BarrierElement(const Op& op) {
    if (op.num_operands() == 0 || !op.operand(0).indexed) return std::nullopt;
    SyncKey key;
    key.kind = SyncKey::kMbarrier;
    key.buffer = op.operand_value(0);
    key.indices.assign(op.operand(0).indices.begin(),
                       op.operand(0).indices.end());
    return key;
  }

  // Whether what `entry` did is complete in threads that all take part in
  // a release by `participants`.
  bool Releasable(const EntryKey& key, const EntryState& entry,
                  SetId participants) {
    switch (key.stage) {
      case Stage::kComplete:
        return sets_.Subset(entry.threads, participants) &&
               sets_.Subset(entry.threads, entry.observed);
      case Stage::kMbarrier:
        return sets_.And(entry.observed, participants) != kEmptySet;
      default:
        return false;
    }
  }

  void Release(State& state, SetId participants, const SyncKey& to) {
    const int key = keys_.KeyId(to);
    for (Entry& e : state) {
      EntryState& entry = e.state;
      if (!Releasable(e.key, entry, participants)) continue;
      entry.released = keys_.Insert(entry.released, key);
      if (sets_.Subset(entry.threads, entry.fenced)) {
        entry.proxy_released = keys_.Insert(entry.proxy_released, key);
      }
    }
  }

  void Acquire(State& state, SetId waiters, const SyncKey& from) {
    const int key = keys_.KeyId(from);
    for (Entry& e : state) {
      EntryState& entry = e.state;
      bool acquired = keys_.Contains(entry.released, key);
      if (e.key.stage == Stage::kMbarrier && from.kind == SyncKey::kMbarrier) {
        acquired = acquired || Info(*e.key.op).completion_barrier == key;
      }
      if (keys_.Contains(entry.proxy_released, key)) {
        entry.proxy_ordered = sets_.Or(entry.proxy_ordered, waiters);
      }
      if (!acquired) continue;
      entry.ordered = sets_.Or(entry.ordered, waiters);
      if (e.key.stage == Stage::kMbarrier) {
        entry.observed = sets_.Or(entry.observed, waiters);
      }
    }
  }

  void Barrier(State& state, SetId participants) {
    size_t kept = 0;
    for (size_t i = 0; i < state.size(); ++i) {
      Entry& e = state[i];
      EntryState& entry = e.state;
      if (Releasable(e.key, entry, participants)) {
        entry.ordered = sets_.Or(entry.ordered, participants);
        if (sets_.Subset(entry.threads, entry.fenced)) {
          entry.proxy_ordered = sets_.Or(entry.proxy_ordered, participants);
        }
      }
      // An access ordered for every thread (and fenced for every thread,
      // when the proxy rule is followed) can pair with nothing later:
      // dropping it keeps the state as small as the unordered accesses.
      const bool done = sets_.Subset(all_, entry.ordered) &&
                        (!proxy_ || sets_.Subset(all_, entry.proxy_ordered));
      if (done) continue;
      if (kept != i) state[kept] = state[i];
      ++kept;
    }
    state.resize(kept);
  }

  // A proxy fence or fence.mbarrier_init run by `executing`: the accesses it
  // covers are fenced in the threads that ran (and completed) them, and
  // (issuer model) in threads already ordered after them.
  void Fence(const Op& fence, State& state, SetId executing) {
    const bool init_fence =
        FactsOf(fence.kind()).sync == SyncKind::kMbarrierInitFence;
    // An elected fence runs in one lane of `executing`, which one being
    // unknown (every election in a warp picks the same lane): it fences an
    // access only if that lane alone made it, and orders only that lane's
    // later elected accesses.
    const bool one_lane = OneLaneOf(fence, executing);
    for (Entry& e : state) {
      const EntryKey& key = e.key;
      EntryState& entry = e.state;
      const MemoryEffect& effect = *e.effect;
      const bool covered =
          init_fence
              ? FactsOf(key.op->kind()).sync == SyncKind::kMbarrierInit
              : IsGenericData(effect) && ProxyFenceOrders(fence, effect.space);
      // A fence orders what its thread has completed: a cp.async write only
      // once the wait for its group ran in that thread.
      if (!covered || key.stage != Stage::kComplete) continue;
      // A writer's own later async accesses are fenced from here on; other
      // threads' only through a barrier or release after every writer's
      // fence (Barrier(), Release()).
      const bool issuer = !init_fence && *proxy_ == FencePlacement::kIssuer;
      if (!one_lane) {
        entry.fenced = sets_.Or(
            entry.fenced,
            sets_.And(executing, sets_.And(entry.threads, entry.observed)));
        if (issuer) {
          entry.proxy_ordered = sets_.Or(entry.proxy_ordered,
                                         sets_.And(executing, entry.ordered));
        }
        continue;
      }
      if (OneLaneOf(*key.op, entry.threads) && entry.threads == executing) {
        entry.fenced =
            sets_.Or(entry.fenced, sets_.And(executing, entry.observed));
      }
      if (issuer && sets_.Subset(executing, entry.ordered)) {
        entry.elected_proxy_ordered =
            sets_.Or(entry.elected_proxy_ordered, executing);
      }
    }
  }

  // Moves entries to new keys (commits and waits change the stage).
  template <typename Fn>
  void Rekey(State& state, Fn&& fn) {
    for (Entry& entry : state) fn(entry.key, entry.state);
    Normalize(state);
  }

  void ApplySync(const Op& op, State& state) {
    const OpFacts& facts = FactsOf(op.kind());
    if (facts.sync == SyncKind::kNone) return;
    const SetId executing = Info(op).executing;
    switch (facts.sync) {
      case SyncKind::kBlockBarrier:
        Barrier(state, all_);
        break;
      case SyncKind::kNamedBarrier: {
        SyncKey key{SyncKey::kNamedBarrier, nullptr, {}, op.id()};
        Acquire(state, executing, key);
        Barrier(state, executing);
        break;
      }
      case SyncKind::kNamedBarrierArrive:
        Release(state, executing,
                SyncKey{SyncKey::kNamedBarrier, nullptr, {}, op.id()});
        break;
      case SyncKind::kClusterArrive:
        if (!op.relaxed()) {
          Release(state, executing, SyncKey{SyncKey::kCluster, nullptr, {}, 0});
        }
        break;
      case SyncKind::kClusterWait:
        Acquire(state, executing, SyncKey{SyncKey::kCluster, nullptr, {}, 0});
        break;
      case SyncKind::kMbarrierArrive:
        if (std::optional<SyncKey> key = BarrierElement(op)) {
          Release(state, executing, *key);
        }
        break;
      case SyncKind::kProxyFence:
      case SyncKind::kMbarrierInitFence:
        if (proxy_) Fence(op, state, executing);
        break;
      case SyncKind::kMbarrierWait:
        if (std::optional<SyncKey> key = BarrierElement(op)) {
          Acquire(state, executing, *key);
        }
        break;
      case SyncKind::kGroupCommit:
        Rekey(state, [&](EntryKey& key, EntryState& entry) {
          if (key.stage != Stage::kUncommitted ||
              FactsOf(key.op->kind()).group != facts.group ||
              !sets_.Subset(entry.threads, executing)) {
            return;
          }
          key.stage = Stage::kCommitted;
          key.commit = &op;
          key.group_distance = 0;
        });
        break;
      case SyncKind::kGroupWait: {
        const bool reads_only = op.has_read() && op.read();
        for (const Operand& token : op.operands()) {
          const Value* value = token.value;
          if (value == nullptr || value->kind() != Value::Kind::kResult) {
            continue;
          }
          const Op* commit = value->defining_op();
          for (Entry& e : state) {
            EntryKey& key = e.key;
            EntryState& entry = e.state;
            if (key.stage != Stage::kCommitted || key.commit != commit ||
                key.group_distance < token.distance ||
                !sets_.Subset(entry.threads, executing)) {
              continue;
            }
            if (reads_only && e.effect->writes()) continue;
            key.stage = Stage::kComplete;
            key.commit = nullptr;
            key.group_distance = 0;
            entry.observed = sets_.Or(entry.observed, entry.threads);
          }
          Normalize(state);
        }
        break;
      }
      default:
        break;
    }
  }

  void VisitLeaf(const Op& op, State& state) {
    const OpInfo& info = Info(op);
    const absl::Span<const MemoryEffect> effects = info.effects;
    const SetId executing = info.executing;
    const Op* role = info.role;
    const bool one_lane = OneLaneOf(op, executing);
    if (proxy_) FindUnfenced(op, info, executing, one_lane, state);
    // Past the bound no pair is wanted: the walk only carries the state,
    // and makes no entries when the wanted pairs are within one iteration.
    const bool past_bound = !proxy_ && PastPairBound(op);
    for (int i = 0;
         i < static_cast<int>(effects.size()) && !proxy_ && !past_bound; ++i) {
      const MemoryEffect& effect = effects[i];
      if (!IsBlockMemory(effect) || info.ring_fill[i]) continue;
      for (const Entry& e : state) {
        const EntryKey& key = e.key;
        const MemoryEffect& earlier = *e.effect;
        if (earlier.space != effect.space || e.ring_fill) continue;
        if (!NeedsOrdering(earlier, effect)) continue;
        if (options_.wanted_pairs && !options_.wanted_pairs(earlier, effect)) {
          continue;
        }
        if (key.op == &op && !key.is_carried()) continue;
        const Op* earlier_role = Info(*key.op).role;
        if (role != nullptr && earlier_role != nullptr &&
            role != earlier_role && earlier.buffer == effect.buffer) {
          continue;  // concurrent roles: the program's mbarriers order them
        }
        const SetId later = sets_.Minus(executing, e.state.ordered);
        if (later == kEmptySet) continue;
        if (Overlaps(key, op, i, e.state.threads, later,
                     ThreadPairs::kDistinct)) {
          pairs_.insert(UnorderedPair{key.op, key.effect, &op, i,
                                      key.is_carried(), key.carried.loop});
          Found();
          // The op's other pairs are still collected, so that the result
          // does not depend on the order of the state's entries.
          if (!key.is_carried() && options_.stop_at_first_same_iteration) {
            found_same_iteration_ = true;
            // Inside a loop the walk goes on to the loop's fixed point, but
            // only for pairs whose later access comes no later than this.
            if (pair_bound_ == nullptr || op.IsBefore(*pair_bound_)) {
              pair_bound_ = &op;
              bound_keeps_entries_ = false;
            }
          }
        }
      }
    }
    ApplySync(op, state);
    for (int i = 0; i < static_cast<int>(effects.size()); ++i) {
      const MemoryEffect& effect = effects[i];
      if (!Tracked(effect)) continue;
      if (info.elected_warp >= 0)
        elected_.emplace(executing, info.elected_warp);
      // A walk of some classes only: this access's entries are as the last
      // full round left them.
      if (active_ != nullptr) continue;
      // Past the bound an access's entry could only be the earlier access
      // of a pair whose later one comes after the bound, or of a carried
      // pair, and neither is wanted.
      if (past_bound && !bound_keeps_entries_) continue;
      Entry entry = blank_entry_;
      entry.key.op = &op;
      entry.key.effect = i;
      entry.effect = &effect;
      entry.ring_fill = info.ring_fill[i];
      entry.state.threads = executing;
      switch (effect.completion) {
        case Completion::kImmediate:
          entry.state.observed = executing;
          break;
        case Completion::kMbarrier:
          entry.key.stage = Stage::kMbarrier;
          break;
        default: {
          const std::optional<TokenKind> group = FactsOf(op.kind()).group;
          if (options_.complete_uncommitted_async && group &&
              !committed_kinds_.count(*group)) {
            entry.state.observed = executing;
          } else {
            entry.key.stage = Stage::kUncommitted;
          }
          break;
        }
      }
      JoinInto(state, entry);
    }
  }

  // The proxy rule at `op`: every edge from a tracked generic access (or an
  // mbarrier init) to an async access (or a use of the mbarrier) of `op`
  // whose threads are ordered after it but not fenced in the model.
  void FindUnfenced(const Op& op, const OpInfo& info, SetId executing,
                    bool one_lane, const State& state) {
    const absl::Span<const MemoryEffect> effects = info.effects;
    const OpFacts& facts = FactsOf(op.kind());
    const bool completes_on_mbarrier =
        facts.completion == Completion::kMbarrier;
    for (int i = 0; i < static_cast<int>(effects.size()); ++i) {
      const MemoryEffect& later = effects[i];
      const bool mbarrier_use = IsMbarrier(later) &&
                                facts.sync != SyncKind::kMbarrierInit &&
                                facts.sync != SyncKind::kMbarrierInval;
      const bool async_data = later.proxy == Proxy::kAsync &&
                              !IsMbarrier(later) &&
                              later.space != MemorySpace::kRegister;
      if (!mbarrier_use && !async_data) continue;
      for (const Entry& e : state) {
        const EntryKey& key = e.key;
        const EntryState& entry = e.state;
        if (key.op == &op && !key.is_carried()) continue;
        const MemoryEffect& earlier = *e.effect;
        // The ring fences its own generic accesses before its release; an
        // allocation sharing its bytes is fenced like any other.
        if (async_data && info.ring_fill[i] && earlier.buffer == later.buffer) {
          continue;
        }
        FenceNeed need = FenceNeed::kSharedProxy;
        bool by_box = true;
        // The initializing thread's own arrivals and waits are ordered by
        // program order; a TMA unit's complete-tx is not.
        bool own_ordered_by_program = false;
        if (mbarrier_use) {
          if (FactsOf(key.op->kind()).sync != SyncKind::kMbarrierInit ||
              earlier.buffer != later.buffer) {
            continue;
          }
          need = FenceNeed::kMbarrierInit;
          by_box = false;
          own_ordered_by_program = !completes_on_mbarrier;
        } else {
          if (!IsGenericData(earlier) || earlier.space != later.space) continue;
          const bool acquire = IsGlobalAcquire(earlier);
          if (!acquire && !earlier.writes() && !later.writes()) continue;
          if (later.space == MemorySpace::kGlobal) {
            need = FenceNeed::kGlobalProxy;
            // An acquire may guard any global data.
            by_box = !acquire;
          }
        }
        // The threads of `op` that need a fence after `earlier`: those that
        // other threads' accesses reach through a barrier or release (every
        // thread of the access must have fenced before it), and those that
        // ran the access themselves (their own fence after it suffices).
        SetId proxy_ordered = entry.proxy_ordered;
        if (one_lane) {
          proxy_ordered = sets_.Or(proxy_ordered, entry.elected_proxy_ordered);
        }
        const SetId others =
            sets_.Minus(sets_.And(executing, entry.ordered), proxy_ordered);
        const SetId own =
            own_ordered_by_program
                ? kEmptySet
                : sets_.Minus(sets_.Minus(sets_.And(executing, entry.threads),
                                          entry.fenced),
                              proxy_ordered);
        if (others == kEmptySet && own == kEmptySet) continue;
        if (by_box) {
          const bool from_others =
              others != kEmptySet && Overlaps(key, op, i, entry.threads, others,
                                              ThreadPairs::kDistinct);
          const bool from_own =
              own != kEmptySet &&
              Overlaps(key, op, i, entry.threads, own, ThreadPairs::kSame);
          if (!from_others && !from_own) continue;
        }
        unfenced_.insert(
            UnfencedPair{UnorderedPair{key.op, key.effect, &op, i,
                                       key.is_carried(), key.carried.loop},
                         need});
        Found();
      }
    }
  }

  // Whether the access of `earlier` by `threads_a` may overlap effect `eb`
  // of `b` by `threads_b`. The answers depend only on the accesses (which
  // the passes using this analysis do not change), so they are kept.
  bool Overlaps(const EntryKey& earlier, const Op& b, int eb, SetId threads_a,
                SetId threads_b, ThreadPairs thread_pairs) {
    const RecentOverlap recent_key{
        earlier.op->serial(),
        earlier.carried.loop != nullptr ? earlier.carried.loop->serial() : -1,
        threads_a,
        threads_b,
        static_cast<int16_t>(earlier.effect),
        static_cast<int16_t>(eb),
        static_cast<int8_t>(earlier.carried.distance),
        static_cast<int8_t>(thread_pairs)};
    if (b.serial() >= static_cast<int>(recent_.size())) {
      recent_.resize(std::max(kernel_.op_serial_bound(), b.serial() + 1));
    }
    RecentOverlaps& recent = recent_[b.serial()];
    for (const RecentOverlap& kept : recent.ways) {
      if (kept.SameQuestion(recent_key)) return kept.overlap;
    }
    const OverlapKey memo_key{
        earlier.op, earlier.effect, earlier.carried, &b,
        eb,         threads_a,      threads_b,       thread_pairs};
    if (overlaps_.empty()) {
      // A few slots per op, a power of two, between the bounds.
      size_t size = kMinOverlapMemo;
      while (size < kMaxOverlapMemo &&
             size < 4 * static_cast<size_t>(kernel_.op_serial_bound())) {
        size *= 2;
      }
      overlaps_.resize(size);
    }
    OverlapMemo& memo =
        overlaps_[absl::Hash<OverlapKey>{}(memo_key) & (overlaps_.size() - 1)];
    bool overlap;
    if (memo.known && memo.key == memo_key) {
      overlap = memo.overlap;
    } else {
      const Op& a = *earlier.op;
      ++overlap_questions;
      overlap = conflicts_.MayOverlap(
          a, Info(a).effects[earlier.effect], sets_.Bits(threads_a), b,
          Info(b).effects[eb], sets_.Bits(threads_b), earlier.carried_loops(),
          thread_pairs);
      memo = OverlapMemo{memo_key, true, overlap};
    }
    RecentOverlap& replaced = recent.ways[recent.next];
    replaced = recent_key;
    replaced.overlap = overlap;
    recent.next ^= 1;
    return overlap;
  }

  struct OverlapKey {
    const Op* a;
    int effect_a;
    CarriedLoop carried;
    const Op* b;
    int effect_b;
    SetId threads_a, threads_b;
    ThreadPairs thread_pairs;
    bool operator==(const OverlapKey& o) const {
      return a == o.a && effect_a == o.effect_a && carried == o.carried &&
             b == o.b && effect_b == o.effect_b && threads_a == o.threads_a &&
             threads_b == o.threads_b && thread_pairs == o.thread_pairs;
    }
    template <typename H>
    friend H AbslHashValue(H hash, const OverlapKey& key) {
      return H::combine(std::move(hash), key.a, key.effect_a, key.carried.loop,
                        key.carried.distance, key.b, key.effect_b,
                        key.threads_a, key.threads_b, key.thread_pairs);
    }
  };

  const Kernel& kernel_;
  SyncAnalysisOptions options_;
  const std::optional<FencePlacement> proxy_;
  // Built here unless the caller gives them (options.conflicts).
  std::unique_ptr<ThreadAnalysis> own_threads_;
  std::unique_ptr<ConflictAnalysis> own_conflicts_;
  const ThreadAnalysis& threads_;
  const ConflictAnalysis& conflicts_;
  ThreadSetTable sets_;
  SyncKeySetTable keys_;
  SetId all_ = kEmptySet;
  std::set<TokenKind> committed_kinds_;
  // In the order first asked (program order, mostly), so that building and
  // freeing them walks memory in order; an entry an op forgot stays unused.
  ChunkedStore<OpInfo> infos_;
  ChunkedStore<MemoryEffect> effects_;  // of infos_
  ChunkedStore<bool> ring_fills_;       // of infos_
  absl::flat_hash_map<std::tuple<SetId, bool, int, const Op*, int>,
                      const OpInfo*>
      effectless_infos_;
  std::vector<const OpInfo*> ops_;  // by Op::serial()
  absl::flat_hash_map<const Op*, SetId> role_members_;
  absl::flat_hash_map<std::pair<const Op*, SetId>, int> takes_;
  absl::flat_hash_map<const Op*, bool> decides_sides_;
  absl::flat_hash_map<std::pair<SetId, const Op*>, SetId> drop_iteration_keys_;
  // Overlaps' answers, in a table of bounded size where a new answer takes
  // the place of the one it collides with: a loop's rounds ask the same
  // few pairs again and find them, while a long straight-line kernel asks
  // each pair at most twice, a kernel apart, and would only grow an
  // unbounded map (one cache miss per question).
  struct OverlapMemo {
    OverlapKey key{};
    bool known = false;
    bool overlap = false;
  };
  // Besides, the last two answers about each later access, by its
  // Op::serial(): insert-syncs asks about a pair when it first walks past
  // it and again when it asks what the barrier it placed orders, which in
  // a long kernel comes after more questions than the table above holds.
  // A walk asks in program order, so these are read in order.
  struct RecentOverlap {
    int32_t a = -1;  // the earlier op's serial; -1: no answer
    int32_t carried_loop = -1;
    SetId threads_a = kEmptySet, threads_b = kEmptySet;
    int16_t effect_a = 0, effect_b = 0;
    int8_t carried_distance = 0;
    int8_t thread_pairs = 0;
    bool overlap = false;
    bool SameQuestion(const RecentOverlap& o) const {
      return a == o.a && carried_loop == o.carried_loop &&
             threads_a == o.threads_a && threads_b == o.threads_b &&
             effect_a == o.effect_a && effect_b == o.effect_b &&
             carried_distance == o.carried_distance &&
             thread_pairs == o.thread_pairs;
    }
  };
  struct RecentOverlaps {
    RecentOverlap ways[2];
    int next = 0;  // the way the next answer replaces
  };
  std::vector<RecentOverlaps> recent_;  // by Op::serial() of the later op
  static constexpr size_t kMinOverlapMemo = size_t{1} << 10;
  static constexpr size_t kMaxOverlapMemo = size_t{1} << 16;
  std::vector<OverlapMemo> overlaps_;  // sized at the first question
  // The state at the top of each loop's body at its last fixed point in
  // this run.
  absl::flat_hash_map<const Op*, State> loop_entry_;
  // KeepRegionWalks: the kept walks, by region (in nodes: a walk through one
  // region adds those of the regions inside it).
  bool keep_region_walks_ = false;
  absl::node_hash_map<const Region*, KeptWalk> kept_walks_;
  // Rounds after the first of the loops the walk is in.
  int later_rounds_ = 0;
  // LiveOps, by region.
  absl::flat_hash_map<const Region*, std::vector<const Op*>> live_ops_;
  // When set, the walk follows only the entries of these classes (sorted):
  // the state holds no others, and leaves make no entries.
  const std::vector<AccessClass>* active_ = nullptr;
  std::set<UnorderedPair> pairs_;
  // stop_at_first_same_iteration: a pair within one iteration was found,
  // and the walk stops once it is outside every loop.
  bool found_same_iteration_ = false;
  int loops_entered_ = 0;
  bool stopped_ = false;
  std::set<UnfencedPair> unfenced_;
  // Thread sets of accesses issued by the elected lane of one warp (the set
  // names the warp), as far as the walk went.
  absl::flat_hash_map<SetId, int> elected_;
  // Copied for each new entry: value-initializing one is a `rep stos` (GCC),
  // whose start-up cost was a sixth of a long loop body's walks; a copy of
  // a member the compiler cannot see into is a few moves.
  const Entry blank_entry_{};
  // For walks that start part-way (StartWalk): the ops of the kernel body
  // with elections and theirs (ElectionsIn; all of them once scanned), so
  // that a walk from op k knows exactly those of the ops before k, as a walk
  // from the start would, looking at those ops only. (Which of them comes
  // first does not matter: an election's thread set names its warp.)
  absl::flat_hash_map<const Op*, std::vector<std::pair<SetId, int>>> elections_;
  bool elections_scanned_ = false;
  bool stop_at_any_pair_ = false;
  bool skipped_ = false;
  // Pairs whose later access comes after this op are not looked for: the
  // caller's bound (given_bound_), or the earliest later access of a pair
  // within one iteration that a stopping walk found inside a loop.
  const Op* given_bound_ = nullptr;
  const Op* pair_bound_ = nullptr;
  // Whether accesses past the bound still make entries (for carried pairs).
  bool given_keeps_entries_ = true;
  bool bound_keeps_entries_ = true;
  bool truncated_ = false;
};

// An edge ends at an async access of data or a use of an mbarrier; without
// one the proxy walk finds nothing (and its state, which no barrier empties
// of unfenced generic accesses, would only grow with the kernel).
bool ProxyEdgesPossible(const Kernel& kernel) {
  bool possible = false;
  Walk(kernel.body(), [&](const Op& op) {
    if (possible) return;
    for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
      if (IsMbarrier(effect) || (effect.proxy == Proxy::kAsync &&
                                 effect.space != MemorySpace::kRegister)) {
        possible = true;
      }
    }
  });
  return possible;
}

// Program order (Op::IsBefore) on op pointers, the same op not before
// itself.
bool EarlierOp(const Op* a, const Op* b) { return a != b && a->IsBefore(*b); }

// The order answers list pairs in, the order a pass visits them: by later
// access, then earlier access, each in program order.
bool PairInProgramOrder(const UnorderedPair& x, const UnorderedPair& y) {
  if (x.second != y.second) return EarlierOp(x.second, y.second);
  if (x.second_effect != y.second_effect) {
    return x.second_effect < y.second_effect;
  }
  if (x.first != y.first) return EarlierOp(x.first, y.first);
  if (x.first_effect != y.first_effect) return x.first_effect < y.first_effect;
  return x.carried < y.carried;
}

// Edges likewise, then by the fence they need.
bool EdgeInProgramOrder(const UnfencedPair& x, const UnfencedPair& y) {
  if (PairInProgramOrder(x.pair, y.pair)) return true;
  if (PairInProgramOrder(y.pair, x.pair)) return false;
  return x.need < y.need;
}

// Of pairs sorted by their later access, when one is within one iteration:
// those within one iteration whose later access comes no later than the
// first such pair's, what a walk that stops there is asked for. (It may
// have found more, and inside a loop it skips the others.)
void KeepUpToFirstSameIteration(std::vector<UnorderedPair>& sorted) {
  auto first = std::find_if(sorted.begin(), sorted.end(),
                            [](const UnorderedPair& p) { return !p.carried; });
  if (first == sorted.end()) return;
  const Op* last_wanted = first->second;
  auto end = std::find_if(first, sorted.end(), [&](const UnorderedPair& p) {
    return p.second != last_wanted;
  });
  sorted.erase(end, sorted.end());
  sorted.erase(std::remove_if(sorted.begin(), sorted.end(),
                              [](const UnorderedPair& p) { return p.carried; }),
               sorted.end());
}

}  // namespace

std::vector<UnorderedPair> FindUnorderedPairs(
    const Kernel& kernel, const SyncAnalysisOptions& options) {
  OrderingAnalysis analysis(kernel, options);
  std::vector<UnorderedPair> pairs = analysis.Run();
  std::sort(pairs.begin(), pairs.end(), PairInProgramOrder);
  if (options.stop_at_first_same_iteration) KeepUpToFirstSameIteration(pairs);
  return pairs;
}

std::vector<UnfencedPair> FindUnfencedPairs(
    const Kernel& kernel, FencePlacement placement,
    const SyncAnalysisOptions& options) {
  if (!ProxyEdgesPossible(kernel)) return {};
  SyncAnalysisOptions proxy_options;
  proxy_options.ignored = options.ignored;
  proxy_options.threads = options.threads;
  proxy_options.conflicts = options.conflicts;
  proxy_options.walk_every_class = options.walk_every_class;
  OrderingAnalysis analysis(kernel, proxy_options, placement);
  std::vector<UnfencedPair> pairs = analysis.RunProxy();
  std::sort(pairs.begin(), pairs.end(), EdgeInProgramOrder);
  return pairs;
}

int64_t OrderingDataflowWork() { return dataflow_work; }

int64_t OrderingOverlapQuestions() { return overlap_questions; }

int64_t OrderingEdgesGathered() { return edges_gathered; }

std::string DescribeAccess(const Op& op, int effect) {
  MemoryEffects effects = MemoryEffectsOf(op);
  if (effect < 0 || effect >= static_cast<int>(effects.size())) {
    return absl::StrCat(op.mnemonic());
  }
  const MemoryEffect& e = effects[effect];
  std::string what = e.mode == AccessMode::kRead    ? "read"
                     : e.mode == AccessMode::kWrite ? "write"
                                                    : "read-write";
  return absl::StrCat(what, " of %", e.buffer ? e.buffer->name() : "?", " by ",
                      op.mnemonic());
}

// ---------------------------------------------------------------------------
// The dataflow kept across a pass's queries.

struct IncrementalOrdering::Impl {
  // What a walk found.
  struct Findings {
    std::set<UnorderedPair> pairs;
    std::set<UnfencedPair> unfenced;
    bool empty() const { return pairs.empty() && unfenced.empty(); }
    void Add(const Findings& more) {
      pairs.insert(more.pairs.begin(), more.pairs.end());
      unfenced.insert(more.unfenced.begin(), more.unfenced.end());
    }
  };

  // An answer kept for a later query (Answer): what was found, in the
  // sets' order, in two arrays (a kept answer per barrier a pass placed
  // adds up to a tenth of the memory of a long kernel's pass; set nodes
  // would double it).
  struct Answered {
    std::vector<UnorderedPair> pairs;
    std::vector<UnfencedPair> unfenced;
    bool empty() const { return pairs.empty() && unfenced.empty(); }
  };
  static std::shared_ptr<const Answered> Keep(const Findings& found) {
    edges_gathered +=
        static_cast<int64_t>(found.pairs.size() + found.unfenced.size());
    auto kept = std::make_shared<Answered>();
    kept->pairs.assign(found.pairs.begin(), found.pairs.end());
    kept->unfenced.assign(found.unfenced.begin(), found.unfenced.end());
    return kept;
  }

  // Before op k of the kernel body, and what the walk found within it.
  // There is one per op of the kernel body, and most find nothing: what
  // was found is kept aside, and a state equal to the one before the
  // previous op is shared with it.
  struct Checkpoint {
    const Op* op = nullptr;  // op k when the walk reached it
    std::shared_ptr<const State> before;
    std::unique_ptr<Findings> found;  // null: nothing
    bool same_iteration = false;      // a pair within one iteration among pairs
    // A walk that stops at its first pair within one iteration still
    // visits all of op k, so finds all of `pairs`.
    bool whole_when_stopping = true;

    const Findings& findings() const { return found ? *found : kNothing; }
  };
  static inline const Findings kNothing;

  // A walk through one op of the kernel body: the states before and after
  // it, and what it found there.
  struct Transfer {
    std::shared_ptr<const State> before, after;
    Findings found;
    bool whole_when_stopping = true;  // as Checkpoint's
  };
  // A Transfer kept elsewhere.
  struct TransferView {
    const State* before;
    const State* after;
    const Findings* found;
    bool whole_when_stopping;
  };
  static TransferView ViewOf(const Transfer& t) {
    return TransferView{t.before.get(), t.after.get(), &t.found,
                        t.whole_when_stopping};
  }

  Impl(const Kernel& kernel, const SyncAnalysisOptions& options,
       std::optional<FencePlacement> proxy)
      : kernel(kernel), base(options), analysis(kernel, options, proxy) {
    analysis.KeepRegionWalks();
    KIR_CHECK(options.threads != nullptr && options.conflicts != nullptr)
        << "IncrementalOrdering needs the caller's analyses";
    KIR_CHECK(options.ignored.empty()) << "ignored ops are per query";
    checkpoints.emplace_back();
    checkpoints.back().before = std::make_shared<const State>();
    if (proxy) nothing_to_find = !ProxyEdgesPossible(kernel);
  }

  int IndexOfTop(const Op& op) const {
    return kernel.body().IndexOf(op.TopLevelAncestor());
  }

  // What one op's walk found; `complete`: it went through the whole op
  // (a walk that stops at its first pair within one iteration, or at any
  // pair, may end inside it, and its state is then of no use).
  struct Step {
    std::set<UnorderedPair> pairs;
    std::set<UnfencedPair> unfenced;
    bool same_iteration = false;
    bool complete = true;
    bool whole_when_stopping = true;
  };

  // Walks op `op` of the kernel body from `state`, the state before it,
  // leaving the state after it. `reference`: an earlier walk through the
  // same op, which has not changed since. The dataflow is separable by
  // access (see AccessClass), and the ops a pass inserts and removes
  // access no data (so they make no entries, and elections stay as they
  // were): the accesses whose entries equal the reference's before the op
  // leave it as they left the reference, with the same pairs, so only the
  // others are walked.
  Step WalkTop(const Op& op, State& state, const TransferView* reference,
               bool stop, bool any_only) {
    Step step;
    if (reference != nullptr && op.num_regions() > 0) {
      const std::vector<Access> changed =
          ChangedUnits(state, *reference->before, AccessOf);
      auto kept = [&](const UnorderedPair& pair) {
        return !std::binary_search(changed.begin(), changed.end(),
                                   Access(pair.first, pair.first_effect));
      };
      bool kept_same_iteration = false;
      for (const UnorderedPair& pair : reference->found->pairs) {
        if (!kept(pair)) continue;
        step.pairs.insert(step.pairs.end(), pair);
        kept_same_iteration = kept_same_iteration || !pair.carried;
      }
      for (const UnfencedPair& edge : reference->found->unfenced) {
        if (kept(edge.pair)) step.unfenced.insert(step.unfenced.end(), edge);
      }
      if (any_only && (!step.pairs.empty() || !step.unfenced.empty())) {
        step.complete = false;
        return step;
      }
      // A walk that stops at its first pair within one iteration stops
      // where the reference stopped or where the changed accesses find
      // one, whichever comes first; where that is inside the op (not after
      // its last op), which pairs it found takes a walk of the whole state
      // to know.
      if (!(stop && kept_same_iteration && !reference->whole_when_stopping)) {
        State part = Restrict(state, changed, AccessOf);
        // Without a changed access nothing is walked: the last walk's
        // flags say nothing of this op.
        bool skipped = false, truncated = false;
        if (!part.empty()) {
          std::vector<AccessClass> classes;
          for (const Entry& entry : part) {
            if (classes.empty() || classes.back() != ClassOf(entry)) {
              classes.push_back(ClassOf(entry));
            }
          }
          analysis.VisitTop(op, part, &classes);
          skipped = analysis.skipped();
          truncated = analysis.truncated();
        }
        analysis.AddElections(op);
        if (!(stop && skipped)) {
          step.pairs.insert(analysis.pairs().begin(), analysis.pairs().end());
          step.unfenced.insert(analysis.unfenced().begin(),
                               analysis.unfenced().end());
          analysis.pairs().clear();
          analysis.unfenced().clear();
          state = Replace(*reference->after, part, changed, AccessOf);
          for (const UnorderedPair& pair : step.pairs) {
            step.same_iteration = step.same_iteration || !pair.carried;
          }
          step.whole_when_stopping = stop || !step.same_iteration;
          step.complete =
              !truncated &&
              !(any_only && (!step.pairs.empty() || !step.unfenced.empty()));
          return step;
        }
        analysis.RetryTop();
      }
      step = Step();
    }
    analysis.VisitTop(op, state);
    step.pairs = std::move(analysis.pairs());
    step.unfenced = std::move(analysis.unfenced());
    analysis.pairs().clear();
    analysis.unfenced().clear();
    for (const UnorderedPair& pair : step.pairs) {
      step.same_iteration = step.same_iteration || !pair.carried;
    }
    // A walk that stopped after the op's last op still went through all
    // of it.
    step.complete = !analysis.truncated() &&
                    (!analysis.stopped() || (!any_only && !analysis.skipped()));
    step.whole_when_stopping =
        !step.same_iteration || (stop && !analysis.skipped());
    return step;
  }

  // Walks the kernel as it is (nothing ignored) until the states before
  // ops 0..`end` are known, or (`stop`) until a pair within one iteration
  // is found; true when it stopped there, with that op's pairs so far in
  // `partial`. An op the walk reaches with a kept transfer (Changed) is
  // walked only for the accesses whose entries differ from it. `bound`:
  // only the pairs whose later access comes no later than it are wanted
  // (see StartWalk); an op whose other pairs were skipped stops the walk
  // too, with its pairs in `partial`.
  // `stop_at_unfenced`: stop after the first op that holds an unfenced
  // edge within one iteration (its checkpoint complete).
  bool Extend(int end, bool stop, Findings* partial, const Op* bound = nullptr,
              bool carried_wanted = true, bool stop_at_unfenced = false) {
    const Region& body = kernel.body();
    int k = static_cast<int>(checkpoints.size()) - 1;
    if (k >= end) return false;
    // Room for a checkpoint per op, and for the barriers a pass may still
    // add, so that the vector (which holds a checkpoint per op) is not
    // copied while it is twice as large as it needs to be.
    if (checkpoints.capacity() < static_cast<size_t>(body.size()) + 1) {
      checkpoints.reserve(body.size() + body.size() / 4 + 1);
    }
    analysis.StartWalk({}, stop, k, /*any_pair=*/false, bound, carried_wanted);
    State state = *checkpoints[k].before;
    for (; k < end; ++k) {
      const Op& op = body.op(k);
      auto transfer = transfers.find(&op);
      TransferView reference;
      if (transfer != transfers.end()) reference = ViewOf(transfer->second);
      Step step =
          WalkTop(op, state, transfer != transfers.end() ? &reference : nullptr,
                  stop, /*any_only=*/false);
      if (!step.complete) {
        // The walk stopped inside this op: its pairs are not all found.
        partial->pairs = std::move(step.pairs);
        return true;
      }
      // The checkpoint now holds what the kept walk held.
      if (transfer != transfers.end()) transfers.erase(transfer);
      Checkpoint& done = checkpoints[k];
      done.op = &op;
      const bool unfenced_same_iteration = std::any_of(
          step.unfenced.begin(), step.unfenced.end(),
          [](const UnfencedPair& edge) { return !edge.pair.carried; });
      if (unfenced_same_iteration) unfenced_same_iteration_at.Add(k);
      if (!step.pairs.empty() || !step.unfenced.empty()) {
        done.found = std::make_unique<Findings>(
            Findings{std::move(step.pairs), std::move(step.unfenced)});
        found_at.Add(k);
      }
      done.same_iteration = step.same_iteration;
      done.whole_when_stopping = step.whole_when_stopping;
      if (done.same_iteration) same_iteration_at.Add(k);
      Checkpoint next;
      next.before = state == *done.before
                        ? done.before
                        : std::make_shared<const State>(state);
      checkpoints.push_back(std::move(next));  // `done` may move
      if (stop && step.same_iteration) {
        // It stopped after the op's last op.
        partial->pairs = checkpoints[k].findings().pairs;
        return true;
      }
      if (stop_at_unfenced && unfenced_same_iteration) return false;
    }
    return false;
  }

  bool AnySameIterationBefore(int end) const {
    return !same_iteration_at.empty() && same_iteration_at.front() < end;
  }

  // The complete checkpoints in [begin, end) that found something.
  template <typename Fn>
  void ForEachFound(int begin, int end, Fn&& fn) const {
    for (auto it = found_at.LowerBound(begin);
         it != found_at.end() && *it < end; ++it) {
      fn(checkpoints[*it].findings());
    }
  }

  // The kept walk through op k.
  TransferView CheckpointTransfer(int k) const {
    return TransferView{
        checkpoints[k].before.get(), checkpoints[k + 1].before.get(),
        &checkpoints[k].findings(), checkpoints[k].whole_when_stopping};
  }

  // What a walk from the start that stops at its first pair within one
  // iteration finds within op k, the first whose checkpoint has one.
  std::set<UnorderedPair> StoppingPairsOf(int k) {
    if (checkpoints[k].whole_when_stopping) {
      return checkpoints[k].findings().pairs;
    }
    analysis.StartWalk({}, /*stop=*/true, k);
    State state = *checkpoints[k].before;
    analysis.VisitTop(kernel.body().op(k), state);
    std::set<UnorderedPair> pairs = std::move(analysis.pairs());
    analysis.pairs().clear();
    return pairs;
  }

  // Query, with the answers to queries that ignore ops kept until the
  // kernel changes (a pass asks whether a barrier is needed, then what it
  // orders); a whole answer also answers `any_only`.
  std::shared_ptr<const Answered> Answer(const std::set<const Op*>& ignored,
                                         bool stop, bool any_only) {
    if (ignored.empty()) {
      return Keep(Query(ignored, stop, any_only));
    }
    if (ignored.size() == 1 && !stop) {
      const int serial = (*ignored.begin())->serial();
      if (serial < static_cast<int>(answers_ignoring_one.size()) &&
          answers_ignoring_one[serial] != nullptr) {
        return answers_ignoring_one[serial];
      }
      auto found = Keep(Query(ignored, stop, any_only));
      if (!any_only) {
        if (serial >= static_cast<int>(answers_ignoring_one.size())) {
          answers_ignoring_one.resize(
              std::max(kernel.op_serial_bound(), serial + 1));
        }
        answers_ignoring_one[serial] = found;
        answered_serials.push_back(serial);
      }
      return found;
    }
    AnswerKey key(IgnoredOps(ignored.begin(), ignored.end()), stop);
    auto kept = answers.find(key);
    if (kept != answers.end()) return kept->second;
    auto found = Keep(Query(ignored, stop, any_only));
    if (!any_only) answers.emplace(std::move(key), found);
    return found;
  }

  // What a walk with `ignored` finds, as a fresh FindUnorderedPairs /
  // FindUnfencedPairs would; `any_only`: stop at the first pair.
  Findings Query(const std::set<const Op*>& ignored, bool stop, bool any_only) {
    const Region& body = kernel.body();
    const int size = body.size();
    Findings found;
    if (nothing_to_find) return found;
    auto add = [&](const Findings& more) { found.Add(more); };
    auto any_found = [&] { return !found.empty(); };
    if (ignored.empty()) {
      if (stop && !same_iteration_at.empty()) {
        // A walk from the start stops within the first op where it finds
        // a pair within one iteration.
        const int k = same_iteration_at.front();
        ForEachFound(0, k, add);
        std::set<UnorderedPair> pairs = StoppingPairsOf(k);
        found.pairs.insert(pairs.begin(), pairs.end());
        return found;
      }
      Findings partial;
      const bool stopped = Extend(size, stop, &partial);
      ForEachFound(0, static_cast<int>(checkpoints.size()) - 1, add);
      if (stopped) add(partial);
      return found;
    }
    int first = size, last = 0;
    // The kernel-body ops holding an ignored op, sorted (few: no set).
    absl::InlinedVector<int, 4> holding_ignored;
    for (const Op* op : ignored) {
      const int index = IndexOfTop(*op);
      holding_ignored.push_back(index);
      first = std::min(first, index);
      last = std::max(last, index);
    }
    std::sort(holding_ignored.begin(), holding_ignored.end());
    Findings unused;
    Extend(size, /*stop=*/false, &unused);
    if (stop && AnySameIterationBefore(first)) return Fresh(ignored, stop);
    ForEachFound(0, first, add);
    if (any_only && any_found()) return found;
    analysis.StartWalk(ignored, stop, first, any_only);
    State state = *checkpoints[first].before;
    for (int k = first; k < size; ++k) {
      // Ops holding no ignored op are walked from the kernel's own walk
      // through them, for the accesses the ignored ones changed.
      const TransferView reference = CheckpointTransfer(k);
      Step step = WalkTop(
          body.op(k), state,
          std::binary_search(holding_ignored.begin(), holding_ignored.end(), k)
              ? nullptr
              : &reference,
          stop, any_only);
      found.pairs.insert(step.pairs.begin(), step.pairs.end());
      found.unfenced.insert(step.unfenced.begin(), step.unfenced.end());
      if (stop && step.same_iteration) return found;
      if (any_only && any_found()) return found;
      // Past every ignored op, a state equal to the one without them makes
      // the rest of the walk the kernel's own.
      if (k >= last && state == *checkpoints[k + 1].before) {
        if (!stop) {
          ForEachFound(k + 1, size, add);
          return found;
        }
        // A walk from the start stops within the first op where it finds
        // a pair within one iteration.
        auto next = same_iteration_at.LowerBound(k + 1);
        if (next == same_iteration_at.end()) {
          ForEachFound(k + 1, size, add);
          return found;
        }
        const int j = *next;
        ForEachFound(k + 1, j, add);
        std::set<UnorderedPair> pairs = StoppingPairsOf(j);
        found.pairs.insert(pairs.begin(), pairs.end());
        return found;
      }
    }
    return found;
  }

  // The walk from scratch, for the rare query an earlier stop would cut
  // short differently.
  Findings Fresh(const std::set<const Op*>& ignored, bool stop) {
    analysis.StartWalk(ignored, stop, 0);
    State state;
    const Region& body = kernel.body();
    Findings found;
    for (int k = 0; k < body.size(); ++k) {
      analysis.VisitTop(body.op(k), state);
      if (stop && analysis.found_same_iteration()) break;
    }
    found.pairs = std::move(analysis.pairs());
    found.unfenced = std::move(analysis.unfenced());
    return found;
  }

  // The kernel changed at `op` (see IncrementalOrdering::Changed).
  void Changed(const Op& op) {
    analysis.Forget(op);
    answers.clear();
    for (int serial : answered_serials) answers_ignoring_one[serial].reset();
    answered_serials.clear();
    const Op* top = op.TopLevelAncestor();
    transfers.erase(top);
    // The state before the changed op's top-level op still holds; what was
    // found within it and after it does not. The walks through the ops
    // after it that hold others are kept as transfers (WalkTop walks a leaf
    // whole).
    const int index = IndexOfTop(op);
    const int known = static_cast<int>(checkpoints.size()) - 1;
    if (index >= known) return;
    for (int k = index; k < known; ++k) {
      // Op k when the walk passed it: `top` itself when it changed or is
      // about to be removed, the op after it when it was inserted.
      const Op* walked = checkpoints[k].op;
      if (walked == top || walked->num_regions() == 0) continue;
      Transfer& transfer = transfers[walked];
      transfer.before = checkpoints[k].before;
      transfer.after = checkpoints[k + 1].before;
      transfer.found =
          checkpoints[k].found ? std::move(*checkpoints[k].found) : Findings();
      transfer.whole_when_stopping = checkpoints[k].whole_when_stopping;
    }
    checkpoints.resize(index + 1);
    found_at.EraseFrom(index);
    same_iteration_at.EraseFrom(index);
    unfenced_same_iteration_at.EraseFrom(index);
    Checkpoint& frontier = checkpoints[index];
    frontier.op = nullptr;
    frontier.found.reset();
    frontier.same_iteration = false;
    frontier.whole_when_stopping = true;
  }

  const Kernel& kernel;
  SyncAnalysisOptions base;
  OrderingAnalysis analysis;
  std::vector<Checkpoint> checkpoints;
  // Indices of the complete checkpoints that found something, of those
  // that found a pair within one iteration, and of those that found an
  // unfenced edge within one iteration.
  CheckpointIndices found_at, same_iteration_at, unfenced_same_iteration_at;
  // Walks through ops of the kernel body made before a change at an
  // earlier op, by op; an op's is dropped when it changes.
  absl::flat_hash_map<const Op*, Transfer> transfers;
  // Answers to the other queries that ignore ops (Answer), by ignored ops
  // and stop. A pass ignores one op or two at a time: kept inline.
  using IgnoredOps = absl::InlinedVector<const Op*, 2>;
  using AnswerKey = std::pair<IgnoredOps, bool>;
  absl::flat_hash_map<AnswerKey, std::shared_ptr<const Answered>> answers;
  // The whole answers to queries that ignore one op, by the op's serial: a
  // pass asks one per op it inserted, in program order, then again in the
  // same order, so a table in creation order keeps those lookups (hundreds
  // of thousands in a long kernel) near each other in memory, as a hash
  // table does not. `answered_serials`: its filled entries.
  std::vector<std::shared_ptr<const Answered>> answers_ignoring_one;
  std::vector<int> answered_serials;
  bool nothing_to_find = false;
};

IncrementalOrdering::IncrementalOrdering(const Kernel& kernel,
                                         const SyncAnalysisOptions& options,
                                         std::optional<FencePlacement> proxy)
    : impl_(std::make_unique<Impl>(kernel, options, proxy)) {}

IncrementalOrdering::~IncrementalOrdering() = default;

void IncrementalOrdering::Changed(const Op& op) { impl_->Changed(op); }

std::vector<UnorderedPair> IncrementalOrdering::UnorderedPairs(
    const std::set<const Op*>& ignored, bool stop_at_first_same_iteration) {
  const std::shared_ptr<const Impl::Answered> found =
      impl_->Answer(ignored, stop_at_first_same_iteration, false);
  std::vector<UnorderedPair> pairs(found->pairs.begin(), found->pairs.end());
  std::sort(pairs.begin(), pairs.end(), PairInProgramOrder);
  if (stop_at_first_same_iteration) KeepUpToFirstSameIteration(pairs);
  return pairs;
}

std::vector<UnfencedPair> IncrementalOrdering::UnfencedPairs(
    const std::set<const Op*>& ignored) {
  const std::shared_ptr<const Impl::Answered> found =
      impl_->Answer(ignored, false, false);
  std::vector<UnfencedPair> pairs(found->unfenced.begin(),
                                  found->unfenced.end());
  std::sort(pairs.begin(), pairs.end(), EdgeInProgramOrder);
  return pairs;
}

std::optional<UnfencedPair> IncrementalOrdering::FirstUnfencedPair() {
  if (impl_->nothing_to_find) return std::nullopt;
  // The edges of one kernel-body op all come before those of a later one,
  // so the first edge within one iteration is among those of the first op
  // holding one, and with none the first edge is the first op's first.
  if (impl_->unfenced_same_iteration_at.empty()) {
    Impl::Findings unused;
    impl_->Extend(impl_->kernel.body().size(), /*stop=*/false, &unused,
                  /*bound=*/nullptr, /*carried_wanted=*/true,
                  /*stop_at_unfenced=*/true);
  }
  int holding = -1;
  if (!impl_->unfenced_same_iteration_at.empty()) {
    holding = impl_->unfenced_same_iteration_at.front();
  } else {
    for (auto it = impl_->found_at.LowerBound(0); it != impl_->found_at.end();
         ++it) {
      if (!impl_->checkpoints[*it].findings().unfenced.empty()) {
        holding = *it;
        break;
      }
    }
  }
  if (holding < 0) return std::nullopt;
  const std::set<UnfencedPair>& found =
      impl_->checkpoints[holding].findings().unfenced;
  std::vector<UnfencedPair> edges(found.begin(), found.end());
  edges_gathered += static_cast<int64_t>(edges.size());
  std::sort(edges.begin(), edges.end(), EdgeInProgramOrder);
  auto same_iteration =
      std::find_if(edges.begin(), edges.end(),
                   [](const UnfencedPair& edge) { return !edge.pair.carried; });
  return same_iteration != edges.end() ? *same_iteration : edges.front();
}

int64_t IncrementalOrdering::CountUnfencedEdges() {
  if (impl_->nothing_to_find) return 0;
  Impl::Findings unused;
  impl_->Extend(impl_->kernel.body().size(), /*stop=*/false, &unused);
  // An edge's async access lies in one kernel-body op, so no edge is
  // counted twice across ops; within one op's set, the edges of one pair
  // of accesses are adjacent (they differ only in the loop and the need).
  int64_t edges = 0;
  impl_->ForEachFound(
      0, impl_->kernel.body().size(), [&](const Impl::Findings& found) {
        const UnfencedPair* previous = nullptr;
        for (const UnfencedPair& edge : found.unfenced) {
          const UnorderedPair& p = edge.pair;
          if (previous == nullptr ||
              std::tie(p.first, p.first_effect, p.second, p.second_effect) !=
                  std::tie(previous->pair.first, previous->pair.first_effect,
                           previous->pair.second,
                           previous->pair.second_effect)) {
            ++edges;
          }
          previous = &edge;
        }
      });
  return edges;
}

bool IncrementalOrdering::ContainsUnfenced(const UnfencedPair& edge) {
  if (impl_->nothing_to_find) return false;
  // A walk finds an edge at its async access.
  const int index = impl_->IndexOfTop(*edge.pair.second);
  Impl::Findings unused;
  impl_->Extend(index + 1, /*stop=*/false, &unused);
  return impl_->checkpoints[index].findings().unfenced.count(edge) > 0;
}

bool IncrementalOrdering::Contains(const UnorderedPair& pair) {
  if (impl_->nothing_to_find) return false;
  // A walk finds a pair at its later access, and need not look for pairs
  // after it (in a loop it still goes round to the fixed point).
  const int index = impl_->IndexOfTop(*pair.second);
  Impl::Findings partial;
  if (impl_->Extend(index + 1, /*stop=*/false, &partial, pair.second,
                    /*carried_wanted=*/pair.carried)) {
    return partial.pairs.count(pair) > 0;
  }
  return impl_->checkpoints[index].findings().pairs.count(pair) > 0;
}

bool IncrementalOrdering::AnyPair(const std::set<const Op*>& ignored) {
  const std::shared_ptr<const Impl::Answered> found =
      impl_->Answer(ignored, false, true);
  return !found->empty();
}

}  // namespace kir
