// Gives every shared allocation its offset in the block's dynamic shared
// memory, letting allocations whose lifetimes are disjoint share bytes, and
// adds the ordering such sharing needs.
//
// Pass: plan-shared-memory
// Options: reuse=auto (default) | always | never; regs=0 (registers per
//   thread for the blocks-per-SM figures; 0: registers not counted).
//   - never: every allocation without an offset follows the last
//     explicitly placed byte in program order, at its alignment: the layout
//     the CUDA emitter uses for a kernel this pass has not run on
//     (ir/shared_memory.h, LayoutWithoutReuse).
//   - always: allocations are placed largest first at the lowest offset,
//     at their alignment, that overlaps no allocation live at the same
//     time (ir/shared_memory_plan.h: lifetimes, widened to loops, extended
//     to the waits that retire async accesses and to a ring's release).
//     A pair whose threads cannot be ordered is kept apart and the layout
//     planned again.
//   - auto: as always, but keeps the reuse only when it raises the blocks
//     per SM (for the block's threads, `regs` registers and the barriers
//     the kernel uses), or when the kernel does not fit without it: a
//     reuse that buys nothing costs a barrier. Stage counts are fixed by
//     then; circular-buffer asks EstimateSharedMemory, with reuse, whether
//     its stages fit, so a ring that fits only by reuse is kept that way.
// Requires: a verified kernel. In the default pipeline it runs after
//   insert-async-waits, so that an async access of shared memory ends at
//   the wait that retires it (before that pass, an access of a group kind
//   no commit closes counts as live to the end of the kernel), and before
//   insert-syncs and insert-proxy-fences, which see the aliasing through
//   the offsets (analysis/ordering.h) and add the other barriers and the
//   proxy fences (an aliased generic write before an async access is fenced
//   like one of the same allocation).
// Ensures:
//   - Every alloc.shared has an `offset`, a multiple of its alignment
//     (1024 for 128-byte-swizzled tiles); offsets already present (the
//     author's, or an earlier run's) are kept, so a second run changes
//     nothing. Two allocations share bytes only when their lifetimes are
//     disjoint; mbarriers never do.
//   - Every pair of accesses of two allocations that share bytes is ordered
//     as analysis/ordering.h defines it: by synchronization already there (a
//     barrier, an mbarrier wait / arrive pair between roles, a ring's full
//     barrier), or by a barrier this pass inserts right before the later
//     allocation's first access in its lane: a barrier.block at the top
//     level (before the roles, when the earlier access precedes them), a
//     barrier.named over a role's threads inside the role. Inserted
//     barriers record the accesses they order
//     (`loc(inserted "plan-shared-memory" for ...)`). Pairs in two
//     different roles are never ordered by a barrier: without an mbarrier
//     pair already ordering them the two allocations are kept apart.
//   - Statistics: `bytes` (the dynamic shared memory the kernel launches
//     with), `bytes-without-reuse`, `blocks-per-sm` and
//     `blocks-per-sm-without-reuse` (constant blocks only), `aliased-pairs`,
//     `barriers-inserted`, `pairs-kept-apart`, `reuse-declined`.
// Errors (located): a layout over 232448 bytes (after reuse, when reuse is
//   allowed), at the program point where the layout is highest, naming
//   the allocations live there with their bytes and offsets.
// Does not: order accesses of the same allocation (insert-syncs), insert
//   proxy fences (insert-proxy-fences) or completion waits
//   (insert-async-waits), move or resize allocations, or change a stage
//   count.
#ifndef KIR_PASSES_PLAN_SHARED_MEMORY_H_
#define KIR_PASSES_PLAN_SHARED_MEMORY_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status PlanSharedMemory(Kernel& kernel, const PassOptions& options,
                              PassContext& context);

}  // namespace kir

#endif  // KIR_PASSES_PLAN_SHARED_MEMORY_H_
