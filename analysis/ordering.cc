// The ordering dataflow; see ordering.h.
#include "analysis/ordering.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <limits>
#include <memory>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "analysis/static_values.h"
#include "ir/check.h"
#include "ir/diagnostics.h"

namespace kir {

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

// OrderingDataflowWork().
std::atomic<int64_t> dataflow_work{0};

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
  void StartWalk(std::set<const Op*> ignored, bool stop, int start) {
    elected_.clear();
    if (!elected_by_top_.empty()) {
      for (int k = 0; k < start; ++k) {
        auto it = elected_by_top_.find(&kernel_.body().op(k));
        if (it == elected_by_top_.end()) continue;
        for (const auto& [threads, warp] : it->second) {
          elected_.emplace(threads, warp);
        }
      }
    }
    options_.ignored = std::move(ignored);
    options_.stop_at_first_same_iteration = stop;
    loop_entry_.clear();
    pairs_.clear();
    unfenced_.clear();
    found_same_iteration_ = false;
    loops_entered_ = 0;
    stopped_ = false;
  }
  // Visits `op` of the kernel body, as VisitRegion would.
  void VisitTop(const Op& op, State& state) {
    current_top_ = &op;
    elected_by_top_.erase(&op);
    VisitOp(op, state);
    current_top_ = nullptr;
    stopped_ = found_same_iteration_ && loops_entered_ == 0;
  }
  bool found_same_iteration() const { return found_same_iteration_; }
  std::set<UnorderedPair>& pairs() { return pairs_; }
  std::set<UnfencedPair>& unfenced() { return unfenced_; }
  // `op` was inserted or is about to be removed: what was derived from it
  // (or from an op that had its address) no longer holds.
  void Forget(const Op& op) {
    if (op.serial() < static_cast<int>(ops_.size()))
      ops_[op.serial()] = nullptr;
  }

 private:
  // What the walk asks of one op, derived once.
  struct OpInfo {
    std::vector<MemoryEffect> effects;
    absl::InlinedVector<bool, 4> ring_fill;  // IsRingFill of each effect
    SetId executing = kEmptySet;
    bool single_thread = false;
    int elected_warp = -1;
    const Op* role = nullptr;
    // The sync key of the mbarrier element an async access of the op
    // completes on, or -1.
    int completion_barrier = -1;
  };

  const OpInfo& Info(const Op& op) {
    if (op.serial() >= static_cast<int>(ops_.size())) {
      ops_.resize(std::max(kernel_.op_serial_bound(), op.serial() + 1),
                  nullptr);
    }
    if (const OpInfo* known = ops_[op.serial()]) return *known;
    OpInfo info;
    info.effects = MemoryEffectsOf(op);
    for (const MemoryEffect& effect : info.effects) {
      info.ring_fill.push_back(IsRingFill(effect));
    }
    info.executing = sets_.Intern(conflicts_.Executing(op));
    info.single_thread = threads_.IsSingleThread(op);
    info.elected_warp = ElectedWarp(op);
    info.role = threads_.EnclosingRole(op);
    if (std::optional<SyncKey> key = CompletionBarrier(info.effects)) {
      info.completion_barrier = keys_.KeyId(*key);
    }
    infos_.push_back(std::move(info));
    ops_[op.serial()] = &infos_.back();
    return infos_.back();
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
    for (int i = 0; i < region.size() && !stopped_; ++i) {
      VisitOp(region.op(i), state);
      // Inside a loop, a later round of its fixed point can still find an
      // earlier access's pair (an async access's group changes stage around
      // the back edge), so the walk stops only outside loops.
      stopped_ = found_same_iteration_ && loops_entered_ == 0;
    }
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
        if (op.num_regions() > 0) VisitRegion(op.region(0), then_state);
        if (op.num_regions() > 1) VisitRegion(op.region(1), state);
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
        if (op.num_regions() > 0) VisitRegion(op.region(0), inside);
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
        VisitRegion(op.region(r), state);
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
    // multiply with the nesting depth.
    State body_in = before;
    if (auto cached = loop_entry_.find(&loop); cached != loop_entry_.end()) {
      body_in = Join(before, cached->second);
    }
    State body_out;
    for (int round = 0; round < 64; ++round) {
      body_out = body_in;
      ++loops_entered_;
      VisitRegion(loop.region(0), body_out);
      --loops_entered_;
      State next = Join(before, Carry(body_out, loop));
      if (next == body_in) break;
      body_in = std::move(next);
    }
    loop_entry_[&loop] = std::move(body_in);
    // A loop that surely runs leaves through its body only: what a barrier
    // in the body ordered stays ordered after it.
    std::optional<int64_t> trips = TripCount(loop);
    state = trips && *trips >= 1 ? std::move(body_out) : Join(before, body_out);
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
        if (!next.is_carried() || next.carried.loop->IsInside(loop)) {
          next.carried = CarriedLoop{&loop, 1};
          rekeyed = true;
        } else if (next.carried.loop == &loop) {
          next.carried.distance =
              std::min(next.carried.distance + 1, CarriedLoop::kMaxDistance);
          rekeyed = true;
        }
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
      const std::vector<MemoryEffect>& effects) {
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
    const std::vector<MemoryEffect>& effects = info.effects;
    const SetId executing = info.executing;
    const Op* role = info.role;
    const bool one_lane = OneLaneOf(op, executing);
    if (proxy_) FindUnfenced(op, info, executing, one_lane, state);
    for (int i = 0; i < static_cast<int>(effects.size()) && !proxy_; ++i) {
      const MemoryEffect& effect = effects[i];
      if (!IsBlockMemory(effect) || info.ring_fill[i]) continue;
      for (const Entry& e : state) {
        const EntryKey& key = e.key;
        const MemoryEffect& earlier = *e.effect;
        if (earlier.space != effect.space || e.ring_fill) continue;
        if (!NeedsOrdering(earlier, effect)) continue;
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
          // The op's other pairs are still collected, so that the result
          // does not depend on the order of the state's entries.
          if (!key.is_carried() && options_.stop_at_first_same_iteration) {
            found_same_iteration_ = true;
          }
        }
      }
    }
    ApplySync(op, state);
    for (int i = 0; i < static_cast<int>(effects.size()); ++i) {
      const MemoryEffect& effect = effects[i];
      // The proxy rule follows generic accesses of global memory only (its
      // edges start at a generic access).
      const bool tracked = effect.space == MemorySpace::kShared ||
                           (effect.space == MemorySpace::kGlobal &&
                            (!proxy_ || IsGenericData(effect)));
      if (!tracked) continue;
      Entry entry;
      entry.key.op = &op;
      entry.key.effect = i;
      entry.effect = &effect;
      entry.ring_fill = info.ring_fill[i];
      entry.state.threads = executing;
      if (const int warp = info.elected_warp; warp >= 0) {
        elected_.emplace(executing, warp);
        if (current_top_ != nullptr) {
          elected_by_top_[current_top_].emplace_back(executing, warp);
        }
      }
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
    const std::vector<MemoryEffect>& effects = info.effects;
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
      }
    }
  }

  // Whether the access of `earlier` by `threads_a` may overlap effect `eb`
  // of `b` by `threads_b`. The answers depend only on the accesses (which
  // the passes using this analysis do not change), so they are kept.
  bool Overlaps(const EntryKey& earlier, const Op& b, int eb, SetId threads_a,
                SetId threads_b, ThreadPairs thread_pairs) {
    const OverlapKey memo_key{
        earlier.op, earlier.effect, earlier.carried, &b,
        eb,         threads_a,      threads_b,       thread_pairs};
    if (auto it = overlaps_.find(memo_key); it != overlaps_.end()) {
      return it->second;
    }
    const Op& a = *earlier.op;
    const ThreadBits& ta = sets_.Bits(threads_a);
    const ThreadBits& tb = sets_.Bits(threads_b);
    // The caller's cache, shared across analyses of one kernel, holds the
    // answers for distinct threads.
    ConflictCache* cache =
        thread_pairs == ThreadPairs::kDistinct ? options_.cache : nullptr;
    ConflictCache::Key cache_key;
    bool overlap = false;
    bool cached = false;
    if (cache != nullptr) {
      const absl::Span<const CarriedLoop> carried = earlier.carried_loops();
      cache_key = ConflictCache::Key{
          &a,
          earlier.effect,
          &b,
          eb,
          std::vector<CarriedLoop>(carried.begin(), carried.end()),
          ta,
          tb};
      auto it = cache->entries().find(cache_key);
      if (it != cache->entries().end()) {
        overlap = it->second;
        cached = true;
      }
    }
    if (!cached) {
      overlap = conflicts_.MayOverlap(a, Info(a).effects[earlier.effect], ta, b,
                                      Info(b).effects[eb], tb,
                                      earlier.carried_loops(), thread_pairs);
      if (cache != nullptr) cache->entries()[cache_key] = overlap;
    }
    overlaps_.emplace(memo_key, overlap);
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
  std::deque<OpInfo> infos_;
  std::vector<const OpInfo*> ops_;  // by Op::serial()
  absl::flat_hash_map<const Op*, SetId> role_members_;
  absl::flat_hash_map<std::pair<const Op*, SetId>, int> takes_;
  absl::flat_hash_map<const Op*, bool> decides_sides_;
  absl::flat_hash_map<std::pair<SetId, const Op*>, SetId> drop_iteration_keys_;
  absl::flat_hash_map<OverlapKey, bool> overlaps_;
  // The state at the top of each loop's body at its last fixed point in
  // this run.
  absl::flat_hash_map<const Op*, State> loop_entry_;
  std::set<UnorderedPair> pairs_;
  // stop_at_first_same_iteration: a pair within one iteration was found,
  // and the walk stops once it is outside every loop.
  bool found_same_iteration_ = false;
  int loops_entered_ = 0;
  bool stopped_ = false;
  std::set<UnfencedPair> unfenced_;
  // Thread sets of accesses issued by the elected lane of one warp.
  absl::flat_hash_map<SetId, int> elected_;
  // For walks that start part-way (StartWalk): the elections each op of
  // the kernel body made, so that a walk from op k knows exactly those of
  // the ops before k, as a walk from the start would.
  absl::flat_hash_map<const Op*, std::vector<std::pair<SetId, int>>>
      elected_by_top_;
  const Op* current_top_ = nullptr;
};

// Program-order positions, for sorting and for locating pairs.
std::map<const Op*, int> ProgramOrder(const Kernel& kernel) {
  std::map<const Op*, int> order;
  Walk(kernel.body(), [&](const Op& op) {
    order.emplace(&op, static_cast<int>(order.size()));
  });
  return order;
}

}  // namespace

std::vector<UnorderedPair> FindUnorderedPairs(
    const Kernel& kernel, const SyncAnalysisOptions& options) {
  OrderingAnalysis analysis(kernel, options);
  std::vector<UnorderedPair> pairs = analysis.Run();
  std::map<const Op*, int> order = ProgramOrder(kernel);
  std::sort(pairs.begin(), pairs.end(),
            [&](const UnorderedPair& x, const UnorderedPair& y) {
              return std::make_tuple(order[x.second], x.second_effect,
                                     order[x.first], x.first_effect,
                                     x.carried) <
                     std::make_tuple(order[y.second], y.second_effect,
                                     order[y.first], y.first_effect, y.carried);
            });
  return pairs;
}

std::vector<UnfencedPair> FindUnfencedPairs(
    const Kernel& kernel, FencePlacement placement,
    const SyncAnalysisOptions& options) {
  SyncAnalysisOptions proxy_options;
  proxy_options.ignored = options.ignored;
  proxy_options.threads = options.threads;
  proxy_options.conflicts = options.conflicts;
  OrderingAnalysis analysis(kernel, proxy_options, placement);
  std::vector<UnfencedPair> pairs = analysis.RunProxy();
  std::map<const Op*, int> order = ProgramOrder(kernel);
  auto position = [&](const UnfencedPair& p) {
    return std::make_tuple(order[p.pair.second], p.pair.second_effect,
                           order[p.pair.first], p.pair.first_effect,
                           p.pair.carried, p.need);
  };
  std::sort(pairs.begin(), pairs.end(),
            [&](const UnfencedPair& x, const UnfencedPair& y) {
              return position(x) < position(y);
            });
  return pairs;
}

int64_t OrderingDataflowWork() { return dataflow_work.load(); }

std::string DescribeAccess(const Op& op, int effect) {
  std::vector<MemoryEffect> effects = MemoryEffectsOf(op);
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

namespace {

// The place of `op` in program order: per level from the kernel body down,
// the region's number in its op and the op's index in the region; paths
// compare as a pre-order walk numbers the ops.
std::vector<int> PathOf(const Op& op) {
  std::vector<int> path;
  for (const Op* o = &op; o != nullptr; o = o->parent_op()) {
    const Region* region = o->parent_region();
    path.push_back(region->IndexOf(o));
    int number = 0;
    if (const Op* parent = region->parent_op()) {
      while (&parent->region(number) != region) ++number;
    }
    path.push_back(number);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

// PathOf, computed once per op.
class ProgramPaths {
 public:
  const std::vector<int>& Of(const Op* op) {
    auto it = paths_.find(op);
    if (it == paths_.end()) it = paths_.emplace(op, PathOf(*op)).first;
    return it->second;
  }

 private:
  std::map<const Op*, std::vector<int>> paths_;
};

// The kernel body's op holding `op`.
const Op* TopLevelOf(const Op& op) {
  const Op* top = &op;
  while (top->parent_op() != nullptr) top = top->parent_op();
  return top;
}

}  // namespace

struct IncrementalOrdering::Impl {
  // Before op k of the kernel body, and what the walk found within it.
  struct Checkpoint {
    State before;
    std::set<UnorderedPair> pairs;
    std::set<UnfencedPair> unfenced;
    bool same_iteration = false;  // a pair within one iteration among pairs
  };

  Impl(const Kernel& kernel, const SyncAnalysisOptions& options,
       std::optional<FencePlacement> proxy)
      : kernel(kernel), base(options), analysis(kernel, options, proxy) {
    KIR_CHECK(options.threads != nullptr && options.conflicts != nullptr)
        << "IncrementalOrdering needs the caller's analyses";
    KIR_CHECK(options.ignored.empty()) << "ignored ops are per query";
    checkpoints.emplace_back();
    // An edge ends at an async access of data or a use of an mbarrier;
    // without one the proxy walk finds nothing (and its state, which no
    // barrier empties of unfenced generic accesses, would only grow).
    if (proxy) {
      nothing_to_find = true;
      Walk(kernel.body(), [&](const Op& op) {
        for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
          if (IsMbarrier(effect) || (effect.proxy == Proxy::kAsync &&
                                     effect.space != MemorySpace::kRegister)) {
            nothing_to_find = false;
          }
        }
      });
    }
  }

  int IndexOfTop(const Op& op) const {
    return kernel.body().IndexOf(TopLevelOf(op));
  }

  // Walks the kernel as it is (nothing ignored) until the states before
  // ops 0..`end` are known, or (`stop`) until a pair within one iteration
  // is found; true when it stopped there, with that op's pairs so far in
  // `partial`.
  bool Extend(int end, bool stop, Checkpoint* partial) {
    const Region& body = kernel.body();
    if (static_cast<int>(checkpoints.size()) - 1 < end) {
      analysis.StartWalk({}, stop, static_cast<int>(checkpoints.size()) - 1);
    }
    while (static_cast<int>(checkpoints.size()) - 1 < end) {
      const int k = static_cast<int>(checkpoints.size()) - 1;
      State state = checkpoints[k].before;
      analysis.VisitTop(body.op(k), state);
      if (stop && analysis.found_same_iteration()) {
        // The walk stopped inside this op: its pairs are not all found.
        partial->pairs = std::move(analysis.pairs());
        return true;
      }
      Checkpoint& done = checkpoints[k];
      done.pairs = std::move(analysis.pairs());
      done.unfenced = std::move(analysis.unfenced());
      analysis.pairs().clear();
      analysis.unfenced().clear();
      for (const UnorderedPair& pair : done.pairs) {
        done.same_iteration = done.same_iteration || !pair.carried;
      }
      if (!done.pairs.empty() || !done.unfenced.empty()) found_at.insert(k);
      if (done.same_iteration) same_iteration_at.insert(k);
      Checkpoint next;
      next.before = std::move(state);
      checkpoints.push_back(std::move(next));
    }
    return false;
  }

  bool AnySameIterationBefore(int end) const {
    return !same_iteration_at.empty() && *same_iteration_at.begin() < end;
  }

  // The complete checkpoints in [begin, end) that found something.
  template <typename Fn>
  void ForEachFound(int begin, int end, Fn&& fn) const {
    for (auto it = found_at.lower_bound(begin);
         it != found_at.end() && *it < end; ++it) {
      fn(checkpoints[*it]);
    }
  }

  // What a walk with `ignored` finds, as a fresh FindUnorderedPairs /
  // FindUnfencedPairs would; `any_only`: stop at the first pair.
  Checkpoint Query(const std::set<const Op*>& ignored, bool stop,
                   bool any_only) {
    const Region& body = kernel.body();
    const int size = body.size();
    Checkpoint found;
    if (nothing_to_find) return found;
    auto add = [&](const Checkpoint& c) {
      found.pairs.insert(c.pairs.begin(), c.pairs.end());
      found.unfenced.insert(c.unfenced.begin(), c.unfenced.end());
    };
    if (ignored.empty()) {
      if (stop) {
        // A walk from the start stops within the first op where it finds
        // a pair within one iteration.
        if (!same_iteration_at.empty()) {
          const int k = *same_iteration_at.begin();
          ForEachFound(0, k, add);
          analysis.StartWalk({}, stop, k);
          State state = checkpoints[k].before;
          analysis.VisitTop(body.op(k), state);
          add(Checkpoint{{}, std::move(analysis.pairs()), {}, false});
          return found;
        }
      }
      Checkpoint partial;
      const bool stopped = Extend(size, stop, &partial);
      ForEachFound(0, static_cast<int>(checkpoints.size()) - 1, add);
      if (stopped) add(partial);
      return found;
    }
    int first = size, last = 0;
    for (const Op* op : ignored) {
      const int index = IndexOfTop(*op);
      first = std::min(first, index);
      last = std::max(last, index);
    }
    Checkpoint unused;
    Extend(size, /*stop=*/false, &unused);
    if (stop && AnySameIterationBefore(first)) return Fresh(ignored, stop);
    ForEachFound(0, first, add);
    if (any_only && !(found.pairs.empty() && found.unfenced.empty())) {
      return found;
    }
    analysis.StartWalk(ignored, stop, first);
    State state = checkpoints[first].before;
    for (int k = first; k < size; ++k) {
      analysis.VisitTop(body.op(k), state);
      found.pairs.insert(analysis.pairs().begin(), analysis.pairs().end());
      found.unfenced.insert(analysis.unfenced().begin(),
                            analysis.unfenced().end());
      analysis.pairs().clear();
      analysis.unfenced().clear();
      if (stop && analysis.found_same_iteration()) return found;
      if (any_only && !(found.pairs.empty() && found.unfenced.empty())) {
        return found;
      }
      // Past every ignored op, a state equal to the one without them makes
      // the rest of the walk the kernel's own.
      if (k >= last && state == checkpoints[k + 1].before) {
        if (!stop) {
          ForEachFound(k + 1, size, add);
          return found;
        }
        // A walk from the start stops within the first op where it finds
        // a pair within one iteration.
        auto next = same_iteration_at.upper_bound(k);
        if (next == same_iteration_at.end()) {
          ForEachFound(k + 1, size, add);
          return found;
        }
        const int j = *next;
        ForEachFound(k + 1, j, add);
        analysis.StartWalk({}, stop, j);
        State again = checkpoints[j].before;
        analysis.VisitTop(body.op(j), again);
        add(Checkpoint{{}, std::move(analysis.pairs()), {}, false});
        analysis.pairs().clear();
        return found;
      }
    }
    return found;
  }

  // The walk from scratch, for the rare query an earlier stop would cut
  // short differently.
  Checkpoint Fresh(const std::set<const Op*>& ignored, bool stop) {
    analysis.StartWalk(ignored, stop, 0);
    State state;
    const Region& body = kernel.body();
    Checkpoint found;
    for (int k = 0; k < body.size(); ++k) {
      analysis.VisitTop(body.op(k), state);
      if (stop && analysis.found_same_iteration()) break;
    }
    found.pairs = std::move(analysis.pairs());
    found.unfenced = std::move(analysis.unfenced());
    return found;
  }

  const Kernel& kernel;
  SyncAnalysisOptions base;
  OrderingAnalysis analysis;
  std::vector<Checkpoint> checkpoints;
  // Indices of the complete checkpoints that found something, and of those
  // that found a pair within one iteration.
  std::set<int> found_at, same_iteration_at;
  bool nothing_to_find = false;
};

IncrementalOrdering::IncrementalOrdering(const Kernel& kernel,
                                         const SyncAnalysisOptions& options,
                                         std::optional<FencePlacement> proxy)
    : impl_(std::make_unique<Impl>(kernel, options, proxy)) {}

IncrementalOrdering::~IncrementalOrdering() = default;

void IncrementalOrdering::Changed(const Op& op) {
  impl_->analysis.Forget(op);
  // The state before the changed op's top-level op still holds; what was
  // found within it and after it does not.
  const int index = impl_->IndexOfTop(op);
  if (index + 1 < static_cast<int>(impl_->checkpoints.size())) {
    impl_->checkpoints.resize(index + 1);
    impl_->found_at.erase(impl_->found_at.lower_bound(index),
                          impl_->found_at.end());
    impl_->same_iteration_at.erase(impl_->same_iteration_at.lower_bound(index),
                                   impl_->same_iteration_at.end());
    impl_->checkpoints[index].pairs.clear();
    impl_->checkpoints[index].unfenced.clear();
    impl_->checkpoints[index].same_iteration = false;
  }
}

std::vector<UnorderedPair> IncrementalOrdering::UnorderedPairs(
    const std::set<const Op*>& ignored, bool stop_at_first_same_iteration) {
  Impl::Checkpoint found =
      impl_->Query(ignored, stop_at_first_same_iteration, false);
  std::vector<UnorderedPair> pairs(found.pairs.begin(), found.pairs.end());
  ProgramPaths paths;
  auto path = [&](const Op* op) -> const std::vector<int>& {
    return paths.Of(op);
  };
  std::sort(pairs.begin(), pairs.end(),
            [&](const UnorderedPair& x, const UnorderedPair& y) {
              return std::make_tuple(path(x.second), x.second_effect,
                                     path(x.first), x.first_effect, x.carried) <
                     std::make_tuple(path(y.second), y.second_effect,
                                     path(y.first), y.first_effect, y.carried);
            });
  return pairs;
}

std::vector<UnfencedPair> IncrementalOrdering::UnfencedPairs(
    const std::set<const Op*>& ignored) {
  Impl::Checkpoint found = impl_->Query(ignored, false, false);
  std::vector<UnfencedPair> pairs(found.unfenced.begin(), found.unfenced.end());
  ProgramPaths paths;
  auto path = [&](const Op* op) -> const std::vector<int>& {
    return paths.Of(op);
  };
  auto position = [&](const UnfencedPair& p) {
    return std::make_tuple(path(p.pair.second), p.pair.second_effect,
                           path(p.pair.first), p.pair.first_effect,
                           p.pair.carried, p.need);
  };
  std::sort(pairs.begin(), pairs.end(),
            [&](const UnfencedPair& x, const UnfencedPair& y) {
              return position(x) < position(y);
            });
  return pairs;
}

bool IncrementalOrdering::Contains(const UnorderedPair& pair) {
  if (impl_->nothing_to_find) return false;
  // A walk finds a pair at its later access.
  const int index = impl_->IndexOfTop(*pair.second);
  Impl::Checkpoint unused;
  impl_->Extend(index + 1, /*stop=*/false, &unused);
  return impl_->checkpoints[index].pairs.count(pair) > 0;
}

bool IncrementalOrdering::AnyPair(const std::set<const Op*>& ignored) {
  Impl::Checkpoint found = impl_->Query(ignored, false, true);
  return !found.pairs.empty() || !found.unfenced.empty();
}

}  // namespace kir
