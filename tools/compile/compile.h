// The one compile path of kir-opt, kir-run and kir-check's driver: parse,
// verify once, lower with a pipeline, emit CUDA C++. Each tool adds only
// what it alone does (kir-opt's checks and printing, kir-run's NVRTC build
// and launch), so a kernel lowers and emits the same way whichever tool
// compiles it.
#ifndef KIR_TOOLS_COMPILE_COMPILE_H_
#define KIR_TOOLS_COMPILE_COMPILE_H_

#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "passes/pipeline.h"
#include "printer/cuda_emitter.h"

namespace kir {

// Gives every shared allocation still without an offset one, without
// reuse: what a kernel that no pass has planned needs before it can be
// emitted (the emitter places nothing itself).
inline constexpr char kSharedLayoutPass[] = "plan-shared-memory{reuse=never}";

struct CompileOptions {
  // The passes to run; empty runs none.
  Pipeline pipeline;
  // Verify the input. False runs no verifier at all (the passes' either):
  // to see what a kernel the verifier rejects does.
  bool verify = true;
  // How the pipeline runs: verifying after each pass (verify_each, where
  // `verify` holds), printing, timing, statistics, reproducers.
  PipelineRunOptions run;
  // Run kSharedLayoutPass after the pipeline when an allocation is left
  // without an offset.
  bool place_shared = false;
};

struct Compilation {
  std::unique_ptr<Module> module;
  // The verifier has accepted the module as it now stands.
  bool verified = false;
  // kSharedLayoutPass ran after the pipeline.
  bool placed_shared = false;
};

// Parses `source`, verifies it, runs the pipeline (the passes' IR dumps
// and tables go to `log`), then the shared layout if asked for and needed.
// Errors are located diagnostics.
absl::StatusOr<Compilation> Lower(
    const std::shared_ptr<const SourceFile>& source,
    const CompileOptions& options, std::ostream& log);

// The CUDA C++ translation unit of a lowered module. The module is
// verified here only if the compile path did not already verify it as it
// stands and `verify` asks for it.
absl::StatusOr<std::string> EmitLowered(const Compilation& compilation,
                                        bool verify = true,
                                        CudaEmitOptions options = {});

}  // namespace kir

#endif  // KIR_TOOLS_COMPILE_COMPILE_H_
