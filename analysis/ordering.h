// Ordering of memory accesses between the threads of one block, under the
// lowered reading: which conflicting pairs (analysis/conflicts.h) some path
// leaves unordered by barriers, mbarriers and completion waits, and which
// generic -> async proxy edges it leaves unfenced. Used by insert-syncs and
// insert-proxy-fences to place barriers and fences, and by the static
// checkers (analysis/sync_check.h).
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
// holds on every path; loops iterate to a fixed point (each round after the
// first walks only the accesses whose state at the top of the body
// changed), and a loop with a constant trip count of at least one is left
// through its body only. Pairs of one allocation whose two accesses sit in
// different roles are left to the mbarriers the program uses between roles
// and are not reported (pairs of two allocations that share bytes are:
// nothing else orders them); so are pairs with a stage load of a `ring`
// allocation (an mbarrier-completed write of a circular buffer, whose full
// and empty rings order it for the ring's consumers, which wait for every
// stage load before they go on; an allocation sharing the ring's bytes is
// kept, by plan-shared-memory's lifetimes, after those waits).
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
#ifndef KIR_ANALYSIS_ORDERING_H_
#define KIR_ANALYSIS_ORDERING_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/conflicts.h"
#include "ir/effects.h"
#include "ir/ir.h"

namespace kir {

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
  template <typename H>
  friend H AbslHashValue(H h, const UnorderedPair& pair) {
    return H::combine(std::move(h), pair.first, pair.first_effect, pair.second,
                      pair.second_effect, pair.carried, pair.carried_loop);
  }
};

struct SyncAnalysisOptions {
  // The unlowered reading for asynchronous accesses of a group kind that no
  // commit in the kernel closes: complete when issued. insert-syncs sets it
  // so that it can run before or without insert-async-waits; the checker
  // does not (an async access is complete only once waited for).
  bool complete_uncommitted_async = false;
  // Ops treated as absent (to ask whether a barrier is needed).
  std::set<const Op*> ignored;
  // The kernel's thread and conflict analyses (the conflicts built on
  // those threads), kept by a pass across its queries; when null, each
  // query builds its own. They must describe the kernel as it is: a pass
  // that inserts a barrier tells the thread analysis (AddOp).
  const ThreadAnalysis* threads = nullptr;
  const ConflictAnalysis* conflicts = nullptr;
  // Stop after the first access (in program order) that is unordered with
  // an earlier access of the same iteration, or after the outermost loop
  // holding it: when there is such a pair, the result is then the pairs
  // within one iteration at that access (the earliest), not every pair.
  // Inside a loop the walk still goes round to the fixed point (a later
  // round can find an earlier pair), but past the earliest such access it
  // has found it looks for no pairs and makes no entries, so a long
  // unordered loop body costs a walk, not a pair per two of its accesses.
  // Enough for a caller that orders the earliest such pair first, or asks
  // only whether any pair is left.
  bool stop_at_first_same_iteration = false;
  // Every round of a loop's fixed point walks every access, not only those
  // whose state at the top of the body changed since the last round: the
  // same answers for more work, as a reference for tests.
  bool walk_every_class = false;
  // When set, FindUnorderedPairs looks only for pairs whose two effects
  // (the earlier, the later) it accepts: the others are neither compared
  // nor reported. The dataflow is the same, so the answer is the pairs of
  // the whole answer that it accepts.
  std::function<bool(const MemoryEffect& earlier, const MemoryEffect& later)>
      wanted_pairs;
};

// Every conflicting pair of accesses that some path leaves
// unordered (see stop_at_first_same_iteration), sorted by (second, first)
// in program order.
std::vector<UnorderedPair> FindUnorderedPairs(
    const Kernel& kernel, const SyncAnalysisOptions& options = {});

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
// program order. Uses `options.ignored`, the analyses it gives and
// walk_every_class; ignores the other options.
std::vector<UnfencedPair> FindUnfencedPairs(
    const Kernel& kernel, FencePlacement placement,
    const SyncAnalysisOptions& options = {});

// The ordering dataflow of one kernel, kept across the queries of a pass
// that inserts and removes synchronization (barriers, fences: ops that
// access no data). It keeps the state before each op of the kernel body
// and the pairs found within each, and walks again only from the first one
// that changed; a query that ignores an op walks from that op until the
// state is again the kernel's own. The dataflow is separable by access:
// an op of the kernel body that did not change is walked again only for
// the accesses whose state before it differs from an earlier walk through
// it, which gives the others' state after it and pairs (so a barrier before
// a few large roles walks the roles for the accesses it orders, not for
// all). It also keeps its walk through each region it enters once (a
// loop's body in the first round, a branch, a role) the same way, so a
// change inside a long loop body or role is walked from the change, not
// from the top of the loop or role. Each answer equals FindUnorderedPairs (or
// FindUnfencedPairs) on the kernel as it is, with the same options.
class IncrementalOrdering {
 public:
  // `options` gives the analyses (threads, conflicts) and the reading
  // (complete_uncommitted_async), and ignores nothing. With `proxy`
  // it answers UnfencedPairs in that placement model, else UnorderedPairs.
  IncrementalOrdering(const Kernel& kernel, const SyncAnalysisOptions& options,
                      std::optional<FencePlacement> proxy = std::nullopt);
  ~IncrementalOrdering();
  IncrementalOrdering(const IncrementalOrdering&) = delete;
  IncrementalOrdering& operator=(const IncrementalOrdering&) = delete;

  // The kernel changed at `op`: call after inserting it and before
  // removing it.
  void Changed(const Op& op);

  std::vector<UnorderedPair> UnorderedPairs(
      const std::set<const Op*>& ignored = {},
      bool stop_at_first_same_iteration = false);
  std::vector<UnfencedPair> UnfencedPairs(
      const std::set<const Op*>& ignored = {});
  // Whether UnorderedPairs() holds `pair`; looks for pairs only as far as
  // its later access (round the loops holding it to their fixed point),
  // and for one within one iteration follows no access after it.
  bool Contains(const UnorderedPair& pair);
  // Whether the query with `ignored` finds anything (stops at the first
  // pair). Answers to queries that ignore ops are kept until the next
  // change.
  bool AnyPair(const std::set<const Op*>& ignored);
  // With `proxy`: the first edge within one iteration of UnfencedPairs()
  // (in its order), else its first edge; nullopt when there is none. Walks
  // only as far as the kernel-body op holding that edge (to the end when
  // every edge is carried), and sorts only that op's edges: a pass that
  // fences one edge at a time does not gather every edge it has yet to
  // fence after each fence (in straight-line code with many async
  // accesses of one buffer, those are quadratic in the kernel's size).
  std::optional<UnfencedPair> FirstUnfencedPair();
  // With `proxy`: how many distinct (generic access, async access) pairs
  // UnfencedPairs() holds, whatever loops they straddle; neither gathers
  // nor sorts them.
  int64_t CountUnfencedEdges();
  // With `proxy`: whether UnfencedPairs() holds `edge`; walks only as far
  // as the kernel-body op holding its async access.
  bool ContainsUnfenced(const UnfencedPair& edge);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The ordering dataflow's work in this thread so far: for every op a walk
// visited, the pending accesses it met (plus one), for a walk that starts
// part-way, the ops before it whose elections it takes, and every op a
// look for elections visits. A measure
// that does not depend on the machine, for tests that bound what a pass
// costs.
int64_t OrderingDataflowWork();

// How many times the ordering dataflow in this thread has asked the
// conflict analysis whether two accesses overlap (the answers it kept
// answer the rest).
int64_t OrderingOverlapQuestions();

// How many pairs and edges IncrementalOrdering's answers in this thread have
// gathered (copied out of its walks to answer a query) so far.
int64_t OrderingEdgesGathered();

// Describes an access for diagnostics: "write of %s[%i, %j]".
std::string DescribeAccess(const Op& op, int effect);

}  // namespace kir

#endif  // KIR_ANALYSIS_ORDERING_H_
