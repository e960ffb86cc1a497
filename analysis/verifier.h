// Checks the invariants every kernel must satisfy, after parsing and after
// every pass. Each diagnostic names its rule ("[V18] ...") and points at the
// offending op (an operand's problem is reported at its op), parameter or
// kernel. Every rule has an invalid golden in testdata/verifier/, except V1,
// which the parser enforces on text (analysis/verifier_test.cc builds its
// cases).
//
// Rules, by category:
//
// Structure
//   V1  Each op has the operand slots, attributes (present, of the right
//       kind, enum values in range), results and regions that ops.def lists;
//       a `for` body has one index argument; parameters have the type their
//       kind needs (tensor: global buffer, tensor map: tensormap, scalar).
//   V2  `return` is the last op of its region.
// Values and scope
//   V3  Every operand is defined before its use and in scope: a kernel size
//       or parameter, a result defined earlier in the same region or an
//       enclosing one, or an argument of an enclosing op's region. A token
//       may also be used after the region that commits it (after a loop it
//       names the last group committed).
//   V4  `%t@k` (k > 0) names a token, and only inside the innermost loop
//       around its commit; other operands have no `@k`.
// Types
//   V5  `const`: a scalar result; an integer value for integer types, in the
//       type's range; a finite value for float types that stays finite in
//       the type (inf and nan are written as such).
//   V6  Arithmetic: operands and result of one scalar or vector type; no
//       arithmetic on i1; bitwise ops and shifts on integers; exp and sqrt
//       on floats.
//   V7  `cmp` compares two scalars of one type into i1; `select` takes an i1
//       condition and two values of the result's type.
//   V8  `cast` converts between numeric scalars, or vectors of one width.
//   V9  `vec.from` builds vec<N x T> from N scalars of type T;
//       `vec.extract` takes a lane inside the vector and returns its element.
//   V10 Index queries (thread.id, block.id, block.dim, grid.dim,
//       cluster.cta_id, cluster.cta_rank, lane.id, warp.id) return index;
//       elect.sync returns i1; shfl.sync shuffles an i32 or f32 by an index
//       or i32 lane and returns the value's type.
//   V11 A buffer reference names a buffer (or, in a TMA slot, a tensor map)
//       with one `index` value per dimension (per box dimension for a map).
//   V12 load and store move one element or a vec<N x element> (N a power of
//       two, at most 16 bytes outside registers); ldmatrix and stmatrix
//       move vec<2*count x element> (or vec<count x i32>) of a 16-bit type.
//   V13 `if` conditions are i1; `for` bounds and step are index, and
//       `unroll` is not negative. (A step that is not positive is undefined
//       when the loop runs, not an error: see ir/language.md.)
//   V14 Commits return a token of their kind; waits take tokens of theirs.
//   V15 atomic and red: the value (and result) has the buffer's element
//       type; bitwise ops and exch need integers.
//   V16 sem.wait and sem.release use a global i32 buffer and an i32 value.
//   V17 ptx: `reads` and `writes` count trailing unindexed buffer operands
//       that exist; inputs and results are scalars or vectors; every `$k`
//       in the text names a result or an input; the text is printable
//       ASCII, newlines and tabs.
// Memory spaces and allocation
//   V18 Each operand is in the memory space its op needs (cp.async: shared
//       <- global; ldmatrix, stmatrix: shared; tma.load: shared <- tensor
//       map; tma.store, tma.reduce: tensor map <- shared; bulk.load: shared
//       <- global; bulk.store: global <- shared; wgmma: accumulator in reg,
//       A in shared or reg, B in shared; sem ops: global; atomic, red:
//       global or shared; tensor maps are kernel parameters, over a tensor
//       parameter or a workspace).
//   V19 mbarrier ops (mbarrier.arrive_remote included) and the completion
//       operand of tma.load and bulk.load name a `shared mbarrier[...]`
//       buffer, and no other op accesses one; an mbarrier.wait phase is an
//       integer scalar.
//   V20 alloc.shared, alloc.reg and alloc.workspace return a buffer in
//       shared, reg and global memory; shared and register allocations have
//       constant positive shapes; a register allocation holds at most 512
//       KiB per thread (the local memory a thread can have, where registers
//       spill); mbarriers live only in shared memory.
//   V21 Allocations sit at the kernel's top level or directly in a role.
//   V22 Allocation attributes: align a power of two no smaller than the
//       element; swizzle 0, 32, 64 or 128; pad >= 0; an explicit offset is
//       non-negative and a multiple of align; `ring` only on data of rank 2
//       or more (a leading stage dimension).
//   V23 Shared allocations fit in the block's 232448 bytes (227 KiB): one
//       with an explicit offset ends inside them (its bytes with `pad`
//       counted once per innermost row), one without an offset fits on its
//       own. Whether unplaced allocations fit together depends on which may
//       share bytes: plan-shared-memory decides and reports that.
// TMA, bulk copies and wgmma
//   V24 A tensor map maps a tensor parameter or a workspace allocated in
//       the kernel (alloc.workspace), of its element type and rank (1 to
//       5), and has swizzle 0, 32, 64 or 128.
//   V25 A tensor map box has every dimension in 1..256, an innermost extent
//       that is a multiple of 16 bytes, and with swizzle an innermost extent
//       no larger than the swizzle span.
//   V26 Tensor alignments are powers of two; a tensor behind a tensor map
//       is at least 16-byte aligned and its constant outer strides (row-major
//       or strided layout) are multiples of 16 bytes.
//   V27 The shared side of a TMA copy has the map's element type and
//       swizzle and is aligned to 128 bytes (256, 512 or 1024 for 32, 64 or
//       128-byte swizzle); tma.reduce supports the map's element type;
//       tma.load multicast names CTAs of a cluster larger than one.
//   V28 Copies go between buffers of one element type; bulk copies move a
//       positive multiple of 16 bytes, cp.async 4, 8 or 16 bytes.
//   V29 mbarrier.init counts and mbarrier.arrive_tx bytes are in
//       1..2^20-1.
//   V30 wgmma: n a multiple of 8 in 8..256; A and B of one 16-bit type; an
//       f32 (or, for f16 inputs, f16) accumulator; A from registers is
//       K-major; a zero-init predicate is i1 and excludes the zero_init
//       flag.
// Async groups (checked once every other rule holds)
//   V31 A commit runs in exactly the threads that issued the ops of its
//       group (the ops of its completion kind since the previous commit of
//       that kind, in program order; an op that runs in no thread issues
//       nothing).
//   V32 A wait runs in exactly the threads that ran the commits of its
//       tokens (a wait or a commit that runs in no thread is exempt). (Groups
//       belong to threads: a thread that issued and does not commit or wait
//       leaves its copies unobserved, and one that commits without issuing
//       makes empty groups that shift its wait counts.)
// Who executes what (checked once every other rule holds)
//   V33 Warp-collective (`.aligned`) ops run under warp-uniform conditions.
//   V34 Warpgroup-collective ops run under warpgroup-uniform conditions, in
//       a role of whole warpgroups (begin and size multiples of 4 warps) or,
//       outside roles, in a block of a multiple of 128 threads.
//   V35 Single-issue ops run under a condition that selects one thread.
// Register reconfiguration
//   V36 setmaxnreg regs are in 24..256 and a multiple of 8.
//   V37 setmaxnreg needs a constant block shape (the kernel then gets a
//       launch bound) and sits in a role of whole warpgroups.
//   V38 Over all roles, regs * threads adds up to at most 65536 (threads
//       outside any setmaxnreg role count at the launch-bound share), and an
//       `inc` has a `dec` in another role to take registers from.
// Roles
//   V39 A role covers whole warps of the block: a block of a multiple of 32
//       threads and 0 <= warp_begin < warp_end <= warps per block.
//   V40 Roles do not nest.
//   V41 Roles in one region cover disjoint warps.
//   V42 Role names are unique in the kernel.
// Barriers
//   V43 Named barriers use ids 1..15 and a thread count that is a positive
//       multiple of 32 no larger than the block.
//   V44 Every use of a named barrier id has the same thread count.
//   V45 barrier.block runs in the whole block: not inside a role that
//       covers part of it, and only under block-uniform conditions.
//   V46 barrier.named and barrier.arrive run under warp-uniform conditions.
// Launch (errors point at the dimension in the kernel header)
//   V47 The block has 1..1024 threads, each constant dimension positive
//       and within CUDA's limits (1024, 1024, 64).
//   V48 Constant grid dimensions are positive and within CUDA's limits
//       (2^31-1, 65535, 65535).
//   V49 A cluster has constant positive dimensions, at most 8 CTAs (the
//       portable limit: kir does not opt into 16), and divides a constant
//       grid.
// Split-K
//   V50 splitk's operand is a register buffer, and splitk is neither
//       nested in another splitk nor inside a loop.
// Circular buffering
//   V51 A loop marked `circular_buffer = pipelined | warp_specialized` has
//       `stages` in 1..16; `prefetch` only in pipelined mode, in
//       0..stages-1; `producer`, `producer_regs` and `consumer_regs` only
//       in warp_specialized mode, register counts multiples
//       of 8 in 24..256 and only with a producer warpgroup; no marked loop
//       inside another; and an unmarked loop has none of these attributes.
// Tensor maps over workspaces
//   V52 A workspace behind a tensor map has align >= 16 and, where its
//       extents are constant, outer (row-major) strides that are multiples
//       of 16 bytes.
// Remote arrivals and stores
//   V53 mbarrier.arrive_remote and store.remote take an index or integer
//       CTA rank, run in a kernel whose cluster has more than one CTA, and
//       a constant rank names a CTA of that cluster; store.remote stores
//       into shared memory an f32 or i32 scalar or vector of 2 or 4 of the
//       destination's element type.
// Barrier reductions
//   V54 barrier.red takes an i1 predicate and returns i1 (or, and) or i32
//       (popc). As a named barrier it is also subject to V43, V44 and V46.
// Predicated issue
//   V55 An `if {predicated}` has an elect.sync result as its condition, no
//       else, and a body of computations and predicable ops (the effects
//       table).
//
// V31 to V35, V45's uniformity part and V46 need the thread analysis, which
// assumes a well-formed kernel, so they run only when no other rule fails.
#ifndef KIR_ANALYSIS_VERIFIER_H_
#define KIR_ANALYSIS_VERIFIER_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "analysis/analysis_manager.h"
#include "ir/ir.h"

namespace kir {

// Returns OK or every violation found, in program order (kernel-level
// problems first), joined into one status.
absl::Status Verify(const Kernel& kernel);
absl::Status Verify(const Module& module);
// The same, taking the thread analysis from (and leaving it in) `analyses`.
absl::Status Verify(const Kernel& kernel, AnalysisManager& analyses);

// The operand slot of the CTA rank of an mbarrier.arrive_remote (1) or a
// store.remote (3); -1 for other ops.
int RemoteRankSlot(const Op& op);

// V53's rank rule, for a pass that may make a rank constant: when `op` (an
// mbarrier.arrive_remote or a store.remote) has a constant CTA rank that
// names no CTA of the kernel's cluster of 2 to 16 CTAs, the rank and the
// cluster's size; otherwise nullopt.
struct RankOutsideCluster {
  int64_t rank = 0;
  int64_t ctas = 0;
};
std::optional<RankOutsideCluster> RemoteRankOutsideCluster(const Kernel& kernel,
                                                           const Op& op);

}  // namespace kir

#endif  // KIR_ANALYSIS_VERIFIER_H_
