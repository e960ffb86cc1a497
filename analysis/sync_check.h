// Ordering of memory accesses between the threads of one block, under the
// lowered reading: which pairs of accesses conflict, and whether every
// conflicting pair is ordered by a barrier, an mbarrier or a completion wait
// on every path. Used by insert-syncs to place barriers and by `kir-opt
// --check-syncs` (CheckSyncs below) to check any lowered kernel, written by
// hand or by passes.
//
// Memory. Shared memory, and global memory as the threads of one block see
// it: a block's own accesses of a tensor or workspace are ordered exactly as
// shared ones (bar.sync orders all memory among the threads it counts).
// Conflicts between blocks are the program's (semaphores, atomics, splitk)
// and are not considered. Distinct tensor parameters and workspaces never
// alias (ir/language.md, "Memory and aliasing").
//
// Conflicts. Two accesses conflict when at least one writes, they are not
// both atomic (mbarrier arrive/wait, atomics, semaphores), and their boxes
// (ir/effects.h) can overlap for two different threads of the block. Boxes
// are compared dimension by dimension, which the language's bounds rule
// makes exact: every index of an access lies inside its dimension. Each
// index is decomposed into an exact per-thread part (from the thread
// analysis), uniform unknowns (SSA values uniform over the block or role)
// and a constant; `div` and `rem` by a constant of such a sum split exactly
// when the dividend is non-negative and its unknowns' coefficients are
// multiples of the divisor (a flattened copy index `r * 128 + tid`). The
// pair is decided by enumerating the executing threads of both sides (the
// threads that can run each access, not the whole block). Different shared
// allocations never alias unless both have explicit offsets whose byte
// ranges overlap. Uniform unknowns that do not cancel, and per-thread
// unknowns, make the answer "conflict".
//
// Loops. For a pair from different iterations of a loop, values defined
// inside the loop differ, except: the induction variable (advanced by
// k >= 1 steps); remainders `rem(x * iv + invariant + c, m)` of one form,
// whose two values differ by a known amount whatever their offsets c (so
// `(i + 2) % 3` and `i % 3` name different stages); and values the rest of
// their dimension cannot make up for (a tile index times the tile size,
// beside per-thread offsets smaller than the tile), which must then be
// equal in both runs: when those equalities determine the iteration (the
// induction variable, plus or minus a value the same in both runs, times a
// nonzero constant, or the quotient and remainder of one value by one
// divisor), the runs are the same iteration and cannot conflict. Index
// arithmetic is assumed not to wrap.
//
// Ordering. A forward dataflow over the structured program keeps the
// accesses that may still race ("pending"). A pending access is ordered for
// thread t once t passed a barrier that every thread of the access passed
// after completing it: an immediate access completes when it executes; a
// bulk / wgmma / cp.async access when a wait retires its group in its
// issuing threads (a `read` wait retires only reads); a TMA or bulk load
// when a thread waits on its mbarrier (that thread is ordered at once;
// others through a later barrier the waiter also passes). Named-barrier
// arrive, mbarrier arrive and cluster arrive release what their threads
// completed to the matching sync, wait or cluster.wait. Joins keep what
// holds on every path; loops iterate to a fixed point, and a loop with a
// constant trip count of at least one is left through its body only. Pairs
// of one allocation whose two accesses sit in different roles are left to
// the mbarriers the program uses between roles and are not reported (pairs
// of two allocations that share bytes are: nothing else orders them); so
// are pairs with a stage load of a `ring` allocation (an mbarrier-completed
// write of a circular buffer, whose full and empty rings order it for the
// ring's consumers, which wait for every stage load before they go on; an
// allocation sharing the ring's bytes is kept, by plan-shared-memory's
// lifetimes, after those waits).
//
// Proxies (FindUnfencedPairs, CheckProxyFences). The same dataflow, with
// generic accesses of global memory, finds the generic -> async edges: a
// generic access followed by an async-proxy access (TMA, bulk copies, wgmma
// shared operands) of overlapping memory, where one of them writes (R1,
// R3), or a generic acquire of global memory (sem.wait, acquiring atomics)
// followed by any async access of global memory, whose data the acquire
// may guard (R7); and mbarrier.init followed by a use of that mbarrier by
// another thread or as the completion barrier of a TMA or bulk load (R8).
// Edges from the ring's own accesses to a stage load of a `ring` allocation
// are the circular buffer's (it fences before its release); from another
// allocation sharing its bytes they are not. A fence covers an access only once
// the access is complete in the fencing thread (a cp.async write after the wait
// for its group). Such an edge needs a fence of the matching space in a
// placement model:
//   writers  the thread of the async access, if it ran the generic access
//            itself, fenced after it; and every thread that ran the generic
//            access fenced after it and before the barrier or release that
//            orders it for the thread of the async access (a fence after
//            that barrier, in a writer or in the issuer, does not count);
//   issuer   as writers, or the thread of the async access fences after the
//            barrier or acquire that orders it and before the access.
// fence.mbarrier_init is always writers-placed (it is a release). Edges the
// barriers do not order at all are left to the rules above; completion
// already orders async -> generic and async -> async (R2, R3). Overlap is
// the box comparison above, including the same thread.
#ifndef KIR_ANALYSIS_SYNC_CHECK_H_
#define KIR_ANALYSIS_SYNC_CHECK_H_

#include <bitset>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "analysis/thread_analysis.h"
#include "ir/effects.h"
#include "ir/ir.h"

namespace kir {

// Threads of one block by linear id (the hardware maximum is 1024).
using ThreadBits = std::bitset<1024>;

// Which pairs of threads MayOverlap considers: two different threads (a
// race between threads), one thread with itself (its own accesses through
// two proxies), or either.
enum class ThreadPairs { kDistinct, kSame, kAny };

// One loop an access pair straddles: the earlier access ran `distance`
// iterations before the later one (exactly, or at least kMaxDistance).
struct CarriedLoop {
  static constexpr int kMaxDistance = 4;
  const Op* loop = nullptr;
  int distance = 1;
  bool operator<(const CarriedLoop& other) const {
    return std::tie(loop, distance) < std::tie(other.loop, other.distance);
  }
  bool operator==(const CarriedLoop& other) const {
    return loop == other.loop && distance == other.distance;
  }
};

// Decides whether two accesses of one block's memory can overlap from
// different threads. Built per kernel; answers are cached by the caller if
// needed.
class ConflictAnalysis {
 public:
  ConflictAnalysis(const Kernel& kernel, const ThreadAnalysis& threads);
  ~ConflictAnalysis();
  ConflictAnalysis(const ConflictAnalysis&) = delete;
  ConflictAnalysis& operator=(const ConflictAnalysis&) = delete;

  // Threads that may execute `op`; every thread when the shape is unknown.
  ThreadBits Executing(const Op& op) const;
  int num_threads() const;

  // Whether some thread t1 in `threads_a` running `a` and a thread t2 in
  // `threads_b` running `b` (t1 != t2, t1 == t2 or either, per `pairs`)
  // touch overlapping memory through `ea` and `eb` (effects of `a` and
  // `b`), with `a` from earlier iterations of the loops in `carried` (same
  // iteration of every other loop). Ignores access modes: the caller
  // decides whether the pair needs ordering.
  bool MayOverlap(const Op& a, const MemoryEffect& ea,
                  const ThreadBits& threads_a, const Op& b,
                  const MemoryEffect& eb, const ThreadBits& threads_b,
                  absl::Span<const CarriedLoop> carried,
                  ThreadPairs pairs = ThreadPairs::kDistinct) const;

  // How answers were reached, for tests and reports.
  struct Counters {
    int different_buffers = 0;
    int per_dimension = 0;
    int linear = 0;
    int unknown = 0;  // answered "overlap" without enumerating
  };
  const Counters& counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether a pair of effects, `earlier` then `later`, needs ordering when it
// overlaps: at least one writes and not both are atomic; or an mbarrier
// wait, then an arrival on that mbarrier (which may complete the next
// phase before the waiter observed its own), unless the mbarrier is a ring
// of circular-buffer's.
bool NeedsOrdering(const MemoryEffect& earlier, const MemoryEffect& later);

// One conflicting pair of accesses left unordered.
struct UnorderedPair {
  const Op* first = nullptr;  // the earlier access
  int first_effect = 0;       // index into MemoryEffectsOf(*first)
  const Op* second = nullptr;
  int second_effect = 0;
  bool carried = false;  // `first` from an earlier iteration of a loop
  // The outermost loop whose earlier iteration ran `first`, when carried.
  const Op* carried_loop = nullptr;
  bool operator<(const UnorderedPair& other) const {
    return std::tie(first, first_effect, second, second_effect, carried,
                    carried_loop) < std::tie(other.first, other.first_effect,
                                             other.second, other.second_effect,
                                             other.carried, other.carried_loop);
  }
  bool operator==(const UnorderedPair& other) const {
    return !(*this < other) && !(other < *this);
  }
};

// Conflict answers keyed by the two accesses, reusable across analyses of a
// kernel whose accesses and thread sets did not change (insert-syncs adds
// barriers only).
class ConflictCache {
 public:
  using Key = std::tuple<const Op*, int, const Op*, int,
                         std::vector<CarriedLoop>, std::string>;
  std::map<Key, bool>& entries() { return entries_; }

 private:
  std::map<Key, bool> entries_;
};

struct SyncAnalysisOptions {
  // The unlowered reading for asynchronous accesses of a group kind that no
  // commit in the kernel closes: complete when issued. insert-syncs sets it
  // so that it can run before or without insert-async-waits; the checker
  // does not (an async access is complete only once waited for).
  bool complete_uncommitted_async = false;
  // Ops treated as absent (to ask whether a barrier is needed).
  std::set<const Op*> ignored;
  ConflictCache* cache = nullptr;
  // Stop after the first access (in program order) that is unordered with
  // an earlier access of the same iteration, or after the outermost loop
  // holding it: the result then holds every pair whose later access comes
  // no later (so the earliest pair within one iteration among them) rather
  // than every pair. Enough for a caller that orders the earliest such
  // pair first, or asks only whether any pair is left.
  bool stop_at_first_same_iteration = false;
};

// Every conflicting pair of accesses that some path leaves
// unordered (see stop_at_first_same_iteration), sorted by (second, first)
// in program order.
std::vector<UnorderedPair> FindUnorderedPairs(
    const Kernel& kernel, const SyncAnalysisOptions& options = {});

// The post-condition of insert-syncs on a lowered kernel: every conflicting
// pair is ordered on every path, and every barrier a pass marked as
// inserted by `insert-syncs` is needed by at least one pair. Located errors
// otherwise (one per pair, at the later access, with a note at the earlier).
absl::Status CheckSyncs(const Kernel& kernel);

// The placement models of the proxy rule (see the top of this file).
enum class FencePlacement { kWriters, kIssuer };

// What an unfenced edge needs.
enum class FenceNeed {
  kSharedProxy,   // fence.proxy.async shared_cta (or all)
  kGlobalProxy,   // fence.proxy.async global (or all)
  kMbarrierInit,  // fence.mbarrier_init
};

// One generic -> async edge left without a fence in its placement model.
struct UnfencedPair {
  UnorderedPair pair;  // first: the generic access; second: the async use
  FenceNeed need = FenceNeed::kSharedProxy;
  bool operator<(const UnfencedPair& other) const {
    return std::tie(pair, need) < std::tie(other.pair, other.need);
  }
};

// Every edge that some path leaves unfenced, sorted by (second, first) in
// program order. Uses `options.ignored`; ignores the other options.
std::vector<UnfencedPair> FindUnfencedPairs(
    const Kernel& kernel, FencePlacement placement,
    const SyncAnalysisOptions& options = {});

// The post-condition of insert-proxy-fences: every edge is fenced in the
// model, and every fence a pass marked as inserted by insert-proxy-fences is
// needed by at least one edge. Located errors otherwise.
absl::Status CheckProxyFences(const Kernel& kernel, FencePlacement placement);

// Describes an access for diagnostics: "write of %s[%i, %j]".
std::string DescribeAccess(const Op& op, int effect);

// Named barrier ids (1..15) of a kernel: which are taken, by which thread
// count, inside which role. Allocates an id for a role's barrier, reusing
// one only that role uses with the same count.
class BarrierIdAllocator {
 public:
  explicit BarrierIdAllocator(const Kernel& kernel);
  // An id for a barrier of `threads` threads inside `role` (null: outside
  // roles); nullopt when all 15 are taken.
  std::optional<int> Allocate(const Op* role, int threads);

 private:
  struct Use {
    std::set<const Op*> roles;
    std::set<int64_t> counts;
  };
  std::map<int, Use> uses_;
};

}  // namespace kir

#endif  // KIR_ANALYSIS_SYNC_CHECK_H_
