// The configurations `kir-bench --tune` tries for one problem: a bounded
// set around the heuristic's choice.
#ifndef KIR_TOOLS_KIR_BENCH_TUNE_SPACE_H_
#define KIR_TOOLS_KIR_BENCH_TUNE_SPACE_H_

#include <functional>
#include <vector>

#include "tools/kir-gen/matmul.h"

namespace kir::bench {

// The heuristic's configuration first, then each single change to it (tile
// shape), where K is split each tile with the split that fills one wave,
// ping-pong with 128x128 and 64x256 tiles (as many stages as fit),
// then single changes of stages, epilogue, cluster, split-K where the
// output tiles cannot fill the GPU, then tile x stages combinations; only
// those `valid` accepts, without repeats, at most `limit` of them.
std::vector<gen::MatmulConfig> TuneCandidates(
    const gen::MatmulProblem& problem, const gen::MatmulConfig& heuristic,
    const std::function<bool(const gen::MatmulConfig&)>& valid, int limit,
    int sm_count = 132);

bool SameConfig(const gen::MatmulConfig& a, const gen::MatmulConfig& b);

}  // namespace kir::bench

#endif  // KIR_TOOLS_KIR_BENCH_TUNE_SPACE_H_
