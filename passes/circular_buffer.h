// Turns a loop of TMA loads that feed computation in the same iteration into
// a multi-stage circular buffer: loads run ahead of the computation through
// full / empty mbarrier rings, in one set of threads (`pipelined`) or in a
// producer role beside the consumers (`warp_specialized`).
//
// Pass: circular-buffer
// Options: mode=marker (default: each loop's own `circular_buffer`) |
//   pipelined | warp-specialized, applied to every marked loop;
//   stages=0 (0: the marker's); prefetch=-1 (-1: the marker's, pipelined
//   only); producer=marker | warpgroup | warp (warp_specialized only);
//   producer-loop=nested (default) | merged (warp_specialized only);
//   pingpong=marker | true | false (warp_specialized only);
//   multicast=marker | false (false: `cluster_shared` loads stay loads of
//   every CTA, to measure what multicast gains).
// Requires: a verified kernel in the unlowered reading, with loops marked
//   `circular_buffer = pipelined | warp_specialized` (ir/language.md,
//   "Circular buffering"). A marked loop M sits in a nest of loops only
//   (the kernel's top level, loops, M: no `if` or role between), whose
//   bounds are computed before the nest from sizes, parameters, block
//   indices and constants. Its body holds at least one `tma.load` or
//   `bulk.load` (the stage loads) into top-level shared allocations (the
//   staged buffers) that nothing outside M accesses; each runs in every
//   iteration, under guards that only choose the issuing thread, at an
//   address that is a pure computation of the nest's loop indices and
//   values defined before them. The mbarriers the stage loads complete on
//   (the author's) are used by nothing but their init, an `arrive_tx`
//   and `wait`s in M and an `inval`.
// Ensures:
//   - Each staged buffer gains a leading stage dimension of `stages`;
//     every access indexes it with the stage of its iteration. Iterations
//     are counted over the whole nest (a persistent tile loop around M
//     included): iteration `it` uses stage `it % S` in round `it / S`.
//   - Two rings replace the author's mbarriers (removed with their init,
//     arrive_tx, waits and inval): `full[S]` (count 1: one `arrive_tx` of
//     the bytes of an iteration's loads, then the loads' complete-tx) and
//     `empty[S]` (count: the consumer threads, each arriving once per
//     iteration). Inits (under `tid == 0`, before the nest) and
//     invalidation at the kernel's end are this pass's.
//   - Consumers wait for parity `(it / S) % 2` of `full[it % S]` where the
//     author waited (or before the first access of a staged buffer), and
//     release `empty[it % S]` after the iteration's last access of a
//     staged buffer, preceded by `wgmma.commit` and `wgmma.wait` when
//     wgmma reads a staged buffer (the wait retires those reads).
//   - A load of iteration `it` into a reused stage first waits for parity
//     `(it / S + 1) % 2` of `empty[it % S]` (a fresh barrier's parity 1
//     reads as complete, so round 0 does not wait).
//   - pipelined: the loads of the first `prefetch` iterations of the
//     flattened nest are issued before it; at the start of iteration `it`
//     the issuing thread (`tid == 0`) issues those of `it + prefetch`
//     (when there is one), which may belong to the next outer iteration.
//   - warp_specialized: the block grows by a warpgroup, the producer, in
//     front (warps 0-3); the original threads become role @consumer
//     (their thread and warp ids shifted back, `block.dim x` the original
//     count) and keep the original nest; role @producer runs the stage
//     loads alone (`tid == 0` issues) over its own copy of the nest, cut
//     down to the loops and values the loads need (producer-loop=nested),
//     or over one loop merged from the whole nest (producer-loop=merged,
//     which decodes every position with divisions: measured 2-8% slower). With producer=warpgroup and at least two consumer
//     warpgroups, `setmaxnreg dec` (default 40) in the producer and `inc`
//     (default: what the register file leaves, at most 256) in the
//     consumers; producer=warp: warp 0 of the padded warpgroup alone, no
//     setmaxnreg.
//   - pingpong (ir/language.md, "Ping-pong"): the input is one consumer
//     warpgroup's code for whole tiles, the marked loop directly in a tile
//     loop at the top level. Two consumer roles @consumer0 / @consumer1,
//     each a copy of that code, take the tile loop's iterations t = g,
//     g + 2, ... (g the group); the producer loads in the nest's order;
//     `empty` counts one warpgroup. `order[2]` (count 128) orders the
//     mainloops: group g waits on order[g] (parity ((t + 1) / 2 + 1) % 2)
//     before tile t's marked loop and arrives on order[1 - g] after it
//     (besides the overlap of epilogue and mainloop, this keeps a group's
//     full waits from running two ring phases ahead).
//     Shared buffers other than the stages that the tile loop uses (an
//     epilogue tile) are each group's own: the second group gets a copy,
//     `%g1_<name>`, allocated after the original (the stages' fit in
//     shared memory counts it).
//   - cluster multicast (ir/language.md, "Cluster multicast"): for a
//     stage `tma.load` marked `cluster_shared` in a kernel with a cluster
//     of C > 1 CTAs, a tensor map parameter `<map>_slice` over the same
//     tensor with the box's outer extent divided by C; the producer loads
//     this CTA's slice (rows `cluster.cta_rank * b0 / C` on) from it into
//     the same rows of the stage with `multicast = 2^C - 1` (each CTA
//     issues its share, as CUTLASS does, so the issue work is balanced);
//     `full` expects the whole box; the stage is released in every CTA of
//     the cluster: where only wgmma accesses the stages, after the
//     wgmma.wait, by thread j < C of each consumer warpgroup in rank
//     `(rank + j) % C` (thread 0 locally, the others with
//     `mbarrier.arrive_remote`), `empty` counting consumer warpgroups x C;
//     otherwise by every consumer thread in its own CTA and each peer
//     (ranks `(rank + j) % C`), `empty` counting the consumer threads of
//     the cluster (ranks computed once before the roles); the producer's
//     waits for `empty` take `scope = cluster`, the consumers' waits for
//     `full` the default; `cluster.arrive` / `cluster.wait` follow the
//     inits and precede the invalidation at the end.
//   - The marker is removed, so a second run changes nothing.
// Errors (located): a marked loop with no TMA or bulk load; a load whose
//   address or guard depends on a value that is not such a pure
//   computation (data loaded in the iteration, an inner loop's index); a
//   load that does not run in every iteration; loads of an iteration that
//   bring more than 2^20 - 1 bytes (one stage's mbarrier counts them,
//   V29); staged buffers that do not
//   fit in shared memory (laid out as plan-shared-memory will, sharing the
//   bytes of buffers dead while the loop runs: EstimateSharedMemory in
//   ir/shared_memory_plan.h), or whose stage is not a multiple of their
//   alignment; a staged buffer accessed outside the loop; an author
//   mbarrier used otherwise, or whose `arrive_tx` bytes differ from the
//   loads'; a nest under `if` or role, or with bounds computed in the nest;
//   for warp_specialized: a block that is not constant, one-dimensional
//   and of whole warpgroups, a kernel that already has roles, or a second
//   marked nest; for pingpong: pipelined mode, a nest that is not a tile
//   loop around the marked loop, a block other than one warpgroup, or an
//   op other than a computation or alloc.reg outside the tile loop; for
//   cluster_shared: pipelined mode, a cluster of one CTA or not constant,
//   nest bounds or load coordinates that may differ between the CTAs of a
//   cluster (not computed from sizes, parameters, constants, launch
//   dimensions and block indices the cluster does not tell apart), a box
//   whose outer extent does not split into C slices of the destination's
//   alignment, a `multicast` mask on the load, a `return` other than the
//   kernel's last op, and a cluster_shared load outside a marked loop.
// Does not: multicast an operand to part of the cluster (a row or column
//   of a 2-D cluster: the shared operand goes to every CTA); elect the
//   issuing lane (uniform-predicates), insert `wgmma.fence`, other commits
//   and waits (insert-async-waits), the barrier after the inits (without
//   multicast) and other barriers (insert-syncs), or `fence.mbarrier_init`
//   and proxy fences (insert-proxy-fences).
#ifndef KIR_PASSES_CIRCULAR_BUFFER_H_
#define KIR_PASSES_CIRCULAR_BUFFER_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status CircularBuffer(Kernel& kernel, const PassOptions& options,
                            PassContext& context);

}  // namespace kir

#endif  // KIR_PASSES_CIRCULAR_BUFFER_H_
