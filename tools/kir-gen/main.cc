// kir-gen: writes a Hopper GEMM as a plain (unlowered) .kir kernel with
// `// run:` directives that check it against cuBLASLt.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tools/kir-bench/tune_cache.h"
#include "tools/kir-gen/matmul.h"

namespace kir::gen {
namespace {

constexpr char kUsage[] = R"(usage: kir-gen matmul --m M --n N --k K [options]
Writes C = A @ B^T (M x N x K) as a plain .kir kernel for the H100, with
`// run:` directives that check it against cuBLASLt. The heuristic chooses
every setting that is not given.

Problem:
  --m M --n N --k K        sizes (at least 1)
  --a-major k|m            A's contiguous dimension: k (A is MxK, rows of K)
                           or m (A is stored KxM, rows of M); default k
  --b-major k|n            B's: k (B is NxK) or n (B is stored KxN); default k
  --dtype bf16|f16         A and B (default bf16)
  --out-dtype bf16|f16|f32 C (default: --dtype)
Configuration:
  --config TEXT            a whole configuration as kir-gen --explain and
                           the tuning cache print it ("128x256x64 s4 ws ...")
  --tuned FILE             the configuration `kir-bench --tune` recorded in
                           its tuning cache FILE (kir-bench-tune.txt by
                           default there) for this exact problem (sizes,
                           majors, dtypes), as --config; without an entry,
                           the heuristic's (a note says so)
  --tile MxNxK             128x256x64, 128x128x64, 64x256x64, ... (K is 64)
  --stages N               circular-buffer stages (default: as many as fit)
  --pingpong               ping-pong: two consumer warpgroups take whole
                           tiles in turn (default tile 128xmin(N-tile,128),
                           persistent grid, no split-K); the heuristic
                           chooses cooperative
  --cluster MxN            1x1, or 2x1 / 1x2: two CTAs compute vertically /
                           horizontally adjacent tiles and TMA-multicast the
                           operand they share (B / A)
  --split-k N              split K over N blocks per tile (grid z)
  --split-k-mode MODE      serial (default), tma-serial, tma-atomic,
                           cluster or gather: serialize-split-k's mode, in
                           the directive's pipeline (cluster: at most 8
                           splits, a 1x1 --cluster); the heuristic splits
                           K for it (tma-atomic, without turns, into more
                           splits where they fill the GPU)
  --split-k-skew N         split z runs N k-steps more than split z-1, so
                           the turns of serial and tma-serial hide behind
                           the later splits' mainloops (0: even splits)
  --epilogue MODE          reuse (one tile per block, the output tile over
                           the stages), dedicated (persistent grid, its own
                           output buffer) or auto
  --circular-buffer MODE   warp_specialized (default) or pipelined
  --raster-group N         tile rows per rasterization group (default 8)
Output:
  --explain                print each choice and why (stderr)
  -o FILE                  write the kernel to FILE (default stdout)
)";

int Fail(absl::string_view message) {
  std::cerr << "kir-gen: error: " << message << "\n";
  return 1;
}

absl::Status ParseTwo(absl::string_view flag, absl::string_view text, int count,
                      std::vector<int>* out) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, 'x');
  out->clear();
  for (absl::string_view part : parts) {
    int value = 0;
    if (!absl::SimpleAtoi(part, &value)) break;
    out->push_back(value);
  }
  if (static_cast<int>(out->size()) != count ||
      static_cast<int>(parts.size()) != count) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " '", text, "': expected ",
                     count == 3 ? "MxNxK" : "MxN", " (integers)"));
  }
  return absl::OkStatus();
}

int Run(int argc, char** argv) {
  if (argc >= 2 && (absl::string_view(argv[1]) == "--help" ||
                    absl::string_view(argv[1]) == "-h")) {
    std::cout << kUsage;
    return 0;
  }
  if (argc < 2 || absl::string_view(argv[1]) != "matmul") {
    std::cerr << kUsage;
    return Fail(argc < 2 ? "no generator given (expected 'matmul')"
                         : absl::StrCat("unknown generator '", argv[1],
                                        "' (expected 'matmul')"));
  }
  // Options as given, each at most once.
  static const std::map<std::string, bool> kTakesValue = {
      {"--m", true},
      {"--n", true},
      {"--k", true},
      {"--a-major", true},
      {"--b-major", true},
      {"--dtype", true},
      {"--out-dtype", true},
      {"--config", true},
      {"--tuned", true},
      {"--tile", true},
      {"--stages", true},
      {"--pingpong", false},
      {"--cluster", true},
      {"--split-k", true},
      {"--split-k-mode", true},
      {"--split-k-skew", true},
      {"--epilogue", true},
      {"--circular-buffer", true},
      {"--raster-group", true},
      {"--explain", false},
      {"-o", true},
      {"--help", false}};
  std::map<std::string, std::string> options;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> value;
    if (size_t eq = arg.find('=');
        absl::StartsWith(arg, "--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto known = kTakesValue.find(arg);
    if (known == kTakesValue.end()) {
      return Fail(absl::StrCat("unknown option '", arg, "' (see --help)"));
    }
    if (known->second && !value) {
      if (i + 1 >= argc) return Fail(absl::StrCat(arg, " needs a value"));
      value = argv[++i];
    }
    if (!known->second && value) {
      return Fail(absl::StrCat(arg, " takes no value"));
    }
    if (!options.emplace(arg, value.value_or("")).second) {
      return Fail(absl::StrCat(arg, " given twice"));
    }
  }
  if (options.count("--help") > 0) {
    std::cout << kUsage;
    return 0;
  }
  auto integer = [&](const std::string& flag, int64_t* out) -> absl::Status {
    if (!absl::SimpleAtoi(options[flag], out)) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " '", options[flag], "': expected an integer"));
    }
    return absl::OkStatus();
  };

  MatmulProblem problem;
  for (auto [flag, size] : {std::pair<const char*, int64_t*>{"--m", &problem.m},
                            {"--n", &problem.n},
                            {"--k", &problem.k}}) {
    if (options.count(flag) == 0) {
      return Fail(absl::StrCat(flag, " is required"));
    }
    if (absl::Status s = integer(flag, size); !s.ok()) return Fail(s.message());
  }
  if (options.count("--a-major") > 0) {
    absl::StatusOr<OperandMajor> major =
        ParseOperandMajor(options["--a-major"], 'a');
    if (!major.ok()) return Fail(major.status().message());
    problem.a_major = *major;
  }
  if (options.count("--b-major") > 0) {
    absl::StatusOr<OperandMajor> major =
        ParseOperandMajor(options["--b-major"], 'b');
    if (!major.ok()) return Fail(major.status().message());
    problem.b_major = *major;
  }
  if (options.count("--dtype") > 0) {
    absl::StatusOr<ElementType> type = ParseElementType(options["--dtype"]);
    if (!type.ok()) return Fail(type.status().message());
    problem.dtype = *type;
  }
  problem.out_dtype = problem.dtype;
  if (options.count("--out-dtype") > 0) {
    absl::StatusOr<ElementType> type = ParseElementType(options["--out-dtype"]);
    if (!type.ok()) return Fail(type.status().message());
    problem.out_dtype = *type;
  }
  if (problem.dtype == ElementType::kF32) {
    return Fail(
        "--dtype f32: A and B are bf16 or f16 (f32 is an output "
        "type: --out-dtype f32)");
  }

  // The heuristic's choices (or a tuned configuration), then the settings
  // given by hand.
  // A split-K mode given by hand is the heuristic's to split K in (its
  // split count depends on it).
  SplitKMode split_k_mode = SplitKMode::kSerial;
  if (options.count("--split-k-mode") > 0) {
    absl::StatusOr<SplitKMode> mode =
        ParseSplitKMode(options["--split-k-mode"]);
    if (!mode.ok()) return Fail(mode.status().message());
    split_k_mode = *mode;
  }
  std::string explanation;
  MatmulConfig config = ChooseConfig(problem, &explanation, split_k_mode);
  std::vector<std::string> by_hand;
  if (options.count("--config") > 0 && options.count("--tuned") > 0) {
    return Fail("--config and --tuned both give a whole configuration");
  }
  // Whether a whole configuration replaced the heuristic's: the settings
  // given by hand then change only themselves.
  bool whole = false;
  if (options.count("--config") > 0) {
    absl::StatusOr<MatmulConfig> parsed = ParseConfig(options["--config"]);
    if (!parsed.ok()) return Fail(parsed.status().message());
    config = *parsed;
    by_hand.push_back("--config");
    whole = true;
  }
  if (options.count("--tuned") > 0) {
    const std::string& path = options["--tuned"];
    absl::StatusOr<std::optional<bench::TunedConfig>> tuned =
        bench::FindTunedConfig(path, problem);
    if (!tuned.ok()) return Fail(tuned.status().message());
    const std::string key = bench::ProblemKey(problem);
    if (tuned->has_value()) {
      const bench::TunedEntry& entry = (*tuned)->entry;
      config = (*tuned)->config;
      whole = true;
      absl::StrAppend(
          &explanation, "tuned: ", path, " has '", key, "' (",
          entry.config_loc.ToString(), "), measured by kir-bench --tune at ",
          absl::StrFormat("%.4g", entry.kernel_ms), " ms against cuBLASLt's ",
          absl::StrFormat("%.4g", entry.cublas_ms), " ms on ", entry.device,
          ": ", entry.config, "; it replaces the heuristic's choices above\n");
    } else {
      const std::string miss =
          absl::StrCat("tuned: ", path, " has no entry for '", key,
                       "'; the heuristic's choices stand");
      absl::StrAppend(&explanation, miss, "\n");
      if (options.count("--explain") == 0) {
        std::cerr << "kir-gen: note: " << miss << "\n";
      }
    }
  }
  if (options.count("--tile") > 0) {
    std::vector<int> tile;
    if (absl::Status s = ParseTwo("--tile", options["--tile"], 3, &tile);
        !s.ok()) {
      return Fail(s.message());
    }
    config.tile_m = tile[0];
    config.tile_n = tile[1];
    config.tile_k = tile[2];
    config.consumer_warpgroups = tile[0] == 64 ? 1 : 2;
    by_hand.push_back("--tile");
  }
  if (options.count("--cluster") > 0) {
    std::vector<int> cluster;
    if (absl::Status s =
            ParseTwo("--cluster", options["--cluster"], 2, &cluster);
        !s.ok()) {
      return Fail(s.message());
    }
    config.cluster_m = cluster[0];
    config.cluster_n = cluster[1];
    by_hand.push_back("--cluster");
  }
  if (options.count("--pingpong") > 0) {
    config.pingpong = true;
    config.consumer_warpgroups = 2;
    if (!whole) {
      // One warpgroup holds a whole tile's accumulator: at most 128x128;
      // the grid is persistent, so no split and an epilogue of its own.
      if (options.count("--tile") == 0) {
        config.tile_m = 128;
        config.tile_n = std::min(config.tile_n, 128);
      }
      config.split_k = 1;
      if (options.count("--epilogue") == 0) {
        config.epilogue = EpilogueMode::kAuto;
      }
      absl::StrAppend(
          &explanation, "ping-pong (--pingpong): one warpgroup computes each ",
          config.tile_m, "x", config.tile_n, " tile (",
          config.tile_m == 128 ? "two 64-row wgmma blocks"
                               : "one 64-row wgmma block",
          "), the pass adds a second that takes "
          "every other tile, so one's epilogue overlaps the other's mainloop; "
          "persistent grid, each warpgroup with its own output buffers\n");
    }
    by_hand.push_back("--pingpong");
  }
  for (auto [flag, field] :
       {std::pair<const char*, int*>{"--split-k", &config.split_k},
        {"--raster-group", &config.raster_group}}) {
    if (options.count(flag) == 0) continue;
    int64_t value = 0;
    if (absl::Status s = integer(flag, &value); !s.ok())
      return Fail(s.message());
    if (value < 1 || value > 65536) {
      return Fail(absl::StrCat(flag, " ", value, ": must be 1 to 65536"));
    }
    *field = static_cast<int>(value);
    by_hand.push_back(flag);
  }
  if (options.count("--split-k") > 0 && options.count("--epilogue") == 0 &&
      !whole) {
    // The grid follows split-K; let the epilogue follow the grid.
    config.epilogue = EpilogueMode::kAuto;
  }
  if (options.count("--split-k-mode") > 0) {
    config.split_k_mode = split_k_mode;
    by_hand.push_back("--split-k-mode");
  }
  if (options.count("--split-k-skew") > 0) {
    int64_t value = 0;
    if (absl::Status s = integer("--split-k-skew", &value); !s.ok())
      return Fail(s.message());
    if (value < 0 || value > 65536) {
      return Fail(
          absl::StrCat("--split-k-skew ", value, ": must be 0 to 65536"));
    }
    config.split_k_skew = static_cast<int>(value);
    by_hand.push_back("--split-k-skew");
  }
  if (options.count("--epilogue") > 0) {
    absl::StatusOr<EpilogueMode> mode =
        ParseEpilogueMode(options["--epilogue"]);
    if (!mode.ok()) return Fail(mode.status().message());
    config.epilogue = *mode;
    by_hand.push_back("--epilogue");
  }
  if (config.epilogue == EpilogueMode::kDedicated &&
      options.count("--split-k") == 0 && !whole) {
    // A dedicated output tile asks for the persistent grid, which split-K
    // does not have: the heuristic's split gives way to the hand's choice.
    config.split_k = 1;
  }
  if (options.count("--circular-buffer") > 0) {
    const std::string& mode = options["--circular-buffer"];
    if (mode != "warp_specialized" && mode != "pipelined") {
      return Fail(absl::StrCat("--circular-buffer '", mode,
                               "': warp_specialized or pipelined"));
    }
    config.circular_buffer = mode;
    by_hand.push_back("--circular-buffer");
  }
  if (options.count("--cluster") == 0 && !whole &&
      (config.circular_buffer != "warp_specialized" ||
       options.count("--pingpong") > 0)) {
    // The heuristic's cluster gives way to a pipelined loop or ping-pong
    // given by hand (multicast does not take the first; ping-pong with a
    // cluster is asked for with --cluster).
    config.cluster_m = config.cluster_n = 1;
  }
  if (options.count("--stages") > 0) {
    int64_t stages = 0;
    if (absl::Status s = integer("--stages", &stages); !s.ok()) {
      return Fail(s.message());
    }
    if (stages < 1 || stages > 16) {
      return Fail(absl::StrCat("--stages ", stages, ": must be 1 to 16"));
    }
    config.stages = static_cast<int>(stages);
    by_hand.push_back("--stages");
  } else if (!by_hand.empty() && !whole) {
    // The tile or epilogue changed: as many stages as now fit.
    config.stages = std::max(1, MaxStages(problem, config));
  }

  if (options.count("--split-k-skew") == 0 && !whole) {
    // The split, its mode or the tile may have changed: the skew follows.
    config.split_k_skew = ChooseSplitSkew(problem, config);
  }

  absl::StatusOr<std::string> kernel = GenerateMatmul(problem, config);
  if (!kernel.ok()) return Fail(kernel.status().message());
  if (options.count("--explain") > 0) {
    std::cerr << explanation;
    if (!by_hand.empty()) {
      std::cerr << "set by hand (" << absl::StrJoin(by_hand, ", ")
                << "): " << DescribeConfig(config) << "\n";
    }
  }
  if (options.count("-o") > 0) {
    const std::string& path = options["-o"];
    std::ofstream out(path, std::ios::binary);
    out << *kernel;
    out.close();
    if (!out) return Fail(absl::StrCat("cannot write '", path, "'"));
  } else {
    std::cout << *kernel;
  }
  return 0;
}

}  // namespace
}  // namespace kir::gen

int main(int argc, char** argv) { return kir::gen::Run(argc, argv); }
