#include "tools/compile/compile.h"

#include <utility>

#include "analysis/verifier.h"
#include "ir/check.h"
#include "ir/shared_memory.h"
#include "parser/parser.h"

namespace kir {

namespace {

bool HasUnplacedShared(const Module& module) {
  for (const auto& kernel : module.kernels) {
    for (const Op* alloc : SharedAllocations(*kernel)) {
      if (alloc->FindAttr("offset") == nullptr) return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<Compilation> Lower(
    const std::shared_ptr<const SourceFile>& source,
    const CompileOptions& options, std::ostream& log) {
  Compilation compilation;
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(source);
  if (!module.ok()) return module.status();
  compilation.module = *std::move(module);
  if (options.verify) {
    if (absl::Status s = Verify(*compilation.module); !s.ok()) return s;
  }
  PipelineRunOptions run = options.run;
  run.verify_each = run.verify_each && options.verify;
  // A reproducer is rebuilt from the source only when a pass fails, rather
  // than printed before every pass.
  if (run.write_reproducer && !run.rebuild_input) {
    run.rebuild_input = [source] { return ParseModule(source); };
  }
  bool ran = false;
  if (!options.pipeline.empty()) {
    ran = true;
    if (absl::Status s =
            RunPipeline(*compilation.module, options.pipeline, run, log);
        !s.ok()) {
      return s;
    }
  }
  if (options.place_shared && HasUnplacedShared(*compilation.module)) {
    absl::StatusOr<Pipeline> layout = ParsePipeline(kSharedLayoutPass);
    KIR_CHECK(layout.ok()) << layout.status();
    PipelineRunOptions layout_run = run;
    if (run.rebuild_input) {
      // The layout's input is the pipeline's output.
      layout_run.rebuild_input = [run, pipeline = options.pipeline] {
        return RebuildBefore(pipeline, pipeline.size(), run);
      };
    }
    if (absl::Status s =
            RunPipeline(*compilation.module, *layout, layout_run, log);
        !s.ok()) {
      return s;
    }
    compilation.placed_shared = true;
    ran = true;
  }
  // The input was verified, and so was every pass's output.
  compilation.verified = options.verify && (!ran || run.verify_each);
  return compilation;
}

absl::StatusOr<std::string> EmitLowered(const Compilation& compilation,
                                        bool verify, CudaEmitOptions options) {
  KIR_CHECK(compilation.module != nullptr) << "nothing was lowered";
  options.verify = verify && !compilation.verified;
  return EmitCuda(*compilation.module, options);
}

}  // namespace kir
