// Inserts the commits, waits and register fences that asynchronous
// operations need once each op means its PTX instruction.
//
// Pass: insert-async-waits
// Requires: a verified kernel whose async ops (bulk stores and reductions,
//   wgmma, cp.async) are written for the unlowered reading, i.e. as if they
//   completed when issued; commits and waits already present (from
//   serialize-split-k, or from an earlier run) are kept and taken into
//   account. Runs after uniform-predicates and circular-buffer, before
//   insert-syncs.
// Ensures:
//   - Every issued async op is committed: one commit right after each run
//     of same-kind ops that the same threads issue (pure ops in between and
//     `if`/`for` ops holding only such ops join the run), in those threads.
//   - Every op that, in the unlowered reading, needs a group complete is
//     preceded on every path by a wait retiring that group, run by exactly
//     the committing threads: a later write of shared memory the group
//     reads, any access of memory or registers the group writes (wgmma
//     accumulators, cp.async destinations), a release (mbarrier arrive,
//     semaphore release, release atomics, barrier.arrive, cluster.arrive),
//     and block exit while the group touches shared memory. Bulk waits take
//     `{read}`: this pass never waits for the global writes.
//   - Waits keep as many groups in flight as the reuse distance allows: in a
//     loop, a wait names the group `%t@d` committed d iterations before the
//     access it protects, d the smallest distance at which the accesses can
//     overlap (constant stage indices, `rem` by constants of the loop
//     counter). Option `max-pending=N` caps the groups left in flight (0:
//     wait for the newest group that may conflict).
//   - `wgmma.fence` before every wgmma that may follow a non-wgmma access of
//     its accumulator or register A fragment, or that may be the first
//     (in a loop: each iteration, as ptxas wants), ahead of the pure ops
//     right before it, and before an `if` holding such a wgmma.
//   - Idempotent. `--stats` counts commits, waits and fences inserted.
// Does not: insert barriers between the waiting threads and the threads
//   that overwrite (insert-syncs), proxy fences (insert-proxy-fences), or a
//   wait without `{read}` before a release (serialize-split-k). An op that
//   reads or writes global memory a bulk group writes, while that group may
//   still be pending, is an error: ordering it needs such a wait, a barrier
//   and a proxy fence. Overlapping async global writes of two bulk groups
//   are not ordered (the author's to avoid). Accesses in another role are
//   not waited for: roles are ordered only by their mbarriers, and an
//   arrive counts as a release.
// Preserves: every analysis when it inserts nothing; else none.
#ifndef KIR_PASSES_INSERT_ASYNC_WAITS_H_
#define KIR_PASSES_INSERT_ASYNC_WAITS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status InsertAsyncWaits(Kernel& kernel, const PassOptions& options,
                              PassContext& context);

// How many ops the pass in this thread has looked back over, so far, to
// learn whether a wait already retires a group where an access needs it.
// A measure that does not depend on the machine, for tests that bound what
// the pass costs.
int64_t AsyncWaitLookBackSteps();

}  // namespace kir

#endif  // KIR_PASSES_INSERT_ASYNC_WAITS_H_
