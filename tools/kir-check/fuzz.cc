#include "tools/kir-check/fuzz.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/kir-check/check.h"
#include "tools/kir-check/lower.h"
#include "tools/kir-run/binding.h"

namespace kir::check {

std::vector<std::string> SamplePipelines(uint64_t seed, int combinations) {
  std::vector<std::string> all;
  for (const char* mode : {"shfl", "none"}) {
    for (const char* pending : {"-1", "0"}) {
      std::vector<std::string> fences;
      for (const char* hoist : {"true", "false"}) {
        for (const char* space : {"shared-cta", "all"}) {
          fences.push_back(absl::StrCat("placement=writers,hoist=", hoist,
                                        ",space=", space));
          for (const char* predicate : {"true", "false"}) {
            fences.push_back(absl::StrCat("placement=issuer,hoist=", hoist,
                                          ",space=", space,
                                          ",predicate=", predicate));
          }
        }
      }
      for (const std::string& fence : fences) {
        all.push_back(absl::StrCat(
            "canonicalize,uniform-predicates{mode=", mode,
            "},insert-async-waits{max-pending=", pending,
            "},insert-syncs,insert-proxy-fences{", fence, "},dce"));
      }
    }
  }
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<std::string> chosen = {"default"};
  for (int i = 0; i < combinations && i < static_cast<int>(all.size()); ++i)
    chosen.push_back(all[i]);
  return chosen;
}

namespace {

struct Verdict {
  bool clean = true;
  std::string report;
};

// The fence model a pipeline's placement relies on: the issuer placement
// is only sound under the path model (README, insert-proxy-fences).
FenceModel ModelFor(const std::string& pipeline) {
  return absl::StrContains(pipeline, "placement=issuer")
             ? FenceModel::kPath
             : FenceModel::kPerThread;
}

Verdict CheckLowering(const std::shared_ptr<const SourceFile>& source,
                      const std::string& pipeline, int schedules,
                      uint64_t seed) {
  Verdict verdict;
  auto fail = [&](const std::string& what) {
    verdict.clean = false;
    verdict.report = what;
    return verdict;
  };
  absl::StatusOr<std::unique_ptr<Module>> reference = ParseAndLower(source, "");
  if (!reference.ok())
    return fail(absl::StrCat("the unlowered kernel does not verify:\n",
                             reference.status().message()));
  absl::StatusOr<std::vector<RunDirective>> directives =
      DirectivesOf(source, "");
  if (!directives.ok() || directives->size() != 1)
    return fail("the kernel needs exactly one run directive");
  const RunDirective& directive = directives->front();
  if (absl::Status s = ValidateDirective(directive, **reference); !s.ok())
    return fail(std::string(s.message()));
  const Kernel* reference_kernel = (*reference)->FindKernel(directive.kernel);
  absl::StatusOr<std::unique_ptr<Program>> reference_program =
      Program::Create(*reference_kernel);
  if (!reference_program.ok())
    return fail(std::string(reference_program.status().message()));
  absl::StatusOr<std::unique_ptr<Module>> lowered =
      ParseAndLower(source, pipeline);
  if (!lowered.ok())
    return fail(
        absl::StrCat("the pipeline failed:\n", lowered.status().message()));
  const Kernel* kernel = (*lowered)->FindKernel(directive.kernel);
  absl::StatusOr<std::unique_ptr<Program>> program = Program::Create(*kernel);
  if (!program.ok()) return fail(std::string(program.status().message()));
  absl::StatusOr<Launch> launch = BuildLaunch(directive, *kernel);
  if (!launch.ok()) return fail(std::string(launch.status().message()));
  CheckOptions options;
  options.seeds = schedules;
  options.first_seed = seed;
  options.fence_model = ModelFor(pipeline);
  const CheckReport report = CheckKernel(**program, reference_program->get(),
                                         &directive, *launch, options);
  if (!report.error.ok() || !report.hazards.empty())
    return fail(RenderReport(report, *kernel));
  return verdict;
}

std::string Commented(const std::string& text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty()) continue;
    absl::StrAppend(&out, "// ", line, "\n");
  }
  return out;
}

}  // namespace

bool RunFuzzer(const FuzzOptions& options, std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  int kernels = 0, lowerings = 0, failures = 0;
  out << "fuzz: from seed " << options.first_seed << " for " << options.seconds
      << " s, " << options.combinations
      << " option combination(s) besides the default pipeline per kernel, "
      << options.schedules << " adversarial schedule(s) each\n";
  for (uint64_t seed = options.first_seed;
       kernels == 0 || elapsed() < options.seconds; ++seed) {
    const std::string text = GenerateKernel(seed);
    auto source = std::make_shared<SourceFile>();
    source->name = absl::StrCat("fuzz-", seed, ".kir");
    source->text = text;
    ++kernels;
    for (const std::string& pipeline :
         SamplePipelines(seed, options.combinations)) {
      ++lowerings;
      const Verdict verdict =
          CheckLowering(source, pipeline, options.schedules, seed);
      if (verdict.clean) continue;
      ++failures;
      const std::string saved = absl::StrCat("// fuzz-pipeline: ", pipeline,
                                             "\n// What kir-check reported:\n",
                                             Commented(verdict.report), text);
      out << "FAILURE: seed " << seed << ", pipeline '" << pipeline << "':\n"
          << verdict.report << "the kernel:\n"
          << text << "\n";
      if (!options.out_dir.empty()) {
        std::filesystem::create_directories(options.out_dir);
        const std::string path =
            absl::StrCat(options.out_dir, "/fuzz-", seed, ".kir");
        std::ofstream file(path);
        file << saved;
        out << "saved as " << path << "\n";
      }
      break;  // one report per kernel
    }
  }
  out << absl::StrFormat(
      "fuzz: %d kernels, %d lowerings checked, %d failing kernel(s) in %.1f s "
      "(seeds %d..%d)\n",
      kernels, lowerings, failures, elapsed(), options.first_seed,
      options.first_seed + kernels - 1);
  return failures == 0;
}

bool ReplayRegressions(const std::string& directory, int schedules,
                       std::ostream& out) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() == ".kir") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  int failures = 0, checked = 0;
  for (const std::string& path : paths) {
    std::shared_ptr<SourceFile> source = ReadSourceFile(path);
    if (source == nullptr) {
      ++failures;
      out << "FAILURE: cannot read " << path << "\n";
      continue;
    }
    std::vector<std::string> pipelines;
    for (absl::string_view line : absl::StrSplit(source->text, '\n')) {
      if (absl::ConsumePrefix(&line, "// fuzz-pipeline: "))
        pipelines.emplace_back(absl::StripAsciiWhitespace(line));
    }
    if (pipelines.empty()) pipelines.push_back("default");
    for (const std::string& pipeline : pipelines) {
      ++checked;
      const Verdict verdict = CheckLowering(source, pipeline, schedules, 1);
      if (verdict.clean) continue;
      ++failures;
      out << "FAILURE: " << path << ", pipeline '" << pipeline << "':\n"
          << verdict.report;
    }
  }
  out << absl::StrFormat(
      "replay: %d regression input(s), %d lowerings, %d failed\n", paths.size(),
      checked, failures);
  return failures == 0;
}

}  // namespace kir::check
