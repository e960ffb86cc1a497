// Which threads execute each operation, and over which group of threads each
// value is uniform.
//
// Threads are numbered by linear id t = x + y*Bx + z*Bx*By within the block.
// A value is uniform over a group (warp: aligned 32-ranges of t; warpgroup:
// aligned 128-ranges; role; block; cluster; grid) when every thread of one
// group instance that computes it gets the same value. So `tid.x < 32` in
// block(128, 2) selects warps 0 and 4 and is warp-uniform; `tid.x < 48` is not.
//
// Used by the verifier and by every pass that places barriers, fences or
// predicates. Sound: "uniform" and "single thread" answers are proofs;
// anything unproven is reported as varying / many threads.
#ifndef KIR_ANALYSIS_THREAD_ANALYSIS_H_
#define KIR_ANALYSIS_THREAD_ANALYSIS_H_

#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace kir {

// Ordered from finest to coarsest.
enum class Scope { kThread, kWarp, kWarpgroup, kRole, kBlock, kCluster, kGrid };
const char* ScopeName(Scope scope);  // "thread", "warp", ...

// A set of threads of one block, by linear id. When the block shape is not
// constant the set is unknown (`known() == false`) and means "any thread".
class ThreadSet {
 public:
  static ThreadSet Unknown();
  static ThreadSet All(int num_threads);
  static ThreadSet None(int num_threads);

  bool known() const { return known_; }
  int num_threads() const { return static_cast<int>(bits_.size()); }
  bool Contains(int thread) const {
    return !known_ || (thread >= 0 && thread < num_threads() && bits_[thread]);
  }
  int Count() const;  // requires known()
  // Whether the set contains whole warps only (every warp all-in or all-out;
  // a partial last warp counts as whole when all its threads are in). False
  // when unknown.
  bool IsWarpAligned() const;
  std::vector<int> Warps() const;  // warps with at least one member; known()
  const std::vector<bool>& bits() const { return bits_; }
  std::vector<bool>& mutable_bits() { return bits_; }
  bool operator==(const ThreadSet& other) const;

 private:
  bool known_ = false;
  std::vector<bool> bits_;
};

class ThreadAnalysis {
 public:
  static constexpr char kName[] = "thread-analysis";

  explicit ThreadAnalysis(const Kernel& kernel);
  ~ThreadAnalysis();
  ThreadAnalysis(const ThreadAnalysis&) = delete;
  ThreadAnalysis& operator=(const ThreadAnalysis&) = delete;

  // Threads per block when the block shape is constant.
  std::optional<int> num_threads() const;

  // The coarsest scope over which `value` is uniform, among the threads
  // that may execute its definition (a value computed under `if tid.x < 16`
  // only needs to agree among threads 0..15). kRole is the warps of the
  // innermost role around the definition, or the block. Sizes, params and
  // constants, grid.dim and block.dim are grid-uniform; block.id and the
  // cluster indices block-uniform; loads, atomics and elect.sync results
  // per-thread. For values that are unknown here, the thread scope.
  Scope UniformScope(const Value* value) const;
  bool IsUniform(const Value* value, Scope scope) const {
    return UniformScope(value) >= scope;
  }
  // The value computed by each thread (indexed by linear thread id), when
  // the block shape is constant and the value depends only on integer
  // constants, thread/lane/warp ids and the block shape (e.g. `tid.x / 32`);
  // else null. Entries of threads that cannot execute the definition are
  // placeholders (no such thread uses the value). Division, remainder and
  // shifts of negative values are not evaluated (the result would depend on
  // rounding the IR leaves open).
  const std::vector<int64_t>* PerThreadValues(const Value* value) const;

  // Threads that may execute `op` (the guards of every enclosing if and
  // role; unknown conditions keep both sides).
  const ThreadSet& ExecutingThreads(const Op& op) const;
  // ExecutingThreads as bits by linear id, for the conflict analysis's hot
  // paths; null when that set is unknown.
  const std::bitset<1024>* ExecutingBits(const Op& op) const;
  // True when at most one thread of the block executes each dynamic
  // instance of `op`: a single-thread guard, or `elect.sync` within a set
  // of threads that is one warp.
  bool IsSingleThread(const Op& op) const;
  // True when `op` is on the taken side of an `if` whose condition implies
  // an elect.sync result: each warp runs it in at most one lane.
  bool IsElectedPerWarp(const Op& op) const;
  // Whether every condition guarding `op` is uniform over `scope`, among
  // the threads that reach it: enclosing ifs, the bounds of enclosing fors
  // (their trip count), enclosing roles (a role is a guard like any other:
  // warps[4, 8) is warp-uniform but not block-uniform, and splits
  // warpgroups only when not aligned to 4 warps; for kRole it never fails),
  // and the guards of any `return` that may run before `op`. For kRole the
  // group is the warps of the innermost role around `op`, or the block. On
  // failure, `*culprit` is the first offending if, for or role (outermost
  // first).
  bool GuardsUniformOver(const Op& op, Scope scope,
                         const Op** culprit = nullptr) const;
  // The innermost role region around `op`, or null.
  const Op* EnclosingRole(const Op& op) const;

  // Keeps the analysis valid while a pass inserts or removes ops without
  // results or regions (barriers, fences): such an op runs in the threads
  // that reach its place, and changes nothing else the analysis knows.
  // AddOp after the op is in its region; RemoveOp before it is destroyed.
  void AddOp(const Op& op);
  void RemoveOp(const Op& op);

  // For the analysis manager's --verify-analyses: "" when `fresh`, built
  // on the same kernel, answers every query the same way; else the first
  // difference.
  std::string Difference(const ThreadAnalysis& fresh) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kir

#endif  // KIR_ANALYSIS_THREAD_ANALYSIS_H_
