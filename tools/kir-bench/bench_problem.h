// The work of one kir-bench problem, on the GPU of this process: generate
// the kernel, lower it with each pipeline, compile, check it against the
// reference and time it against cuBLASLt in the same process. Call it in a
// child process (RunInChild): a hang or a crash then costs only this
// problem; a worker process per GPU can call it the same way.
#ifndef KIR_TOOLS_KIR_BENCH_BENCH_PROBLEM_H_
#define KIR_TOOLS_KIR_BENCH_BENCH_PROBLEM_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/kir-bench/problems.h"
#include "tools/kir-bench/result.h"
#include "tools/kir-gen/matmul.h"

namespace kir::bench {

struct BenchOptions {
  // One pipeline, or several timed alternately (--compare).
  std::vector<std::string> pipelines = {"default"};
  int warmup = 10;
  int iterations = 50;  // timed launches per repeat
  int repeats = 5;
  // Non-empty: the generated kernel (<dir>/<problem>.kir, which kir-run
  // runs as it is) and the lowered .kir, .cu, .ptx and .cubin go there.
  std::string dump_dir;
};

ProblemResult RunBenchProblem(const BenchProblem& problem,
                              const gen::MatmulConfig& config,
                              const std::string& config_source,
                              const BenchOptions& options);

// The GPU of this process ("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"), or
// kUnavailable. Initializes CUDA: call it in a child process.
absl::StatusOr<std::string> DescribeDevice();

// Every GPU CUDA sees from this process, in CUDA's order (what
// CUDA_VISIBLE_DEVICES indices name), each described as DescribeDevice
// does; kUnavailable without a driver or a device. Initializes CUDA: call
// it in a child process.
absl::StatusOr<std::vector<std::string>> DescribeDevices();

// A file name for a problem's generated kernel: its key without spaces.
std::string KernelFileStem(const BenchProblem& problem);

}  // namespace kir::bench

#endif  // KIR_TOOLS_KIR_BENCH_BENCH_PROBLEM_H_
