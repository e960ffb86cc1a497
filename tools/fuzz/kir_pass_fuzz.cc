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
// and rewrite it at the IR level (a constant or attribute into an
// interesting value, an operand into another visible value of its type, two
// independent neighbouring ops swapped, an unused op removed) or replace an
// integer literal or value name in its text.
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <tuple>
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

// ---------------------------------------------------------------------------
// Token-level mutation.

struct Span {
  size_t begin, end;
};

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.';
}

// Integer literals (not inside a word or a value name) and value names
// (`%x`), outside comments and strings.
void FindTokens(absl::string_view text, std::vector<Span>& integers,
                std::vector<Span>& names) {
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"') {
      ++i;
      while (i < text.size() && text[i] != '"' && text[i] != '\n') ++i;
      ++i;
    } else if (c == '%') {
      size_t end = i + 1;
      while (end < text.size() && IsWordChar(text[end])) ++end;
      if (end > i + 1) names.push_back({i, end});
      i = end;
    } else if ((c >= '0' && c <= '9') ||
               (c == '-' && i + 1 < text.size() && text[i + 1] >= '0' &&
                text[i + 1] <= '9')) {
      size_t end = i + 1;
      while (end < text.size() && IsWordChar(text[end])) ++end;
      if (absl::string_view(text.data() + i, end - i).find('.') ==
          absl::string_view::npos) {
        integers.push_back({i, end});
      }
      i = end;
    } else if (IsWordChar(c)) {
      while (i < text.size() && IsWordChar(text[i])) ++i;
    } else {
      ++i;
    }
  }
}

std::string InterestingInteger(absl::string_view old, std::mt19937_64& random) {
  int64_t parsed = 0;
  std::from_chars(old.data(), old.data() + old.size(), parsed);
  const uint64_t value = static_cast<uint64_t>(parsed);  // wraps, never UB
  const int64_t candidates[] = {0,
                                1,
                                2,
                                -1,
                                3,
                                4,
                                8,
                                16,
                                31,
                                32,
                                33,
                                64,
                                127,
                                128,
                                256,
                                1024,
                                1025,
                                65535,
                                int64_t{1} << 31,
                                (int64_t{1} << 31) - 1,
                                int64_t{1} << 32,
                                int64_t{1} << 62,
                                INT64_MAX,
                                INT64_MIN,
                                static_cast<int64_t>(value + 1),
                                static_cast<int64_t>(value - 1),
                                static_cast<int64_t>(value * 2),
                                parsed / 2};
  return std::to_string(
      candidates[random() % (sizeof(candidates) / sizeof(candidates[0]))]);
}

// Replaces an integer literal by an interesting one, or a value name by
// another of the input; false if there is none.
bool MutateToken(std::string& text, std::mt19937_64& random) {
  std::vector<Span> integers, names;
  FindTokens(text, integers, names);
  const size_t total = integers.size() + names.size();
  if (total == 0) return false;
  const size_t pick = random() % total;
  Span span;
  std::string replacement;
  if (pick < integers.size()) {
    span = integers[pick];
    replacement = InterestingInteger(
        absl::string_view(text).substr(span.begin, span.end - span.begin),
        random);
  } else {
    span = names[pick - integers.size()];
    const Span other = names[random() % names.size()];
    replacement = text.substr(other.begin, other.end - other.begin);
  }
  text.replace(span.begin, span.end - span.begin, replacement);
  return true;
}

// The values `op` may use: sizes, parameters, results of earlier ops of its
// region and the regions around it, and the arguments of those regions.
std::vector<Value*> VisibleValues(const Kernel& kernel, const Op& op) {
  std::vector<Value*> visible;
  for (const auto& size : kernel.sizes()) visible.push_back(size.get());
  for (const Param& param : kernel.params()) visible.push_back(param.value);
  for (const Op* child = &op; child->parent_region() != nullptr;) {
    const Region& region = *child->parent_region();
    for (int a = 0; a < region.num_arguments(); ++a) {
      visible.push_back(region.argument(a));
    }
    for (int i = 0; i < region.IndexOf(child); ++i) {
      for (int r = 0; r < region.op(i).num_results(); ++r) {
        visible.push_back(region.op(i).result(r));
      }
    }
    child = region.parent_op();
    if (child == nullptr) break;
  }
  return visible;
}

// One IR-level change to a random op of `module`; false if none applied.
bool MutateIr(Module& module, std::mt19937_64& random) {
  std::vector<std::pair<Kernel*, Op*>> ops;
  for (const auto& kernel : module.kernels) {
    Walk(kernel->body(), [&](Op& op) { ops.push_back({kernel.get(), &op}); });
  }
  if (ops.empty()) return false;
  Kernel* kernel = nullptr;
  Op* op = nullptr;
  std::tie(kernel, op) = ops[random() % ops.size()];
  switch (random() % 4) {
    case 0: {  // an attribute or constant into another value
      const std::vector<AttrSpec>& specs = op->info().attrs;
      if (specs.empty()) return false;
      const AttrSpec& spec = specs[random() % specs.size()];
      const Attribute* current = op->FindAttr(spec.name);
      if (spec.kind == AttrKind::kEnum && !spec.enum_values.empty()) {
        op->SetAttr(spec.name,
                    Attribute::Enum(
                        spec.enum_values[random() % spec.enum_values.size()]));
      } else if (spec.kind == AttrKind::kFlag) {
        op->SetAttr(spec.name,
                    Attribute::Flag(current == nullptr || !current->int_value));
      } else if (spec.kind == AttrKind::kInt ||
                 (spec.kind == AttrKind::kNumber &&
                  (current == nullptr || current->is_integral))) {
        const std::string old =
            std::to_string(current != nullptr ? current->int_value : 0);
        int64_t value = 0;
        const std::string text = InterestingInteger(old, random);
        std::from_chars(text.data(), text.data() + text.size(), value);
        op->SetAttr(spec.name, spec.kind == AttrKind::kInt
                                   ? Attribute::Int(value)
                                   : Attribute::Integer(value));
      } else {
        return false;
      }
      return true;
    }
    case 1: {  // an operand into another visible value of its type
      if (op->num_operands() == 0) return false;
      Operand& operand =
          op->mutable_operand(static_cast<int>(random() % op->num_operands()));
      std::vector<Value*> candidates;
      for (Value* value : VisibleValues(*kernel, *op)) {
        if (operand.value != nullptr && value != operand.value &&
            value->type() == operand.value->type()) {
          candidates.push_back(value);
        }
      }
      if (candidates.empty()) return false;
      operand.value = candidates[random() % candidates.size()];
      return true;
    }
    case 2: {  // swap with the op before it, if it does not use its results
      Region& region = *op->parent_region();
      const int index = region.IndexOf(op);
      if (index == 0) return false;
      const Op& before = region.op(index - 1);
      bool depends = false;
      auto check = [&](const Op& user) {
        user.ForEachUse([&](const Value* value) {
          for (int r = 0; r < before.num_results(); ++r) {
            depends = depends || value == before.result(r);
          }
        });
      };
      check(*op);
      for (int r = 0; r < op->num_regions(); ++r) {
        Walk(static_cast<const Region&>(op->region(r)), check);
      }
      if (depends) return false;
      region.Insert(index - 1, region.Take(index));
      return true;
    }
    default: {  // remove an op without regions whose results nothing uses
      if (op->num_regions() > 0) return false;
      bool used = false;
      Walk(kernel->body(), [&](const Op& other) {
        other.ForEachUse([&](const Value* value) {
          for (int r = 0; r < op->num_results(); ++r) {
            used = used || value == op->result(r);
          }
        });
      });
      if (used) return false;
      Region& region = *op->parent_region();
      region.Take(region.IndexOf(op));
      return true;
    }
  }
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
