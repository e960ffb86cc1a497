// Mutation testing: lower a kernel, delete each synchronization op of the
// result (every barrier, fence, wait, arrive and release, whether a pass
// inserted it or the author wrote it) one at a time, and check each mutant
// under adversarial schedules. A mutant is caught by a hazard, a deadlock,
// an error or a wrong output; one that is not caught gets a reason:
//   not reached     the launches never executed the op (add one that does);
//   rule            a rule of hopper-ptx.md requires the op although the
//                   model cannot see it fail (never called needless);
//   needless        no rule of the model needed it in these executions: if
//                   a pass inserted it, the pass inserted something needless.
#ifndef KIR_TOOLS_KIR_CHECK_MUTATE_H_
#define KIR_TOOLS_KIR_CHECK_MUTATE_H_

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/location.h"
#include "tools/kir-check/check.h"

namespace kir::check {

struct MutationOptions {
  std::string pipeline;  // the lowering to mutate ("": the file as it is)
  // The unlowered kernel, when the file is already lowered (else the file
  // before the pipeline).
  std::shared_ptr<const SourceFile> reference;
  CheckOptions check;     // seeds, schedule, fence model per mutant
  std::string directive;  // instead of the file's directives, if set
  std::optional<int> only;
};

struct MutantResult {
  int site = 0;
  std::string op;        // the deleted op's first line
  std::string location;  // file:line:col
  std::string origin;    // "inserted by <pass>" or "written by the author"
  bool caught = false;
  std::string reason;  // the hazard classes, or why not caught
};

struct MutationReport {
  std::vector<MutantResult> mutants;
  int caught() const;
};

// Runs the mutation test of `source`; prints one line per mutant and the
// kill rate to `out`. Fails (an error status) if `source` cannot be
// lowered or checked as it is, or if the unmutated lowering has a hazard.
absl::StatusOr<MutationReport> RunMutationTesting(
    const std::shared_ptr<const SourceFile>& source,
    const MutationOptions& options, std::ostream& out);

// Whether `kind` is an op mutation testing deletes.
bool IsMutationSite(OpKind kind);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_MUTATE_H_
