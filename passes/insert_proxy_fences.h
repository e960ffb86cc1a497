// Inserts the fences that order generic-proxy accesses before async-proxy
// accesses of the same memory, and mbarrier inits before their use.
//
// Pass: insert-proxy-fences
// Requires: a verified kernel whose threads are already ordered: barriers
//   (insert-syncs), mbarrier waits and completion waits (insert-async-waits)
//   in place. It runs last of the synchronization passes; fences already
//   present are kept and count.
// Ensures: every generic -> async edge of analysis/ordering.h (generic write
// ->
//   TMA store / reduce / wgmma operand read, generic read -> TMA load write,
//   generic write of global memory -> TMA store or reduce of overlapping
//   global memory (and generic read -> TMA load of it), generic acquire of
//   global memory -> async access of global memory,
//   mbarrier.init -> a use by another thread or a TMA unit) has a fence in
//   the chosen placement model, as CheckProxyFences checks; with hoisting,
//   no inserted fence can be removed without leaving an edge unfenced.
//   Inserted fences record the accesses they order
//   (`loc(inserted "insert-proxy-fences" for ...)`). Idempotent.
//   - shared-memory edges get `fence.proxy.async shared_cta` (space=all: the
//     unqualified `fence.proxy.async`, which also waits for the thread's
//     global writes: MEMBAR.ALL.GPU instead of MEMBAR.ALL.CTA);
//   - global edges (after a generic access of the same global data, or
//     after an acquire) get `fence.proxy.async global` (whatever `space`
//     says);
//   - mbarrier inits get `fence.mbarrier_init` in the initializing thread,
//     after the inits (R8), in every placement model.
// Options:
//   placement=writers (default; R1, CUTLASS's and Triton's order): every
//     thread that ran the generic access fences after it and before the
//     barrier or release that hands it on. The fence goes after the
//     outermost loop around the access that still precedes that barrier,
//     inside the access's guards; a write loop whose body holds the barrier
//     gets its fence inside the body, before that barrier (one fence per
//     iteration, no barrier added: the pass inserts no barriers, and
//     hoisting the fence past the barrier would leave the other writers'
//     data unfenced for the issuer). A cp.async write is fenced after the
//     wait that completes its group (a fence before orders nothing of it).
//   placement=issuer (experimental; nvFuser's order): only the threads that
//     issue the async op fence, after the barrier, just before the op. This
//     relies on the fence composing along the barrier's causality path,
//     which the PTX text does not state.
//   hoist=true (default): writers: one fence after a write loop instead of
//     one per write; issuer: one fence before a loop (not holding the
//     generic access) instead of one per iteration, and one fence before an
//     `if` whose branches both start with the guarded async op; then every
//     inserted fence that no edge needs is removed. hoist=false: one fence
//     right after each generic access (writers) or right before each async
//     op (issuer).
//   predicate=true (default; issuer only, an error with writers): the fence
//     runs under the guards of the op it orders (only the issuing thread);
//     predicate=false: right before the outermost `if` guarding the op, in
//     every thread that reaches it; but inside an `if` that also holds the
//     generic access (an acquire in the issuing thread, as in split-K).
//   space=shared-cta (default) | all: the form of shared-memory fences.
// Errors: a located error when no position of the model fences an edge (the
//   generic access and the async op are not ordered by a barrier or release
//   a fence can precede), or for an invalid option.
// Does not: insert barriers (insert-syncs) or completion waits
//   (insert-async-waits); fence async -> generic edges (completion orders
//   them, R2), async -> async edges (wgmma operand then TMA load), or
//   tensormap edits; remove fences it did not insert.
// Preserves: the thread and conflict analyses; every analysis when it
//   inserts no fence.
#ifndef KIR_PASSES_INSERT_PROXY_FENCES_H_
#define KIR_PASSES_INSERT_PROXY_FENCES_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status InsertProxyFences(Kernel& kernel, const PassOptions& options,
                               PassContext& context);

}  // namespace kir

#endif  // KIR_PASSES_INSERT_PROXY_FENCES_H_
