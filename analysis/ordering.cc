// The ordering dataflow; see ordering.h.
#include "analysis/ordering.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
  bool operator==(const SyncKey& o) const {
    return !(*this < o) && !(o < *this);
  }
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
  // The outermost loop the access was carried around (at most one).
  std::vector<CarriedLoop> carried;
  Stage stage = Stage::kComplete;
  const Op* commit = nullptr;
  int group_distance = 0;
  bool operator<(const EntryKey& o) const {
    return std::tie(op, effect, carried, stage, commit, group_distance) <
           std::tie(o.op, o.effect, o.carried, o.stage, o.commit,
                    o.group_distance);
  }
  bool operator==(const EntryKey& o) const {
    return !(*this < o) && !(o < *this);
  }
};

struct EntryState {
  ThreadBits threads;   // ran the access
  ThreadBits observed;  // know it complete (issuers, or mbarrier waiters)
  ThreadBits ordered;   // later accesses by these threads are ordered
  std::set<SyncKey> released;
  // The proxy rule (tracked only when a placement model is asked for):
  ThreadBits fenced;  // threads of the access that fenced after it
  // Threads whose later async accesses are fenced after it in the model.
  ThreadBits proxy_ordered;
  // Warps whose elected lane fenced after being ordered after it (issuer
  // model): counts for that lane's later elected accesses only.
  ThreadBits elected_proxy_ordered;
  std::set<SyncKey> proxy_released;  // released with every thread fenced
  bool operator==(const EntryState& o) const {
    return threads == o.threads && observed == o.observed &&
           ordered == o.ordered && released == o.released &&
           fenced == o.fenced && proxy_ordered == o.proxy_ordered &&
           elected_proxy_ordered == o.elected_proxy_ordered &&
           proxy_released == o.proxy_released;
  }
};

std::set<SyncKey> Intersect(const std::set<SyncKey>& a,
                            const std::set<SyncKey>& b) {
  std::set<SyncKey> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                        std::inserter(common, common.begin()));
  return common;
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
         buffer->defining_op()->GetFlag("ring");
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

using State = std::map<EntryKey, EntryState>;

void JoinInto(State& into, const EntryKey& key, const EntryState& entry) {
  auto [it, inserted] = into.emplace(key, entry);
  if (inserted) return;
  EntryState& existing = it->second;
  existing.threads |= entry.threads;
  existing.observed &= entry.observed;
  existing.ordered &= entry.ordered;
  existing.released = Intersect(existing.released, entry.released);
  existing.fenced &= entry.fenced;
  existing.proxy_ordered &= entry.proxy_ordered;
  existing.elected_proxy_ordered &= entry.elected_proxy_ordered;
  existing.proxy_released =
      Intersect(existing.proxy_released, entry.proxy_released);
}

State Join(const State& a, const State& b) {
  State out = a;
  for (const auto& [key, entry] : b) JoinInto(out, key, entry);
  return out;
}

bool Subset(const ThreadBits& a, const ThreadBits& b) {
  return (a & ~b).none();
}

const Op* InnermostLoop(const Op* op) {
  for (const Op* parent = op != nullptr ? op->parent_op() : nullptr;
       parent != nullptr; parent = parent->parent_op()) {
    if (parent->kind() == OpKind::kFor) return parent;
  }
  return nullptr;
}

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
    for (int t = 0; t < conflicts_.num_threads(); ++t) all_.set(t);
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
  void Forget(const Op& op) { effects_.erase(&op); }

 private:
  // Whether `op`, which `executing` may run, runs in only one of them.
  bool OneLaneOf(const Op& op, const ThreadBits& executing) const {
    return threads_.IsSingleThread(op) && executing.count() > 1;
  }

  int ElectedWarp(const Op& op) const {
    if (!threads_.IsSingleThread(op)) return -1;
    const ThreadSet& set = threads_.ExecutingThreads(op);
    if (!set.known() || set.Count() <= 1) return -1;
    std::vector<int> warps = set.Warps();
    return warps.size() == 1 && set.Count() == 32 ? warps[0] : -1;
  }

  const std::vector<MemoryEffect>& EffectsOf(const Op& op) {
    auto it = effects_.find(&op);
    if (it != effects_.end()) return it->second;
    return effects_.emplace(&op, MemoryEffectsOf(op)).first->second;
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
    if (options_.ignored.count(&op)) return;
    switch (op.kind()) {
      case OpKind::kFor:
        VisitLoop(op, state);
        return;
      case OpKind::kIf: {
        State then_state = state;
        State else_state = state;
        if (op.num_regions() > 0) VisitRegion(op.region(0), then_state);
        if (op.num_regions() > 1) VisitRegion(op.region(1), else_state);
        state = JoinPaths(then_state, else_state, [&](const EntryState& e) {
          return Takes(op, e.threads);
        });
        return;
      }
      case OpKind::kRole: {
        State inside = state;
        if (op.num_regions() > 0) VisitRegion(op.region(0), inside);
        const ThreadBits members = RoleMembers(op);
        state = JoinPaths(inside, state, [&](const EntryState& e) {
          return e.threads.any() && Subset(e.threads, members) ? 1 : 0;
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

  ThreadBits RoleMembers(const Op& role) const {
    ThreadBits bits;
    const int64_t begin = role.GetInt("warp_begin");
    const int64_t end = role.GetInt("warp_end");
    for (int t = 0; t < conflicts_.num_threads(); ++t) {
      bits[t] = t / 32 >= begin && t / 32 < end;
    }
    return bits;
  }

  // Which side of `if_op` the threads in `threads` (those that ran one
  // access) take: 1 when all take the then side, 0 when all take the else
  // side, -1 when unknown or mixed. Exact conditions are evaluated; an
  // elect.sync condition is taken by the elected lane of each full warp,
  // the same lane every time, so a single-thread access issued under an
  // election in that warp takes it.
  int Takes(const Op& if_op, const ThreadBits& threads) {
    if (if_op.num_operands() == 0 || threads.none()) return -1;
    const Value* condition = if_op.operand_value(0);
    const ThreadBits reaching = conflicts_.Executing(if_op);
    if (!Subset(threads, reaching)) return -1;
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
        condition->defining_op()->kind() == OpKind::kElectSync &&
        elected_.count(threads.to_string())) {
      // The election runs in full warps (V33); `threads` is one warp whose
      // elected lane issued the access.
      const int warp = elected_.at(threads.to_string());
      for (int t = warp * 32;
           t < warp * 32 + 32 && t < conflicts_.num_threads(); ++t) {
        if (!reaching[t]) return -1;
      }
      return 1;
    }
    return -1;
  }

  // Joins the states after the two sides of a branch. `side_of(entry)` says
  // which side every thread of an access takes (1: first, 0: second, -1:
  // unknown); for such an access, the other side's copy only speaks for
  // other threads, so its stage and completion come from the taken side and
  // only what other threads know (ordered, released) is intersected.
  template <typename SideOf>
  State JoinPaths(const State& first, const State& second, SideOf&& side_of) {
    State a = first, b = second;
    auto fold = [&](State& skipped, State& taken, int taken_side) {
      for (auto it = skipped.begin(); it != skipped.end();) {
        if (side_of(it->second) != taken_side) {
          ++it;
          continue;
        }
        bool merged = false;
        for (auto& [key, entry] : taken) {
          if (key.op != it->first.op || key.effect != it->first.effect ||
              key.carried != it->first.carried) {
            continue;
          }
          entry.ordered &= it->second.ordered;
          entry.released = Intersect(entry.released, it->second.released);
          entry.proxy_ordered &= it->second.proxy_ordered;
          entry.elected_proxy_ordered &= it->second.elected_proxy_ordered;
          entry.proxy_released =
              Intersect(entry.proxy_released, it->second.proxy_released);
          merged = true;
        }
        it = merged ? skipped.erase(it) : std::next(it);
      }
    };
    fold(b, a, 1);
    fold(a, b, 0);
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
    loop_entry_[&loop] = body_in;
    // A loop that surely runs leaves through its body only: what a barrier
    // in the body ordered stays ordered after it.
    std::optional<int64_t> trips = TripCount(loop);
    state = trips && *trips >= 1 ? std::move(body_out) : Join(before, body_out);
  }

  // The state at the top of the next iteration of `loop`.
  State Carry(const State& state, const Op& loop) {
    State out;
    for (const auto& [key, entry] : state) {
      EntryKey next = key;
      EntryState moved = entry;
      // Only the outermost loop an access was carried around relates it to
      // a later access (the iterations of loops inside it ran in another
      // execution, so their distances say nothing); keeping just that one
      // keeps the state linear in the nesting depth.
      if (key.op->IsInside(loop)) {
        if (next.carried.empty() || next.carried[0].loop->IsInside(loop)) {
          next.carried = {CarriedLoop{&loop, 1}};
        } else if (next.carried[0].loop == &loop) {
          next.carried[0].distance =
              std::min(next.carried[0].distance + 1, CarriedLoop::kMaxDistance);
        }
      }
      if (key.stage == Stage::kCommitted &&
          InnermostLoop(key.commit) == &loop) {
        next.group_distance =
            std::min(next.group_distance + 1, CarriedLoop::kMaxDistance);
      }
      // A release to an mbarrier chosen by this iteration's values says
      // nothing about the one the next iteration names.
      for (std::set<SyncKey>* released :
           {&moved.released, &moved.proxy_released}) {
        for (auto it = released->begin(); it != released->end();) {
          bool stale = false;
          for (const Value* index : it->indices) {
            stale = stale || loop.DefinesInside(*index);
          }
          it = stale ? released->erase(it) : std::next(it);
        }
      }
      JoinInto(out, next, moved);
    }
    return out;
  }

  // The mbarrier element an async access of `op` completes on.
  std::optional<SyncKey> CompletionBarrier(const Op& op) {
    for (const MemoryEffect& effect : EffectsOf(op)) {
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
  static bool Releasable(const EntryKey& key, const EntryState& entry,
                         const ThreadBits& participants) {
    switch (key.stage) {
      case Stage::kComplete:
        return Subset(entry.threads, participants) &&
               Subset(entry.threads, entry.observed);
      case Stage::kMbarrier:
        return (entry.observed & participants).any();
      default:
        return false;
    }
  }

  void Release(State& state, const ThreadBits& participants,
               const SyncKey& to) {
    for (auto& [key, entry] : state) {
      if (!Releasable(key, entry, participants)) continue;
      entry.released.insert(to);
      if (Subset(entry.threads, entry.fenced)) entry.proxy_released.insert(to);
    }
  }

  void Acquire(State& state, const ThreadBits& waiters, const SyncKey& from) {
    for (auto& [key, entry] : state) {
      bool acquired = entry.released.count(from) > 0;
      if (key.stage == Stage::kMbarrier && from.kind == SyncKey::kMbarrier) {
        std::optional<SyncKey> completion = CompletionBarrier(*key.op);
        acquired = acquired || (completion && *completion == from);
      }
      if (entry.proxy_released.count(from)) entry.proxy_ordered |= waiters;
      if (!acquired) continue;
      entry.ordered |= waiters;
      if (key.stage == Stage::kMbarrier) entry.observed |= waiters;
    }
  }

  void Barrier(State& state, const ThreadBits& participants) {
    for (auto it = state.begin(); it != state.end();) {
      auto& [key, entry] = *it;
      if (Releasable(key, entry, participants)) {
        entry.ordered |= participants;
        if (Subset(entry.threads, entry.fenced)) {
          entry.proxy_ordered |= participants;
        }
      }
      // An access ordered for every thread (and fenced for every thread,
      // when the proxy rule is followed) can pair with nothing later:
      // dropping it keeps the state as small as the unordered accesses.
      const bool done = Subset(all_, entry.ordered) &&
                        (!proxy_ || Subset(all_, entry.proxy_ordered));
      it = done ? state.erase(it) : std::next(it);
    }
  }

  // A proxy fence or fence.mbarrier_init run by `executing`: the accesses it
  // covers are fenced in the threads that ran (and completed) them, and
  // (issuer model) in threads already ordered after them.
  void Fence(const Op& fence, State& state, const ThreadBits& executing) {
    const bool init_fence =
        FactsOf(fence.kind()).sync == SyncKind::kMbarrierInitFence;
    // An elected fence runs in one lane of `executing`, which one being
    // unknown (every election in a warp picks the same lane): it fences an
    // access only if that lane alone made it, and orders only that lane's
    // later elected accesses.
    const bool one_lane = OneLaneOf(fence, executing);
    for (auto& [key, entry] : state) {
      const MemoryEffect& effect = EffectsOf(*key.op)[key.effect];
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
        entry.fenced |= executing & entry.threads & entry.observed;
        if (issuer) entry.proxy_ordered |= executing & entry.ordered;
        continue;
      }
      if (OneLaneOf(*key.op, entry.threads) && entry.threads == executing) {
        entry.fenced |= executing & entry.observed;
      }
      if (issuer && Subset(executing, entry.ordered)) {
        entry.elected_proxy_ordered |= executing;
      }
    }
  }

  // Moves entries to new keys (commits and waits change the stage).
  template <typename Fn>
  void Rekey(State& state, Fn&& fn) {
    State out;
    for (const auto& [key, entry] : state) {
      EntryKey next = key;
      EntryState moved = entry;
      fn(next, moved);
      JoinInto(out, next, moved);
    }
    state = std::move(out);
  }

  void ApplySync(const Op& op, State& state) {
    const OpFacts& facts = FactsOf(op.kind());
    const ThreadBits executing = conflicts_.Executing(op);
    switch (facts.sync) {
      case SyncKind::kBlockBarrier:
        Barrier(state, all_);
        break;
      case SyncKind::kNamedBarrier: {
        SyncKey key{SyncKey::kNamedBarrier, nullptr, {}, op.GetInt("id")};
        Acquire(state, executing, key);
        Barrier(state, executing);
        break;
      }
      case SyncKind::kNamedBarrierArrive:
        Release(state, executing,
                SyncKey{SyncKey::kNamedBarrier, nullptr, {}, op.GetInt("id")});
        break;
      case SyncKind::kClusterArrive:
        if (!op.GetFlag("relaxed")) {
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
              !Subset(entry.threads, executing)) {
            return;
          }
          key.stage = Stage::kCommitted;
          key.commit = &op;
          key.group_distance = 0;
        });
        break;
      case SyncKind::kGroupWait: {
        const bool reads_only =
            op.FindAttr("read") != nullptr && op.GetFlag("read");
        for (const Operand& token : op.operands()) {
          const Value* value = token.value;
          if (value == nullptr || value->kind() != Value::Kind::kResult) {
            continue;
          }
          const Op* commit = value->defining_op();
          Rekey(state, [&](EntryKey& key, EntryState& entry) {
            if (key.stage != Stage::kCommitted || key.commit != commit ||
                key.group_distance < token.distance ||
                !Subset(entry.threads, executing)) {
              return;
            }
            if (reads_only && EffectsOf(*key.op)[key.effect].writes()) return;
            key.stage = Stage::kComplete;
            key.commit = nullptr;
            key.group_distance = 0;
            entry.observed |= entry.threads;
          });
        }
        break;
      }
      default:
        break;
    }
  }

  void VisitLeaf(const Op& op, State& state) {
    const std::vector<MemoryEffect>& effects = EffectsOf(op);
    const ThreadBits executing = conflicts_.Executing(op);
    const Op* role = threads_.EnclosingRole(op);
    if (proxy_) FindUnfenced(op, effects, executing, state);
    for (int i = 0; i < static_cast<int>(effects.size()) && !proxy_; ++i) {
      const MemoryEffect& effect = effects[i];
      if (!IsBlockMemory(effect)) continue;
      for (const auto& [key, entry] : state) {
        const MemoryEffect& earlier = EffectsOf(*key.op)[key.effect];
        if (earlier.space != effect.space) continue;
        if (!NeedsOrdering(earlier, effect)) continue;
        if (key.op == &op && key.carried.empty()) continue;
        if (IsRingFill(earlier) || IsRingFill(effect)) continue;
        const Op* earlier_role = threads_.EnclosingRole(*key.op);
        if (role != nullptr && earlier_role != nullptr &&
            role != earlier_role && earlier.buffer == effect.buffer) {
          continue;  // concurrent roles: the program's mbarriers order them
        }
        const ThreadBits later = executing & ~entry.ordered;
        if (later.none()) continue;
        if (Overlaps(*key.op, key.effect, entry.threads, op, i, later,
                     key.carried)) {
          const Op* outermost = nullptr;
          for (const CarriedLoop& loop : key.carried) {
            if (outermost == nullptr || outermost->IsInside(*loop.loop)) {
              outermost = loop.loop;
            }
          }
          pairs_.insert(UnorderedPair{key.op, key.effect, &op, i,
                                      !key.carried.empty(), outermost});
          // The op's other pairs are still collected, so that the result
          // does not depend on the order of the state's entries.
          if (key.carried.empty() && options_.stop_at_first_same_iteration) {
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
      EntryKey key{&op, i, {}, Stage::kComplete, nullptr, 0};
      EntryState entry;
      entry.threads = executing;
      if (const int warp = ElectedWarp(op); warp >= 0) {
        elected_.emplace(executing.to_string(), warp);
        if (current_top_ != nullptr) {
          elected_by_top_[current_top_].emplace_back(executing.to_string(),
                                                     warp);
        }
      }
      switch (effect.completion) {
        case Completion::kImmediate:
          entry.observed = executing;
          break;
        case Completion::kMbarrier:
          key.stage = Stage::kMbarrier;
          break;
        default: {
          const std::optional<TokenKind> group = FactsOf(op.kind()).group;
          if (options_.complete_uncommitted_async && group &&
              !committed_kinds_.count(*group)) {
            entry.observed = executing;
          } else {
            key.stage = Stage::kUncommitted;
          }
          break;
        }
      }
      JoinInto(state, key, entry);
    }
  }

  // The proxy rule at `op`: every edge from a tracked generic access (or an
  // mbarrier init) to an async access (or a use of the mbarrier) of `op`
  // whose threads are ordered after it but not fenced in the model.
  void FindUnfenced(const Op& op, const std::vector<MemoryEffect>& effects,
                    const ThreadBits& executing, const State& state) {
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
      for (const auto& [key, entry] : state) {
        if (key.op == &op && key.carried.empty()) continue;
        const MemoryEffect& earlier = EffectsOf(*key.op)[key.effect];
        // The ring fences its own generic accesses before its release; an
        // allocation sharing its bytes is fenced like any other.
        if (async_data && IsRingFill(later) && earlier.buffer == later.buffer) {
          continue;
        }
        FenceNeed need = FenceNeed::kSharedProxy;
        // The threads of `op` that need a fence after `earlier`: those that
        // other threads' accesses reach through a barrier or release (every
        // thread of the access must have fenced before it), and those that
        // ran the access themselves (their own fence after it suffices).
        ThreadBits proxy_ordered = entry.proxy_ordered;
        if (OneLaneOf(op, executing)) {
          proxy_ordered |= entry.elected_proxy_ordered;
        }
        ThreadBits others = executing & entry.ordered & ~proxy_ordered;
        ThreadBits own =
            executing & entry.threads & ~entry.fenced & ~proxy_ordered;
        bool by_box = true;
        if (mbarrier_use) {
          if (FactsOf(key.op->kind()).sync != SyncKind::kMbarrierInit ||
              earlier.buffer != later.buffer) {
            continue;
          }
          need = FenceNeed::kMbarrierInit;
          by_box = false;
          // The initializing thread's own arrivals and waits are ordered by
          // program order; a TMA unit's complete-tx is not.
          if (!completes_on_mbarrier) own.reset();
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
        if (others.none() && own.none()) continue;
        if (by_box) {
          const bool from_others =
              others.any() && conflicts_.MayOverlap(
                                  *key.op, earlier, entry.threads, op, later,
                                  others, key.carried, ThreadPairs::kDistinct);
          const bool from_own =
              own.any() &&
              conflicts_.MayOverlap(*key.op, earlier, entry.threads, op, later,
                                    own, key.carried, ThreadPairs::kSame);
          if (!from_others && !from_own) continue;
        }
        const Op* outermost = nullptr;
        for (const CarriedLoop& loop : key.carried) {
          if (outermost == nullptr || outermost->IsInside(*loop.loop)) {
            outermost = loop.loop;
          }
        }
        unfenced_.insert(
            UnfencedPair{UnorderedPair{key.op, key.effect, &op, i,
                                       !key.carried.empty(), outermost},
                         need});
      }
    }
  }

  bool Overlaps(const Op& a, int ea, const ThreadBits& ta, const Op& b, int eb,
                const ThreadBits& tb, const std::vector<CarriedLoop>& carried) {
    ConflictCache::Key cache_key;
    if (options_.cache != nullptr) {
      cache_key = ConflictCache::Key{&a, ea, &b, eb, carried, ta, tb};
      auto it = options_.cache->entries().find(cache_key);
      if (it != options_.cache->entries().end()) return it->second;
    }
    const bool overlap = conflicts_.MayOverlap(a, EffectsOf(a)[ea], ta, b,
                                               EffectsOf(b)[eb], tb, carried);
    if (options_.cache != nullptr) {
      options_.cache->entries()[cache_key] = overlap;
    }
    return overlap;
  }

  const Kernel& kernel_;
  SyncAnalysisOptions options_;
  const std::optional<FencePlacement> proxy_;
  // Built here unless the caller gives them (options.conflicts).
  std::unique_ptr<ThreadAnalysis> own_threads_;
  std::unique_ptr<ConflictAnalysis> own_conflicts_;
  const ThreadAnalysis& threads_;
  const ConflictAnalysis& conflicts_;
  ThreadBits all_;
  std::set<TokenKind> committed_kinds_;
  std::map<const Op*, std::vector<MemoryEffect>> effects_;
  // The state at the top of each loop's body at its last fixed point in
  // this run.
  std::map<const Op*, State> loop_entry_;
  std::set<UnorderedPair> pairs_;
  // stop_at_first_same_iteration: a pair within one iteration was found,
  // and the walk stops once it is outside every loop.
  bool found_same_iteration_ = false;
  int loops_entered_ = 0;
  bool stopped_ = false;
  std::set<UnfencedPair> unfenced_;
  // Thread sets of accesses issued by the elected lane of one warp.
  std::map<std::string, int> elected_;
  // For walks that start part-way (StartWalk): the elections each op of
  // the kernel body made, so that a walk from op k knows exactly those of
  // the ops before k, as a walk from the start would.
  std::map<const Op*, std::vector<std::pair<std::string, int>>> elected_by_top_;
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
