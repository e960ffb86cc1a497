// libFuzzer target: every input that parses and verifies goes through every
// registered pass (the test-* passes excepted: they fail or break the IR on
// purpose) and through the default pipeline, each with options drawn from
// the passes' declarations (passes.def) by a generator seeded with the
// input, so that one input always runs the same combinations.
//
// A pass may reject its input with an error (that is a diagnostic's job);
// a crash, a sanitizer report, a failed KIR_CHECK, or a pass that succeeds
// but leaves a kernel the verifier rejects, or IR that does not print and
// parse back, aborts, which libFuzzer records as a crashing input.
//
// At exit it prints how many executions reached a pass (inputs that parse
// and verify): a fuzzer whose inputs rarely verify tests only the parser.
// To keep that fraction up, few mutations are libFuzzer's own (bytes and
// dictionary tokens); the others start from an input that verifies (the
// one given, or, when it does not verify, one of the last inputs that did)
// and rewrite it at the IR level or replace an integer literal or value
// name in its text (tools/fuzz/mutate.h).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "analysis/verifier.h"
#include "parser/parser.h"
#include "passes/pass.h"
#include "passes/pipeline.h"
#include "printer/kir_printer.h"
#include "tools/fuzz/fail.h"
#include "tools/fuzz/mutate.h"

namespace kir {
namespace {

int64_t executions = 0;
int64_t reached_a_pass = 0;

// Recent inputs that verified, for the mutator to start from.
constexpr size_t kPoolSize = 512;
std::vector<std::string>& VerifiedPool() {
  static auto* pool = new std::vector<std::string>();
  return *pool;
}

void PrintReach() {
  std::fprintf(stderr,
               "kir_pass_fuzz: %lld of %lld executions (%.1f%%) reached a "
               "pass\n",
               static_cast<long long>(reached_a_pass),
               static_cast<long long>(executions),
               executions > 0 ? 100.0 * reached_a_pass / executions : 0.0);
}

[[noreturn]] void Fail(absl::string_view what, absl::string_view why,
                       absl::string_view text) {
  FuzzFail("kir_pass_fuzz", what, why, text);
}

// A value `decl` accepts: the default, a choice, a boundary of the range.
std::string PickValue(const PassOptionDecl& decl, std::mt19937_64& random) {
  switch (decl.kind) {
    case PassOptionDecl::Kind::kBool:
      return random() % 2 ? "true" : "false";
    case PassOptionDecl::Kind::kEnum:
      return decl.choices[random() % decl.choices.size()];
    case PassOptionDecl::Kind::kInt: {
      const int64_t candidates[] = {decl.min, decl.max, decl.min + 1, 0, 1, 2};
      int64_t value = candidates[random() % 6];
      if (value < decl.min || value > decl.max) value = decl.min;
      return absl::StrCat(value);
    }
    case PassOptionDecl::Kind::kString:
      return decl.default_value;
  }
  return decl.default_value;
}

// `pass{a=x,b=y}` with each option drawn (or left out) at random; the
// pipeline parser rejects combinations the declarations forbid.
std::string RandomEntry(const PassInfo& pass, std::mt19937_64& random) {
  std::vector<std::string> options;
  for (const PassOptionDecl& decl : pass.options.decls()) {
    if (random() % 3 == 0) continue;
    options.push_back(absl::StrCat(decl.name, "=", PickValue(decl, random)));
  }
  if (options.empty()) return pass.name;
  return absl::StrCat(pass.name, "{", absl::StrJoin(options, ","), "}");
}

// Runs `pipeline` over a fresh parse of `text`, checking after every pass
// that a successful pass left IR that verifies and that prints and parses
// back; stops at the first pass that reports an error.
void RunChecked(absl::string_view text, const std::string& pipeline_text) {
  absl::StatusOr<Pipeline> pipeline = ParsePipeline(pipeline_text);
  if (!pipeline.ok()) {
    // Only OnlyWith combinations may be refused; anything else is a bug in
    // the declarations or in RandomEntry.
    if (!absl::StrContains(pipeline.status().message(), "applies to")) {
      Fail("a generated pipeline does not parse", pipeline.status().message(),
           pipeline_text);
    }
    return;
  }
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModuleString(text, "input.kir");
  if (!module.ok()) Fail("the input parsed once only", "", text);
  PrintOptions print;
  print.provenance = true;
  for (const PipelineEntry& entry : *pipeline) {
    for (const std::unique_ptr<Kernel>& kernel : (*module)->kernels) {
      PassStatistics stats;
      PassContext context{stats};
      if (!entry.pass->run(*kernel, entry.options, context).ok()) return;
      if (absl::Status status = Verify(*kernel); !status.ok()) {
        Fail(absl::StrCat("@", kernel->name(), " does not verify after ",
                          entry.ToString(), " (pipeline ", pipeline_text, ")"),
             status.message(), PrintKernel(*kernel, print));
      }
    }
    const std::string printed = PrintModule(**module, print);
    absl::StatusOr<std::unique_ptr<Module>> reparsed =
        ParseModuleString(printed, "printed.kir");
    if (!reparsed.ok()) {
      Fail(absl::StrCat("the module after ", entry.ToString(),
                        " does not parse back (pipeline ", pipeline_text, ")"),
           reparsed.status().message(), printed);
    }
  }
}

void CheckPasses(absl::string_view text) {
  ++executions;
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModuleString(text, "input.kir");
  if (!module.ok() || !Verify(**module).ok()) return;
  ++reached_a_pass;
  std::vector<std::string>& pool = VerifiedPool();
  if (pool.size() < kPoolSize) {
    pool.emplace_back(text);
  } else {
    pool[static_cast<size_t>(reached_a_pass) % kPoolSize] = std::string(text);
  }

  std::seed_seq seed(text.begin(), text.end());
  std::mt19937_64 random(seed);
  for (const PassInfo& pass : RegisteredPasses()) {
    if (absl::StartsWith(pass.name, "test-")) continue;
    RunChecked(text, RandomEntry(pass, random));
  }
  std::vector<std::string> entries;
  for (const PipelineEntry& entry : DefaultPipeline()) {
    entries.push_back(RandomEntry(*entry.pass, random));
  }
  RunChecked(text, absl::StrJoin(entries, ","));
}

}  // namespace
}  // namespace kir

// libFuzzer's own mutator; weak, so that the replay driver (no libFuzzer,
// and no mutation) links too.
extern "C" __attribute__((weak)) size_t LLVMFuzzerMutate(uint8_t* data,
                                                         size_t size,
                                                         size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                          size_t max_size, unsigned int seed) {
  std::mt19937_64 random(seed);
  const int choice = static_cast<int>(random() % 20);
  if (choice < 3) return LLVMFuzzerMutate(data, size, max_size);
  std::string text(reinterpret_cast<const char*>(data), size);
  // Start from an input that verifies.
  absl::StatusOr<std::unique_ptr<kir::Module>> module =
      kir::ParseModuleString(text, "input.kir");
  if (!module.ok() || !kir::Verify(**module).ok()) {
    const std::vector<std::string>& pool = kir::VerifiedPool();
    if (pool.empty()) return LLVMFuzzerMutate(data, size, max_size);
    text = pool[random() % pool.size()];
    module = kir::ParseModuleString(text, "input.kir");
    if (!module.ok()) return LLVMFuzzerMutate(data, size, max_size);
  }
  if (choice < 6) {
    if (!kir::MutateToken(text, random)) {
      return LLVMFuzzerMutate(data, size, max_size);
    }
  } else {
    bool changed = false;
    for (int tries = 0; tries < 8 && !changed; ++tries) {
      changed = kir::MutateIr(**module, random);
    }
    if (!changed) return LLVMFuzzerMutate(data, size, max_size);
    kir::PrintOptions print;
    print.provenance = true;
    text = kir::PrintModule(**module, print);
  }
  if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  std::atexit(kir::PrintReach);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kir::CheckPasses(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
