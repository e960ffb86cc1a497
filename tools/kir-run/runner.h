// Runs one `// run:` directive: lowers the kernel with a pipeline, emits and
// compiles it, binds sizes and inputs, launches it, checks its outputs
// against references, and optionally times it.
//
// The CPU-only parts (PrepareKernel here, ValidateDirective in binding.h)
// work without a GPU, so a directive's mistakes are reported as located
// errors wherever kir-run runs, never turned into a skip.
#ifndef KIR_TOOLS_KIR_RUN_RUNNER_H_
#define KIR_TOOLS_KIR_RUN_RUNNER_H_

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "ir/location.h"
#include "printer/cuda_emitter.h"
#include "printer/nvrtc_compiler.h"
#include "tools/compile/compile.h"
#include "tools/kir-run/binding.h"
#include "tools/kir-run/device.h"
#include "tools/kir-run/directive.h"
#include "tools/kir-run/json.h"
#include "tools/kir-run/ptxas_report.h"

namespace kir {

// A kernel lowered by a pipeline and compiled to an sm_90a cubin.
struct PreparedKernel {
  std::string pipeline;  // as given; "" runs no pass
  // The pipeline left shared allocations without offsets, so
  // kSharedLayoutPass ran after it (the emitter places nothing itself).
  bool planned_shared = false;
  std::unique_ptr<Module> module;
  const Kernel* kernel = nullptr;
  CudaKernelAbi abi;
  std::string cuda;
  std::string cubin;
  NvrtcCompileInfo compile;
  // From ptxas -v: the spills, or why the report has none.
  SpillReport spills;
};

// Lowers `source` through the compile path kir-opt shares
// (tools/compile/compile.h: parse, verify, `pipeline`, then
// kSharedLayoutPass if a shared allocation has no offset, which a
// hand-written kernel or a pipeline without the planner leaves), emits
// CUDA and compiles it; `verify` false verifies nothing. `kernel_name` empty:
// the whole module is compiled and `kernel` is the first one. `dump_dir`
// non-empty: writes <stem>[.<tag>].{kir,cu,cubin} there.
absl::StatusOr<PreparedKernel> PrepareKernel(
    const std::shared_ptr<const SourceFile>& source,
    const std::string& pipeline, const std::string& kernel_name,
    const std::string& dump_dir, const std::string& dump_tag,
    bool verify = true);

struct RunOptions {
  // --directive: run this directive (the text after `run:`) instead of the
  // file's, e.g. to try another size without editing the file.
  std::string directive;
  // Overrides every directive's `pipeline=`; unset: the directive's, else
  // no pass.
  std::optional<std::string> pipeline;
  // --compare-pipelines P1 P2: both variants, checked, then timed.
  std::vector<std::string> compare_pipelines;
  bool bench = false;
  int warmup = 10;
  int iterations = 50;  // timed launches per measurement
  int repeats = 5;      // measurements per variant, for the spread
  // Launch and check this many times (fresh inputs each time); every run
  // must pass and leave bit-identical outputs.
  int repetitions = 1;
  std::string dump_dir;
  // --occupancy: print each variant's launch shared memory and blocks per
  // SM, from cudaOccupancyMaxActiveBlocksPerMultiprocessor and from the
  // model plan-shared-memory reports (ir/shared_memory.h); a difference
  // fails the directive.
  bool occupancy = false;
  // false (--no-verify): run kernels the verifier rejects, such as a
  // single-issue op left under a whole-warp guard, to show what happens on
  // the GPU without the pass that would fix it.
  bool verify = true;
};

// Exit codes of kir-run (and of one directive's child process).
inline constexpr int kExitPassed = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitHang = 3;
inline constexpr int kExitNoGpu = 77;

// What one directive's run measured, as values (the JSON says the same),
// for tools that drive the runner themselves (kir-bench).
struct VariantOutcome {
  std::string pipeline;
  bool checked = false;  // it ran and its checks were evaluated
  bool passed = false;   // every check passed
  // The largest errors over its checks.
  double max_abs_error = 0, max_rel_error = 0;
  std::optional<SampleStats> time;  // ms, when timed
  // The median of each timed repeat (ms), in the order they ran; repeat r of
  // every variant ran next to repeat r of the others.
  std::vector<double> repeat_medians;
  int registers = 0;
  std::optional<int64_t> spill_store_bytes, spill_load_bytes;
  int64_t shared_bytes = 0;
};

struct DirectiveOutcome {
  std::string status;  // "passed", "mismatch", "error" or "skipped"
  std::string error;   // for "error" and "skipped"
  std::vector<VariantOutcome> variants;
  std::string baseline_name;            // "cublasLt", or "copy N B"
  std::optional<SampleStats> baseline;  // ms
  std::vector<double> baseline_repeat_medians;
};

// Runs directive `index` (0-based) of `source` in this process; prints a
// report to `out`, sets `json` to one JSON object describing it (and
// `outcome`, when given, to the same as values), and returns an exit code
// (kExitPassed, kExitFailed or kExitNoGpu).
int RunDirectiveInProcess(const std::shared_ptr<const SourceFile>& source,
                          int index, const RunOptions& options,
                          std::ostream& out, std::string& json,
                          DirectiveOutcome* outcome = nullptr);

// Times 1000 host-side launches of directive 1's kernel (bound as the
// directive says) through kir-run's launch path and through a direct
// cudaLaunchKernelExC with the same configuration and arguments, alternating
// in blocks; prints both medians. Fails (kExitFailed) if kir-run's median is
// more than 5 us above the direct one.
int MeasureLaunchOverhead(const std::shared_ptr<const SourceFile>& source,
                          std::ostream& out, std::string& json);

// The directives to run: the file's, or RunOptions::directive (located in a
// source of its own, "<--directive>").
absl::StatusOr<std::vector<RunDirective>> DirectivesToRun(
    const std::shared_ptr<const SourceFile>& source, const RunOptions& options);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_RUN_RUNNER_H_
