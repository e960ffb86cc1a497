// kir-bench's tuning cache: for each problem (by ProblemKey), the
// configuration `kir-bench --tune` found fastest. A text file, one entry a
// line, fields separated by " | ":
//
//   # comments and blank lines are ignored
//   4096x4096x4096 a=k b=k bf16 out=bf16 | 128x256x64 s4 ws coop c1x1 epi=reuse
//   | 0.731 | 0.702 | NVIDIA H100 80GB HBM3
//
// key | configuration (gen::DescribeConfig's text) | kernel median ms |
// cuBLASLt median ms (same process) | device. This library needs no GPU:
// the kir-gen command links it to read the winners (FindTunedConfig).
#ifndef KIR_TOOLS_KIR_BENCH_TUNE_CACHE_H_
#define KIR_TOOLS_KIR_BENCH_TUNE_CACHE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/location.h"
#include "tools/kir-gen/matmul.h"

namespace kir::bench {

// A stable text naming a problem, the cache's key:
// "4096x4096x4096 a=k b=k bf16 out=bf16".
std::string ProblemKey(const gen::MatmulProblem& problem);

struct TunedEntry {
  std::string key;
  std::string config;  // for gen::ParseConfig
  double kernel_ms = 0;
  double cublas_ms = 0;
  std::string device;
  Location config_loc;  // where `config` was read; unknown for new entries
};

struct TuningCache {
  std::map<std::string, TunedEntry> entries;  // by key

  const TunedEntry* Find(const gen::MatmulProblem& problem) const;
  // Adds or replaces the entry for entry.key.
  void Record(TunedEntry entry);
};

// Parses a cache's text; every malformed line is a located error (all of
// them, joined).
absl::StatusOr<TuningCache> ParseTuningCache(
    const std::shared_ptr<const SourceFile>& file);

// Reads and parses the file at `path`; a missing file is kNotFound.
absl::StatusOr<TuningCache> ReadTuningCache(const std::string& path);

// The text of `cache` (entries sorted by key), and its atomic write
// (a temporary file renamed over `path`).
std::string FormatTuningCache(const TuningCache& cache);
absl::Status WriteTuningCache(const std::string& path,
                              const TuningCache& cache);

// A cache's winner for one problem: its entry and the parsed
// configuration.
struct TunedConfig {
  TunedEntry entry;
  gen::MatmulConfig config;
};

// For kir-gen --tuned: the configuration tuned for `problem` in the cache
// at `path`; nullopt when the file has no entry for it. A missing file is
// kNotFound (the caller named it); a malformed cache or configuration, or
// one that cannot be generated for `problem`, is a located error.
absl::StatusOr<std::optional<TunedConfig>> FindTunedConfig(
    const std::string& path, const gen::MatmulProblem& problem);

}  // namespace kir::bench

#endif  // KIR_TOOLS_KIR_BENCH_TUNE_CACHE_H_
