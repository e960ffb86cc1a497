#include "tools/kir-bench/tune_space.h"

#include <algorithm>
#include <utility>

namespace kir::bench {

bool SameConfig(const gen::MatmulConfig& a, const gen::MatmulConfig& b) {
  return a.tile_m == b.tile_m && a.tile_n == b.tile_n && a.tile_k == b.tile_k &&
         a.stages == b.stages &&
         a.consumer_warpgroups == b.consumer_warpgroups &&
         a.pingpong == b.pingpong && a.cluster_m == b.cluster_m &&
         a.cluster_n == b.cluster_n && a.raster_group == b.raster_group &&
         a.split_k == b.split_k && a.split_k_mode == b.split_k_mode &&
         a.split_k_skew == b.split_k_skew && a.epilogue == b.epilogue &&
         a.circular_buffer == b.circular_buffer;
}

std::vector<gen::MatmulConfig> TuneCandidates(
    const gen::MatmulProblem& problem, const gen::MatmulConfig& heuristic,
    const std::function<bool(const gen::MatmulConfig&)>& valid, int limit,
    int sm_count) {
  std::vector<gen::MatmulConfig> candidates;
  // A candidate's skew follows its tile and split (the heuristic's rule),
  // unless it is the skew being varied.
  auto add = [&](gen::MatmulConfig config, bool own_skew = false) {
    if (static_cast<int>(candidates.size()) >= limit) return;
    if (!own_skew) config.split_k_skew = gen::ChooseSplitSkew(problem, config);
    for (const gen::MatmulConfig& seen : candidates)
      if (SameConfig(seen, config)) return;
    if (valid(config)) candidates.push_back(config);
  };
  add(heuristic, /*own_skew=*/true);
  // 64-row tiles have one consumer warpgroup: each computes 64 rows.
  const std::pair<int, int> tiles[] = {
      {128, 256}, {128, 192}, {128, 128}, {64, 256}, {128, 64}};
  // Single changes first: each says what one choice is worth.
  for (const auto& [m, n] : tiles) {
    gen::MatmulConfig config = heuristic;
    config.tile_m = m;
    config.tile_n = n;
    config.consumer_warpgroups = m / 64;
    add(config);
  }
  // With split-K, each tile with as many splits as keep its blocks within
  // one wave (and at least 4 k-steps per split), as many stages as fit: a
  // wider tile in more splits runs the same grid with fewer k-steps per
  // block and more partials to reduce, which pays where the reduction does
  // not take turns (measured with tma-atomic on 512x1024x32768: 128x256 in
  // 8 splits 101% of cuBLASLt, the heuristic's 128x128 in 4 splits 96%).
  if (heuristic.split_k > 1) {
    const int64_t k_tiles =
        (problem.k + heuristic.tile_k - 1) / std::max(1, heuristic.tile_k);
    for (const auto& [m, n] : tiles) {
      const int64_t tile_count =
          ((problem.m + m - 1) / m) * ((problem.n + n - 1) / n);
      const int64_t split =
          std::min<int64_t>(sm_count / tile_count, k_tiles / 4);
      if (split < 2) continue;
      gen::MatmulConfig config = heuristic;
      config.tile_m = m;
      config.tile_n = n;
      config.consumer_warpgroups = m / 64;
      config.split_k = static_cast<int>(std::min<int64_t>(split, 65535));
      config.stages = std::max(1, gen::MaxStages(problem, config));
      add(config);
    }
  }
  // Ping-pong: one warpgroup per whole tile, so tiles whose accumulator it
  // can hold; a persistent grid with an output ring per warpgroup, as many
  // stages as fit beside them.
  for (const auto& [m, n] : {std::pair{128, 128}, {64, 256}}) {
    gen::MatmulConfig config = heuristic;
    config.pingpong = true;
    config.consumer_warpgroups = 2;
    config.tile_m = m;
    config.tile_n = n;
    config.split_k = 1;
    config.epilogue = gen::EpilogueMode::kDedicated;
    config.circular_buffer = "warp_specialized";
    config.stages = std::max(1, gen::MaxStages(problem, config));
    add(config);
  }
  for (int stages : {3, 4, 5, 6, 7}) {
    gen::MatmulConfig config = heuristic;
    config.stages = stages;
    add(config);
  }
  for (gen::EpilogueMode epilogue :
       {gen::EpilogueMode::kReuseMainloop, gen::EpilogueMode::kDedicated}) {
    gen::MatmulConfig config = heuristic;
    config.epilogue = epilogue;
    add(config);
  }
  for (const auto& [cm, cn] : {std::pair{1, 1}, {2, 1}, {1, 2}}) {
    gen::MatmulConfig config = heuristic;
    config.cluster_m = cm;
    config.cluster_n = cn;
    add(config);
  }
  const int64_t tiles_m = (problem.m + heuristic.tile_m - 1) / heuristic.tile_m;
  const int64_t tiles_n = (problem.n + heuristic.tile_n - 1) / heuristic.tile_n;
  if (tiles_m * tiles_n < sm_count) {
    for (int split : {1, 2, 4, 8, 16}) {
      gen::MatmulConfig config = heuristic;
      config.split_k = split;
      add(config);
    }
  }
  // The split skew of a turn mode: none, half and twice the heuristic's.
  if (heuristic.split_k > 1 && heuristic.split_k_skew > 0) {
    for (int skew :
         {0, heuristic.split_k_skew / 2, 2 * heuristic.split_k_skew}) {
      gen::MatmulConfig config = heuristic;
      config.split_k_skew = skew;
      add(config, /*own_skew=*/true);
    }
  }
  // Then tile x stages.
  for (const auto& [m, n] : tiles) {
    for (int stages : {3, 4, 5, 6}) {
      gen::MatmulConfig config = heuristic;
      config.tile_m = m;
      config.tile_n = n;
      config.consumer_warpgroups = m / 64;
      config.stages = stages;
      add(config);
    }
  }
  return candidates;
}

}  // namespace kir::bench
