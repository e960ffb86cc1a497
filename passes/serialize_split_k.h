// Lowers `splitk`: the blocks of one output tile combine their partials
// in split order through per-thread semaphores of each tile and a global
// work buffer, and the last split runs the epilogue on the combined
// partial.
//
// Pass: serialize-split-k
// Options: mode=serial (the only mode so far); work=f32 (default) | bf16 |
//   f16, the work buffer's element type.
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
// Errors (located): a splitk that is not at the top level or directly in
//   a role; a non-constant block; a partial that is not a float `reg`
//   buffer; a `return` before the splitk or in its body; a split dimension
//   used for something else: the epilogue depending on the split index
//   (block.id dim: only the last split runs it), or a global write whose
//   address depends on it; a read of the partial after the splitk, where
//   no mode provides the combined value.
// Does not: insert barriers, proxy fences, commits or waits (none are
//   needed between a thread's own accesses of its own slice), elect
//   issuers, or free the workspaces (the launcher owns them).
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
