// kir-opt: parses a .kir file, verifies it, runs a pass pipeline and prints
// the result. The test driver behind every lit golden.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/sync_check.h"
#include "analysis/verifier.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"
#include "ir/ir.h"
#include "parser/parser.h"
#include "parser/source_reader.h"
#include "passes/pass.h"
#include "passes/pipeline.h"
#include "printer/cuda_emitter.h"
#include "printer/kir_printer.h"
#include "printer/nvrtc_compiler.h"
#include "tools/compile/compile.h"
#include "tools/kir-opt/split_input.h"
#include "tools/kir-opt/verify_diagnostics.h"

namespace kir {
namespace {

constexpr char kUsage[] = R"(usage: kir-opt [options] FILE
Parses FILE ('-' for stdin), verifies it, runs the passes given by
--pipeline (none by default) and prints the result.

Pipeline:
  --pipeline=PIPELINE      'default' or passes, e.g. 'canonicalize,dce{a=1}'
  --list-passes            list passes, their summaries and options
  --verify-each=BOOL       verify after every pass that changed the kernel
                           (default true)
  --verify-analyses        after every pass, rebuild each analysis the pass
                           kept and fail if it answers differently (and
                           verify after every pass, failing one that said
                           it changed nothing and did)
  --reproducer=PATH        where to write the reproducer when a pass fails
                           (default: a new file in $TMPDIR or /tmp)
Debugging:
  --print-ir-after-all     print the module after every pass (stderr)
  --print-ir-after=PASS    print the module after each run of PASS (stderr)
  --print-changed          diff each kernel a pass changes (stderr)
  --time-passes            print a table of pass times, and of analysis
                           builds and cache hits (stderr)
  --stats                  print each pass's counters, and how often it
                           built each analysis or found it cached (stderr)
Testing:
  --split-input-file       process each '// -----' separated part alone
  --verify-diagnostics     check diagnostics against expected-error,
                           expected-warning and expected-note directives
Input:
  --max-input-bytes=N      refuse inputs larger than N bytes (K, M, G
                           suffixes; default 256M, at most 1G)
Output:
  -o FILE                  write the output to FILE (default stdout)
  --emit=kir|cuda|ptx|cubin
                           output: kir text (default), the CUDA C++ translation
                           unit, PTX for compute_90a, or an sm_90a cubin (NVRTC)
  --print-effects          print each op's effects instead of the IR
  --print-provenance       print loc(inserted ...) on inserted ops
  --print-pending          print the groups each wait leaves pending
Checks:
  --check-syncs            after the pipeline, check that every conflicting
                           pair of shared-memory accesses is ordered and that
                           every barrier insert-syncs added is needed
  --check-fences=writers|issuer
                           after the pipeline, check that every generic->async
                           proxy edge has its fence in that placement model
                           and every fence insert-proxy-fences added is needed
  --help                   print this help
)";

struct Flags {
  std::string input;
  std::string output = "-";
  std::optional<std::string> pipeline;
  std::string print_ir_after;
  std::string emit = "kir";
  std::string reproducer;
  std::string check_fences;
  std::string max_input_bytes_text;
  size_t max_input_bytes = kDefaultMaxInputBytes;
  bool help = false;
  bool list_passes = false;
  bool verify_each = true;
  bool verify_analyses = false;
  bool print_ir_after_all = false;
  bool print_changed = false;
  bool time_passes = false;
  bool stats = false;
  bool split_input_file = false;
  bool verify_diagnostics = false;
  bool print_effects = false;
  bool print_provenance = false;
  bool print_pending = false;
  bool check_syncs = false;
};

struct BoolFlag {
  const char* name;
  bool Flags::*field;
};
constexpr BoolFlag kBoolFlags[] = {
    {"help", &Flags::help},
    {"list-passes", &Flags::list_passes},
    {"verify-each", &Flags::verify_each},
    {"verify-analyses", &Flags::verify_analyses},
    {"print-ir-after-all", &Flags::print_ir_after_all},
    {"print-changed", &Flags::print_changed},
    {"time-passes", &Flags::time_passes},
    {"stats", &Flags::stats},
    {"split-input-file", &Flags::split_input_file},
    {"verify-diagnostics", &Flags::verify_diagnostics},
    {"print-effects", &Flags::print_effects},
    {"print-provenance", &Flags::print_provenance},
    {"print-pending", &Flags::print_pending},
    {"check-syncs", &Flags::check_syncs},
};

struct ValueFlag {
  const char* name;
  std::string Flags::*field;
};
constexpr ValueFlag kValueFlags[] = {
    {"o", &Flags::output},
    {"print-ir-after", &Flags::print_ir_after},
    {"emit", &Flags::emit},
    {"reproducer", &Flags::reproducer},
    {"check-fences", &Flags::check_fences},
    {"max-input-bytes", &Flags::max_input_bytes_text},
};

int EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "; did you mean '--x'?" for a close flag name, else "".
std::string Suggestion(absl::string_view name) {
  std::vector<std::string> names = {"pipeline"};
  for (const BoolFlag& flag : kBoolFlags) names.push_back(flag.name);
  for (const ValueFlag& flag : kValueFlags) names.push_back(flag.name);
  std::string best;
  int best_distance = 3;  // suggest only near misses
  for (const std::string& candidate : names) {
    int distance = EditDistance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  if (best.empty()) return "";
  return absl::StrCat("; did you mean '", best.size() == 1 ? "-" : "--", best,
                      "'?");
}

absl::Status UsageError(absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(message, " (see kir-opt --help)"));
}

// Accepts `--name=value`, `--name value`, and a single dash for any of them.
absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  bool input_given = false;
  bool only_positional = false;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (only_positional || arg == "-" || !absl::StartsWith(arg, "-")) {
      if (input_given) {
        return UsageError(absl::StrCat("more than one input file: '",
                                       flags.input, "' and '", arg, "'"));
      }
      flags.input = std::string(arg);
      input_given = true;
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    absl::string_view body = arg;
    absl::ConsumePrefix(&body, "-");
    absl::ConsumePrefix(&body, "-");
    std::optional<std::string> value;
    size_t equals = body.find('=');
    absl::string_view name = body.substr(0, equals);
    if (equals != absl::string_view::npos) {
      value = std::string(body.substr(equals + 1));
    }
    if (name == "h") name = "help";
    bool known = false;
    for (const BoolFlag& flag : kBoolFlags) {
      if (name != flag.name) continue;
      known = true;
      if (!value || *value == "true" || *value == "1") {
        flags.*flag.field = true;
      } else if (*value == "false" || *value == "0") {
        flags.*flag.field = false;
      } else {
        return UsageError(absl::StrCat(
            "option '--", name, "' expects true or false, got '", *value, "'"));
      }
    }
    auto take_value = [&]() -> absl::StatusOr<std::string> {
      if (value) return *value;
      if (i + 1 >= argc) {
        return UsageError(absl::StrCat("option '", arg, "' needs a value"));
      }
      return std::string(argv[++i]);
    };
    if (name == "pipeline") {
      known = true;
      absl::StatusOr<std::string> text = take_value();
      if (!text.ok()) return text.status();
      flags.pipeline = *text;
    }
    for (const ValueFlag& flag : kValueFlags) {
      if (name != flag.name) continue;
      known = true;
      absl::StatusOr<std::string> text = take_value();
      if (!text.ok()) return text.status();
      flags.*flag.field = *text;
    }
    if (!known) {
      return UsageError(
          absl::StrCat("unknown option '", arg, "'", Suggestion(name)));
    }
  }
  if (flags.help || flags.list_passes) return flags;
  if (!input_given) return UsageError("no input file (use '-' for stdin)");
  if (flags.emit != "kir" && flags.emit != "cuda" && flags.emit != "ptx" &&
      flags.emit != "cubin") {
    return UsageError(absl::StrCat("unsupported --emit value '", flags.emit,
                                   "' (supported: kir, cuda, ptx, cubin)"));
  }
  if (!flags.check_fences.empty() && flags.check_fences != "writers" &&
      flags.check_fences != "issuer") {
    return UsageError(absl::StrCat("unsupported --check-fences value '",
                                   flags.check_fences,
                                   "' (supported: writers, issuer)"));
  }
  if (!flags.print_ir_after.empty() &&
      FindPass(flags.print_ir_after) == nullptr) {
    std::vector<std::string> names;
    for (const PassInfo& pass : RegisteredPasses()) names.push_back(pass.name);
    return UsageError(absl::StrCat(
        "--print-ir-after names unknown pass '", flags.print_ir_after,
        "'; known passes: ", absl::StrJoin(names, ", ")));
  }
  if (flags.output.empty()) return UsageError("-o needs a file name");
  if (!flags.max_input_bytes_text.empty() &&
      !ParseByteCount(flags.max_input_bytes_text, &flags.max_input_bytes)) {
    return UsageError(
        absl::StrCat("--max-input-bytes takes a byte count > 0 (e.g. 1048576 "
                     "or 512M), got '",
                     flags.max_input_bytes_text, "'"));
  }
  return flags;
}

void ListPasses(std::ostream& out) {
  out << "Passes:\n";
  size_t width = 0;
  for (const PassInfo& pass : RegisteredPasses()) {
    width = std::max(width, std::strlen(pass.name));
  }
  for (const PassInfo& pass : RegisteredPasses()) {
    out << "  " << pass.name
        << std::string(width - std::strlen(pass.name) + 2, ' ') << pass.summary
        << "\n";
    for (const PassOptionDecl& option : pass.options.decls()) {
      out << "  " << std::string(width + 2, ' ')
          << "option: " << option.Describe() << "\n";
    }
  }
  out << "Default pipeline: " << PipelineToString(DefaultPipeline()) << "\n";
}

// How the regions of an op with several are introduced in the report.
const char* RegionLabel(const Op& op, int region) {
  if (op.kind() == OpKind::kIf) return region == 0 ? "then" : "else";
  if (op.kind() == OpKind::kSplitK) return region == 0 ? "body" : "epilogue";
  return "region";
}

// Each op's first printed line, indented by nesting, followed by its
// effects, one per line, indented further; regions of ops with several are
// introduced by their name (`then:`, `else:`).
void PrintRegionEffects(const Region& region, int depth, std::string& out) {
  const std::string indent(2 * depth, ' ');
  for (const auto& op : region.ops()) {
    std::string printed = PrintOp(*op);
    absl::string_view header = printed;
    header = header.substr(0, header.find('\n'));
    absl::ConsumeSuffix(&header, " {");
    absl::StrAppend(&out, indent, header, "\n");
    for (absl::string_view line :
         absl::StrSplit(DescribeEffects(*op), '\n', absl::SkipEmpty())) {
      absl::StrAppend(&out, indent, "  // ", line, "\n");
    }
    for (int r = 0; r < op->num_regions(); ++r) {
      if (op->num_regions() > 1) {
        absl::StrAppend(&out, indent, RegionLabel(*op, r), ":\n");
      }
      PrintRegionEffects(op->region(r), depth + 1, out);
    }
  }
}

std::string PrintModuleEffects(const Module& module) {
  std::string out;
  for (const auto& kernel : module.kernels) {
    absl::StrAppend(&out, "effects of kernel @", kernel->name(), "\n");
    PrintRegionEffects(kernel->body(), 1, out);
  }
  return out;
}

// Emits CUDA C++ and, for `ptx` and `cubin`, compiles it with NVRTC.
absl::Status EmitTarget(const Compilation& compilation,
                        absl::string_view target, std::string& output) {
  absl::StatusOr<std::string> cuda = EmitLowered(compilation);
  if (!cuda.ok()) return cuda.status();
  absl::StatusOr<std::string> compiled = *cuda;
  if (target == "ptx") compiled = CompileToPtx(*cuda);
  if (target == "cubin") compiled = CompileToCubin(*cuda);
  if (!compiled.ok()) return compiled.status();
  output = *std::move(compiled);
  return absl::OkStatus();
}

// Parses, verifies, transforms and prints one input (or one part of it).
absl::Status ProcessSource(std::shared_ptr<const SourceFile> source,
                           const Flags& flags, const Pipeline& pipeline,
                           std::string& output) {
  CompileOptions compile;
  compile.pipeline = pipeline;
  PipelineRunOptions& options = compile.run;
  options.verify_each = flags.verify_each;
  options.verify_analyses = flags.verify_analyses;
  options.time_passes = flags.time_passes;
  options.statistics = flags.stats;
  options.print_ir_after_all = flags.print_ir_after_all;
  options.print_ir_after = flags.print_ir_after;
  options.print_changed = flags.print_changed;
  options.print.provenance = flags.print_provenance;
  options.print.pending_counts = flags.print_pending;
  // Failures are the point of --verify-diagnostics runs: no reproducer
  // files unless asked for.
  options.write_reproducer =
      !flags.verify_diagnostics || !flags.reproducer.empty();
  options.reproducer_path = flags.reproducer;
  absl::StatusOr<Compilation> compilation = Lower(source, compile, std::cerr);
  if (!compilation.ok()) return compilation.status();
  const Module& module = *compilation->module;
  absl::Status status;
  if (flags.check_syncs) {
    std::vector<absl::Status> failures;
    for (const auto& kernel : module.kernels) {
      failures.push_back(CheckSyncs(*kernel));
    }
    status = JoinStatuses(failures);
    if (!status.ok()) return status;
  }
  if (!flags.check_fences.empty()) {
    std::vector<absl::Status> failures;
    const FencePlacement placement = flags.check_fences == "issuer"
                                         ? FencePlacement::kIssuer
                                         : FencePlacement::kWriters;
    for (const auto& kernel : module.kernels) {
      failures.push_back(CheckProxyFences(*kernel, placement));
    }
    status = JoinStatuses(failures);
    if (!status.ok()) return status;
  }
  if (flags.emit != "kir") return EmitTarget(*compilation, flags.emit, output);
  output = flags.print_effects ? PrintModuleEffects(module)
                               : PrintModule(module, options.print);
  return absl::OkStatus();
}

int Fail(absl::string_view message) {
  std::cerr << "kir-opt: error: " << message << "\n";
  return 1;
}

int Main(int argc, char** argv) {
  absl::StatusOr<Flags> parsed = ParseFlags(argc, argv);
  if (!parsed.ok()) return Fail(parsed.status().message());
  const Flags& flags = *parsed;
  if (flags.help) {
    std::cout << kUsage;
    return 0;
  }
  if (flags.list_passes) {
    ListPasses(std::cout);
    return 0;
  }
  Pipeline pipeline;
  if (flags.pipeline) {
    absl::StatusOr<Pipeline> parsed_pipeline = ParsePipeline(*flags.pipeline);
    if (!parsed_pipeline.ok()) return Fail(parsed_pipeline.status().message());
    pipeline = *std::move(parsed_pipeline);
  }
  absl::StatusOr<std::string> text =
      ReadSourceText(flags.input, flags.max_input_bytes);
  if (!text.ok()) return Fail(text.status().message());
  const std::string file_name = flags.input == "-" ? "<stdin>" : flags.input;

  std::vector<InputChunk> chunks;
  if (flags.split_input_file) {
    chunks = SplitInputFile(*text);
  } else {
    chunks.push_back(InputChunk{*std::move(text), 1});
  }
  bool failed = false;
  std::vector<std::string> outputs;
  for (InputChunk& chunk : chunks) {
    auto source = std::make_shared<SourceFile>();
    source->name = file_name;
    source->text = std::move(chunk.text);
    std::string output;
    absl::Status status = ProcessSource(source, flags, pipeline, output);
    if (flags.verify_diagnostics) {
      absl::StatusOr<std::vector<ExpectedDiagnostic>> expected =
          ParseExpectedDiagnostics(source->text, file_name);
      absl::Status check =
          expected.ok()
              ? CheckDiagnostics(*expected, ReportedDiagnosticsOf(status),
                                 file_name)
              : expected.status();
      if (!check.ok()) {
        std::cerr << check.message() << "\n";
        failed = true;
      }
    } else if (!status.ok()) {
      std::cerr << status.message() << "\n";
      failed = true;
    }
    if (status.ok()) outputs.push_back(std::move(output));
  }

  // Written piece by piece: joining them first would copy the whole output.
  const std::string separator = absl::StrCat(kSplitMarker, "\n");
  auto write_outputs = [&](std::ostream& stream) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (i > 0) stream << separator;
      stream << outputs[i];
    }
  };
  if (flags.output == "-") {
    write_outputs(std::cout);
    std::cout.flush();
    if (!std::cout) {
      return Fail(absl::StrCat("cannot write to standard output: ",
                               std::strerror(errno)));
    }
  } else {
    std::ofstream file(flags.output, std::ios::binary | std::ios::trunc);
    write_outputs(file);
    file.close();
    if (!file) {
      return Fail(absl::StrCat("cannot write output file '", flags.output,
                               "': ", std::strerror(errno)));
    }
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace kir

int main(int argc, char** argv) { return kir::Main(argc, argv); }
