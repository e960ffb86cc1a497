// kir-bench --resume: an earlier run's JSON report, read back, so that the
// problems it finished are not run again and their rows join the new
// report (a long run that was interrupted, or lost problems to a dead
// worker, goes on where it stopped).
#ifndef KIR_TOOLS_KIR_BENCH_RESUME_H_
#define KIR_TOOLS_KIR_BENCH_RESUME_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/kir-bench/report.h"
#include "tools/kir-bench/result.h"

namespace kir::bench {

struct PreviousRun {
  std::string path;
  std::vector<std::string> pipelines;
  bool tune = false;
  std::vector<ProblemResult> results;
};

// Reads a report written by FormatJson; `path` only names it in errors.
absl::StatusOr<PreviousRun> ParsePreviousRun(absl::string_view json,
                                             const std::string& path);
absl::StatusOr<PreviousRun> ReadPreviousRun(const std::string& path);

// Whether a result is final: passed, or failed for a reason a re-run would
// not change (a mismatch, an error). A hang, a crash, a lost worker, a
// skip (no GPU) or a problem an interrupted run had not reached (pending)
// is run again.
bool IsFinished(const ProblemResult& result);

// An error unless the earlier run measured the same thing: the same
// pipelines, with or without --tune.
absl::Status CheckSameRun(const PreviousRun& previous, const RunInfo& info);

// For each problem (its identity: name, key and the configuration it
// would run, or start tuning from), the earlier run's finished result for
// the same name, key and configuration, if there is one.
std::vector<std::optional<ProblemResult>> FinishedEarlier(
    const PreviousRun& previous, const std::vector<ProblemResult>& identities);

}  // namespace kir::bench

#endif  // KIR_TOOLS_KIR_BENCH_RESUME_H_
