// kir-bench on several GPUs of one host: one worker process per GPU, each
// pinned to its device with CUDA_VISIBLE_DEVICES before it touches CUDA,
// pulling problems one at a time from a queue held by the parent (dynamic,
// so a long problem does not stall a static share of the list). No CUDA
// here: the parent never initializes it, so its forks can.
#ifndef KIR_TOOLS_KIR_BENCH_GPU_WORKERS_H_
#define KIR_TOOLS_KIR_BENCH_GPU_WORKERS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/kir-bench/report.h"
#include "tools/kir-bench/result.h"

namespace kir::bench {

// --gpus: "all", a count N (the first N devices) or a list "0,2,3" (an
// index may repeat: several workers then share that GPU). `available`
// devices, numbered from 0 in CUDA's order, can be named (a syntax check
// alone: pass INT_MAX). Returns the index of each worker's device (at most
// 1024 workers).
absl::StatusOr<std::vector<int>> ParseGpus(absl::string_view value,
                                           int available);

// What CUDA_VISIBLE_DEVICES must say to pin a worker to device `index` of
// this process's view: the index itself, or the index-th entry of an
// inherited CUDA_VISIBLE_DEVICES (`inherited`, empty when unset).
std::string PinnedDevice(int index, absl::string_view inherited);

struct WorkerDevice {
  std::string visible;  // the worker's CUDA_VISIBLE_DEVICES
  std::string label;    // how rows name it ("0", "2")
};

struct WorkerPoolOptions {
  // A worker that dies is replaced; a device whose workers died this many
  // times in a row without finishing a problem is retired.
  int deaths_before_retiring = 2;
};

// Runs `work(i)` for each i of `order` on the workers, one worker process
// per entry of `devices`, and returns results indexed like `identities`
// (entries not in `order` stay as given). `work` runs in a worker, whose
// CUDA_VISIBLE_DEVICES is already set; it should run the problem in a
// child (RunInChild) so that a hang or a crash costs only that problem. A
// worker that dies costs only the problem it was running: that problem's
// result is `identities[i]` with status "lost", and the worker is replaced
// (or its device retired, its problems going to the others). `on_result`
// (in the parent, may be empty) sees each result as it arrives; each row's
// `gpu` is its worker's label.
std::vector<ProblemResult> RunOnWorkers(
    const std::vector<ProblemResult>& identities,
    const std::vector<size_t>& order, const std::vector<WorkerDevice>& devices,
    const std::function<ProblemResult(size_t)>& work,
    const std::function<void(size_t, const ProblemResult&)>& on_result,
    Progress* progress, const WorkerPoolOptions& options = {});

}  // namespace kir::bench

#endif  // KIR_TOOLS_KIR_BENCH_GPU_WORKERS_H_
