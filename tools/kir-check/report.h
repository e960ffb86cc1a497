// What kir-check reports: hazards found while executing a kernel, each at
// the op that completes it with a note at the other op involved, rendered
// as located diagnostics (`file:line:col: error: [class] ...`).
#ifndef KIR_TOOLS_KIR_CHECK_REPORT_H_
#define KIR_TOOLS_KIR_CHECK_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ir/diagnostics.h"
#include "ir/ir.h"

namespace kir::check {

enum class HazardKind {
  kRace,               // unordered accesses of two threads, one a write
  kProxy,              // generic <-> async proxy without fence.proxy.async
  kEarlyRead,          // a TMA/bulk load's data read before its mbarrier phase
  kSourceOverwritten,  // an async op's source written before its read-wait
  kAsyncRace,          // other unordered pairs involving an async operation
  kEarlyRelease,       // a release before the bulk group it publishes completed
  kPartialCollective,  // an `.aligned` op run by part of its warp/warpgroup
  kMultipleIssue,      // a single-issue op issued by more than one thread
  kMbarrierCount,      // arrivals or transaction bytes that do not add up
  kBarrierCount,       // a barrier reached by other threads than it counts
  kMbarrierInit,       // an mbarrier used uninitialized or without its fence
  kRegister,           // wgmma registers accessed without fence or wait
  kPendingAtExit,      // async work on shared memory still pending at exit
  kDeadlock,           // nobody can proceed
  kOutput,             // output differs from the reference
};

// "race", "proxy", ... (the bracketed class in messages).
const char* HazardKindName(HazardKind kind);

struct Hazard {
  HazardKind kind = HazardKind::kRace;
  const Op* op = nullptr;     // where it is reported (null: the kernel)
  const Op* other = nullptr;  // the other access (a note), if any
  std::string message;
  std::string note;  // for `other`
  // More notes (e.g. every waiting op of a deadlock).
  std::vector<std::pair<const Op*, std::string>> extra_notes;
  int64_t occurrences = 1;
  // Reports of one class at the same ops merge unless their keys differ
  // (e.g. the output tensor of an output mismatch).
  std::string key;
};

// Collects hazards, merging repeats of the same (class, op, other op).
class HazardLog {
 public:
  void Add(Hazard hazard);
  const std::vector<Hazard>& hazards() const { return hazards_; }
  bool empty() const { return hazards_.empty(); }
  void Merge(const HazardLog& other);

 private:
  std::vector<Hazard> hazards_;
  std::map<std::tuple<int, const Op*, const Op*, std::string>, size_t> index_;
};

// The located diagnostic for one hazard (the kernel's location when the
// hazard names no op). `suffix` is appended to the message (e.g. "in 3 of
// 10 schedules").
Diagnostic RenderHazard(const Hazard& hazard, const Kernel& kernel,
                        const std::string& suffix = "");

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_REPORT_H_
