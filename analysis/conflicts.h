// Conflicts between the memory accesses of one block's threads: whether two
// accesses can touch overlapping memory from two threads (or one thread
// through two proxies), within one iteration or across iterations of the
// loops around them. The ordering dataflow (analysis/ordering.h) asks it
// about every pair it finds pending.
//
// Memory. Shared memory, and global memory as the threads of one block see
// it: a block's own accesses of a tensor or workspace are ordered exactly as
// shared ones (bar.sync orders all memory among the threads it counts).
// Conflicts between blocks are the program's (semaphores, atomics, splitk)
// and are not considered. Distinct tensor parameters and workspaces never
// alias (ir/language.md, "Memory and aliasing").
//
// Conflicts. Two accesses conflict when at least one writes, they are not
// both atomic (mbarrier arrive/wait, atomics, semaphores), and their boxes
// (ir/effects.h) can overlap for two different threads of the block. Boxes
// are compared dimension by dimension, which the language's bounds rule
// makes exact: every index of an access lies inside its dimension. Each
// index is decomposed into an exact per-thread part (from the thread
// analysis), uniform unknowns (SSA values uniform over the block or role)
// and a constant; `div` and `rem` by a constant of such a sum split exactly
// when the dividend is non-negative and its unknowns' coefficients are
// multiples of the divisor (a flattened copy index `r * 128 + tid`). The
// pair is decided by enumerating the executing threads of both sides (the
// threads that can run each access, not the whole block). Different shared
// allocations never alias unless both have explicit offsets whose byte
// ranges overlap. Uniform unknowns that do not cancel, and per-thread
// unknowns, make the answer "conflict".
//
// Loops. For a pair from different iterations of a loop, values defined
// inside the loop differ, except: the induction variable (advanced by
// k >= 1 steps); remainders `rem(x * iv + invariant + c, m)` of one form,
// whose two values differ by a known amount whatever their offsets c (so
// `(i + 2) % 3` and `i % 3` name different stages); and values the rest of
// their dimension cannot make up for (a tile index times the tile size,
// beside per-thread offsets smaller than the tile), which must then be
// equal in both runs: when those equalities determine the iteration (the
// induction variable, plus or minus a value the same in both runs, times a
// nonzero constant, or the quotient and remainder of one value by one
// divisor), the runs are the same iteration and cannot conflict. Index
// arithmetic is assumed not to wrap.
#ifndef KIR_ANALYSIS_CONFLICTS_H_
#define KIR_ANALYSIS_CONFLICTS_H_

#include <bitset>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/types/span.h"
#include "analysis/analysis_manager.h"
#include "analysis/thread_analysis.h"
#include "ir/effects.h"
#include "ir/ir.h"

namespace kir {

// Threads of one block by linear id (the hardware maximum is 1024).
using ThreadBits = std::bitset<1024>;

// Which pairs of threads MayOverlap considers: two different threads (a
// race between threads), one thread with itself (its own accesses through
// two proxies), or either.
enum class ThreadPairs { kDistinct, kSame, kAny };

// One loop an access pair straddles: the earlier access ran `distance`
// iterations before the later one (exactly, or at least kMaxDistance).
struct CarriedLoop {
  static constexpr int kMaxDistance = 4;
  const Op* loop = nullptr;
  int distance = 1;
  bool operator<(const CarriedLoop& other) const {
    return std::tie(loop, distance) < std::tie(other.loop, other.distance);
  }
  bool operator==(const CarriedLoop& other) const {
    return loop == other.loop && distance == other.distance;
  }
};

// Decides whether two accesses of one block's memory can overlap from
// different threads. Built per kernel; answers are cached by the caller if
// needed.
class ConflictAnalysis {
 public:
  static constexpr char kName[] = "conflict-analysis";

  ConflictAnalysis(const Kernel& kernel, const ThreadAnalysis& threads);
  // Built on the manager's thread analysis (and dropped with it).
  ConflictAnalysis(const Kernel& kernel, AnalysisManager& analyses);
  ~ConflictAnalysis();
  ConflictAnalysis(const ConflictAnalysis&) = delete;
  ConflictAnalysis& operator=(const ConflictAnalysis&) = delete;

  // Threads that may execute `op`; every thread when the shape is unknown.
  ThreadBits Executing(const Op& op) const;
  int num_threads() const;

  // Whether some thread t1 in `threads_a` running `a` and a thread t2 in
  // `threads_b` running `b` (t1 != t2, t1 == t2 or either, per `pairs`)
  // touch overlapping memory through `ea` and `eb` (effects of `a` and
  // `b`), with `a` from earlier iterations of the loops in `carried` (same
  // iteration of every other loop). Ignores access modes: the caller
  // decides whether the pair needs ordering.
  bool MayOverlap(const Op& a, const MemoryEffect& ea,
                  const ThreadBits& threads_a, const Op& b,
                  const MemoryEffect& eb, const ThreadBits& threads_b,
                  absl::Span<const CarriedLoop> carried,
                  ThreadPairs pairs = ThreadPairs::kDistinct) const;

  // How answers were reached, for tests and reports.
  struct Counters {
    int different_buffers = 0;
    int per_dimension = 0;
    int linear = 0;
    int unknown = 0;  // answered "overlap" without enumerating
  };
  const Counters& counters() const;

  // For --verify-analyses: "" when the index forms this analysis derived
  // so far are the ones `fresh` derives on the same kernel.
  std::string Difference(const ConflictAnalysis& fresh) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether a pair of effects, `earlier` then `later`, needs ordering when it
// overlaps: at least one writes and not both are atomic; or an mbarrier
// wait, then an arrival on that mbarrier (which may complete the next
// phase before the waiter observed its own), unless the mbarrier is a ring
// of circular-buffer's.
bool NeedsOrdering(const MemoryEffect& earlier, const MemoryEffect& later);

}  // namespace kir

#endif  // KIR_ANALYSIS_CONFLICTS_H_
