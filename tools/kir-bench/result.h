// What kir-bench measured for one problem, and its text form (a worker
// process hands it to the parent as text).
#ifndef KIR_TOOLS_KIR_BENCH_RESULT_H_
#define KIR_TOOLS_KIR_BENCH_RESULT_H_

#include <cmath>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kir::bench {

// One kernel variant of a problem: a pipeline (--compare) or a
// configuration (--tune).
struct VariantResult {
  std::string pipeline;
  std::string config;
  bool checked = false;  // its output was compared with the reference
  bool passed = false;
  double max_abs_error = NAN, max_rel_error = NAN;
  double median_ms = NAN, min_ms = NAN, max_ms = NAN;
  // One median per timed repeat, in order; repeat r of every variant ran
  // next to repeat r of the others.
  std::vector<double> repeat_ms;
  int registers = 0;
  int64_t spill_bytes = -1;  // stores + loads; -1: ptxas did not say
  int64_t shared_bytes = 0;
};

struct CandidateResult {  // one configuration --tune tried
  std::string config;
  std::string status;
  double median_ms = NAN, cublas_ms = NAN;
};

struct ProblemResult {
  std::string name;
  std::string key;
  int line = 0;  // in the problem CSV
  double flops = 0;
  std::string config;         // the configuration run
  std::string config_source;  // "heuristic", "tuned" or "cache"
  // passed | mismatch | error | hang | crash | skipped | lost (the worker
  // process running it died: --gpus) | pending (not run yet, in the report
  // an interrupted run leaves)
  std::string status;
  std::string message;  // why, for anything but passed
  std::string device;
  // The GPU's index as --gpus names it (CUDA_VISIBLE_DEVICES when set):
  // which of the host's GPUs ran the kernel and its cuBLASLt baseline.
  std::string gpu;
  std::string baseline_name;  // "cublasLt" normally
  double baseline_ms = NAN;
  std::vector<double> baseline_repeat_ms;
  std::vector<VariantResult> variants;
  // --tune: the heuristic's configuration and time, and every candidate.
  std::string heuristic_config;
  double heuristic_ms = NAN, heuristic_cublas_ms = NAN;
  std::vector<CandidateResult> candidates;
  double seconds = 0;  // wall time of the problem
  std::string log;     // the runner's report

  bool passed() const { return status == "passed"; }
};

// Derived figures (NaN when unknown).
double Tflops(const ProblemResult& problem, const VariantResult& variant);
// 100 * cuBLASLt time / kernel time, both from the same process.
double PercentOfCublas(const ProblemResult& problem,
                       const VariantResult& variant);
// Median over repeats of time(variant) / time(first variant), each repeat's
// pair measured next to each other; NaN without repeats.
double RatioToFirst(const ProblemResult& problem, size_t variant);

std::string SerializeResult(const ProblemResult& result);
absl::StatusOr<ProblemResult> DeserializeResult(absl::string_view text);

}  // namespace kir::bench

#endif  // KIR_TOOLS_KIR_BENCH_RESULT_H_
