// The effects table: for every op kind, what it reads and writes, through
// which proxy, how it completes, and which threads must execute it. Passes,
// the verifier, the emitter and the interpreter read these facts from here
// and nowhere else.
//
// Operand conventions of the memory ops (destination first, as in PTX):
//   load %buf[idx]                         reads a box [1, ..., 1, lanes]
//   store %buf[idx], %v                    writes a box [1, ..., 1, lanes]
//   cp.async %smem[idx], %gmem[idx]        bytes / element size, innermost
//   ldmatrix / stmatrix %smem[r, c]        the 8x8 matrices, see below
//   tma.load %smem[idx], %map[coords], %bar[i]
//   tma.store / tma.reduce %map[coords], %smem[idx]
//   bulk.load %smem[idx], %gmem[idx], %bar[i]
//   bulk.store %gmem[idx], %smem[idx]
//   wgmma %acc[idx], %a[idx], %b[idx]
//   mbarrier.* %bar[i]; sem.wait / sem.release %sem[i], %value
//   atomic / red %buf[idx], %value
//   ptx ... (inputs) reads(...) writes(...): whole buffers
//
// Boxes (MemoryEffect::extent) have the rank of the accessed buffer; a box
// of lower rank is padded with leading 1s, one of higher rank (a TMA box with
// more dimensions than its shared-memory buffer) has its leading dimensions
// folded into the outermost one.
//
// ldmatrix/stmatrix box: count=1 is one 8x8 matrix, count=2 two matrices
// stacked along rows (16x8), count=4 a 2x2 arrangement (16x16), over the
// innermost two dimensions in 16-bit elements. `trans` stores each matrix
// transposed in memory, so the box's two extents swap (count=2: 8x16).
//
// wgmma boxes: the accumulator is the executing thread's fragment of the
// 64xN tile, N/2 elements along its innermost dimension (registers are
// private, so the box is per thread). A from shared memory is the 64xK tile
// (a_major=k: [64, K]; a_major=m: [K, 64]); A from registers is the
// thread's fragment, K/2 elements. B is [N, K] (b_major=k) or [K, N]
// (b_major=n). K is 32 bytes of the operand element: 16 for f16/bf16.
//
// Execution classes (who runs one instance):
//   per-thread    arithmetic, load/store, cp.async and its groups, fences,
//                 mbarrier.arrive/wait, sem.wait, atomic, red, ptx. Atomics
//                 and red are per-thread even when a program uses them as
//                 semaphores: each executing thread performs its own
//                 read-modify-write, which is what a reduction needs; a
//                 program that wants one update must guard it itself.
//   warp          `.aligned` over all 32 lanes: ldmatrix, stmatrix,
//                 elect.sync, shfl.sync.
//   warpgroup     `.aligned` over 4 warps: wgmma and its fence, commit and
//                 wait, setmaxnreg.
//   participants  barriers: every thread the barrier counts (the block, the
//                 named barrier's threads, the cluster); also splitk, whose
//                 cross-block reduction takes the whole block.
//   single-issue  one thread issues for the block: TMA and bulk copies,
//                 tma.prefetch, the bulk group commit and wait (bulk groups
//                 belong to the issuing thread, so the issuer commits and
//                 waits), mbarrier.init, mbarrier.inval, mbarrier.arrive_tx
//                 (one arrival that also sets the expected bytes), and
//                 sem.release (publishing a semaphore value once, after the
//                 block's barrier).
#ifndef KIR_IR_EFFECTS_H_
#define KIR_IR_EFFECTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "ir/ir.h"

namespace kir {

// Proxy, MemoryOrder and MemoryScope are attribute enums (ir/attrs.def).
enum class Completion : uint8_t {
  kImmediate,
  kMbarrier,
  kBulkGroup,
  kWgmmaGroup,
  kCpAsyncGroup
};
enum class AccessMode : uint8_t { kRead, kWrite, kReadWrite };

// Who must execute an op.
enum class ExecClass {
  kPerThread,            // any thread, independently
  kWarpCollective,       // `.aligned` over a warp: all 32 lanes together
  kWarpgroupCollective,  // `.aligned` over a warpgroup (wgmma, setmaxnreg)
  kParticipants,         // barriers: every participating thread
  kSingleIssue,          // exactly one thread issues it
};

// The synchronization an op performs, for the barrier and fence passes.
enum class SyncKind {
  kNone,
  kBlockBarrier,        // barrier.block: all threads of the block
  kNamedBarrier,        // barrier.named: wait for `threads` arrivals
  kNamedBarrierArrive,  // barrier.arrive: arrive without waiting
  kClusterArrive,       // cluster.arrive (release unless relaxed)
  kClusterWait,         // cluster.wait (acquire)
  kProxyFence,          // fence.proxy.async: generic <-> async proxy
  kAcqRelFence,         // fence.acq_rel at a scope
  kMbarrierInitFence,   // fence.mbarrier_init: publishes prior inits
  kMbarrierInit,        // mbarrier.init
  kMbarrierInval,       // mbarrier.inval
  kMbarrierArrive,      // mbarrier.arrive(_tx): release
  kMbarrierWait,        // mbarrier.wait: acquire
  kSemWait,             // sem.wait: acquire
  kSemRelease,          // sem.release: release
  kGroupCommit,         // closes an async group (bulk, wgmma, cp.async)
  kGroupWait,           // waits for async groups
  kRegisterFence,       // wgmma.fence: orders register accesses with wgmma
};

const char* ProxyName(Proxy proxy);                 // "generic" "async"
const char* CompletionName(Completion completion);  // "bulk-group", ...
// The completion mechanism of the groups of a token kind (kBulkGroup for
// token<bulk>, ...).
Completion GroupCompletion(TokenKind kind);
const char* AccessModeName(AccessMode mode);     // "read-write", ...
const char* ExecClassName(ExecClass exec);       // "single-issue", ...
const char* SyncKindName(SyncKind sync);         // "block-barrier", ...
const char* MemoryOrderName(MemoryOrder order);  // "acquire", ...
const char* MemoryScopeName(MemoryScope scope);  // "cta", "gpu", ...

// How the threads executing one instance split the accessed box.
enum class Distribution : uint8_t {
  kPerThread,  // each executing thread touches its own box at its origin
  kIssuer,     // the (single) issuing thread's op touches the whole box
  kFragment,   // the box is shared out among the collective's lanes
};
const char* DistributionName(Distribution distribution);

// One memory access of one op.
struct MemoryEffect {
  // The accessed buffer. For a TMA access of global memory this is the
  // tensor the map describes (`tensor_map` is the operand itself).
  const Value* buffer = nullptr;
  const Value* tensor_map = nullptr;
  // The one-byte facts together, then the operand: 32 bytes before the
  // box (the ordering dataflow keeps a copy of every effect it visits).
  MemorySpace space = MemorySpace::kGlobal;
  AccessMode mode = AccessMode::kRead;
  Proxy proxy = Proxy::kGeneric;
  Completion completion = Completion::kImmediate;
  Distribution distribution = Distribution::kPerThread;
  bool whole_buffer = false;  // raw PTX and unindexed operands
  // Ordering of atomic, semaphore and mbarrier accesses; kWeak otherwise.
  MemoryOrder order = MemoryOrder::kWeak;
  MemoryScope scope = MemoryScope::kCta;  // meaningful when order != kWeak
  // A multicast TMA load writes the box in every CTA of its mask.
  bool multicast = false;
  // A remote mbarrier arrive accesses the barrier at the same offset in
  // another CTA of the cluster (the operand names the local one).
  bool remote = false;
  int operand = -1;  // the operand slot holding the buffer
  // The box touched: origin is the operand's index tuple (outermost first;
  // empty for whole-buffer accesses), extent its size per dimension. Up to
  // rank 4 inline: an effect is asked for once per access and walk, and two
  // heap arrays each time were most of its cost.
  absl::InlinedVector<const Value*, 4> origin;
  absl::InlinedVector<int64_t, 4> extent;

  bool reads() const { return mode != AccessMode::kWrite; }
  bool writes() const { return mode != AccessMode::kRead; }
};

// Per-kind facts.
struct OpFacts {
  ExecClass exec = ExecClass::kPerThread;
  // How the op's memory effects complete; kImmediate for ops that do not
  // access memory asynchronously.
  Completion completion = Completion::kImmediate;
  // Must not be removed even if unused: memory writes, synchronization,
  // collectives, control flow and raw PTX. Pure arithmetic, index queries,
  // allocations and plain loads are removable.
  bool has_side_effects = false;
  // A computation: the result is a function of the operands, constants and
  // the thread's indices only (arithmetic, comparisons, casts, vector
  // packing, index queries, `const`). No memory, no synchronization: it can
  // be recomputed, hoisted, or run under any predicate.
  bool computes = false;
  // One instruction that can execute under a thread predicate (`@p`, the
  // runtime's `_if` form): an elected `if {predicated}` may hold it
  // (ir/language.md, "Control flow").
  bool predicable = false;
  SyncKind sync = SyncKind::kNone;
  // The async-group kind for commits, waits and the ops a commit batches.
  std::optional<TokenKind> group;
};

const OpFacts& FactsOf(OpKind kind);
// The memory accesses of one op: most ops have at most one, kept inline
// (no heap allocation for them; the passes ask for effects millions of
// times on large kernels).
using MemoryEffects = absl::InlinedVector<MemoryEffect, 1>;

// Every memory access `op` performs, in operand order. Tolerates ops that
// have not been verified: malformed operands yield no or partial effects.
MemoryEffects MemoryEffectsOf(const Op& op);

// Testing only: makes one row of the table wrong on purpose, so that a
// test can show that kir-check, which does not read this table, catches
// what the passes then lower wrongly.
enum class EffectsFault {
  kNone,
  kTmaStoreReadsNoSharedMemory,  // tma.store loses its read of the tile
};
void SetEffectsFaultForTesting(EffectsFault fault);

// Whether `if_op` may carry `predicated` (its body issued branch-free, each
// op under the condition as a predicate, means what the branch does): the
// condition is an elect.sync result, there is no else, and the body holds
// computations and predicable ops only. Otherwise false, with the first
// reason in `why` when given. (uniform-predicates marks only bodies that
// also issue a single-issue op: HoldsSingleIssue.)
bool CanIssuePredicated(const Op& if_op, std::string* why = nullptr);
// Whether an op of `region` (not nested deeper) is single-issue.
bool HoldsSingleIssue(const Region& region);
// Whether `op` is computation only: no memory access, no synchronization or
// other side effect, no regions. The sync passes move barriers and fences
// over such ops.
bool IsPlainComputation(const Op& op);

// Whether `op` is a proxy fence (`fence.proxy.async`) that orders accesses
// of `space` between the generic and the async proxy: `all` orders shared
// and global memory, `shared_cta` and `shared_cluster` shared memory (the
// CTA's window lies inside the cluster's), `global` global memory.
bool ProxyFenceOrders(const Op& op, MemorySpace space);

// One line per access, then a line with the execution class, e.g.
//   write %s[%r, %c] box [64, 64] shared async mbarrier issuer
//   read %A[%x, %y] via %map box [64, 64] global async mbarrier issuer
//   read-write %bar[%c0] box [1] shared generic mbarrier issuer release.cluster
//   exec single-issue, side-effects
// Stable: golden-tested through `kir-opt --print-effects`.
std::string DescribeEffects(const Op& op);

}  // namespace kir

#endif  // KIR_IR_EFFECTS_H_
