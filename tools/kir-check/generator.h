// Random valid unlowered kernels for differential fuzzing: shared buffers
// filled from global memory by threads or by TMA loads (with the author's
// mbarrier protocol), computed on with cross-thread reads and in-place
// updates, written back by threads or TMA stores; loops, thread-dependent
// ifs, roles, wgmma and stmatrix. Each kernel carries a run directive, and
// its outputs are a deterministic function of its inputs under the
// unlowered reading, so any lowering must reproduce them bit for bit.
#ifndef KIR_TOOLS_KIR_CHECK_GENERATOR_H_
#define KIR_TOOLS_KIR_CHECK_GENERATOR_H_

#include <cstdint>
#include <string>

namespace kir::check {

struct GeneratorOptions {
  // Also generate the shapes the passes are known to lower wrongly today:
  // a TMA store or load of a buffer last accessed in a loop whose body
  // holds a barrier (the fence hoisted past it, issue 10), and a loop of
  // TMA loads whose data no other thread reads in the iteration (nothing
  // orders the waits of one phase before the next arrive). Off in CI, so
  // that a failure there is a new one.
  bool known_bug_classes = false;
};

// A kernel `@fuzz` with its `// run:` directive, from `seed`.
std::string GenerateKernel(uint64_t seed, const GeneratorOptions& options);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_GENERATOR_H_
