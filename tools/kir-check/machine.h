// The kir-check interpreter: executes a kernel on the CPU for a small
// launch, every thread of every block (and cluster), with global, shared
// and register memory, tensor maps and TMA, bulk groups, mbarriers,
// semaphores and atomics, the warp and warpgroup collectives, and wgmma.
//
// Threads are cooperating contexts under a scheduler:
//   reference    the threads of a block (of a role, inside one) advance
//                statement by statement in lockstep; asynchronous
//                operations complete when issued; one view of memory. This
//                is the unlowered reading of ir/language.md ("Two
//                readings"), and one legal execution of a lowered kernel.
//   adversarial  threads and warps interleave in a seeded random order;
//                each asynchronous operation reads its sources and writes
//                its results at moments the scheduler picks between its
//                issue and the wait that completes it; the async proxy has
//                its own view of memory, which sees a generic write only
//                once a proxy fence on a happens-before path published it.
//
// With hazard tracking (always on under the adversarial schedule) every
// access is checked against vector clocks (FastTrack-style) and the proxy,
// mbarrier, barrier, collective and issue rules of the PTX ISA; see
// report.h for the classes. A state where nobody can proceed is a deadlock
// hazard naming each waiting op.
#ifndef KIR_TOOLS_KIR_CHECK_MACHINE_H_
#define KIR_TOOLS_KIR_CHECK_MACHINE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "ir/types.h"
#include "tools/kir-check/program.h"
#include "tools/kir-check/report.h"

namespace kir::check {

// A tensor in global memory: logical shape and element strides (outermost
// first) over a storage span of bytes.
struct TensorData {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::vector<uint8_t> bytes;

  int64_t elements() const;
  // The storage element offset of a logical index, or -1 out of bounds.
  int64_t Offset(absl::Span<const int64_t> index) const;
  // Storage elements the span covers.
  int64_t StorageElements() const {
    return static_cast<int64_t>(bytes.size()) / DTypeBytes(dtype);
  }
};

// Row-major strides for `shape`, or the layout a tensor parameter asks for.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape);
// A zero-filled tensor of that layout; its span covers every element.
TensorData MakeTensor(DType dtype, const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& strides);

// The values a launch binds, by name (without '%').
struct Launch {
  std::map<std::string, int64_t> sizes;
  std::map<std::string, double> scalars;
  std::map<std::string, TensorData> tensors;
  // What each workspace holds at the start, by name (a previous launch's
  // RunOutcome::workspaces); a workspace not here starts zeroed.
  std::map<std::string, TensorData> workspaces;
};

enum class Schedule { kReference, kAdversarial };

// When a generic-proxy write counts as visible to the async proxy:
//   per-thread  a fence.proxy.async by the writing thread, after the write,
//               that happens before the async access (what PTX states);
//   path        a fence.proxy.async anywhere on a happens-before path from
//               the write to the async access (what placement=issuer
//               relies on).
enum class FenceModel { kPerThread, kPath };

struct MachineOptions {
  Schedule schedule = Schedule::kReference;
  // Vector clocks and hazard checks; always on under kAdversarial.
  bool track_hazards = false;
  FenceModel fence_model = FenceModel::kPerThread;
  uint64_t seed = 1;
  // Thread-level op executions before the run is stopped as runaway.
  int64_t max_steps = int64_t{4} << 30;
};

struct RunStats {
  int64_t ops = 0;        // thread-level op executions
  int64_t async_ops = 0;  // TMA, bulk, cp.async and wgmma operations
  int64_t threads = 0;
  int64_t blocks = 0;
  double seconds = 0;
  // The largest number of bytes the interpreter's own state held (threads,
  // memories, clocks and shadow cells).
  int64_t peak_state_bytes = 0;
};

struct RunOutcome {
  // A located error that stopped the run: an out-of-bounds access, an
  // operation with an unsettled result, a runaway kernel.
  absl::Status error;
  // The run stopped at a hazard after which execution has no meaning (a
  // partial `.aligned` op); its outputs are incomplete.
  bool stopped = false;
  HazardLog hazards;
  // Final contents of every tensor parameter, by name.
  std::map<std::string, TensorData> tensors;
  // Final contents of every workspace, by name: the next launch's start
  // when workspaces are zeroed once.
  std::map<std::string, TensorData> workspaces;
  RunStats stats;
  // Executions of each op (Program::ops() order), for mutation testing.
  std::vector<int64_t> op_executions;
};

// Runs `program` once. `launch` must bind every size, scalar and tensor
// parameter (a missing one is an error in `error`).
RunOutcome RunKernel(const Program& program, const Launch& launch,
                     const MachineOptions& options);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_MACHINE_H_
