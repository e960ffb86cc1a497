#include "tools/kir-bench/config_choice.h"

#include "absl/strings/str_cat.h"
#include "ir/diagnostics.h"

namespace kir::bench {

std::vector<ChosenConfig> ChooseConfigs(
    ProblemList& list, const TuningCache* cache,
    std::optional<gen::SplitKMode> split_k_mode) {
  std::vector<ChosenConfig> chosen;
  ValidateProblems(list, [&](const BenchProblem& problem) -> absl::Status {
    ChosenConfig choice{
        gen::ChooseConfig(problem.matmul, nullptr,
                          split_k_mode.value_or(gen::SplitKMode::kSerial)),
        "heuristic"};
    Location where = problem.loc;
    std::string context;
    if (!problem.config.empty()) {
      absl::StatusOr<gen::MatmulConfig> parsed =
          gen::ParseConfig(problem.config);
      if (!parsed.ok())
        return Error(problem.config_loc) << parsed.status().message();
      choice = {*parsed, "csv"};
      where = problem.config_loc;
    } else if (const TunedEntry* entry =
                   cache ? cache->Find(problem.matmul) : nullptr) {
      absl::StatusOr<gen::MatmulConfig> parsed =
          gen::ParseConfig(entry->config);
      if (!parsed.ok())
        return Error(entry->config_loc) << parsed.status().message();
      choice = {*parsed, "cache"};
      where = entry->config_loc;
      context = absl::StrCat("the tuned configuration cannot be generated for ",
                             entry->key, " (", problem.loc.ToString(), "): ");
    }
    if (absl::Status s = gen::ValidateMatmul(problem.matmul, choice.config);
        !s.ok()) {
      InFlightDiagnostic error = Error(where);
      error << context << s.message();
      if (choice.source == "heuristic")
        error << " (with the heuristic's configuration "
              << gen::DescribeConfig(choice.config) << ")";
      return error;
    }
    chosen.push_back(choice);
    return absl::OkStatus();
  });
  return chosen;
}

std::vector<std::string> LoweringPipelines(
    const std::vector<std::string>& asked, const gen::MatmulConfig& config) {
  std::vector<std::string> pipelines = asked;
  for (std::string& pipeline : pipelines) {
    if (pipeline == "default") pipeline = gen::LoweringPipeline(config);
  }
  return pipelines;
}

}  // namespace kir::bench
