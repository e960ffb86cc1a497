#include "tools/kir-check/mutate.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "printer/kir_printer.h"
#include "tools/kir-check/lower.h"
#include "tools/kir-run/binding.h"

namespace kir::check {

bool IsMutationSite(OpKind kind) {
  switch (kind) {
    case OpKind::kBarrierBlock:
    case OpKind::kBarrierNamed:
    case OpKind::kBarrierArrive:
    case OpKind::kClusterArrive:
    case OpKind::kClusterWait:
    case OpKind::kFenceProxyAsync:
    case OpKind::kFenceAcqRel:
    case OpKind::kFenceMbarrierInit:
    case OpKind::kWgmmaFence:
    case OpKind::kBulkWait:
    case OpKind::kWgmmaWait:
    case OpKind::kCpAsyncWait:
    case OpKind::kMbarrierWait:
    case OpKind::kSemWait:
    case OpKind::kMbarrierArrive:
    case OpKind::kMbarrierArriveTx:
    case OpKind::kMbarrierArriveRemote:
    case OpKind::kSemRelease:
      return true;
    default:
      return false;
  }
}

int MutationReport::caught() const {
  int caught = 0;
  for (const MutantResult& mutant : mutants) caught += mutant.caught;
  return caught;
}

namespace {

// The mutation sites of `kernel`, in program order.
std::vector<Op*> Sites(Kernel& kernel) {
  std::vector<Op*> sites;
  Walk(kernel.body(), [&](Op& op) {
    if (IsMutationSite(op.kind())) sites.push_back(&op);
  });
  return sites;
}

std::string FirstLine(const Op& op) {
  std::string text = PrintOp(op);
  const size_t newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  while (!text.empty() && text.back() == '{') text.pop_back();
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// A rule of hopper-ptx.md that requires `op` although the model cannot see
// it fail, or "" if none.
std::string RequiringRule(const Op& op) {
  if (op.kind() == OpKind::kFenceMbarrierInit) {
    return "R8 (fence.mbarrier_init after mbarrier.init, before the barrier "
           "that hands the mbarrier to other threads; the model checks it "
           "only for TMA completions)";
  }
  if (op.kind() == OpKind::kFenceProxyAsync &&
      (op.space() == FenceSpace::kGlobal || op.space() == FenceSpace::kAll)) {
    // After a generic acquire in the same region: R7.
    const Region* region = op.parent_region();
    for (int i = 0; i < region->IndexOf(&op); ++i) {
      const OpKind kind = region->op(i).kind();
      if (kind == OpKind::kSemWait || kind == OpKind::kAtomic) {
        return "R7 (fence.proxy.async global between a generic acquire and "
               "an async access of the data it guards; the model lets the "
               "completed async write reach the next async access through "
               "the acquire)";
      }
    }
  }
  return "";
}

struct Launches {
  std::vector<RunDirective> directives;
  std::vector<Launch> launches;
};

// Checks `kernel` under every launch; the hazard classes found (or the
// error), empty when clean.
std::set<std::string> CheckAll(const Kernel& kernel, const Program& reference,
                               const Launches& launches,
                               const CheckOptions& options,
                               std::vector<int64_t>* executions,
                               absl::Status* error) {
  std::set<std::string> found;
  absl::StatusOr<std::unique_ptr<Program>> program = Program::Create(kernel);
  if (!program.ok()) {
    *error = program.status();
    found.insert("error");
    return found;
  }
  if (executions != nullptr) executions->assign((*program)->ops().size(), 0);
  for (size_t i = 0; i < launches.directives.size(); ++i) {
    const CheckReport report =
        CheckKernel(**program, &reference, &launches.directives[i],
                    launches.launches[i], options);
    if (executions != nullptr) {
      for (size_t op = 0; op < report.op_executions.size(); ++op)
        (*executions)[op] += report.op_executions[op];
    }
    if (!report.error.ok()) {
      if (error->ok()) *error = report.error;
      found.insert("error");
    }
    for (const Hazard& hazard : report.hazards.hazards())
      found.insert(HazardKindName(hazard.kind));
    if (!found.empty() && executions == nullptr) break;
  }
  return found;
}

}  // namespace

absl::StatusOr<MutationReport> RunMutationTesting(
    const std::shared_ptr<const SourceFile>& source,
    const MutationOptions& options, std::ostream& out) {
  absl::StatusOr<std::unique_ptr<Module>> reference = ParseAndLower(
      options.reference != nullptr ? options.reference : source, "");
  if (!reference.ok()) return reference.status();
  absl::StatusOr<std::unique_ptr<Module>> lowered =
      ParseAndLower(source, options.pipeline);
  if (!lowered.ok()) return lowered.status();

  // The launches: the file's directives (or --directive).
  Launches launches;
  absl::StatusOr<std::vector<RunDirective>> directives =
      DirectivesOf(source, options.directive);
  if (!directives.ok()) return directives.status();
  std::string kernel_name;
  for (size_t i = 0; i < directives->size(); ++i) {
    if (options.only.has_value() && static_cast<int>(i) + 1 != *options.only)
      continue;
    RunDirective& directive = (*directives)[i];
    if (absl::Status s = ValidateDirective(directive, **reference); !s.ok())
      return s;
    if (!kernel_name.empty() && directive.kernel != kernel_name) {
      return absl::InvalidArgumentError(
          "--mutate checks one kernel: give directives of one kernel only "
          "(--only or --directive)");
    }
    kernel_name = directive.kernel;
    const Kernel* kernel = (*lowered)->FindKernel(kernel_name);
    if (kernel == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("the pipeline removed kernel @", kernel_name));
    }
    absl::StatusOr<Launch> launch = BuildLaunch(directive, *kernel);
    if (!launch.ok()) return launch.status();
    launches.launches.push_back(std::move(*launch));
    launches.directives.push_back(std::move(directive));
  }
  if (launches.directives.empty()) {
    return absl::InvalidArgumentError(
        "--mutate needs a `// run:` directive (or --directive) for its "
        "launches");
  }
  const Kernel* reference_kernel = (*reference)->FindKernel(kernel_name);
  absl::StatusOr<std::unique_ptr<Program>> reference_program =
      Program::Create(*reference_kernel);
  if (!reference_program.ok()) return reference_program.status();

  // The unmutated lowering must be clean, and tells which ops ran.
  Kernel& kernel = *(*lowered)->FindKernel(kernel_name);
  std::vector<int64_t> executions;
  absl::Status error;
  const std::set<std::string> baseline =
      CheckAll(kernel, **reference_program, launches, options.check,
               &executions, &error);
  if (!baseline.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the unmutated lowering is not clean (", absl::StrJoin(baseline, ", "),
        "); run kir-check on it first",
        error.ok() ? "" : absl::StrCat(":\n", error.message())));
  }
  absl::StatusOr<std::unique_ptr<Program>> lowered_program =
      Program::Create(kernel);
  if (!lowered_program.ok()) return lowered_program.status();
  const std::vector<Op*> sites = Sites(kernel);

  MutationReport report;
  out << "mutation testing of " << source->name << " @" << kernel_name
      << " lowered by '" << options.pipeline << "': " << sites.size()
      << " barriers, fences, waits, arrives and releases; "
      << launches.directives.size() << " launch(es), " << options.check.seeds
      << " schedule(s) each\n";
  for (size_t site = 0; site < sites.size(); ++site) {
    const Op& original = *sites[site];
    MutantResult result;
    result.site = static_cast<int>(site) + 1;
    result.op = FirstLine(original);
    result.location = original.loc().ToString();
    result.origin =
        original.provenance().empty()
            ? "written by the author"
            : absl::StrCat("inserted by ", original.provenance().pass);
    // A fresh lowering with this site deleted.
    absl::StatusOr<std::unique_ptr<Module>> mutant =
        ParseAndLower(source, options.pipeline);
    if (!mutant.ok()) return mutant.status();
    Kernel& mutant_kernel = *(*mutant)->FindKernel(kernel_name);
    Op* victim = Sites(mutant_kernel)[site];
    Region* region = victim->parent_region();
    region->Take(region->IndexOf(victim));
    absl::Status mutant_error;
    const std::set<std::string> found =
        CheckAll(mutant_kernel, **reference_program, launches, options.check,
                 nullptr, &mutant_error);
    if (!found.empty()) {
      result.caught = true;
      result.reason = absl::StrJoin(found, ", ");
    } else {
      const OpRec* record = (*lowered_program)->RecordOf(&original);
      const std::string rule = RequiringRule(original);
      if (record == nullptr || executions[record->id] == 0) {
        result.reason =
            "not reached: the launches never ran it (add a launch that does)";
      } else if (!rule.empty()) {
        result.reason = absl::StrCat("rule: required by hopper-ptx.md ", rule);
      } else if (!original.provenance().empty()) {
        result.reason = absl::StrCat(
            "needless: no rule of the model needed it in these executions, "
            "so ",
            original.provenance().pass,
            " inserted something needless (or the "
            "model lacks a rule)");
      } else {
        result.reason =
            "needless: no rule of the model needed it in these executions "
            "(or the model lacks a rule)";
      }
    }
    out << absl::StrFormat(
        "  [%d] %-40s %s, %s\n      %s%s\n", result.site, result.op,
        result.location, result.origin,
        result.caught ? "caught: " : "NOT CAUGHT: ", result.reason);
    report.mutants.push_back(std::move(result));
  }
  int rule_only = 0;
  for (const MutantResult& mutant : report.mutants) {
    if (!mutant.caught && absl::StartsWith(mutant.reason, "rule:")) ++rule_only;
  }
  const int total = static_cast<int>(report.mutants.size());
  out << absl::StrFormat("kill rate: %d of %d mutants caught (%.1f%%)",
                         report.caught(), total,
                         total > 0 ? 100.0 * report.caught() / total : 100.0);
  if (rule_only > 0) {
    out << absl::StrFormat(
        "; %d more required by a rule the model cannot see fail (%d of %d "
        "accounted for)",
        rule_only, report.caught() + rule_only, total);
  }
  out << "\n";
  return report;
}

}  // namespace kir::check
