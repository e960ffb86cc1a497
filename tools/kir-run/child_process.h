// Waiting for a child process under a watchdog (kir-run's per-directive
// children, kir-bench's per-problem ones). No CUDA.
#ifndef KIR_TOOLS_KIR_RUN_CHILD_PROCESS_H_
#define KIR_TOOLS_KIR_RUN_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>

namespace kir {

struct ChildWait {
  int status = 0;     // as waitpid sets it; meaningless when hung
  bool hung = false;  // still running at the deadline, and killed
  double seconds = 0;
};

// Waits for `pid`, which leads its own process group; once
// `timeout_seconds` have passed since `start`, kills the whole group.
ChildWait WaitForChild(pid_t pid, double timeout_seconds,
                       std::chrono::steady_clock::time_point start);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_RUN_CHILD_PROCESS_H_
