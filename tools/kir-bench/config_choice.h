// Which configuration each problem of kir-bench's list runs with: the
// CSV's config column, else the tuning cache's winner, else kir-gen's
// heuristic; each checked by kir-gen before anything runs.
#ifndef KIR_TOOLS_KIR_BENCH_CONFIG_CHOICE_H_
#define KIR_TOOLS_KIR_BENCH_CONFIG_CHOICE_H_

#include <optional>
#include <string>
#include <vector>

#include "tools/kir-bench/problems.h"
#include "tools/kir-bench/tune_cache.h"
#include "tools/kir-gen/matmul.h"

namespace kir::bench {

// The configuration a problem runs with, and where it came from.
struct ChosenConfig {
  gen::MatmulConfig config;
  std::string source;  // "csv", "cache" or "heuristic"
};

// Chooses each problem's configuration (`cache` may be null) and checks it
// with gen::ValidateMatmul; a problem whose configuration cannot be parsed
// or generated is dropped from `list` with an error located at its config
// field, its cache entry or its line. The result is parallel to what stays
// in list.problems. With `split_k_mode`, the heuristic's configurations
// that split K do so in that mode (gen::ChooseConfig's choice for it); the
// CSV's and the cache's are as they say.
std::vector<ChosenConfig> ChooseConfigs(
    ProblemList& list, const TuningCache* cache,
    std::optional<gen::SplitKMode> split_k_mode = std::nullopt);

// The pipelines a configuration is lowered with: each asked for, but
// `default` as the generated kernel's own directive lowers it (with the
// split-K mode the configuration names; serialize-split-k's own default
// would lower a tma-atomic configuration as serial).
std::vector<std::string> LoweringPipelines(
    const std::vector<std::string>& asked, const gen::MatmulConfig& config);

}  // namespace kir::bench

#endif  // KIR_TOOLS_KIR_BENCH_CONFIG_CHOICE_H_
