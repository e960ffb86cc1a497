// Checking a kernel: bind a run directive to a launch, run the kernel under
// seeded adversarial schedules with hazard tracking, and compare its
// outputs with a reference run of the unlowered kernel and with the
// directive's own checks.
#ifndef KIR_TOOLS_KIR_CHECK_CHECK_H_
#define KIR_TOOLS_KIR_CHECK_CHECK_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "tools/kir-check/cpu_reference.h"
#include "tools/kir-check/machine.h"
#include "tools/kir-check/program.h"
#include "tools/kir-check/report.h"
#include "tools/kir-run/directive.h"

namespace kir::check {

// The run directives of `source`, or, when `directive` is not empty, that
// one directive (the text after `run:`, located in "<--directive>").
absl::StatusOr<std::vector<RunDirective>> DirectivesOf(
    const std::shared_ptr<const SourceFile>& source,
    const std::string& directive);

// The launch a directive describes for `kernel`: its sizes, scalars, and
// every tensor parameter initialized as bound (ValidateDirective must have
// accepted the directive).
absl::StatusOr<Launch> BuildLaunch(const RunDirective& directive,
                                   const Kernel& kernel);

// The launch of a kernel without sizes or parameters (no directive needed).
absl::StatusOr<Launch> EmptyLaunch(const Kernel& kernel);

// The directive's checks against `outputs`, references computed from
// `inputs` (the launch before it ran). One line per check in `log`;
// returns the number of failed checks, or an error.
absl::StatusOr<int> EvaluateChecks(
    const RunDirective& directive, const Kernel& kernel, const Launch& inputs,
    const std::map<std::string, TensorData>& outputs, std::string& log);

struct CheckOptions {
  int seeds = 10;
  uint64_t first_seed = 1;
  Schedule schedule = Schedule::kAdversarial;
  FenceModel fence_model = FenceModel::kPerThread;
};

struct CheckReport {
  absl::Status error;  // the first run that stopped with an error
  // Every hazard, its `occurrences` the number of runs that showed it.
  HazardLog hazards;
  int runs = 0;
  std::vector<RunStats> stats;  // per run
  RunStats reference_stats;     // of the reference run, if any
  // Executions of each op of the checked program, summed over the runs.
  std::vector<int64_t> op_executions;
  int output_mismatches = 0;  // runs whose outputs differed
};

// Runs `checked` `options.seeds` times. With `reference` (the unlowered
// kernel), its reference-schedule outputs must equal each run's outputs
// bit for bit (NaN equal to NaN); with `directive`, its checks must pass.
CheckReport CheckKernel(const Program& checked, const Program* reference,
                        const RunDirective* directive, const Launch& launch,
                        const CheckOptions& options);

// Renders a report's hazards as located diagnostics ("in 3 of 10 runs"
// appended when not every run showed one), its error first.
std::string RenderReport(const CheckReport& report, const Kernel& kernel);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_CHECK_H_
