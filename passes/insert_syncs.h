// Inserts the barriers that order conflicting memory accesses between the
// threads of one block.
//
// Pass: insert-syncs
// Requires: a verified kernel whose shared- and global-memory traffic is
//   written for the unlowered reading (no barriers needed there); barriers
//   already present are kept and reused. Runs after insert-async-waits: an
//   asynchronous access (TMA store, wgmma, cp.async) counts as complete only
//   at the wait that retires its group in its issuing threads, so barriers
//   go after those waits. On a kernel without commits of a group kind,
//   accesses of that kind count as complete when issued (the unlowered
//   reading), so the pass also runs before or without insert-async-waits.
// Ensures: every conflicting pair of accesses of shared memory, of global
//   memory by threads of one block (distinct tensors and workspaces never
//   alias), and of mbarrier objects (init before use) is ordered on every
//   path by a barrier, an mbarrier wait or a completion wait, as
//   analysis/ordering.h defines it; no inserted barrier can be removed
//   without leaving a pair unordered. A barrier sits in the region that holds
//   both accesses: right before the later access's op there when the earlier
//   one precedes it (after both producers, before the first consumer, before a
//   loop whose body consumes what was produced outside it), else at the end
//   of that region (a dependence carried around a loop). When the later (or
//   earlier) access sits in an `if` uniform over the barrier's threads, the
//   barrier goes inside it, right before the access (or at the end of the
//   branch), so that it runs only when the access does. Inside a role it is
//   a barrier.named over the role's threads, with an id that no other role
//   uses; elsewhere a barrier.block. Inserted barriers record the accesses
//   they order (`loc(inserted "insert-syncs" for ...)`). Idempotent.
// Errors: a located error, never a silent drop, when the barrier would sit
//   under control flow not uniform over its participants (a divergent `if`,
//   a loop with divergent bounds, an earlier divergent `return`), when no
//   named barrier id is left, or when no barrier can order a pair (an
//   asynchronous access not yet complete in its threads, or accesses in
//   two roles of two allocations whose offsets make them share bytes).
// Does not: order accesses in different roles (the program's mbarriers do)
//   or in different blocks (the program's semaphores and atomics), insert
//   proxy fences (insert-proxy-fences) or completion waits
//   (insert-async-waits), or remove barriers it did not insert.
// Preserves: the thread and conflict analyses; every analysis when it
//   inserts no barrier.
// Options: drop-sync=N (testing) deletes the N-th inserted barrier in
//   program order afterwards, to check that a checker or a GPU run notices.
#ifndef KIR_PASSES_INSERT_SYNCS_H_
#define KIR_PASSES_INSERT_SYNCS_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status InsertSyncs(Kernel& kernel, const PassOptions& options,
                         PassContext& context);

}  // namespace kir

#endif  // KIR_PASSES_INSERT_SYNCS_H_
