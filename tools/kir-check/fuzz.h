// Differential fuzzing of the lowering: random unlowered kernels
// (generator.h), each lowered by the default pipeline and by sampled
// option combinations of the synchronization passes, checked under
// adversarial schedules and compared bit for bit with the unlowered
// kernel's reference run. A failing kernel is written out with the
// pipeline and the report, to become a regression input.
#ifndef KIR_TOOLS_KIR_CHECK_FUZZ_H_
#define KIR_TOOLS_KIR_CHECK_FUZZ_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tools/kir-check/generator.h"

namespace kir::check {

struct FuzzOptions {
  double seconds = 10;
  uint64_t first_seed = 1;
  int schedules = 2;     // adversarial runs per lowering
  int combinations = 3;  // sampled option combinations besides default
  std::string out_dir;   // where failing kernels go ("": not written)
};

// The pipelines a kernel is lowered with: "default" first, then
// `combinations` sampled from every option combination of
// uniform-predicates, insert-async-waits and insert-proxy-fences.
std::vector<std::string> SamplePipelines(uint64_t seed, int combinations);

// Fuzzes for `options.seconds`; prints progress, failures and a summary.
// Returns whether every lowering of every kernel was clean.
bool RunFuzzer(const FuzzOptions& options, std::ostream& out);

// Checks every .kir of `directory` with the pipelines its
// `// fuzz-pipeline: P` lines name (regression inputs). Returns whether
// all are clean.
bool ReplayRegressions(const std::string& directory, int schedules,
                       std::ostream& out);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_FUZZ_H_
