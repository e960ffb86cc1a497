// kir-bench: generates, lowers, checks and times GEMMs against cuBLASLt
// over a problem list (tools/kir-bench/problems.h for its format).
//
//   kir-bench PROBLEMS.csv [options]
//
// Exit codes: 0 every problem passed; 1 an error in the input or a problem
// that failed; 3 a problem hung (takes precedence); 77 no usable GPU (after
// the whole CSV was read and checked, and only when it had no error).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ir/diagnostics.h"
#include "parser/source_reader.h"
#include "passes/pipeline.h"
#include "re2/re2.h"
#include "tools/kir-bench/bench_problem.h"
#include "tools/kir-bench/config_choice.h"
#include "tools/kir-bench/gpu_workers.h"
#include "tools/kir-bench/problem_loop.h"
#include "tools/kir-bench/problems.h"
#include "tools/kir-bench/report.h"
#include "tools/kir-bench/resume.h"
#include "tools/kir-bench/tune_cache.h"
#include "tools/kir-bench/tune_space.h"
#include "tools/kir-gen/matmul.h"

#ifndef KIR_GIT_COMMIT
#define KIR_GIT_COMMIT "unknown"
#endif

namespace kir::bench {
namespace {

constexpr std::chrono::seconds kCheckpointPeriod{10};

constexpr char kUsage[] = R"(usage: kir-bench PROBLEMS.csv [options]

For each problem of the CSV (columns m,n,k[,a_major,b_major,dtype,out_dtype,
name,config]): chooses a configuration (the CSV's config column, else the
tuning cache's winner with --tune-cache, else kir-gen's heuristic), generates
the kernel, lowers it with the pipeline, compiles it, checks it against the
reference and times it against cuBLASLt in the same process. Each problem
runs in a process of its own: a hang or a crash costs only that problem.

  --gpus all|N|LIST    one worker process per GPU (all of them, the first N,
                       or a list such as 0,2,3; an index may repeat to run
                       several workers on one GPU), each pinned with
                       CUDA_VISIBLE_DEVICES, taking the next problem as it
                       finishes one; each problem and its cuBLASLt baseline
                       run on one GPU, recorded in its row; a worker that
                       dies loses only its problem (status lost)
  --resume FILE.json   an earlier run's --json report: the problems it
                       finished (passed, mismatch, error) with the same
                       name, shape and configuration are not run again and
                       their rows join this run's outputs

  --pipeline P         lowering pipeline (default: default)
  --compare P1 P2 ...  every problem with each pipeline, checked, then timed
                       alternately; the table gives time(Pi) / time(P1)
  --tune               try a bounded set of configurations per problem
                       (each checked, then timed); record the fastest in the
                       tuning cache; the table compares it with the heuristic
  --tune-cache FILE    the tuning cache (default with --tune:
                       kir-bench-tune.txt); without --tune its winners are
                       used
  --tune-limit N       configurations tried per problem (default 16)
  --split-k-mode MODE  the heuristic's configurations that split K use
                       MODE (serial, tma-serial, tma-atomic, gather,
                       cluster; default serial), as do the configurations
                       --tune tries around them
  --filter REGEX       only problems whose name or key matches
  --csv FILE           every result as CSV
  --json FILE          every result as JSON
  --plot FILE.svg      bar chart of % of cuBLAS per problem and pipeline
  --log FILE           the runner's full report of every problem
  --dump-dir DIR       keep each generated kernel (DIR/<problem>.kir, which
                       kir-run runs as it is) and its lowered forms
  --timeout S          watchdog per problem, per configuration with --tune
                       (default 300)
  --warmup N --iterations N --repeats N
                       timing (default 10, 50, 5): the median of N
                       launches per repeat, the median of the repeats;
                       each repeat times cuBLASLt, then the pipelines
                       (in alternating order), each after N warmups
)";

struct Flags {
  std::string csv_path;
  std::vector<std::string> pipelines;
  bool tune = false;
  std::string tune_cache;
  int tune_limit = 16;
  std::string filter;
  std::string csv_out, json_out, plot_out, log_out, dump_dir;
  double timeout = 300;
  std::string gpus;  // empty: this process's GPU 0, no workers
  std::string resume;
  std::optional<gen::SplitKMode> split_k_mode;
  BenchOptions bench;
};

std::string ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    // --name VALUE or --name=VALUE.
    auto value_of = [&](absl::string_view name, std::string& value,
                        std::string& error) {
      if (absl::StartsWith(arg, absl::StrCat(name, "="))) {
        value = arg.substr(name.size() + 1);
        return true;
      }
      if (arg != name) return false;
      if (i + 1 >= argc) {
        error = absl::StrCat(name, " takes a value");
        return true;
      }
      value = argv[++i];
      return true;
    };
    std::string value, error;
    auto positive = [&](absl::string_view name, int& out) {
      if (!absl::SimpleAtoi(value, &out) || out < 1)
        error = absl::StrCat(name, " takes a number >= 1");
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (value_of("--pipeline", value, error)) {
      flags.pipelines = {value};
    } else if (arg == "--compare") {
      flags.pipelines.clear();
      // Up to the next option or an existing file (no pipeline names one:
      // that is the problem list).
      while (i + 1 < argc && !absl::StartsWith(argv[i + 1], "--") &&
             access(argv[i + 1], F_OK) != 0)
        flags.pipelines.push_back(argv[++i]);
      if (flags.pipelines.size() < 2)
        return "--compare takes at least two pipelines";
    } else if (arg == "--tune") {
      flags.tune = true;
    } else if (value_of("--tune-cache", value, error)) {
      flags.tune_cache = value;
    } else if (value_of("--tune-limit", value, error)) {
      positive("--tune-limit", flags.tune_limit);
    } else if (value_of("--split-k-mode", value, error)) {
      absl::StatusOr<gen::SplitKMode> mode = gen::ParseSplitKMode(value);
      if (mode.ok())
        flags.split_k_mode = *mode;
      else
        error = absl::StrCat("--split-k-mode: ", mode.status().message());
    } else if (value_of("--gpus", value, error)) {
      flags.gpus = value;
      if (value.empty()) error = "--gpus takes all, a count or a list";
    } else if (value_of("--resume", value, error)) {
      flags.resume = value;
    } else if (value_of("--filter", value, error)) {
      flags.filter = value;
    } else if (value_of("--csv", value, error)) {
      flags.csv_out = value;
    } else if (value_of("--json", value, error)) {
      flags.json_out = value;
    } else if (value_of("--plot", value, error)) {
      flags.plot_out = value;
    } else if (value_of("--log", value, error)) {
      flags.log_out = value;
    } else if (value_of("--dump-dir", value, error)) {
      flags.dump_dir = value;
    } else if (value_of("--timeout", value, error)) {
      if (!absl::SimpleAtod(value, &flags.timeout) || !(flags.timeout > 0))
        error = "--timeout takes a number of seconds > 0";
    } else if (value_of("--warmup", value, error)) {
      if (!absl::SimpleAtoi(value, &flags.bench.warmup) ||
          flags.bench.warmup < 0)
        error = "--warmup takes a number >= 0";
    } else if (value_of("--iterations", value, error)) {
      positive("--iterations", flags.bench.iterations);
    } else if (value_of("--repeats", value, error)) {
      positive("--repeats", flags.bench.repeats);
    } else if (absl::StartsWith(arg, "-")) {
      return absl::StrCat("unknown option ", arg, " (see --help)");
    } else if (flags.csv_path.empty()) {
      flags.csv_path = arg;
    } else {
      return absl::StrCat("more than one problem file: ", flags.csv_path,
                          " and ", arg);
    }
    if (!error.empty()) return error;
  }
  if (flags.csv_path.empty()) return "no problem file (see --help)";
  if (flags.pipelines.empty()) flags.pipelines = {"default"};
  if (flags.tune && flags.pipelines.size() > 1)
    return "--tune takes one pipeline, not --compare";
  if (flags.tune && flags.tune_cache.empty())
    flags.tune_cache = "kir-bench-tune.txt";
  flags.bench.pipelines = flags.pipelines;
  flags.bench.dump_dir = flags.dump_dir;
  return "";
}

// Whether `path` can be written, before a long run ends in an error.
absl::Status CheckWritable(absl::string_view flag, const std::string& path) {
  const bool existed = access(path.c_str(), F_OK) == 0;
  std::ofstream probe(path, std::ios::app);
  const bool ok = static_cast<bool>(probe);
  probe.close();
  if (!existed && ok) std::remove(path.c_str());
  if (ok) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("kir-bench: ", flag, ": cannot write '", path, "'"));
}

// Through a temporary file renamed into place: a reader (or a run
// interrupted while writing) never sees half a report.
absl::Status WriteText(const std::string& path, const std::string& text) {
  const std::string temporary = absl::StrCat(path, ".tmp.", getpid());
  std::ofstream out(temporary, std::ios::binary);
  out << text;
  out.close();
  if (out.fail() || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

// --tune for one problem: every candidate in a child of its own; the
// fastest that passed, relative to cuBLASLt in its own process, wins.
// Runs in a worker under --gpus (without `progress` there); the caller
// records the winner (RecordTuned).
ProblemResult TuneProblem(const BenchProblem& problem,
                          const ChosenConfig& start, const Flags& flags,
                          Progress* progress) {
  const std::vector<gen::MatmulConfig> candidates = TuneCandidates(
      problem.matmul, start.config,
      [&](const gen::MatmulConfig& config) {
        return gen::ValidateMatmul(problem.matmul, config).ok();
      },
      flags.tune_limit);
  std::vector<ProblemResult> runs;
  if (candidates.empty()) {  // the starting configuration was checked
    ProblemResult result = IdentityOf(problem);
    result.status = "error";
    result.message = "no configuration to try";
    return result;
  }
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (progress)
      progress->Start(
          absl::StrCat(problem.name, " [", c + 1, "/", candidates.size(), "]"));
    ProblemResult identity = IdentityOf(problem);
    identity.config = gen::DescribeConfig(candidates[c]);
    runs.push_back(RunInChild(
        [&] {
          return RunBenchProblem(problem, candidates[c],
                                 c == 0 ? start.source : "candidate",
                                 flags.bench);
        },
        flags.timeout, identity));
  }
  int best = -1;
  auto speed = [](const ProblemResult& r) {
    return r.variants.empty() ? NAN
                              : r.baseline_ms / r.variants.front().median_ms;
  };
  for (size_t c = 0; c < runs.size(); ++c) {
    if (runs[c].passed() && std::isfinite(speed(runs[c])) &&
        (best < 0 || speed(runs[c]) > speed(runs[best])))
      best = static_cast<int>(c);
  }
  ProblemResult result = runs[best >= 0 ? best : 0];
  result.config_source = best >= 0 ? "tuned" : result.config_source;
  result.heuristic_config = runs[0].config;
  if (runs[0].passed() && !runs[0].variants.empty()) {
    result.heuristic_ms = runs[0].variants.front().median_ms;
    result.heuristic_cublas_ms = runs[0].baseline_ms;
  }
  for (const ProblemResult& run : runs) {
    result.candidates.push_back(
        {run.config, run.status,
         run.variants.empty() ? NAN : run.variants.front().median_ms,
         run.baseline_ms});
  }
  return result;
}

// A tuned problem's winner, into the cache and its file (after each
// problem, so an interrupted run keeps what it found).
void RecordTuned(const ProblemResult& result, const Flags& flags,
                 TuningCache& cache) {
  if (result.config_source == "tuned" && result.passed() &&
      !result.variants.empty()) {
    TunedEntry entry;
    entry.key = result.key;
    entry.config = result.config;
    entry.kernel_ms = result.variants.front().median_ms;
    entry.cublas_ms = result.baseline_ms;
    entry.device = result.device;
    cache.Record(entry);
  }
  if (absl::Status s = WriteTuningCache(flags.tune_cache, cache); !s.ok())
    std::cerr << "\nkir-bench: " << s.message() << "\n";
}

int Main(int argc, char** argv) {
  Flags flags;
  if (std::string error = ParseFlags(argc, argv, flags); !error.empty()) {
    std::cerr << "kir-bench: " << error << "\n";
    return 1;
  }
  std::vector<absl::Status> errors;
  for (const std::string& pipeline : flags.pipelines) {
    absl::StatusOr<Pipeline> parsed = ParsePipeline(pipeline);
    if (!parsed.ok()) {
      errors.push_back(absl::InvalidArgumentError(
          absl::StrCat("kir-bench: pipeline '", pipeline,
                       "': ", parsed.status().message())));
    }
  }
  std::unique_ptr<RE2> filter;
  if (!flags.filter.empty()) {
    filter = std::make_unique<RE2>(flags.filter, RE2::Quiet);
    if (!filter->ok()) {
      errors.push_back(absl::InvalidArgumentError(
          absl::StrCat("kir-bench: --filter: ", filter->error())));
    }
  }
  for (const auto& [flag, path] :
       {std::pair<const char*, std::string>{"--csv", flags.csv_out},
        {"--json", flags.json_out},
        {"--plot", flags.plot_out},
        {"--log", flags.log_out}}) {
    if (!path.empty()) errors.push_back(CheckWritable(flag, path));
  }
  if (!flags.dump_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(flags.dump_dir, error);
    if (error) {
      errors.push_back(absl::PermissionDeniedError(absl::StrCat(
          "kir-bench: --dump-dir: cannot create '", flags.dump_dir, "'")));
    }
  }
  std::optional<TuningCache> cache;
  if (!flags.tune_cache.empty()) {
    absl::StatusOr<TuningCache> read = ReadTuningCache(flags.tune_cache);
    if (read.ok()) {
      cache = *std::move(read);
    } else if (absl::IsNotFound(read.status()) && flags.tune) {
      cache.emplace();  // --tune creates it
    } else {
      errors.push_back(
          absl::IsNotFound(read.status())
              ? absl::NotFoundError(absl::StrCat(
                    "kir-bench: --tune-cache: ", read.status().message(),
                    " (--tune creates it)"))
              : read.status());
    }
    if (flags.tune && cache) {
      errors.push_back(CheckWritable("--tune-cache", flags.tune_cache));
    }
  }
  if (!flags.gpus.empty() && flags.gpus != "all") {
    // The form now; the indices once the GPUs are known.
    absl::StatusOr<std::vector<int>> gpus =
        ParseGpus(flags.gpus, std::numeric_limits<int>::max());
    if (!gpus.ok())
      errors.push_back(absl::InvalidArgumentError(
          absl::StrCat("kir-bench: ", gpus.status().message())));
  }
  std::optional<PreviousRun> previous;
  if (!flags.resume.empty()) {
    absl::StatusOr<PreviousRun> read = ReadPreviousRun(flags.resume);
    if (!read.ok()) {
      errors.push_back(absl::InvalidArgumentError(
          absl::StrCat("kir-bench: --resume: ", read.status().message())));
    } else {
      RunInfo asked;
      asked.pipelines = flags.pipelines;
      asked.tune = flags.tune;
      errors.push_back(CheckSameRun(*read, asked));
      previous = *std::move(read);
    }
  }
  if (absl::Status s = JoinStatuses(errors); !s.ok()) {
    // Without a valid command line, pipeline or cache nothing can run.
    std::cerr << s.message() << "\n";
    return 1;
  }

  absl::StatusOr<std::string> text =
      ReadSourceText(flags.csv_path, kDefaultMaxInputBytes);
  if (!text.ok()) {
    std::cerr << "kir-bench: " << text.status().message() << "\n";
    return 1;
  }
  auto file = std::make_shared<SourceFile>();
  file->name = flags.csv_path;
  file->text = *std::move(text);
  ProblemList list = ParseProblemsCsv(file);
  if (filter) {
    std::vector<BenchProblem> kept;
    for (BenchProblem& problem : list.problems) {
      if (RE2::PartialMatch(problem.name, *filter) ||
          RE2::PartialMatch(ProblemKey(problem.matmul), *filter))
        kept.push_back(std::move(problem));
    }
    list.problems = std::move(kept);
  }
  const std::vector<ChosenConfig> chosen = ChooseConfigs(
      list, cache && !flags.tune ? &*cache : nullptr, flags.split_k_mode);
  const bool input_errors = !list.errors.empty();
  if (absl::Status s = list.Errors(); !s.ok()) std::cerr << s.message() << "\n";

  // What each problem is (and, under --resume, whether an earlier run
  // finished it).
  std::vector<ProblemResult> results;
  for (size_t p = 0; p < list.problems.size(); ++p) {
    ProblemResult& identity =
        results.emplace_back(IdentityOf(list.problems[p]));
    identity.config = gen::DescribeConfig(chosen[p].config);
    identity.config_source = chosen[p].source;
  }
  std::vector<size_t> to_run;
  int finished_earlier = 0;
  {
    std::vector<std::optional<ProblemResult>> earlier(results.size());
    if (previous) earlier = FinishedEarlier(*previous, results);
    for (size_t p = 0; p < results.size(); ++p) {
      if (earlier[p]) {
        results[p] = *std::move(earlier[p]);
        ++finished_earlier;
      } else {
        to_run.push_back(p);
        results[p].status = "pending";
        results[p].message = "not run yet (the run was interrupted)";
      }
    }
  }

  // The devices, probed in a child: this process stays without CUDA, so
  // its children (and workers) can use it.
  const char* inherited_visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string inherited = inherited_visible ? inherited_visible : "";
  std::vector<std::string> device_names;
  if (!to_run.empty()) {
    ProblemResult probe = RunInChild(
        [] {
          ProblemResult result;
          absl::StatusOr<std::vector<std::string>> devices = DescribeDevices();
          absl::StatusOr<std::string> usable = DescribeDevice();
          result.status = usable.ok() ? "passed" : "skipped";
          result.message =
              usable.ok() ? "" : std::string(usable.status().message());
          if (devices.ok()) result.log = absl::StrJoin(*devices, "\n");
          return result;
        },
        120, ProblemResult());
    if (!probe.passed()) {
      std::cout << "kir-bench: " << list.problems.size()
                << " problem(s) read and checked"
                << (input_errors
                        ? absl::StrCat(", ", list.errors.size(), " error(s)")
                        : "")
                << "; skipped, no usable GPU: " << probe.message << "\n";
      return input_errors ? 1 : 77;
    }
    device_names = absl::StrSplit(probe.log, '\n');
  }

  // The workers' devices (--gpus), or this process's GPU 0.
  std::vector<WorkerDevice> workers;
  std::vector<int> indices = {0};
  if (!flags.gpus.empty() && !to_run.empty()) {
    absl::StatusOr<std::vector<int>> parsed =
        ParseGpus(flags.gpus, static_cast<int>(device_names.size()));
    if (!parsed.ok()) {
      std::cerr << "kir-bench: " << parsed.status().message() << "\n";
      return 1;
    }
    indices = *parsed;
    for (int index : indices) {
      const std::string visible = PinnedDevice(index, inherited);
      workers.push_back({visible, visible});
    }
  }

  if (std::set<int>(indices.begin(), indices.end()).size() < indices.size()) {
    std::cerr << "kir-bench: several workers share a GPU: their kernels and "
                 "baselines run at the same time, so their times disturb "
                 "each other (checking correctness, not timing)\n";
  }

  RunInfo info;
  info.problems_file = flags.csv_path;
  info.pipelines = flags.pipelines;
  info.tune = flags.tune;
  info.commit = KIR_GIT_COMMIT;
  // The GPUs that run problems: their name when they are all alike (as
  // on one GPU), else each GPU's.
  std::vector<std::string> used;
  std::set<std::string> names;
  for (int index : indices) {
    if (index >= static_cast<int>(device_names.size())) continue;
    used.push_back(absl::StrCat("GPU ", PinnedDevice(index, inherited), ": ",
                                device_names[index]));
    names.insert(device_names[index]);
  }
  if (names.size() == 1) {
    info.device = *names.begin();
  } else if (!used.empty()) {
    info.device = absl::StrJoin(used, "; ");
  } else if (!results.empty()) {
    info.device = results.front().device;  // every problem ran earlier
  }
  for (const ProblemError& error : list.errors)
    info.input_errors.push_back(std::string(error.status.message()));

  std::cerr << "kir-bench: " << to_run.size() << " problem(s) on "
            << (workers.size() > 1
                    ? absl::StrCat(workers.size(), " workers (",
                                   absl::StrJoin(used, ", "), ")")
                    : info.device);
  if (previous) {
    std::cerr << "; " << finished_earlier << " finished earlier ("
              << previous->path << ")";
  }
  std::cerr << "\n";
  Progress progress(std::cerr, static_cast<int>(to_run.size()),
                    isatty(STDERR_FILENO) != 0);
  // With --json, the report so far is rewritten every 10 s or so (rows
  // not run yet are "pending"): an interrupted run leaves a report that
  // --resume goes on from.
  std::vector<ProblemResult> so_far = results;
  auto last_checkpoint = std::chrono::steady_clock::now();
  auto checkpoint = [&](size_t p, const ProblemResult& result) {
    so_far[p] = result;
    const auto now = std::chrono::steady_clock::now();
    if (flags.json_out.empty() || now - last_checkpoint < kCheckpointPeriod)
      return;
    last_checkpoint = now;
    if (absl::Status s = WriteText(flags.json_out, FormatJson(so_far, info));
        !s.ok())
      std::cerr << "\nkir-bench: " << s.message() << "\n";
  };
  const std::string label = PinnedDevice(0, inherited);
  auto run_one = [&](size_t p, Progress* shown) {
    const BenchProblem& problem = list.problems[p];
    if (flags.tune) return TuneProblem(problem, chosen[p], flags, shown);
    if (shown) shown->Start(problem.name);
    return RunInChild(
        [&] {
          return RunBenchProblem(problem, chosen[p].config, chosen[p].source,
                                 flags.bench);
        },
        flags.timeout, results[p]);
  };
  if (workers.empty()) {
    for (size_t p : to_run) {
      results[p] = run_one(p, &progress);
      results[p].gpu = label;
      if (flags.tune) RecordTuned(results[p], flags, *cache);
      checkpoint(p, results[p]);
      progress.Finish(results[p]);
    }
    progress.Done();
  } else {
    results = RunOnWorkers(
        results, to_run, workers, [&](size_t p) { return run_one(p, nullptr); },
        [&](size_t p, const ProblemResult& result) {
          if (flags.tune) RecordTuned(result, flags, *cache);
          checkpoint(p, result);
        },
        &progress);
  }

  std::cout << FormatTable(results, info);
  bool hung = false, failed = false;
  for (const ProblemResult& result : results) {
    hung = hung || result.status == "hang";
    if (result.passed()) continue;
    failed = true;
    std::cout << "\n"
              << flags.csv_path << ":" << result.line << ": " << result.name
              << ": " << result.status << ": " << result.message << "\n";
  }
  std::string log;
  for (const ProblemResult& result : results)
    absl::StrAppend(&log, "== ", result.name, " (", result.config,
                    "): ", result.status, "\n", result.log, "\n");
  std::vector<std::pair<std::string, std::string>> outputs = {
      {flags.csv_out, FormatCsv(results, info)},
      {flags.json_out, FormatJson(results, info)},
      {flags.plot_out, FormatSvg(results, info)},
      {flags.log_out, log}};
  for (const auto& [path, contents] : outputs) {
    if (path.empty()) continue;
    if (absl::Status s = WriteText(path, contents); !s.ok()) {
      std::cerr << "kir-bench: " << s.message() << "\n";
      failed = true;
    }
  }
  if (flags.tune) std::cout << "tuning cache: " << flags.tune_cache << "\n";
  if (hung) return 3;
  return failed || input_errors ? 1 : 0;
}

}  // namespace
}  // namespace kir::bench

int main(int argc, char** argv) { return kir::bench::Main(argc, argv); }
