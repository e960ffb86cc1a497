// kir-check: runs kir kernels on the CPU under adversarial schedules and
// reports hazards (see tools/kir-check/machine.h and report.h).
//
//   kir-check [options] FILE
//
// Exit codes: 0 no hazard and no error; 1 a hazard, an output mismatch or
// an error (with --verify-diagnostics: a diagnostic that was not expected,
// or an expected one that did not come).
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/diagnostics.h"
#include "printer/kir_printer.h"
#include "tools/kir-check/check.h"
#include "tools/kir-check/fuzz.h"
#include "tools/kir-check/lower.h"
#include "tools/kir-check/mutate.h"
#include "tools/kir-opt/split_input.h"
#include "tools/kir-opt/verify_diagnostics.h"
#include "tools/kir-run/binding.h"

namespace kir::check {
namespace {

constexpr char kUsage[] = R"(usage: kir-check [options] FILE

Executes the kernels of FILE on the CPU, every thread of every block, under
seeded adversarial schedules, and reports hazards as located diagnostics:
unordered accesses, missing proxy fences, early reads of TMA data, sources
overwritten before their read-wait, early releases, partial `.aligned`
collectives, multiple issue, mbarrier and barrier counts, deadlocks, and
outputs that differ from the unlowered kernel's reference run.

Each `// run:` directive of FILE gives a launch (a kernel without sizes or
parameters needs none).

  --pipeline=P           lower FILE with pipeline P first; FILE as written
                         is then the reference the outputs must equal
  --reference=REF        the unlowered kernel to compare with, when FILE is
                         already lowered
  --directive='@K ...'   check this launch instead of FILE's directives
                         (run directive syntax without `// run:`)
  --only=N               only directive N (1-based)
  --seeds=N              adversarial runs per directive (default 10)
  --seed=S               the first seed (default 1)
  --schedule=S           adversarial (default) or reference (lockstep,
                         async ops complete at once; hazards still tracked)
  --proxy-fence-model=M  per-thread (default: a fence by the writing thread
                         before the ordering edge, what PTX states) or path
                         (a fence anywhere on a happens-before path)
  --verify-diagnostics   match the reported hazards against expected-error
                         and expected-note directives in FILE
  --split-input-file     check each `// -----` separated part on its own
  --no-verify            do not verify FILE: check a kernel the verifier
                         rejects (no --pipeline then), to see what goes wrong
  --print-lowered        print the kernel that is checked
  --stats                ops, time, ops/s and memory per run
  --mutate               mutation testing (--pipeline, or --reference for a
                         lowered FILE): lowers FILE,
                         deletes each barrier, fence, wait, arrive and
                         release of the result one at a time, checks each
                         mutant under the directives' launches and prints
                         whether it was caught (and how) or why not, and
                         the kill rate; exits 1 if a mutant was not caught
                         for another reason than a rule the model cannot
                         see fail

Fuzzing (no FILE):
  --fuzz=SECONDS         generate random unlowered kernels, lower each with
                         the default pipeline and --fuzz-combinations option
                         combinations of the synchronization passes, check
                         them (--seeds schedules, default 2 here) against
                         the unlowered reference run; prints each failure
                         and exits 1 if there was one
  --fuzz-seed=S          the first kernel's seed (default: from the clock,
                         printed)
  --fuzz-combinations=N  option combinations per kernel (default 3)
  --fuzz-out=DIR         write failing kernels there, as regression inputs
  --fuzz-replay=DIR      check every .kir there with the pipelines its
                         `// fuzz-pipeline:` lines name
  --fuzz-print=SEED      print the kernel of SEED and stop
)";

struct Flags {
  std::string file;
  std::string pipeline;
  std::string reference;
  std::string directive;
  std::optional<int> only;
  CheckOptions check;
  bool verify_diagnostics = false;
  bool split_input_file = false;
  bool print_lowered = false;
  bool verify = true;
  bool mutate = false;
  bool seeds_given = false;
  std::optional<double> fuzz_seconds;
  std::optional<uint64_t> fuzz_seed;
  int fuzz_combinations = 3;
  std::string fuzz_out, fuzz_replay;
  std::optional<uint64_t> fuzz_print;
  bool stats = false;
};

std::string ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    std::string value;
    auto value_of = [&](absl::string_view name) {
      if (!absl::StartsWith(arg, absl::StrCat(name, "="))) return false;
      value = std::string(arg.substr(name.size() + 1));
      return true;
    };
    int number = 0;
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (value_of("--pipeline")) {
      flags.pipeline = value;
    } else if (value_of("--reference")) {
      flags.reference = value;
    } else if (value_of("--directive")) {
      flags.directive = value;
    } else if (value_of("--only")) {
      if (!absl::SimpleAtoi(value, &number) || number < 1)
        return "--only takes a directive number >= 1";
      flags.only = number;
    } else if (value_of("--seeds")) {
      if (!absl::SimpleAtoi(value, &number) || number < 1)
        return "--seeds takes N >= 1";
      flags.check.seeds = number;
      flags.seeds_given = true;
    } else if (value_of("--seed")) {
      if (!absl::SimpleAtoi(value, &flags.check.first_seed))
        return "--seed takes an unsigned integer";
    } else if (value_of("--schedule")) {
      if (value == "adversarial") {
        flags.check.schedule = Schedule::kAdversarial;
      } else if (value == "reference") {
        flags.check.schedule = Schedule::kReference;
      } else {
        return "--schedule takes adversarial or reference";
      }
    } else if (value_of("--proxy-fence-model")) {
      if (value == "per-thread") {
        flags.check.fence_model = FenceModel::kPerThread;
      } else if (value == "path") {
        flags.check.fence_model = FenceModel::kPath;
      } else {
        return "--proxy-fence-model takes per-thread or path";
      }
    } else if (arg == "--verify-diagnostics") {
      flags.verify_diagnostics = true;
    } else if (arg == "--split-input-file") {
      flags.split_input_file = true;
    } else if (value_of("--fuzz")) {
      double seconds = 0;
      if (!absl::SimpleAtod(value, &seconds) || !(seconds > 0))
        return "--fuzz takes a number of seconds > 0";
      flags.fuzz_seconds = seconds;
    } else if (value_of("--fuzz-seed")) {
      uint64_t seed = 0;
      if (!absl::SimpleAtoi(value, &seed))
        return "--fuzz-seed takes an unsigned integer";
      flags.fuzz_seed = seed;
    } else if (value_of("--fuzz-combinations")) {
      if (!absl::SimpleAtoi(value, &flags.fuzz_combinations) ||
          flags.fuzz_combinations < 0)
        return "--fuzz-combinations takes N >= 0";
    } else if (value_of("--fuzz-out")) {
      flags.fuzz_out = value;
    } else if (value_of("--fuzz-replay")) {
      flags.fuzz_replay = value;
    } else if (value_of("--fuzz-print")) {
      uint64_t seed = 0;
      if (!absl::SimpleAtoi(value, &seed))
        return "--fuzz-print takes an unsigned integer";
      flags.fuzz_print = seed;
    } else if (arg == "--mutate") {
      flags.mutate = true;
    } else if (arg == "--no-verify") {
      flags.verify = false;
    } else if (arg == "--print-lowered") {
      flags.print_lowered = true;
    } else if (arg == "--stats") {
      flags.stats = true;
    } else if (absl::StartsWith(arg, "-") && arg != "-") {
      return absl::StrCat("unknown option ", arg, " (see --help)");
    } else if (flags.file.empty()) {
      flags.file = std::string(arg);
    } else {
      return absl::StrCat("more than one input file: ", flags.file, " and ",
                          arg);
    }
  }
  const bool fuzzing = flags.fuzz_seconds.has_value() ||
                       !flags.fuzz_replay.empty() ||
                       flags.fuzz_print.has_value();
  if (fuzzing && !flags.file.empty())
    return "--fuzz and --fuzz-replay take no input file";
  if (fuzzing) return "";
  if (flags.file.empty()) return "no input file (see --help)";
  if (!flags.verify && !flags.pipeline.empty())
    return "--no-verify cannot be combined with --pipeline";
  if (flags.mutate && flags.pipeline.empty() && flags.reference.empty())
    return "--mutate needs --pipeline (the lowering to mutate) or, for a "
           "lowered FILE, --reference";
  return "";
}

int64_t PeakRssKiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

std::string StatsLine(const RunStats& stats, const char* what) {
  return absl::StrFormat(
      "  stats %s: %d ops, %d async ops, %d threads in %d blocks, %.3f s "
      "(%.3g ops/s), peak interpreter state %.1f MiB\n",
      what, stats.ops, stats.async_ops, stats.threads, stats.blocks,
      stats.seconds, stats.seconds > 0 ? stats.ops / stats.seconds : 0.0,
      stats.peak_state_bytes / 1048576.0);
}

// Checks one source (a file or one part of it). Diagnostics go to
// `diagnostics`, the rest of the report to `out`; returns whether it was
// clean.
bool CheckSource(const std::shared_ptr<const SourceFile>& source,
                 const Flags& flags, std::string& diagnostics,
                 std::ostream& out) {
  absl::StatusOr<std::unique_ptr<Module>> checked =
      ParseAndLower(source, flags.pipeline, flags.verify);
  if (!checked.ok()) {
    absl::StrAppend(&diagnostics, checked.status().message(), "\n");
    return false;
  }
  std::unique_ptr<Module> reference;
  if (!flags.pipeline.empty()) {
    absl::StatusOr<std::unique_ptr<Module>> unlowered =
        ParseAndLower(source, "");
    if (!unlowered.ok()) {
      absl::StrAppend(&diagnostics, unlowered.status().message(), "\n");
      return false;
    }
    reference = std::move(*unlowered);
  } else if (!flags.reference.empty()) {
    std::shared_ptr<SourceFile> reference_source =
        ReadSourceFile(flags.reference);
    if (reference_source == nullptr) {
      absl::StrAppend(&diagnostics, "kir-check: cannot read ", flags.reference,
                      "\n");
      return false;
    }
    absl::StatusOr<std::unique_ptr<Module>> unlowered =
        ParseAndLower(reference_source, "", flags.verify);
    if (!unlowered.ok()) {
      absl::StrAppend(&diagnostics, unlowered.status().message(), "\n");
      return false;
    }
    reference = std::move(*unlowered);
  }
  if (flags.print_lowered) out << PrintModule(**checked);

  std::vector<RunDirective> directives;
  absl::StatusOr<std::vector<RunDirective>> parsed =
      DirectivesOf(source, flags.directive);
  if (!parsed.ok()) {
    absl::StrAppend(&diagnostics, parsed.status().message(), "\n");
    return false;
  }
  directives = std::move(*parsed);
  bool clean = true;
  struct Job {
    const RunDirective* directive = nullptr;
    const Kernel* kernel = nullptr;
  };
  std::vector<Job> jobs;
  if (directives.empty()) {
    for (const auto& kernel : (*checked)->kernels)
      jobs.push_back({nullptr, kernel.get()});
  }
  for (size_t i = 0; i < directives.size(); ++i) {
    if (flags.only.has_value() && static_cast<int>(i) + 1 != *flags.only)
      continue;
    const Kernel* kernel = (*checked)->FindKernel(directives[i].kernel);
    const Module& validate_against = reference ? *reference : **checked;
    if (absl::Status s = ValidateDirective(directives[i], validate_against);
        !s.ok()) {
      absl::StrAppend(&diagnostics, s.message(), "\n");
      clean = false;
      continue;
    }
    if (kernel == nullptr) {
      absl::StrAppend(&diagnostics, "kir-check: the lowered module has no @",
                      directives[i].kernel, "\n");
      clean = false;
      continue;
    }
    jobs.push_back({&directives[i], kernel});
  }
  for (const Job& job : jobs) {
    const Kernel& kernel = *job.kernel;
    out << (job.directive != nullptr
                ? absl::StrCat(job.directive->loc.file_name(), ":",
                               job.directive->loc.line, ": ",
                               job.directive->text)
                : absl::StrCat(source->name, ": @", kernel.name()))
        << "\n";
    absl::StatusOr<std::unique_ptr<Program>> program = Program::Create(kernel);
    if (!program.ok()) {
      absl::StrAppend(&diagnostics, program.status().message(), "\n");
      clean = false;
      continue;
    }
    std::unique_ptr<Program> reference_program;
    if (reference != nullptr) {
      const Kernel* unlowered = reference->FindKernel(kernel.name());
      if (unlowered != nullptr) {
        absl::StatusOr<std::unique_ptr<Program>> created =
            Program::Create(*unlowered);
        if (!created.ok()) {
          absl::StrAppend(&diagnostics, created.status().message(), "\n");
          clean = false;
          continue;
        }
        reference_program = std::move(*created);
      }
    }
    absl::StatusOr<Launch> launch = job.directive != nullptr
                                        ? BuildLaunch(*job.directive, kernel)
                                        : EmptyLaunch(kernel);
    if (!launch.ok()) {
      absl::StrAppend(&diagnostics, launch.status().message(), "\n");
      clean = false;
      continue;
    }
    const CheckReport report = CheckKernel(**program, reference_program.get(),
                                           job.directive, *launch, flags.check);
    const std::string rendered = RenderReport(report, kernel);
    absl::StrAppend(&diagnostics, rendered);
    const bool ok = report.error.ok() && report.hazards.empty();
    clean = clean && ok;
    if (flags.stats) {
      if (reference_program != nullptr)
        out << StatsLine(report.reference_stats, "reference");
      for (size_t r = 0; r < report.stats.size(); ++r)
        out << StatsLine(
            report.stats[r],
            absl::StrCat("seed ", flags.check.first_seed + r).c_str());
    }
    out << absl::StrFormat(
        "  %d runs: %s\n", report.runs,
        ok ? "no hazard"
           : absl::StrCat(report.hazards.hazards().size(), " hazard(s)",
                          report.error.ok() ? "" : ", error"));
  }
  return clean;
}

int Main(int argc, char** argv) {
  Flags flags;
  if (std::string error = ParseFlags(argc, argv, flags); !error.empty()) {
    std::cerr << "kir-check: " << error << "\n";
    return 1;
  }
  if (flags.fuzz_print.has_value()) {
    std::cout << GenerateKernel(*flags.fuzz_print);
    return 0;
  }
  const int schedules = flags.seeds_given ? flags.check.seeds : 2;
  if (!flags.fuzz_replay.empty()) {
    if (!ReplayRegressions(flags.fuzz_replay, schedules, std::cout)) return 1;
    if (!flags.fuzz_seconds.has_value()) return 0;
  }
  if (flags.fuzz_seconds.has_value()) {
    FuzzOptions options;
    options.seconds = *flags.fuzz_seconds;
    options.first_seed = flags.fuzz_seed.value_or(static_cast<uint64_t>(
        std::chrono::system_clock::now().time_since_epoch().count() %
        1000000007));
    options.schedules = schedules;
    options.combinations = flags.fuzz_combinations;
    options.out_dir = flags.fuzz_out;
    return RunFuzzer(options, std::cout) ? 0 : 1;
  }
  std::shared_ptr<SourceFile> source = ReadSourceFile(flags.file);
  if (source == nullptr) {
    std::cerr << "kir-check: cannot read " << flags.file << "\n";
    return 1;
  }
  if (flags.mutate) {
    MutationOptions options;
    options.pipeline = flags.pipeline;
    if (!flags.reference.empty()) {
      options.reference = ReadSourceFile(flags.reference);
      if (options.reference == nullptr) {
        std::cerr << "kir-check: cannot read " << flags.reference << "\n";
        return 1;
      }
    }
    options.check = flags.check;
    options.directive = flags.directive;
    options.only = flags.only;
    absl::StatusOr<MutationReport> report =
        RunMutationTesting(source, options, std::cout);
    if (!report.ok()) {
      std::cerr << report.status().message() << "\n";
      return 1;
    }
    for (const MutantResult& mutant : report->mutants) {
      if (!mutant.caught && !absl::StartsWith(mutant.reason, "rule:")) return 1;
    }
    return 0;
  }
  std::vector<InputChunk> chunks;
  if (flags.split_input_file) {
    chunks = SplitInputFile(source->text);
  } else {
    chunks.push_back(InputChunk{source->text, 1});
  }
  bool failed = false;
  for (InputChunk& chunk : chunks) {
    auto part = std::make_shared<SourceFile>();
    part->name = source->name;
    part->text = std::move(chunk.text);
    std::string diagnostics;
    std::ostringstream report;
    const bool clean = CheckSource(part, flags, diagnostics, report);
    if (flags.verify_diagnostics) {
      absl::StatusOr<std::vector<ExpectedDiagnostic>> expected =
          ParseExpectedDiagnostics(part->text, part->name);
      absl::Status check =
          expected.ok() ? CheckDiagnostics(
                              *expected, ParseReportedDiagnostics(diagnostics),
                              part->name)
                        : expected.status();
      if (!check.ok()) {
        std::cerr << check.message() << "\n";
        failed = true;
      }
      std::cout << report.str();
    } else {
      std::cout << report.str();
      std::cerr << diagnostics;
      if (!clean) failed = true;
    }
  }
  if (flags.stats)
    std::cout << absl::StrFormat("peak resident memory: %.1f MiB\n",
                                 PeakRssKiB() / 1024.0);
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace kir::check

int main(int argc, char** argv) { return kir::check::Main(argc, argv); }
