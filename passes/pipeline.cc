// The default pipeline, pipeline strings, and the pass runner.
#include "passes/pipeline.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/analysis_manager.h"
#include "analysis/verifier.h"
#include "ir/check.h"
#include "ir/diagnostics.h"
#include "passes/line_diff.h"

namespace kir {

// ---------------------------------------------------------------------------
// The default pipeline. One line per pass, in the order they run; each later
// pass may rely on what the ones above it ensure (see each pass's header).

Pipeline DefaultPipeline() {
  Pipeline pipeline;
  auto run = [&](const char* name) {
    const PassInfo* pass = FindPass(name);
    KIR_CHECK(pass != nullptr)
        << "default pipeline names unknown pass " << name;
    pipeline.push_back(PipelineEntry{pass, PassOptions({}, *pass)});
  };
  run("canonicalize");
  run("serialize-split-k");    // splitk -> workspace and semaphores
  run("circular-buffer");      // multi-stage buffers for loads in loops
  run("uniform-predicates");   // collective ops under uniform conditions
  run("insert-async-waits");   // commits, waits and wgmma fences
  run("plan-shared-memory");   // offsets for every shared allocation
  run("insert-syncs");         // barriers between conflicting accesses
  run("insert-proxy-fences");  // fence.proxy.async between proxies
  run("dce");
  return pipeline;
}

// ---------------------------------------------------------------------------
// Pipeline strings.

std::string PipelineEntry::ToString() const {
  return absl::StrCat(pass->name, options.ToString());
}

std::string PipelineToString(const Pipeline& pipeline) {
  return absl::StrJoin(pipeline, ",",
                       [](std::string* out, const PipelineEntry& entry) {
                         out->append(entry.ToString());
                       });
}

namespace {

std::string KnownPassNames(const std::vector<PassInfo>& registry) {
  std::vector<std::string> names;
  for (const PassInfo& pass : registry) names.push_back(pass.name);
  names.push_back("default");
  return absl::StrJoin(names, ", ");
}

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' ||
         c == '_' || c == '.';
}

// pipeline ::= entry (',' entry)*
// entry    ::= name ('{' option (',' option)* '}')?
// option   ::= name '=' value            // value: up to the next ',' or '}'
class PipelineParser {
 public:
  PipelineParser(absl::string_view text, const std::vector<PassInfo>& registry,
                 PipelineError* error = nullptr)
      : text_(text), registry_(registry), error_(error) {}

  absl::StatusOr<Pipeline> Parse() {
    Pipeline pipeline;
    SkipSpaces();
    if (pos_ == text_.size()) {
      return ErrorAt(pos_, "it is empty",
                     absl::StrCat("known passes: ", KnownPassNames(registry_)));
    }
    while (true) {
      absl::Status status = ParseEntry(pipeline);
      if (!status.ok()) return status;
      SkipSpaces();
      if (pos_ == text_.size()) break;
      if (text_[pos_] != ',') {
        return ErrorAt(pos_, absl::StrCat("expected ',' between passes, got '",
                                          text_.substr(pos_, 1), "'"));
      }
      ++pos_;
    }
    return pipeline;
  }

 private:
  absl::Status ParseEntry(Pipeline& pipeline) {
    SkipSpaces();
    const size_t name_pos = pos_;
    absl::string_view name = ReadName();
    if (name.empty()) {
      return ErrorAt(pos_, "expected a pass name",
                     absl::StrCat("known passes: ", KnownPassNames(registry_)));
    }
    SkipSpaces();
    const bool has_options = pos_ < text_.size() && text_[pos_] == '{';
    if (name == "default") {
      if (has_options) return ErrorAt(pos_, "'default' takes no options");
      for (PipelineEntry& entry : DefaultPipeline()) {
        pipeline.push_back(std::move(entry));
      }
      return absl::OkStatus();
    }
    const PassInfo* pass = nullptr;
    for (const PassInfo& candidate : registry_) {
      if (name == candidate.name) pass = &candidate;
    }
    if (pass == nullptr) {
      return ErrorAt(name_pos, absl::StrCat("unknown pass '", name, "'"),
                     absl::StrCat("known passes: ", KnownPassNames(registry_)));
    }
    OptionValues values;
    if (has_options) {
      absl::Status status = ParseOptions(*pass, values);
      if (!status.ok()) return status;
    }
    pipeline.push_back(
        PipelineEntry{pass, PassOptions(std::move(values), *pass)});
    return absl::OkStatus();
  }

  absl::Status ParseOptions(const PassInfo& pass, OptionValues& values) {
    const std::vector<PassOptionDecl>& decls = pass.options.decls();
    std::vector<std::string> accepted;
    for (const PassOptionDecl& decl : decls) {
      accepted.push_back(decl.Describe());
    }
    const std::string accepted_hint =
        accepted.empty()
            ? absl::StrCat("pass '", pass.name, "' takes no options")
            : absl::StrCat("pass '", pass.name, "' accepts (with defaults): ",
                           absl::StrJoin(accepted, ", "));
    std::vector<size_t> option_positions;
    ++pos_;  // '{'
    while (true) {
      SkipSpaces();
      const size_t option_pos = pos_;
      std::string option(ReadName());
      if (option.empty()) {
        return ErrorAt(pos_, "expected an option name", accepted_hint);
      }
      const PassOptionDecl* decl = pass.options.Find(option);
      if (decl == nullptr) {
        return ErrorAt(
            option_pos,
            absl::StrCat("pass '", pass.name, "' has no option '", option, "'"),
            accepted_hint);
      }
      for (const auto& [seen, unused] : values) {
        if (seen == option) {
          return ErrorAt(option_pos,
                         absl::StrCat("option '", option, "' given twice"));
        }
      }
      SkipSpaces();
      if (pos_ == text_.size() || text_[pos_] != '=') {
        return ErrorAt(
            pos_, absl::StrCat("expected '=' after option '", option, "'"));
      }
      ++pos_;
      SkipSpaces();
      const size_t value_pos = pos_;
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}') {
        ++pos_;
      }
      std::string value(absl::StripAsciiWhitespace(
          text_.substr(value_pos, pos_ - value_pos)));
      if (absl::Status status = CheckOptionValue(pass, *decl, value);
          !status.ok()) {
        return ErrorAt(value_pos, status.message(), accepted_hint);
      }
      values.emplace_back(std::move(option), std::move(value));
      option_positions.push_back(option_pos);
      if (pos_ == text_.size()) {
        return ErrorAt(pos_, "expected '}' to close the options of pass '" +
                                 std::string(pass.name) + "'");
      }
      if (text_[pos_++] == '}') break;
    }
    size_t offending = 0;
    if (absl::Status status = CheckOptionCombination(pass, values, &offending);
        !status.ok()) {
      return ErrorAt(option_positions[offending], status.message());
    }
    return absl::OkStatus();
  }

  void SkipSpaces() {
    while (pos_ < text_.size() &&
           absl::ascii_isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }

  absl::string_view ReadName() {
    const size_t start = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  // "invalid pipeline: message\n  <pipeline>\n  <caret>\nhint".
  absl::Status ErrorAt(size_t pos, absl::string_view message,
                       absl::string_view hint = "") const {
    if (error_ != nullptr) {
      *error_ = PipelineError{pos, std::string(message), std::string(hint)};
    }
    std::string out = absl::StrCat("invalid pipeline: ", message, "\n  ", text_,
                                   "\n  ", std::string(pos, ' '), "^");
    if (!hint.empty()) absl::StrAppend(&out, "\n", hint);
    return absl::InvalidArgumentError(out);
  }

  absl::string_view text_;
  const std::vector<PassInfo>& registry_;
  PipelineError* error_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<Pipeline> ParsePipeline(absl::string_view text,
                                       const std::vector<PassInfo>& registry) {
  return PipelineParser(text, registry).Parse();
}

absl::StatusOr<Pipeline> ParsePipeline(absl::string_view text,
                                       PipelineError* error) {
  return PipelineParser(text, RegisteredPasses(), error).Parse();
}

// ---------------------------------------------------------------------------
// Running.

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr char kRule[] =
    "===-------------------------------------------------------------------"
    "------===";

void PrintTimingReport(const Pipeline& pipeline,
                       const std::vector<double>& pass_seconds,
                       double verify_seconds, std::ostream& log) {
  double total = verify_seconds;
  for (double seconds : pass_seconds) total += seconds;
  auto row = [&](double seconds, absl::string_view name) {
    const double percent = total > 0 ? 100.0 * seconds / total : 0.0;
    log << absl::StrFormat("  %10.4f (%5.1f%%)  %s\n", seconds, percent, name);
  };
  log << kRule << "\n"
      << "                      ... Pass execution timing report ...\n"
      << kRule << "\n"
      << absl::StrFormat("  Total Execution Time: %.4f seconds\n\n", total)
      << "   ----Wall Time----  ----Name----\n";
  for (size_t i = 0; i < pipeline.size(); ++i) {
    row(pass_seconds[i], pipeline[i].ToString());
  }
  row(verify_seconds, "(verifier)");
  row(total, "Total");
}

void PrintStatisticsReport(const Pipeline& pipeline,
                           const std::vector<PassStatistics>& stats,
                           std::ostream& log) {
  log << kRule << "\n"
      << "                         ... Pass statistics report ...\n"
      << kRule << "\n";
  for (size_t i = 0; i < pipeline.size(); ++i) {
    log << pipeline[i].ToString() << "\n";
    size_t width = 1;
    for (const auto& [name, value] : stats[i].counters()) {
      width = std::max(width, absl::StrCat(value).size());
    }
    for (const auto& [name, value] : stats[i].counters()) {
      log << absl::StrFormat("  (S) %*d %s\n", static_cast<int>(width), value,
                             name);
    }
  }
}

// Per pipeline entry (and the verifier after the passes), each analysis's
// builds, cache hits and build time, as a share of the pipeline's time.
void PrintAnalysisTimingReport(
    const Pipeline& pipeline, const std::vector<double>& pass_seconds,
    double verify_seconds,
    const std::vector<std::map<std::string, AnalysisCounts>>& counts,
    std::ostream& log) {
  double total = verify_seconds;
  for (double seconds : pass_seconds) total += seconds;
  log << "\n   ----Wall Time----  --Builds--  --Cached--  ----Analysis----\n";
  for (size_t i = 0; i < counts.size(); ++i) {
    for (const auto& [name, value] : counts[i]) {
      const double percent = total > 0 ? 100.0 * value.seconds / total : 0.0;
      log << absl::StrFormat(
          "  %10.4f (%5.1f%%)  %10d  %10d  %s in %s\n", value.seconds, percent,
          value.builds, value.hits, name,
          i < pipeline.size() ? pipeline[i].ToString() : "(verifier)");
    }
  }
}

// Each analysis's builds and cache hits over the pipeline, passes and
// verifier together (--time-passes splits them by pass; pass names here
// would confuse tests that find a pass's counters by its name).
void PrintAnalysisStatisticsReport(
    const std::vector<std::map<std::string, AnalysisCounts>>& counts,
    std::ostream& log) {
  std::map<std::string, AnalysisCounts> sums;
  for (const auto& per_entry : counts) {
    for (const auto& [name, value] : per_entry) sums[name] += value;
  }
  log << kRule << "\n"
      << "                       ... Analysis statistics report ...\n"
      << kRule << "\n";
  for (const auto& [name, value] : sums) {
    log << absl::StrFormat("  (A) %d built, %d cached %s\n", value.builds,
                           value.hits, name);
  }
}

// Writes the reproducer; returns its path or an error.
absl::StatusOr<std::string> WriteReproducer(const PipelineRunOptions& options,
                                            const std::string& ir,
                                            const PipelineEntry& entry) {
  std::string path = options.reproducer_path;
  std::string contents = absl::StrCat(
      "// kir-opt reproducer: run with --pipeline='", entry.ToString(),
      "'\n// The input to the pass that failed.\n", ir);
  if (path.empty()) {
    const char* tmpdir = getenv("TMPDIR");
    std::string pattern =
        absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp",
                     "/kir-opt-reproducer-XXXXXX.kir");
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    int fd = mkstemps(buffer.data(), 4);
    if (fd < 0) {
      return absl::UnavailableError(
          absl::StrCat("could not create a reproducer file from ", pattern));
    }
    close(fd);
    path = buffer.data();
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << contents;
  file.close();
  if (!file) {
    return absl::UnavailableError(
        absl::StrCat("could not write the reproducer to '", path, "'"));
  }
  return path;
}

// What a replay runs with: the same checks, no output, no reproducer.
PipelineRunOptions ReplayOptions(const PipelineRunOptions& options) {
  PipelineRunOptions replay;
  replay.verify_each = options.verify_each;
  replay.verify_analyses = options.verify_analyses;
  replay.write_reproducer = false;
  return replay;
}

// The IR pass `failed` of `pipeline` got, rebuilt (RebuildBefore).
// `fails_again` tells whether the pass (and the checks after it) then fail
// again, which they do unless something in the pipeline depends on more
// than its input.
absl::StatusOr<std::string> RebuildInputOf(const Pipeline& pipeline,
                                           size_t failed,
                                           const PipelineRunOptions& options,
                                           bool& fails_again) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      RebuildBefore(pipeline, failed, options);
  if (!module.ok()) return module.status();
  PrintOptions print;
  print.provenance = true;
  std::string ir = PrintModule(**module, print);
  std::ostringstream discarded;
  fails_again = !RunPipeline(**module, {pipeline[failed]},
                             ReplayOptions(options), discarded)
                     .ok();
  return ir;
}

// The failure status: the diagnostics, then what failed, then where the
// reproducer is. `ir_before`: the input of pass `failed`, when it was
// printed before the pass ran. The added lines have no `file:line:col:` so
// that --verify-diagnostics does not take them for diagnostics.
absl::Status PipelineFailure(const absl::Status& status, absl::string_view what,
                             const PipelineRunOptions& options,
                             const std::string& ir_before,
                             const Pipeline& pipeline, size_t failed) {
  std::string message = absl::StrCat(status.message(), "\nerror: ", what);
  if (options.write_reproducer) {
    const PipelineEntry& entry = pipeline[failed];
    bool fails_again = true;
    absl::StatusOr<std::string> ir =
        options.rebuild_input
            ? RebuildInputOf(pipeline, failed, options, fails_again)
            : ir_before;
    absl::StatusOr<std::string> path =
        ir.ok() ? WriteReproducer(options, *ir, entry) : ir.status();
    if (path.ok()) {
      absl::StrAppend(&message, "\nnote: reproducer written to ", *path,
                      "; run: kir-opt ", *path, " --pipeline='",
                      entry.ToString(), "'");
      if (!fails_again) {
        absl::StrAppend(&message,
                        "\nnote: the pass did not fail again on its input "
                        "rebuilt from the source, so the reproducer may not "
                        "reproduce");
      }
    } else {
      absl::StrAppend(&message, "\nnote: ", path.status().message());
    }
  }
  return KeepDiagnostics(absl::Status(status.code(), message), status);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> RebuildBefore(
    const Pipeline& pipeline, size_t end, const PipelineRunOptions& options) {
  KIR_CHECK(options.rebuild_input) << "nothing to rebuild the input with";
  absl::StatusOr<std::unique_ptr<Module>> module = options.rebuild_input();
  if (!module.ok()) return module.status();
  std::ostringstream discarded;
  const Pipeline before(pipeline.begin(), pipeline.begin() + end);
  if (!RunPipeline(**module, before, ReplayOptions(options), discarded).ok()) {
    return absl::InternalError(
        "no reproducer: the passes before the failing one failed when run "
        "again on the input");
  }
  return module;
}

absl::Status RunPipeline(Module& module, const Pipeline& pipeline,
                         const PipelineRunOptions& options, std::ostream& log) {
  std::vector<double> pass_seconds(pipeline.size(), 0.0);
  std::vector<PassStatistics> stats(pipeline.size());
  // Analysis builds and cache hits of each pass, then of the verifier.
  std::vector<std::map<std::string, AnalysisCounts>> analysis_counts(
      pipeline.size() + 1);
  double verify_seconds = 0;
  auto print_reports = [&] {
    if (options.time_passes) {
      PrintTimingReport(pipeline, pass_seconds, verify_seconds, log);
      PrintAnalysisTimingReport(pipeline, pass_seconds, verify_seconds,
                                analysis_counts, log);
    }
    if (options.statistics) {
      PrintStatisticsReport(pipeline, stats, log);
      PrintAnalysisStatisticsReport(analysis_counts, log);
    }
  };
  PrintOptions reproducer_print;
  reproducer_print.provenance = true;
  // Each kernel's analyses live across the passes, until one changes what
  // they describe.
  std::vector<std::unique_ptr<AnalysisManager>> analyses;
  for (const std::unique_ptr<Kernel>& kernel : module.kernels) {
    analyses.push_back(std::make_unique<AnalysisManager>(*kernel));
  }
  auto take_counts = [&](AnalysisManager& manager, size_t into) {
    for (const auto& [name, counts] : manager.TakeCounts()) {
      analysis_counts[into][name] += counts;
    }
  };

  for (size_t p = 0; p < pipeline.size(); ++p) {
    const PipelineEntry& entry = pipeline[p];
    const std::string ir_before =
        options.write_reproducer && !options.rebuild_input
            ? PrintModule(module, reproducer_print)
            : "";
    for (size_t k = 0; k < module.kernels.size(); ++k) {
      Kernel* kernel = module.kernels[k].get();
      AnalysisManager& manager = *analyses[k];
      const std::string kernel_before =
          options.print_changed ? PrintKernel(*kernel, options.print) : "";
      PassContext context{stats[p], &manager};
      // To check a claim that nothing changed (below).
      const std::string checked_before =
          options.verify_analyses ? PrintKernel(*kernel, reproducer_print) : "";
      Clock::time_point start = Clock::now();
      absl::Status status = entry.pass->run(*kernel, entry.options, context);
      pass_seconds[p] += SecondsSince(start);
      manager.Invalidate(context.preserved);
      take_counts(manager, p);
      if (!status.ok()) {
        print_reports();
        return PipelineFailure(
            status,
            absl::StrCat("pass '", entry.ToString(), "' failed on kernel @",
                         kernel->name()),
            options, ir_before, pipeline, p);
      }
      // A pass that preserved every analysis changed nothing: the kernel
      // verifies as it did before (MLIR's rule), so the verifier is not run
      // again. --verify-analyses checks the claim and verifies anyway.
      const bool unchanged = context.preserved.IsAll();
      if (options.verify_analyses && unchanged &&
          PrintKernel(*kernel, reproducer_print) != checked_before) {
        print_reports();
        return PipelineFailure(
            absl::InternalError("the kernel's text differs from before the "
                                "pass"),
            absl::StrCat("pass '", entry.ToString(), "' changed kernel @",
                         kernel->name(),
                         " but preserved every analysis, which says it did "
                         "not"),
            options, ir_before, pipeline, p);
      }
      if (options.verify_analyses) {
        status = manager.VerifyCached();
        if (!status.ok()) {
          print_reports();
          return PipelineFailure(status,
                                 absl::StrCat("pass '", entry.ToString(),
                                              "' left a stale analysis of "
                                              "kernel @",
                                              kernel->name()),
                                 options, ir_before, pipeline, p);
        }
      }
      if (options.verify_each && (!unchanged || options.verify_analyses)) {
        start = Clock::now();
        status = Verify(*kernel, manager);
        verify_seconds += SecondsSince(start);
        take_counts(manager, pipeline.size());
        if (!status.ok()) {
          print_reports();
          return PipelineFailure(status,
                                 absl::StrCat("kernel @", kernel->name(),
                                              " does not verify after pass '",
                                              entry.ToString(), "'"),
                                 options, ir_before, pipeline, p);
        }
      }
      if (options.print_changed) {
        const std::string kernel_after = PrintKernel(*kernel, options.print);
        const std::string header = absl::StrCat(
            "// *** IR after ", entry.ToString(), " on @", kernel->name());
        if (kernel_after == kernel_before) {
          log << header << ": (unchanged) ***\n";
        } else {
          log << header << " ***\n"
              << UnifiedDiff(kernel_before, kernel_after,
                             absl::StrCat("before ", entry.pass->name),
                             absl::StrCat("after ", entry.pass->name));
        }
      }
    }
    if (options.print_ir_after_all ||
        options.print_ir_after == entry.pass->name) {
      log << "// *** IR after " << entry.ToString() << " ***\n"
          << PrintModule(module, options.print);
    }
  }
  print_reports();
  return absl::OkStatus();
}

}  // namespace kir
