#include "tools/kir-check/interp_target.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/kir-check/check.h"
#include "tools/kir-check/lower.h"

namespace kir::check {

namespace {

// Reports one launch's outcome; false when it failed or hung (`status`
// says which).
bool RunOnce(const RunDirective& directive, const Kernel& kernel,
             const Launch& launch, const RunOutcome& outcome,
             const std::string& pipeline, std::ostream& out,
             std::string& status) {
  out << absl::StrFormat(
      "  interpreter: pipeline '%s'%s, reference schedule, %d threads in "
      "%d blocks, %d ops, %.2f s\n",
      pipeline,
      directive.workspace == WorkspaceZeroing::kOnce
          ? ", workspaces zeroed once"
          : "",
      outcome.stats.threads, outcome.stats.blocks, outcome.stats.ops,
      outcome.stats.seconds);
  if (!outcome.error.ok()) {
    out << "  ERROR: " << outcome.error.message() << "\n";
    status = "FAILED";
    return false;
  }
  bool deadlock = false;
  for (const Hazard& hazard : outcome.hazards.hazards()) {
    out << RenderHazard(hazard, kernel).Render();
    deadlock |= hazard.kind == HazardKind::kDeadlock ||
                hazard.kind == HazardKind::kBarrierCount ||
                hazard.kind == HazardKind::kPartialCollective;
  }
  if (deadlock) {
    out << "  HANG: the kernel deadlocks (no thread can proceed)\n";
    status = "hang";
    return false;
  }
  std::string log;
  absl::StatusOr<int> mismatches =
      EvaluateChecks(directive, kernel, launch, outcome.tensors, log);
  if (!mismatches.ok()) {
    out << "  ERROR: " << mismatches.status().message() << "\n";
    status = "FAILED";
    return false;
  }
  out << log;
  if (*mismatches > 0) {
    status = "FAILED";
    return false;
  }
  return true;
}

}  // namespace

int RunDirectivesOnInterpreter(const std::shared_ptr<const SourceFile>& source,
                               const std::vector<RunDirective>& directives,
                               const InterpTargetOptions& options,
                               std::ostream& out) {
  int passed = 0, failed = 0, hung = 0;
  std::vector<std::string> summary;
  for (size_t index = 0; index < directives.size(); ++index) {
    if (options.only.has_value() &&
        static_cast<int>(index) + 1 != *options.only)
      continue;
    const RunDirective& directive = directives[index];
    const std::string pipeline =
        options.pipeline.value_or(directive.pipeline.value_or(""));
    out << directive.loc.file_name() << ":" << directive.loc.line << ": "
        << directive.text << "\n";
    std::string status = "passed";
    double seconds = 0;
    [&] {
      absl::StatusOr<std::unique_ptr<Module>> module =
          ParseAndLower(source, pipeline);
      if (!module.ok()) {
        out << "  ERROR: " << module.status().message() << "\n";
        status = "FAILED";
        return;
      }
      const Kernel* kernel = (*module)->FindKernel(directive.kernel);
      if (kernel == nullptr) {
        out << "  ERROR: the pipeline removed kernel @" << directive.kernel
            << "\n";
        status = "FAILED";
        return;
      }
      absl::StatusOr<std::unique_ptr<Program>> program =
          Program::Create(*kernel);
      if (!program.ok()) {
        out << "  ERROR: " << program.status().message() << "\n";
        status = "FAILED";
        return;
      }
      absl::StatusOr<Launch> launch = BuildLaunch(directive, *kernel);
      if (!launch.ok()) {
        out << "  ERROR: " << launch.status().message() << "\n";
        status = "FAILED";
        return;
      }
      MachineOptions machine;
      machine.schedule = Schedule::kReference;
      // With `workspace=once` each launch starts from what the previous
      // one left in the workspaces, as on the GPU.
      for (int run = 1; run <= options.repetitions; ++run) {
        if (run > 1) out << "  launch " << run << ":\n";
        RunOutcome outcome = RunKernel(**program, *launch, machine);
        seconds += outcome.stats.seconds;
        if (directive.workspace == WorkspaceZeroing::kOnce) {
          launch->workspaces = outcome.workspaces;
        }
        if (!RunOnce(directive, *kernel, *launch, outcome, pipeline, out,
                     status)) {
          return;
        }
      }
    }();
    if (status == "passed") {
      ++passed;
    } else if (status == "hang") {
      ++hung;
    } else {
      ++failed;
    }
    summary.push_back(absl::StrFormat(
        "%-8s %s:%d @%s (%.1f s)", status, directive.loc.file_name(),
        directive.loc.line, directive.kernel, seconds));
  }
  out << "\n";
  for (const std::string& line : summary) out << line << "\n";
  out << absl::StrFormat("%d passed, %d failed, %d hung\n", passed, failed,
                         hung);
  if (hung > 0) return 3;
  return failed > 0 ? 1 : 0;
}

}  // namespace kir::check
