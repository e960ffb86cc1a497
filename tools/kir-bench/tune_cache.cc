#include "tools/kir-bench/tune_cache.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "ir/diagnostics.h"

namespace kir::bench {

std::string ProblemKey(const gen::MatmulProblem& problem) {
  return absl::StrCat(
      problem.m, "x", problem.n, "x", problem.k,
      " a=", problem.a_major == gen::OperandMajor::kK ? "k" : "m",
      " b=", problem.b_major == gen::OperandMajor::kK ? "k" : "n", " ",
      ElementTypeName(problem.dtype),
      " out=", ElementTypeName(problem.out_dtype));
}

const TunedEntry* TuningCache::Find(const gen::MatmulProblem& problem) const {
  auto it = entries.find(ProblemKey(problem));
  return it == entries.end() ? nullptr : &it->second;
}

void TuningCache::Record(TunedEntry entry) {
  std::string key = entry.key;
  entries[key] = std::move(entry);
}

absl::StatusOr<TuningCache> ParseTuningCache(
    const std::shared_ptr<const SourceFile>& file) {
  TuningCache cache;
  std::vector<absl::Status> errors;
  const std::vector<absl::string_view> lines = absl::StrSplit(file->text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const absl::string_view line = absl::StripSuffix(lines[i], "\r");
    const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    auto at = [&](size_t offset) {
      Location loc;
      loc.file = file;
      loc.line = static_cast<int>(i) + 1;
      loc.column = static_cast<int>(offset) + 1;
      return loc;
    };
    // Fields with their offsets in the line.
    std::vector<std::pair<absl::string_view, size_t>> fields;
    size_t start = 0;
    while (true) {
      const size_t bar = line.find('|', start);
      absl::string_view raw = line.substr(
          start, bar == absl::string_view::npos ? bar : bar - start);
      const size_t leading =
          raw.size() - absl::StripLeadingAsciiWhitespace(raw).size();
      fields.push_back({absl::StripAsciiWhitespace(raw), start + leading});
      if (bar == absl::string_view::npos) break;
      start = bar + 1;
    }
    if (fields.size() != 5) {
      errors.push_back(Error(at(0)) << "a tuning-cache entry has 5 fields "
                                       "separated by '|' (problem | "
                                       "configuration | kernel ms | cuBLAS ms "
                                       "| device), got "
                                    << fields.size());
      continue;
    }
    TunedEntry entry;
    entry.key = std::string(fields[0].first);
    entry.config = std::string(fields[1].first);
    entry.config_loc = at(fields[1].second);
    entry.device = std::string(fields[4].first);
    bool ok = true;
    if (entry.key.empty()) {
      errors.push_back(Error(at(fields[0].second)) << "empty problem key");
      ok = false;
    }
    if (entry.config.empty()) {
      errors.push_back(Error(at(fields[1].second)) << "empty configuration");
      ok = false;
    }
    for (int f : {2, 3}) {
      double& value = f == 2 ? entry.kernel_ms : entry.cublas_ms;
      if (!absl::SimpleAtod(fields[f].first, &value) || !(value > 0)) {
        errors.push_back(Error(at(fields[f].second))
                         << "expected a time in ms > 0, got '"
                         << fields[f].first << "'");
        ok = false;
      }
    }
    if (!ok) continue;
    if (cache.entries.count(entry.key)) {
      errors.push_back(Error(at(0))
                       << "a second entry for '" << entry.key << "'");
      continue;
    }
    cache.Record(std::move(entry));
  }
  if (absl::Status s = JoinStatuses(errors); !s.ok()) return s;
  return cache;
}

absl::StatusOr<TuningCache> ReadTuningCache(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (access(path.c_str(), F_OK) != 0) {
      return absl::NotFoundError(
          absl::StrCat("no tuning cache at '", path, "'"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat("cannot read '", path, "'"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto file = std::make_shared<SourceFile>();
  file->name = path;
  file->text = text.str();
  return ParseTuningCache(file);
}

std::string FormatTuningCache(const TuningCache& cache) {
  std::string text =
      "# kir-bench tuning cache: the fastest configuration found per problem\n"
      "# problem | configuration | kernel ms | cuBLASLt ms | device\n";
  for (const auto& [key, entry] : cache.entries) {
    absl::StrAppend(&text, key, " | ", entry.config, " | ",
                    absl::StrFormat("%.5g", entry.kernel_ms), " | ",
                    absl::StrFormat("%.5g", entry.cublas_ms), " | ",
                    entry.device, "\n");
  }
  return text;
}

absl::Status WriteTuningCache(const std::string& path,
                              const TuningCache& cache) {
  const std::string temporary = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    out << FormatTuningCache(cache);
    if (!out) {
      std::remove(temporary.c_str());
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write '", temporary, "'"));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return absl::PermissionDeniedError(
        absl::StrCat("cannot replace '", path, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<TunedConfig>> FindTunedConfig(
    const std::string& path, const gen::MatmulProblem& problem) {
  absl::StatusOr<TuningCache> cache = ReadTuningCache(path);
  if (!cache.ok()) return cache.status();
  const TunedEntry* entry = cache->Find(problem);
  if (entry == nullptr) return std::nullopt;
  absl::StatusOr<gen::MatmulConfig> config = gen::ParseConfig(entry->config);
  if (!config.ok())
    return Error(entry->config_loc) << config.status().message();
  if (absl::Status s = gen::ValidateMatmul(problem, *config); !s.ok()) {
    return Error(entry->config_loc)
           << "the tuned configuration cannot be generated for " << entry->key
           << ": " << s.message();
  }
  return TunedConfig{*entry, *config};
}

}  // namespace kir::bench
