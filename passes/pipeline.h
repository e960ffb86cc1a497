// Pass pipelines: the default lowering order, parsing `a,b{opt=v},c`, and
// running passes over a module with verification, timing, statistics, IR
// dumps and a reproducer file on failure.
#ifndef KIR_PASSES_PIPELINE_H_
#define KIR_PASSES_PIPELINE_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/ir.h"
#include "passes/pass.h"
#include "printer/kir_printer.h"

namespace kir {

// One pass invocation with its options.
struct PipelineEntry {
  const PassInfo* pass = nullptr;
  PassOptions options;
  // `name` or `name{a=1,b=x}`, as accepted by ParsePipeline.
  std::string ToString() const;
};
using Pipeline = std::vector<PipelineEntry>;

// The default lowering order (pipeline.cc), for `--pipeline=default`.
Pipeline DefaultPipeline();

// Parses `entry (',' entry)*` where `entry ::= pass-name ('{' name '=' value
// (',' name '=' value)* '}')?` or `default`. Checks pass names, option names
// and option value types against `registry` (passes.def unless a test gives
// its own); errors show the pipeline with a caret and list what is accepted.
absl::StatusOr<Pipeline> ParsePipeline(
    absl::string_view text,
    const std::vector<PassInfo>& registry = RegisteredPasses());

// What went wrong in a pipeline string, for tools that show it inside
// their own diagnostics (kir-run points into the directive).
struct PipelineError {
  size_t offset = 0;    // in the pipeline text
  std::string message;  // "unknown pass 'x'"
  std::string hint;     // "known passes: ...", or ""
};
// ParsePipeline, also filling `*error` when it fails.
absl::StatusOr<Pipeline> ParsePipeline(absl::string_view text,
                                       PipelineError* error);
std::string PipelineToString(const Pipeline& pipeline);

struct PipelineRunOptions {
  bool verify_each = true;  // run the verifier after every pass
  // After every pass, rebuild each analysis the pass left cached and fail
  // when one answers differently (a wrong claim to preserve it, or a wrong
  // incremental update).
  bool verify_analyses = false;
  bool time_passes = false;  // print a timing table at the end
  bool statistics = false;   // print each pass's counters at the end
  bool print_ir_after_all = false;
  std::string print_ir_after;  // a pass name: print the IR after it
  bool print_changed = false;  // a diff per kernel a pass changed
  PrintOptions print;          // for the IR printed by the above
  // On a pass or verifier failure, write the IR before the failing pass and
  // the pipeline to re-run to `reproducer_path`, or to a new file in $TMPDIR
  // (else /tmp) when it is empty.
  bool write_reproducer = true;
  std::string reproducer_path;
  // Builds the module again as the pipeline got it (a parse of the same
  // source). With it, the reproducer costs nothing until a pass fails: its
  // input is rebuilt then, by running the passes before it again on this
  // module (passes are deterministic). Without it, the IR is printed
  // before every pass in case that pass fails, which costs a print of the
  // module per pass.
  std::function<absl::StatusOr<std::unique_ptr<Module>>()> rebuild_input;
};

// Runs each pass over each kernel of `module` in order. IR dumps, diffs and
// the timing and statistics tables go to `log`. On failure the status holds
// the pass's or verifier's diagnostics, followed by a line naming the pass
// and kernel, and the reproducer's path.
absl::Status RunPipeline(Module& module, const Pipeline& pipeline,
                         const PipelineRunOptions& options, std::ostream& log);

// The module options.rebuild_input() builds, with the first `end` passes of
// `pipeline` run on it again (checked as `options` asks, printing nothing):
// the input of pass `end`. Needs rebuild_input.
absl::StatusOr<std::unique_ptr<Module>> RebuildBefore(
    const Pipeline& pipeline, size_t end, const PipelineRunOptions& options);

}  // namespace kir

#endif  // KIR_PASSES_PIPELINE_H_
