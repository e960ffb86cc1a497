// Lifetimes of shared allocations, and a layout that lets allocations whose
// lifetimes are disjoint share bytes. plan-shared-memory writes such a
// layout (and the ordering its reuse needs); circular-buffer, and any pass
// that chooses a stage count or a tile, asks EstimateSharedMemory what a
// variant of the kernel would need before committing to it.
//
// Program points. The kernel body's top-level ops are numbered 0..n-1; a
// top-level role's ops are numbered 0..m-1 within the role (the role's
// threads run them concurrently with the other roles'). An access deeper in
// the program counts at the top-level (or role-level) op around it, so an
// access in a loop is live for the whole loop, every iteration included:
// the lifetime is widened to the outermost loop below the allocation, which
// must keep the buffer alive across its back edge.
//
// Lifetime of an allocation: the program points from its first access to
// its last, at that granularity, in each lane (the block outside roles, and
// each top-level role), and extended where an access is not over when its
// op is:
//   - an access an async group completes (TMA / bulk stores and reductions
//     reading shared memory, wgmma operands, cp.async writes) lasts until
//     the wait that retires the group committed after it (a `read` wait
//     retires reads only); without such a wait in its lane, to the end of
//     the lane (and of the kernel);
//   - a write an mbarrier completes (tma.load, bulk.load) lasts, in its own
//     lane, until the last wait on that mbarrier allocation there (or to the
//     end of the lane and of the kernel when it has none); in every other
//     top-level role, from the role's start to its last wait on that
//     mbarrier, or throughout the role when it has none (a load outside the
//     roles that is waited for outside them is over before they start).
//     This is the
//     circular buffer's protocol (every stage load is waited for by the
//     ring's consumers before they go on), on which analysis/ordering.h also
//     relies for ring loads;
//   - a buffer a `store.remote` writes (a peer CTA's store lands in this
//     CTA's copy at any time after the cluster barrier that follows the
//     inits) is live throughout the kernel, in every lane;
//   - a `ring` allocation (a circular buffer's stages) stays live, in each
//     lane that accesses it, until the last release of its empty barrier
//     there (an mbarrier.arrive on an mbarrier that the issuing thread
//     waits on before a stage load, in the loop of that load).
// A role between two top-level points where an allocation is live holds it
// throughout. mbarrier allocations never share bytes.
//
// Disjoint lifetimes are necessary for sharing, not sufficient: the threads
// that last touch the old buffer must also be ordered before those that
// first write the new one. plan-shared-memory checks that with
// analysis/ordering.h (which sees the aliasing through the offsets) and
// inserts a barrier where one is missing.
#ifndef KIR_IR_SHARED_MEMORY_PLAN_H_
#define KIR_IR_SHARED_MEMORY_PLAN_H_

#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "ir/shared_memory.h"

namespace kir {

// Program points of one lane, [lo, hi]; empty when hi < lo.
struct LaneSpan {
  int lo = INT_MAX;
  int hi = -1;
  bool empty() const { return hi < lo; }
  bool Contains(int point) const { return lo <= point && point <= hi; }
  bool Overlaps(const LaneSpan& other) const {
    return !empty() && !other.empty() && lo <= other.hi && other.lo <= hi;
  }
  void Add(int point) { Add(point, point); }
  void Add(int from, int to);
};

struct SharedLifetime {
  const Op* alloc = nullptr;
  // Top-level points, a role counting as its own index.
  LaneSpan top;
  // Points inside each top-level role where the allocation is live.
  std::map<const Op*, LaneSpan> roles;
  // Live at every top-level point from here on: an access in a role that
  // may still be in flight when the role's threads leave it. Unlike `top`,
  // it does not make the roles after it hold the allocation throughout.
  int tail_from = INT_MAX;
  // Where the allocation is first accessed in each lane (null: outside
  // roles), and the access there.
  std::map<const Op*, std::pair<int, const Op*>> first_access;
  bool mbarrier = false;  // never shares bytes
};

struct SharedLifetimeOptions {
  // Async accesses of a group kind that no commit in the kernel closes
  // count as complete when issued (the unlowered reading: for estimates
  // made before insert-async-waits); otherwise they stay live to the end.
  bool uncommitted_async_complete = false;
};

class SharedLifetimes {
 public:
  SharedLifetimes(const Kernel& kernel, const SharedLifetimeOptions& options);

  const std::vector<SharedLifetime>& all() const { return lifetimes_; }
  const SharedLifetime* Find(const Op* alloc) const;

  // Whether `a` and `b` are never live at one program point (and neither is
  // an mbarrier), so that they may share bytes if their threads are
  // ordered.
  bool Disjoint(const Op* a, const Op* b) const;

  // One program point: a top-level op (`role` null) or an op of a role.
  struct Point {
    const Op* role = nullptr;
    int index = 0;
    const Op* op = nullptr;
  };
  std::vector<Point> Points() const;
  bool LiveAt(const Op* alloc, const Point& point) const;

  // "top [2, 5], @consumer [0, 7]", for tests and diagnostics.
  std::string Describe(const Op* alloc) const;

 private:
  struct Position {
    const Op* role = nullptr;  // the top-level role around the op, or null
    int index = -1;            // in the role's region, or in the body
  };
  Position PositionOf(const Op& op) const;
  int LaneEnd(const Op* role) const;
  int RoleIndex(const Op* role) const;
  // Marks `lifetime` live at [from, to] of `role`'s lane (null: top level).
  void AddLive(SharedLifetime& lifetime, const Op* role, int from, int to);
  // Live to the end of the lane, and past it to the end of the kernel.
  void AddLiveToEnd(SharedLifetime& lifetime, const Position& from);

  void Compute(const Kernel& kernel, const SharedLifetimeOptions& options);

  const Kernel& kernel_;
  std::vector<const Op*> top_roles_;
  std::map<const Op*, int> role_index_;  // top-level role -> body index
  std::vector<SharedLifetime> lifetimes_;
  std::map<const Op*, int> lifetime_of_;
};

enum class SharedReuse { kNever, kAlways };

// A variant of the kernel to lay out: allocations resized, removed or added
// (a circular buffer's stages and rings, before the pass makes them).
struct SharedMemoryRequest {
  SharedReuse reuse = SharedReuse::kAlways;
  std::map<const Value*, int64_t> bytes;  // instead of the allocation's own
  std::set<const Value*> removed;
  // Added allocations (bytes, alignment), live throughout and never
  // shared, in program order right after `added_after` (null: after the
  // kernel's own).
  std::vector<std::pair<int64_t, int64_t>> added;
  const Value* added_after = nullptr;
  // Pairs of allocations that must not share bytes (no ordering found).
  std::set<std::pair<const Op*, const Op*>> kept_apart;
};

struct SharedLayoutPlan {
  // The kernel's allocations with a constant shape (removed ones left out),
  // in program order, at their planned offsets.
  std::vector<SharedPlacement> placements;
  int64_t total = 0;                // with the requested reuse
  int64_t total_without_reuse = 0;  // LayoutWithoutReuse of the variant
  // Pairs of allocations the plan puts at overlapping bytes that were not
  // both placed explicitly (their offsets are the plan's doing).
  std::vector<std::pair<const Op*, const Op*>> aliased;
};

// The layout of the variant `request` describes. Allocations with an
// `offset` keep it. With reuse, the others are placed largest first, each
// at the lowest offset (at its alignment) that overlaps no allocation whose
// lifetime meets its own; when that aliases nothing or saves nothing, the
// result is the layout without reuse (program order), so `kNever` and a
// reuse that is not possible give the same offsets.
SharedLayoutPlan PlanSharedLayout(const Kernel& kernel,
                                  const SharedLifetimes& lifetimes,
                                  const SharedMemoryRequest& request);

// The same for a request with `reuse` kNever, which reads no lifetime: a
// caller that knows no allocations can share bytes need not compute them.
SharedLayoutPlan PlanSharedLayoutWithoutReuse(
    const Kernel& kernel, const SharedMemoryRequest& request);

struct SharedMemoryEstimate {
  int64_t bytes = 0;  // with the requested reuse
  int64_t bytes_without_reuse = 0;
  Occupancy occupancy;  // for `threads` and `registers`
  Occupancy occupancy_without_reuse;
};

// What the variant needs, and how many blocks of it an SM holds with
// `threads` threads of `registers` registers each (0: not counted). Async
// accesses not yet committed count as complete when issued, since the
// variant is usually asked about before insert-async-waits runs.
SharedMemoryEstimate EstimateSharedMemory(const Kernel& kernel,
                                          const SharedMemoryRequest& request,
                                          int64_t threads, int64_t registers);

}  // namespace kir

#endif  // KIR_IR_SHARED_MEMORY_PLAN_H_
