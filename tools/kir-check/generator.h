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

// A kernel `@fuzz` with its `// run:` directive, from `seed`.
std::string GenerateKernel(uint64_t seed);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_GENERATOR_H_
