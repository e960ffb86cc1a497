// `kir-run --target=interp`: runs run directives on the interpreter instead
// of the GPU, under the reference schedule, with the references computed
// on the CPU. Needs no GPU, so CI runs every directive of every example.
#ifndef KIR_TOOLS_KIR_CHECK_INTERP_TARGET_H_
#define KIR_TOOLS_KIR_CHECK_INTERP_TARGET_H_

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/location.h"
#include "tools/kir-run/directive.h"

namespace kir::check {

struct InterpTargetOptions {
  // Overrides every directive's pipeline= when set.
  std::optional<std::string> pipeline;
  std::optional<int> only;  // 1-based
  // Launches per directive, each checked; with `workspace=once` each
  // starts from the workspaces the previous one left.
  int repetitions = 1;
};

// Runs `directives` (already validated) of `source`; prints a report in
// kir-run's format and returns kir-run's exit code (0 passed, 1 failed,
// 3 a directive deadlocked: the interpreter's counterpart of a hang).
int RunDirectivesOnInterpreter(const std::shared_ptr<const SourceFile>& source,
                               const std::vector<RunDirective>& directives,
                               const InterpTargetOptions& options,
                               std::ostream& out);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_INTERP_TARGET_H_
