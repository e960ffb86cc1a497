// Lowers `splitk`: the blocks of one output tile combine their partials
// in a global work buffer, in split order through semaphores (serial,
// tma-serial) or in any order through TMA reduction and an arrival counter
// (tma-atomic), or all at once into slots of their own that one block
// sums in split order (gather), or hand a running sum from split to split
// through the shared memory of a cluster (cluster), and one block per tile
// runs the epilogue on the combined partial.
//
// Pass: serialize-split-k
// Options: mode=serial (default) | tma-serial | tma-atomic | cluster |
//   gather;
//   work=f32 (default) | bf16 | f16, the work buffer's element type;
//   reset=parity (default) | last, how tma-atomic leaves its work tile
//   zeroed for the next launch (below).
// Requires: a verified kernel in the unlowered reading (ir/language.md,
//   "Two readings", 4). Each `splitk` sits at the kernel's top level or
//   directly in a role (so that the threads that take part are known), no
//   `return` can run before it or in its body, the block shape is
//   constant, and its partial is a `reg` buffer of a float type.
// Ensures (mode=serial), for each splitk over grid dimension `dim` with
//   S = grid.dim dim splits and T participating threads (the block, or the
//   role around the splitk):
//   - The body runs in place of the splitk, in every block; then every
//     participating thread t of split z (z = block.id dim) of tile (o1, o2)
//     (the block ids of the other two grid dimensions, outermost first)
//     takes its turn through its own semaphore %sem[o1, o2, t]:
//       z > 0:   sem.wait until it equals z (acquire). Every thread waits
//                for the same thread of the split before, whose slice it
//                reads, so no barrier hands an acquire over and the
//                protocol is the same inside a role;
//       z < S-1: stores its partial into its own slice of the work buffer
//                (z = 0) or adds it to the slice's sum (z > 0), with vector
//                loads and stores of up to 16 bytes, then
//                `red add %sem[o1, o2, t], 1 {order = release}`, which
//                publishes those writes;
//       z = S-1: (z > 0) adds its partial to the slice's sum in registers,
//                in split order (((p0 + p1) + ...) + p_{S-1}), and resets
//                its semaphore to zero (`atomic exch`), so the next launch
//                needs no memset; then the epilogue runs.
//     Sums are computed in the partial's type and stored rounded to the
//     work type. Deterministic: the same splits add in the same order.
//   - Two workspaces (alloc.workspace, zeroed by the launcher): the
//     semaphores `i32[G1, G2, T]` and the work buffer
//     `W[G1, G2, C, T, V]`, where G1, G2 are the grid's other two
//     dimensions (outermost first), V the vector lanes (the largest power
//     of two dividing the partial's innermost extent with at most 16 bytes
//     in either type), C the partial's elements / V, thread t owning
//     `[o1, o2, c, t, :]` (consecutive threads, consecutive 16 bytes).
//   - Statistics: `splitk-lowered`, `partial-elements` (per thread),
//     `vector-lanes`.
// Ensures (mode=tma-serial and mode=tma-atomic), with E the partial's
//   elements per thread and thread t of the T participating threads owning
//   column (t / 32, t % 32):
//   - Buffers, before the splitk's top-level ancestor: a per-tile i32
//     workspace `%sk_sem[G1, G2]` (tma-serial: the turn) or
//     `%sk_count[G1, G2]` (tma-atomic: arrivals); the work buffer
//     `%sk_work: global W[G1, G2, E, T/32, 32]` and a new tensor map
//     parameter `%sk_work_map: tensormap W[1, 1, E, T/32, 32] of %sk_work`
//     (one box is one tile); the staged tile
//     `%sk_stage: shared W[1, 1, E, T/32, 32] {align = 128}`; and the
//     hand-over word `%sk_handoff: shared i32[1]` (tma-serial) or the
//     issuer's vote `%sk_vote: reg i32[1]` (tma-atomic).
//   - Staging: every participating thread stores its partial, converted to
//     W, into its column of %sk_stage. One thread issues (tma-serial:
//     `t == 0`, a single-thread guard without else, which uniform-predicates
//     turns into an elected lane; tma-atomic: `elect.sync` under
//     `t / 32 == 0`, written here because the issuer's vote stays in its own
//     register), commits its bulk group (`bulk.commit`) and waits
//     for it with `bulk.wait` without `read`: the global writes are
//     complete and visible to the issuer before its release (R5).
//   - tma-serial, split z < S-1: stage; the issuer waits for %sk_sem == z
//     (z > 0), TMA-stores the tile (z = 0) or TMA-reduces it with the
//     splitk's op (z > 0) into the tile's slot, commits, waits, and
//     releases with `red add 1 {order = release}`. Split S-1: the issuer
//     waits for %sk_sem == S-1 (S > 1), resets it to zero (`atomic exch`)
//     and stores S-1 into %sk_handoff; every participating thread loads it
//     and, when it is not zero, adds the work tile into its registers
//     (sum op partial, so the order is that of the unlowered reading), then
//     runs the epilogue. Deterministic.
//   - tma-atomic, reset=parity (the default): launches alternate between
//     two work tiles by the parity p of an arrival count that cycles
//     through 0 .. 2S-1; %sk_count is i32[G1, G2, 3] (arrivals, then the
//     reductions `done` in a launch of parity 0 and 1), the work buffer
//     holds 2 G1 tile rows (parity 1's after parity 0's) and %sk_vote is
//     i32[3]. Before the body (so that it overlaps the mainloop), the
//     issuer (`elect.sync` under `t / 32 == 0`) takes a ticket
//     (`atomic add 1`): p = ticket >= S, its place ticket - p S; the
//     2S-th arrival sets the count back to zero (`atomic exch`). Three
//     votes at `barrier.red or {id = B, threads = T}` give every
//     participant "last" (place S-1), p and "first" (place 0). After the
//     body, the last block waits until `done[p]` equals S-1
//     (`sem.wait`, acquire) and adds the tile into its registers (sum +
//     partial), then runs the epilogue; it never stages or reduces. Every
//     other block stages; its issuer (`t == 0`) TMA-reduce-adds into the
//     tile of parity p (with S = 2 it is the tile's only writer and
//     TMA-stores instead), commits, waits without `read` and releases
//     with `red add done[p], 1 {order = release}`; the first block then
//     zeroes the other parity's tile and `done` count, which the next
//     launch uses (only the count where the grid's split dimension is the
//     constant 2: no launch ever reduces into a tile then). The last block
//     to arrive is the last to start its body, so every block it waits for
//     is running. Nothing is zeroed between the sum and the epilogue.
//   - tma-atomic, reset=last: every split stages, and the issuer
//     TMA-reduce-adds into the zeroed work tile, commits, waits, and
//     arrives with `atomic add 1 {order = acq_rel}`; the one that sees
//     S-1 arrivals before its own resets the counter (`atomic exch 0`);
//     the issuer's %sk_vote (i32[1]) holds whether it was last (every
//     other thread's holds 0). Every participating thread then votes
//     with it at `barrier.red or {id = B, threads = T}`.
//   - tma-atomic, both forms: B is a named barrier id not in use, or one
//     used by the same role with the same count. A vote's result is the
//     same in every participant, and the barrier hands the issuer's
//     acquire (reset=last: the completed reductions of every split) to
//     them. reset=last: under it each loads the sum into its partial,
//     stores zero back (the tile is zeroed for the next launch) and runs
//     the epilogue. The epilogue may hold warp-collective ops (stmatrix, a
//     TMA store's election): its condition is uniform. When
//     circular-buffer later makes the block the consumer role, T stays
//     the consumers' count. Not bit-deterministic (the reductions of
//     different blocks land in any order).
//   - Who orders the rest: insert-syncs places the barrier between the
//     staging stores and the TMA, and (tma-serial) the barrier between the
//     hand-over store and its loads, which also hands the issuer's acquire
//     to the reading threads (tma-atomic's vote is that barrier); both are
//     barrier.block at the top level and barrier.named over the role's
//     threads in a role, also when circular-buffer puts the code into a
//     consumer role after this pass. insert-proxy-fences places
//     `fence.proxy.async shared_cta` after the staging stores (R1) and
//     `fence.proxy.async global` after the turn's acquire, before the TMA
//     reduction (R7). The reading threads load the sum with generic loads
//     after a generic acquire: the reducers' completed bulk groups need no
//     fence there.
// Ensures (mode=gather), with S, T, V, C as in mode=serial: the same
//   semaphores `i32[G1, G2, T]` and a work buffer with a slot per split,
//   `W[G1, G2, S, C, T, V]` (S = the grid's split dimension, a size
//   expression where it is one). No turns: thread t of split z < S-1
//   stores its partial into `[o1, o2, z, :, t, :]` at once and releases
//   with `red add %sem[o1, o2, t], 1 {order = release}`; thread t of split
//   S-1 (S > 1) waits until its semaphore holds S-1 (`sem.wait`, acquire),
//   resets it to zero, and sums into `%sk_run` (a `reg` buffer of the
//   partial's shape) slot 0, then slots 1 .. S-2 a whole partial at a
//   time, then adds its own partial: ((p0 + p1) + ...) + p_{S-1}, the
//   order of mode=serial (bit-identical to it with work=f32). The last
//   split reads S-1 slots where serial's reads one, but no split waits for
//   another's turn. Deterministic; no barrier.
// Ensures (mode=cluster), with S the grid's constant split count along
//   `dim` and V, C, T as in mode=serial:
//   - The kernel's cluster is S CTAs along `dim` (cluster rank z is split
//     z), so the splits of a tile run together on one GPC. S = 1: the
//     epilogue follows the body, nothing else changes.
//   - Before the splitk's top-level ancestor: the landing buffer
//     `%sk_recv: shared f32[C, T, V]` and its mbarrier `%sk_recv_bar`;
//     one elected thread initializes it (count 1) and, in split z > 0,
//     expects the buffer's C T V 4 bytes (`mbarrier.arrive_tx`), then
//     `fence.mbarrier_init`; every thread arrives at the cluster barrier
//     (`cluster.arrive`) before the body and waits (`cluster.wait`) after
//     it, so no peer stores before the init and the barrier's latency
//     hides behind the body (circular-buffer's producer arrives at its
//     start and waits at its end).
//   - After the body: split z > 0 waits for the bytes
//     (`mbarrier.wait {scope = cluster}`, st.async's release is at cluster
//     scope) and adds the running sum before its own partial (split
//     order, as mode=serial); split S-1 runs the epilogue; every other
//     split stores its new running sum into split z + 1's landing buffer
//     with `store.remote` (st.async of V f32, completing on that split's
//     mbarrier). Deterministic, no workspace, nothing to reset.
//   - Cost: the turns are S-1 hops of one tile through distributed
//     shared memory, the landing buffer takes stages' bytes, and a
//     cluster of S CTAs must fit one GPC: with one block per SM, clusters
//     of 4 and 8 hold fewer CTAs at once than a grid that fills the GPU
//     (the README's split-K table has the measurements).
// Errors (located): a splitk that is not at the top level or directly in
//   a role; a non-constant block; a partial that is not a float `reg`
//   buffer; a `return` before the splitk or in its body; a split dimension
//   used for something else: the epilogue depending on the split index
//   (block.id dim: only the last split runs it), or a global write whose
//   address depends on it; a read of the partial after the splitk, where
//   no mode provides the combined value. TMA modes: min/max with work=f32
//   (the bulk tensor reduction has no f32 min/max); min/max with
//   tma-atomic (a zeroed tile is the identity of add only); participating
//   threads that are not whole warps; more than 256 partial elements per
//   thread (one box dimension); a staged tile larger than 227 KiB;
//   tma-atomic: no named barrier id left for the vote. mode=cluster: a
//   split count that is not a constant or exceeds 8 (a portable cluster),
//   a kernel that already has a cluster, a partial that is not f32 (st.async
//   stores 32-bit elements), work= other than f32, a landing buffer over
//   2^20 - 1 bytes (one mbarrier phase) or 227 KiB.
// Does not: insert barriers or proxy fences (insert-syncs and
//   insert-proxy-fences, as above; mode=serial needs none between a
//   thread's own accesses of its own slice), commits and waits other than
//   the TMA modes' commit and non-`read` wait before a release (a second
//   run of insert-async-waits keeps them), elect issuers
//   (uniform-predicates), or free the workspaces (the launcher owns them).
#ifndef KIR_PASSES_SERIALIZE_SPLIT_K_H_
#define KIR_PASSES_SERIALIZE_SPLIT_K_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status SerializeSplitK(Kernel& kernel, const PassOptions& options,
                             PassContext& context);

}  // namespace kir

#endif  // KIR_PASSES_SERIALIZE_SPLIT_K_H_
