#include "tools/kir-bench/bench_problem.h"

#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "tools/kir-bench/config_choice.h"
#include "tools/kir-bench/problem_loop.h"
#include "tools/kir-run/device.h"
#include "tools/kir-run/runner.h"

namespace kir::bench {

std::string KernelFileStem(const BenchProblem& problem) {
  return absl::StrReplaceAll(ProblemKey(problem.matmul),
                             {{" ", "_"}, {"=", ""}, {"/", "_"}});
}

absl::StatusOr<std::string> DescribeDevice() {
  absl::StatusOr<DeviceInfo> device = ProbeDevice();
  if (!device.ok()) return device.status();
  return absl::StrCat(device->name, " (sm_", device->major, device->minor, ", ",
                      device->sm_count, " SMs)");
}

absl::StatusOr<std::vector<std::string>> DescribeDevices() {
  int count = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&count);
      error != cudaSuccess) {
    return absl::UnavailableError(absl::StrCat(
        "no usable CUDA driver or device: ", cudaGetErrorString(error)));
  }
  if (count == 0) return absl::UnavailableError("no CUDA device");
  std::vector<std::string> devices;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp properties;
    KIR_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&properties, d));
    devices.push_back(absl::StrCat(properties.name, " (sm_", properties.major,
                                   properties.minor, ", ",
                                   properties.multiProcessorCount, " SMs)"));
  }
  return devices;
}

ProblemResult RunBenchProblem(const BenchProblem& problem,
                              const gen::MatmulConfig& config,
                              const std::string& config_source,
                              const BenchOptions& options) {
  ProblemResult result = IdentityOf(problem);
  result.config = gen::DescribeConfig(config);
  result.config_source = config_source;
  absl::StatusOr<std::string> device = DescribeDevice();
  if (!device.ok()) {
    result.status = "skipped";
    result.message = std::string(device.status().message());
    return result;
  }
  result.device = *device;

  absl::StatusOr<std::string> text =
      gen::GenerateMatmul(problem.matmul, config);
  if (!text.ok()) {
    result.status = "error";
    result.message = absl::StrCat("kir-gen: ", text.status().message());
    return result;
  }
  auto source = std::make_shared<SourceFile>();
  source->name = absl::StrCat(
      options.dump_dir.empty() ? "" : absl::StrCat(options.dump_dir, "/"),
      KernelFileStem(problem), ".kir");
  source->text = *std::move(text);
  if (!options.dump_dir.empty()) {
    std::ofstream out(source->name, std::ios::binary);
    out << source->text;
    if (!out) {
      result.status = "error";
      result.message = absl::StrCat("cannot write ", source->name);
      return result;
    }
  }

  RunOptions run;
  run.bench = true;
  run.warmup = options.warmup;
  run.iterations = options.iterations;
  run.repeats = options.repeats;
  run.dump_dir = options.dump_dir;
  const std::vector<std::string> pipelines =
      LoweringPipelines(options.pipelines, config);
  if (pipelines.size() > 1) {
    run.compare_pipelines = pipelines;
  } else if (!pipelines.empty()) {
    run.pipeline = pipelines.front();
  }
  std::ostringstream log;
  std::string json;
  DirectiveOutcome outcome;
  RunDirectiveInProcess(source, 0, run, log, json, &outcome);
  result.log = log.str();

  result.status = outcome.status;
  result.message = outcome.error;
  for (size_t i = 0; i < outcome.variants.size(); ++i) {
    const VariantOutcome& v = outcome.variants[i];
    VariantResult& x = result.variants.emplace_back();
    // Reported under the name it was asked for.
    x.pipeline = i < options.pipelines.size() && v.pipeline == pipelines[i]
                     ? options.pipelines[i]
                     : v.pipeline;
    x.config = result.config;
    x.checked = v.checked;
    x.passed = v.passed;
    if (v.checked) {
      x.max_abs_error = v.max_abs_error;
      x.max_rel_error = v.max_rel_error;
    }
    if (v.time) {
      x.median_ms = v.time->median;
      x.min_ms = v.time->min;
      x.max_ms = v.time->max;
    }
    x.repeat_ms = v.repeat_medians;
    x.registers = v.registers;
    if (v.spill_store_bytes && v.spill_load_bytes)
      x.spill_bytes = *v.spill_store_bytes + *v.spill_load_bytes;
    x.shared_bytes = v.shared_bytes;
  }
  if (outcome.status == "mismatch") {
    result.message = "the output differs from the reference";
    for (const VariantOutcome& v : outcome.variants) {
      if (v.checked && !v.passed) {
        absl::StrAppend(&result.message,
                        absl::StrFormat(" (%s: max abs err %.3g)", v.pipeline,
                                        v.max_abs_error));
      }
    }
  }
  if (outcome.baseline_name == "cublasLt" && outcome.baseline) {
    result.baseline_name = outcome.baseline_name;
    result.baseline_ms = outcome.baseline->median;
    result.baseline_repeat_ms = outcome.baseline_repeat_medians;
  } else if (outcome.status == "passed") {
    // Timed against something else (a copy): no % of cuBLAS to report. The
    // runner's report says why cuBLASLt could not run.
    result.status = "error";
    result.message = "no cuBLASLt baseline";
    const std::string why = "(no cuBLASLt baseline: ";
    const size_t at = result.log.find(why);
    if (at != std::string::npos) {
      const size_t from = at + why.size();
      const size_t end = result.log.find(")\n", from);
      absl::StrAppend(
          &result.message, ": ",
          result.log.substr(
              from, end == std::string::npos ? std::string::npos : end - from));
    }
  }
  return result;
}

}  // namespace kir::bench
