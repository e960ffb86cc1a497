// kir-run: runs the `// run:` directives of a .kir file on the GPU.
//
//   kir-run [options] FILE
//
// Each directive runs in a child process of its own, under a watchdog, so
// a kernel that hangs (a wrong mbarrier parity, a semaphore never released)
// is reported as a hang and cannot take the other directives down with it.
//
// Exit codes: 0 every directive passed; 1 a mismatch or an error (including
// a mistake in a directive, reported with its location); 3 a directive hung
// (takes precedence); 77 no usable GPU (ctest's SKIP_RETURN_CODE). Whatever
// can be checked without a GPU (the file, the directives against the
// kernel, every pipeline, the output paths) is checked before looking for
// one, so such a mistake exits 1 everywhere and is never a skip.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "analysis/verifier.h"
#include "ir/diagnostics.h"
#include "parser/parser.h"
#include "parser/source_reader.h"
#include "passes/pipeline.h"
#include "printer/nvrtc_compiler.h"
#include "tools/kir-check/interp_target.h"
#include "tools/kir-run/child_process.h"
#include "tools/kir-run/device.h"
#include "tools/kir-run/directive.h"
#include "tools/kir-run/runner.h"

#ifndef KIR_GIT_COMMIT
#define KIR_GIT_COMMIT "unknown"
#endif

namespace kir {
namespace {

constexpr char kUsage[] = R"(usage: kir-run [options] FILE

Runs every `// run:` directive of FILE (ir/language.md, "Run directives"):
lowers the kernel, compiles it with NVRTC for sm_90a, launches it on the GPU
with the bound sizes and inputs, and compares its outputs with references.

  --pipeline=P           run pipeline P before compiling (overrides the
                         directives' pipeline=; default: theirs, else none)
  --only=N               run only directive N (1-based, in file order)
  --directive='@K ...'   run this directive instead of the file's (same
                         syntax, without `// run:`), e.g. at another size
  --bench                time each directive (CUDA events): median, min and
                         max over --repeats measurements of --iterations
                         launches, against cuBLASLt (matrix products) or a
                         device-to-device copy of as many bytes; registers,
                         spills and shared memory
  --occupancy            print each kernel's launch shared memory and blocks
                         per SM, from the CUDA runtime and from the model
                         plan-shared-memory reports; a difference fails
  --compare-pipelines P1 P2
                         run both pipelines on the same inputs, check both,
                         then time them alternately: time(P2)/time(P1)
  --repetitions=N        launch and check each directive N times (fresh
                         inputs); every run must pass and leave outputs
                         bit-identical to the first
  --warmup=N --iterations=N --repeats=N
                         timing parameters (default 10, 50, 5)
  --json=FILE            write every result (device, driver, commit, checks,
                         times) as JSON
  --sanitize=TOOL        run each directive under compute-sanitizer
                         (racecheck, synccheck, memcheck, initcheck); any
                         report fails the directive
  --timeout=SECONDS      watchdog per directive (default 60; 900 under
                         --sanitize); a directive still running is a hang
  --emit=sass            print the SASS of the lowered module (cuobjdump)
                         instead of running it
  --dump-dir=DIR         write the lowered .kir, .cu, .ptx and .cubin there
  --max-input-bytes=N    refuse input files larger than N bytes (K, M, G
                         suffixes; default 256M)
  --no-verify            do not verify the input or after each pass: runs a
                         kernel the verifier rejects, to show what goes wrong
                         on the GPU without the pass that would fix it
  --target=T             gpu (default) or interp: run on the CPU interpreter
                         (kir-check's reference schedule, references on the
                         CPU); needs no GPU; --repetitions launches N
                         times, each from the workspaces the last left
                         under workspace=once; --bench, --sanitize and the
                         other GPU options do not apply
  --probe                exit 0 if a usable GPU (sm_90) is present, else 77
  --launch-overhead      time 1000 host launches of directive 1's kernel
                         through kir-run and through cudaLaunchKernelExC
)";

struct Flags {
  std::string file;
  RunOptions run;
  std::optional<int> only;
  std::string json_path;
  std::string sanitize;
  std::optional<double> timeout_seconds;
  bool emit_sass = false;
  bool probe = false;
  bool launch_overhead = false;
  size_t max_input_bytes = kDefaultMaxInputBytes;
  bool interp = false;  // --target=interp
  // Internal: this process is the child for one directive.
  std::optional<int> child_index;
  std::string result_file;
};

bool ParseInt(absl::string_view text, int& value) {
  return absl::SimpleAtoi(text, &value) && value >= 0;
}

// Returns an error message, or "" when the flags are fine.
std::string ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    auto value_of = [&](absl::string_view name, std::string& value) {
      if (absl::StartsWith(arg, absl::StrCat(name, "="))) {
        value = std::string(arg.substr(name.size() + 1));
        return true;
      }
      return false;
    };
    std::string value;
    int number = 0;
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (value_of("--pipeline", value)) {
      flags.run.pipeline = value;
    } else if (arg == "--compare-pipelines") {
      if (i + 2 >= argc) return "--compare-pipelines takes two pipelines";
      flags.run.compare_pipelines = {argv[i + 1], argv[i + 2]};
      i += 2;
    } else if (value_of("--directive", value)) {
      flags.run.directive = value;
    } else if (value_of("--only", value)) {
      if (!ParseInt(value, number) || number < 1)
        return "--only takes a directive number >= 1";
      flags.only = number;
    } else if (arg == "--bench") {
      flags.run.bench = true;
    } else if (arg == "--occupancy") {
      flags.run.occupancy = true;
    } else if (value_of("--warmup", value)) {
      if (!ParseInt(value, flags.run.warmup)) return "--warmup takes N >= 0";
    } else if (value_of("--iterations", value)) {
      if (!ParseInt(value, flags.run.iterations) || flags.run.iterations < 1)
        return "--iterations takes N >= 1";
    } else if (value_of("--repeats", value)) {
      if (!ParseInt(value, flags.run.repeats) || flags.run.repeats < 1)
        return "--repeats takes N >= 1";
    } else if (value_of("--repetitions", value)) {
      if (!ParseInt(value, flags.run.repetitions) || flags.run.repetitions < 1)
        return "--repetitions takes N >= 1";
    } else if (value_of("--json", value)) {
      flags.json_path = value;
    } else if (value_of("--sanitize", value)) {
      if (value != "racecheck" && value != "synccheck" && value != "memcheck" &&
          value != "initcheck")
        return "--sanitize takes racecheck, synccheck, memcheck or initcheck";
      flags.sanitize = value;
    } else if (value_of("--timeout", value)) {
      double seconds = 0;
      if (!absl::SimpleAtod(value, &seconds) || !(seconds > 0))
        return "--timeout takes a number of seconds > 0";
      flags.timeout_seconds = seconds;
    } else if (value_of("--emit", value)) {
      if (value != "sass") return "--emit takes sass (kir-opt emits the rest)";
      flags.emit_sass = true;
    } else if (value_of("--dump-dir", value)) {
      flags.run.dump_dir = value;
    } else if (value_of("--max-input-bytes", value)) {
      if (!ParseByteCount(value, &flags.max_input_bytes))
        return "--max-input-bytes takes a byte count > 0 (e.g. 512M)";
    } else if (arg == "--no-verify") {
      flags.run.verify = false;
    } else if (value_of("--target", value)) {
      if (value != "gpu" && value != "interp")
        return "--target takes gpu or interp";
      flags.interp = value == "interp";
    } else if (arg == "--probe") {
      flags.probe = true;
    } else if (arg == "--launch-overhead") {
      flags.launch_overhead = true;
    } else if (value_of("--child", value)) {
      if (!ParseInt(value, number)) return "--child takes an index";
      flags.child_index = number;
    } else if (value_of("--result-file", value)) {
      flags.result_file = value;
    } else if (absl::StartsWith(arg, "-") && arg != "-") {
      return absl::StrCat("unknown option ", arg, " (see --help)");
    } else if (flags.file.empty()) {
      flags.file = std::string(arg);
    } else {
      return absl::StrCat("more than one input file: ", flags.file, " and ",
                          arg);
    }
  }
  if (flags.file.empty() && !flags.probe) return "no input file (see --help)";
  return "";
}

absl::StatusOr<std::shared_ptr<SourceFile>> ReadSource(const std::string& path,
                                                       size_t max_bytes) {
  absl::StatusOr<std::string> text = ReadSourceText(path, max_bytes);
  if (!text.ok()) return text.status();
  auto source = std::make_shared<SourceFile>();
  source->name = path;
  source->text = *std::move(text);
  return source;
}

// Whether `path` can be written (created, or overwritten), without
// touching it; an error saying why not.
absl::Status CheckWritableFile(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", path, "' is a directory"));
    }
    if (access(path.c_str(), W_OK) != 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write '", path, "': ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  const size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "."
                                : slash == 0               ? "/"
                                             : path.substr(0, slash);
  if (access(directory.c_str(), W_OK | X_OK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create '", path, "' in '", directory,
                     "': ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// `path` as a directory to write into, created if it does not exist.
absl::Status PrepareDumpDirectory(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create '", path, "': ", error.message()));
  }
  if (!std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not a directory"));
  }
  if (access(path.c_str(), W_OK | X_OK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write into '", path, "': ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// "kir-run: FLAG: invalid pipeline: ..." for a pipeline on the command line.
absl::Status CheckFlagPipeline(absl::string_view flag,
                               const std::string& pipeline) {
  if (pipeline.empty()) return absl::OkStatus();
  absl::StatusOr<Pipeline> parsed = ParsePipeline(pipeline);
  if (parsed.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("kir-run: ", flag, ": ", parsed.status().message()));
}

// What can be checked without a GPU beyond the directives themselves: their
// pipelines (located in the directive) and the command line's, and the
// output paths. All errors, joined.
absl::Status ValidateRun(const Flags& flags,
                         const std::vector<RunDirective>& directives) {
  std::vector<absl::Status> errors;
  for (const RunDirective& directive : directives) {
    if (!directive.pipeline || directive.pipeline->empty()) continue;
    PipelineError error;
    if (ParsePipeline(*directive.pipeline, &error).ok()) continue;
    Location loc = directive.pipeline_loc;
    loc.column += 1 + static_cast<int>(error.offset);  // past the quote
    errors.push_back(Error(loc)
                     << "invalid pipeline: " << error.message
                     << (error.hint.empty() ? "" : "; ") << error.hint);
  }
  if (flags.run.pipeline) {
    errors.push_back(CheckFlagPipeline("--pipeline", *flags.run.pipeline));
  }
  for (const std::string& pipeline : flags.run.compare_pipelines) {
    errors.push_back(CheckFlagPipeline("--compare-pipelines", pipeline));
  }
  if (!flags.json_path.empty()) {
    if (absl::Status s = CheckWritableFile(flags.json_path); !s.ok()) {
      errors.push_back(absl::Status(
          s.code(), absl::StrCat("kir-run: --json: ", s.message())));
    }
  }
  if (!flags.run.dump_dir.empty()) {
    if (absl::Status s = PrepareDumpDirectory(flags.run.dump_dir); !s.ok()) {
      errors.push_back(absl::Status(
          s.code(), absl::StrCat("kir-run: --dump-dir: ", s.message())));
    }
  }
  return JoinStatuses(errors);
}

std::string SelfPath() {
  char buffer[4096];
  const ssize_t length = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (length <= 0) return "kir-run";
  buffer[length] = '\0';
  return buffer;
}

// The first executable `name` on $PATH, then under $CUDA_HOME/bin and
// /usr/local/cuda/bin; "" if none.
std::string FindTool(const std::string& name) {
  std::vector<std::string> directories;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream stream(path);
    std::string directory;
    while (std::getline(stream, directory, ':'))
      directories.push_back(directory);
  }
  if (const char* home = std::getenv("CUDA_HOME"))
    directories.push_back(absl::StrCat(home, "/bin"));
  directories.push_back("/usr/local/cuda/bin");
  for (const std::string& directory : directories) {
    const std::string candidate = absl::StrCat(directory, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

struct ChildResult {
  int exit_code = 0;
  bool hung = false;
  bool sanitizer_report = false;
  double seconds = 0;
  std::string json;
};

constexpr int kSanitizerExitCode = 86;

// Runs `command` in its own process group; kills the group after `timeout`.
ChildResult RunChild(const std::vector<std::string>& command,
                     double timeout_seconds) {
  ChildResult result;
  const auto start = std::chrono::steady_clock::now();
  std::cout.flush();
  const pid_t pid = fork();
  if (pid < 0) {
    result.exit_code = kExitFailed;
    return result;
  }
  if (pid == 0) {
    setpgid(0, 0);
    std::vector<char*> args;
    for (const std::string& arg : command)
      args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "kir-run: cannot run %s\n", args[0]);
    _exit(kExitFailed);
  }
  setpgid(pid, pid);
  const ChildWait wait = WaitForChild(pid, timeout_seconds, start);
  const int status = wait.status;
  result.hung = wait.hung;
  result.seconds = wait.seconds;
  if (!result.hung) {
    if (WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    } else {
      result.exit_code = kExitFailed;  // killed by a signal: a crash
    }
  }
  return result;
}

int RunChildMode(const Flags& flags) {
  absl::StatusOr<std::shared_ptr<SourceFile>> read =
      ReadSource(flags.file, flags.max_input_bytes);
  if (!read.ok()) {
    std::cout << "kir-run: " << read.status().message() << "\n";
    return kExitFailed;
  }
  const std::shared_ptr<SourceFile>& source = *read;
  std::string json;
  const int code = RunDirectiveInProcess(source, *flags.child_index, flags.run,
                                         std::cout, json);
  std::cout.flush();
  if (!flags.result_file.empty()) {
    std::ofstream out(flags.result_file, std::ios::binary);
    out << json;
  }
  return code;
}

int EmitSass(const Flags& flags, const std::shared_ptr<SourceFile>& source,
             const std::vector<RunDirective>& directives) {
  std::string pipeline;
  if (flags.run.pipeline.has_value()) {
    pipeline = *flags.run.pipeline;
  } else if (!directives.empty() && directives.front().pipeline.has_value()) {
    pipeline = *directives.front().pipeline;
  }
  absl::StatusOr<PreparedKernel> prepared = PrepareKernel(
      source, pipeline, "", flags.run.dump_dir, "", flags.run.verify);
  if (!prepared.ok()) {
    std::cerr << prepared.status().message() << "\n";
    return kExitFailed;
  }
  const std::string cuobjdump = FindTool("cuobjdump");
  if (cuobjdump.empty()) {
    std::cerr << "kir-run: --emit=sass needs cuobjdump (not found on PATH or "
                 "under $CUDA_HOME/bin, /usr/local/cuda/bin)\n";
    return kExitFailed;
  }
  char path[] = "/tmp/kir-run-XXXXXX.cubin";
  const int fd = mkstemps(path, 6);
  if (fd < 0) {
    std::cerr << "kir-run: cannot create a temporary file\n";
    return kExitFailed;
  }
  const std::string& cubin = prepared->cubin;
  const bool written = write(fd, cubin.data(), cubin.size()) ==
                       static_cast<ssize_t>(cubin.size());
  close(fd);
  int code = kExitFailed;
  if (written) {
    const ChildResult result = RunChild({cuobjdump, "-sass", path}, 120);
    code = result.exit_code == 0 && !result.hung ? kExitPassed : kExitFailed;
  }
  unlink(path);
  return code;
}

int Main(int argc, char** argv) {
  Flags flags;
  if (std::string error = ParseFlags(argc, argv, flags); !error.empty()) {
    std::cerr << "kir-run: " << error << "\n";
    return kExitFailed;
  }
  if (flags.child_index.has_value()) return RunChildMode(flags);
  if (flags.probe) {
    absl::StatusOr<DeviceInfo> device = ProbeDevice();
    if (!device.ok()) {
      std::cout << "no usable GPU: " << device.status().message() << "\n";
      return kExitNoGpu;
    }
    std::cout << device->name << " (sm_" << device->major << device->minor
              << ", " << device->sm_count << " SMs, driver "
              << device->driver_version << ", runtime "
              << device->runtime_version << ")\n";
    return kExitPassed;
  }

  absl::StatusOr<std::shared_ptr<SourceFile>> read =
      ReadSource(flags.file, flags.max_input_bytes);
  if (!read.ok()) {
    std::cerr << "kir-run: " << read.status().message() << "\n";
    return kExitFailed;
  }
  const std::shared_ptr<SourceFile>& source = *read;
  // Everything that can be wrong with the file is reported before asking
  // for a GPU, so a broken directive is an error even where no GPU is.
  absl::StatusOr<std::vector<RunDirective>> directives =
      DirectivesToRun(source, flags.run);
  if (!directives.ok()) {
    std::cerr << directives.status().message();
    return kExitFailed;
  }
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(source);
  if (!module.ok()) {
    std::cerr << module.status().message();
    return kExitFailed;
  }
  if (flags.run.verify) {
    if (absl::Status s = Verify(**module); !s.ok()) {
      std::cerr << s.message();
      return kExitFailed;
    }
  }
  std::vector<absl::Status> errors = {ValidateRun(flags, *directives)};
  if (flags.emit_sass) {
    if (absl::Status s = JoinStatuses(errors); !s.ok()) {
      std::cerr << s.message() << "\n";
      return kExitFailed;
    }
    return EmitSass(flags, source, *directives);
  }
  if (directives->empty()) {
    std::cerr << flags.file
              << ": no `// run:` directive (ir/language.md, \"Run "
                 "directives\")\n";
    return kExitFailed;
  }
  for (const RunDirective& directive : *directives)
    errors.push_back(ValidateDirective(directive, **module));
  if (absl::Status s = JoinStatuses(errors); !s.ok()) {
    std::cerr << s.message() << "\n";
    return kExitFailed;
  }
  if (flags.only.has_value() &&
      *flags.only > static_cast<int>(directives->size())) {
    std::cerr << "kir-run: --only=" << *flags.only << " but " << flags.file
              << " has " << directives->size() << " directive(s)\n";
    return kExitFailed;
  }

  if (flags.interp) {
    check::InterpTargetOptions options;
    options.pipeline = flags.run.pipeline;
    options.only = flags.only;
    options.repetitions = flags.run.repetitions;
    return check::RunDirectivesOnInterpreter(source, *directives, options,
                                             std::cout);
  }

  absl::StatusOr<DeviceInfo> device = ProbeDevice();
  if (!device.ok()) {
    std::cout << "kir-run: skipped, no usable GPU: "
              << device.status().message() << "\n";
    return kExitNoGpu;
  }
  if (flags.launch_overhead) {
    std::string json;
    return MeasureLaunchOverhead(source, std::cout, json);
  }

  const std::string self = SelfPath();
  std::string sanitizer;
  if (!flags.sanitize.empty()) {
    sanitizer = FindTool("compute-sanitizer");
    if (sanitizer.empty()) {
      std::cerr << "kir-run: --sanitize needs compute-sanitizer (not found on "
                   "PATH or under $CUDA_HOME/bin, /usr/local/cuda/bin)\n";
      return kExitFailed;
    }
  }
  const double timeout =
      flags.timeout_seconds.value_or(flags.sanitize.empty() ? 60.0 : 900.0);

  int passed = 0, failed = 0, hung = 0;
  std::vector<std::string> results_json;
  std::vector<std::string> summary;
  for (int index = 0; index < static_cast<int>(directives->size()); ++index) {
    if (flags.only.has_value() && index + 1 != *flags.only) continue;
    const RunDirective& directive = (*directives)[index];
    char result_path[] = "/tmp/kir-run-result-XXXXXX";
    const int fd = mkstemp(result_path);
    if (fd >= 0) close(fd);
    std::vector<std::string> command;
    if (!sanitizer.empty()) {
      const Kernel* kernel = (*module)->FindKernel(directive.kernel);
      absl::StatusOr<CudaKernelAbi> abi = GetCudaKernelAbi(*kernel);
      command = {sanitizer, absl::StrCat("--tool=", flags.sanitize),
                 absl::StrCat("--error-exitcode=", kSanitizerExitCode),
                 "--print-limit=20"};
      if (abi.ok()) {
        command.push_back("--kernel-name");
        command.push_back(absl::StrCat("kne=", abi->symbol));
      }
    }
    command.push_back(self);
    command.push_back(absl::StrCat("--child=", index));
    command.push_back(absl::StrCat("--result-file=", result_path));
    for (int i = 1; i < argc; ++i) {
      const absl::string_view arg = argv[i];
      if (absl::StartsWith(arg, "--json") || absl::StartsWith(arg, "--only") ||
          absl::StartsWith(arg, "--sanitize") ||
          absl::StartsWith(arg, "--timeout"))
        continue;
      command.push_back(argv[i]);
    }
    ChildResult result = RunChild(command, timeout);
    std::ifstream json_file(result_path, std::ios::binary);
    std::ostringstream json;
    json << json_file.rdbuf();
    unlink(result_path);
    std::string status;
    if (result.hung) {
      ++hung;
      status = "hang";
      std::cout << "  HANG: still running after " << timeout
                << " s; killed (a wait that is never satisfied: mbarrier "
                   "parity, semaphore, or a barrier some threads skip)\n";
    } else if (result.exit_code == kSanitizerExitCode) {
      ++failed;
      status = absl::StrCat(flags.sanitize, " report");
      std::cout << "  FAILED: compute-sanitizer --tool=" << flags.sanitize
                << " reported errors (above)\n";
    } else if (result.exit_code == kExitNoGpu) {
      std::cout << "kir-run: skipped, no usable GPU\n";
      return kExitNoGpu;
    } else if (result.exit_code == kExitPassed) {
      ++passed;
      status = "passed";
    } else {
      ++failed;
      status = "FAILED";
    }
    std::string object = json.str();
    if (object.empty()) {
      object = absl::StrCat("{\"file\": ", JsonString(flags.file),
                            ", \"line\": ", directive.loc.line,
                            ", \"kernel\": ", JsonString(directive.kernel),
                            ", \"status\": ", JsonString(status), "}");
    } else if (result.hung || result.exit_code == kSanitizerExitCode) {
      object = absl::StrCat(object.substr(0, object.size() - 1),
                            ", \"final_status\": ", JsonString(status), "}");
    }
    if (!flags.sanitize.empty()) {
      object =
          absl::StrCat(object.substr(0, object.size() - 1),
                       ", \"sanitizer\": ", JsonString(flags.sanitize), "}");
    }
    results_json.push_back(object);
    summary.push_back(absl::StrFormat("%-8s %s:%d @%s (%.1f s)", status,
                                      flags.file, directive.loc.line,
                                      directive.kernel, result.seconds));
  }
  std::cout << "\n";
  for (const std::string& line : summary) std::cout << line << "\n";
  std::cout << absl::StrFormat("%d passed, %d failed, %d hung\n", passed,
                               failed, hung);
  if (!flags.json_path.empty()) {
    std::ofstream out(flags.json_path, std::ios::binary);
    out << "{\"tool\": \"kir-run\", \"commit\": " << JsonString(KIR_GIT_COMMIT)
        << ", \"file\": " << JsonString(flags.file)
        << ", \"device\": {\"name\": " << JsonString(device->name)
        << ", \"uuid\": " << JsonString(device->uuid)
        << ", \"sm_count\": " << device->sm_count
        << ", \"driver_version\": " << device->driver_version
        << ", \"runtime_version\": " << device->runtime_version << "}"
        << ", \"nvrtc\": " << JsonString(NvrtcVersion().value_or("?"))
        << ", \"results\": [\n  " << absl::StrJoin(results_json, ",\n  ")
        << "\n]}\n";
    if (!out) {
      std::cerr << "kir-run: cannot write " << flags.json_path << "\n";
      return kExitFailed;
    }
  }
  if (hung > 0) return kExitHang;
  return failed > 0 ? kExitFailed : kExitPassed;
}

}  // namespace
}  // namespace kir

int main(int argc, char** argv) { return kir::Main(argc, argv); }
