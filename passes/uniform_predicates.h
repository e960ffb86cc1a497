// Issues every single-issue op from one elected lane of a warp chosen by a
// warp-uniform predicate, and states the guards of `.aligned` collectives in
// a form the backend can prove uniform (hopper-ptx.md R6, R10, R11).
//
// Pass: uniform-predicates
// Options: mode=shfl (default) rewrites as below; mode=none leaves every
//   predicate as written (the original form, for comparison) and only
//   reports the errors.
// Requires: a verified kernel (unlowered reading, or after circular-buffer).
// Ensures (mode=shfl, constant block shape of whole warps):
//   - The kernel's top level holds one warp index broadcast,
//       %warp_id = warp.id; %warp_id32 = cast %warp_id : i32;
//       %lane0 = const 0 : i32;
//       %warp_uniform = shfl.sync idx %warp_id32, %lane0 : i32
//     placed before the first op that needs it, and the warp predicates
//     built from it (`%is_warp4 = cmp eq %warp_uniform, %warp4`), when some
//     rewrite below uses them.
//   - A guard of a single-issue op that selects threads of one warp K
//     without being warp-uniform (`tid == 0`, `tid == 128`, possibly and-ed
//     with conditions the backend already sees as uniform) becomes
//       if %is_warpK { %elected = elect.sync; if %elected { <body> } }
//     K is the warp of the thread the author chose, so a role starting at
//     warp 4 issues from its own first warp. Values of the body that differ
//     between lanes but are known at the chosen thread (`%tid` under
//     `tid == 0`) are replaced by constants inside the elected region.
//     Everything in the guarded region moves with its issue, so bulk
//     commits and waits run in the lane that issued (R6): every election of
//     one warp picks the same lane.
//   - A single-issue op that a whole warp (or a role, or the block) runs
//     under uniform conditions with operands uniform over those threads
//     (`tid.x < 32 { tma.reduce }`, which the verifier rejects on input but
//     a caller may build) is issued once, from the elected lane of the first
//     warp that runs it (of its role, for a role).
//   - Every other guard of a single-issue op, and every guard of a warp or
//     warpgroup collective, that is uniform only by arithmetic over thread
//     ids (`tid.x < 32`, `tid.x / 32 == k`, `tid.x >= 128`, and in
//     block(128, 2) `tid.x < 32 && tid.y == 0`) is replaced by a predicate
//     over %warp_uniform that holds in the same warps (`%is_warp0`,
//     `%warp_ge4`, `%in_warps4_8`, or an `or` of those), and-ed with any
//     conjuncts the backend already sees as uniform.
//   - Conditions (and substituted values) left unused by the rewrite are
//     removed, with the ops only they used. Idempotent: a second run
//     changes nothing.
// Ensures (both modes): every elected `if` (an elect.sync result as its
//   condition, no else) whose body holds only computations and predicable
//   ops (ir/effects.h), at least one of them single-issue (without one,
//   branch-free issue gains nothing), is marked
//   `if %elected {predicated}`: the backend issues each op of the body under
//   the elected lane's predicate, without a branch (V55 checks the mark).
//   This covers the elections it creates and those already in the kernel.
// Errors (located, with a note at the condition): a guard of a warp or
//   warpgroup collective whose per-thread values are known and differ
//   within one group (`tid.x < 48`; `tid.x < 32` in block(48, 2)), and a
//   warp collective run by an incomplete warp (a block of 48 threads).
// Does not: rewrite guards whose values it cannot compute per thread
//   (loads, unknown block shapes) or loop bounds (they are left as
//   written); rewrite a single-thread guard that has an else branch, whose
//   chosen warp does not reach it whole, or whose body uses a per-thread
//   value it cannot replace by a constant (all left as written and counted
//   as `issues-left`); if one such guard holds bulk-group ops, no bulk-group
//   guard is rewritten, so issue, commit and wait stay in one thread. With
//   a block shape that is not constant it rewrites nothing. In a block
//   whose last warp is partial (48 threads) the full-warp broadcast cannot
//   run, so single-thread guards still elect in their (complete) warp, with
//   the warp predicate compared on `warp.id` itself, and guards of
//   collectives are left as written. It does not touch `barrier.named`
//   guards or raw `ptx`.
#ifndef KIR_PASSES_UNIFORM_PREDICATES_H_
#define KIR_PASSES_UNIFORM_PREDICATES_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status UniformPredicates(Kernel& kernel, const PassOptions& options,
                               PassContext& context);

}  // namespace kir

#endif  // KIR_PASSES_UNIFORM_PREDICATES_H_
