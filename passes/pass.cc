// Pass options, statistics and the registry built from passes.def.
#include "passes/pass.h"

#include <algorithm>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ir/check.h"
#include "passes/canonicalize.h"
#include "passes/circular_buffer.h"
#include "passes/dce.h"
#include "passes/insert_async_waits.h"
#include "passes/insert_proxy_fences.h"
#include "passes/insert_syncs.h"
#include "passes/plan_shared_memory.h"
#include "passes/serialize_split_k.h"
#include "passes/test_fail.h"
#include "passes/test_hoist_last_op.h"
#include "passes/uniform_predicates.h"

namespace kir {
namespace {

std::optional<bool> ParseBool(absl::string_view text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return std::nullopt;
}

PassOptionDecl Declare(const char* name, PassOptionDecl::Kind kind,
                       std::string default_value) {
  PassOptionDecl decl;
  decl.name = name;
  decl.kind = kind;
  decl.default_value = std::move(default_value);
  return decl;
}

}  // namespace

PassOptionDecl BoolOption(const char* name, bool default_value) {
  return Declare(name, PassOptionDecl::Kind::kBool,
                 default_value ? "true" : "false");
}

PassOptionDecl IntOption(const char* name, int64_t default_value, int64_t min,
                         int64_t max) {
  KIR_CHECK(min <= default_value && default_value <= max)
      << "option " << name << ": default outside its range";
  PassOptionDecl decl =
      Declare(name, PassOptionDecl::Kind::kInt, absl::StrCat(default_value));
  decl.min = min;
  decl.max = max;
  return decl;
}

PassOptionDecl EnumOption(const char* name, std::vector<std::string> choices) {
  KIR_CHECK(!choices.empty()) << "option " << name << " has no choices";
  PassOptionDecl decl = Declare(name, PassOptionDecl::Kind::kEnum, choices[0]);
  decl.choices = std::move(choices);
  return decl;
}

PassOptionDecl StringOption(const char* name, const char* default_value) {
  return Declare(name, PassOptionDecl::Kind::kString, default_value);
}

PassOptionDecl OnlyWith(PassOptionDecl decl, const char* option,
                        const char* value) {
  decl.only_with_option = option;
  decl.only_with_value = value;
  return decl;
}

std::string PassOptionDecl::Describe() const {
  std::string out = absl::StrCat(name, "=", default_value);
  switch (kind) {
    case Kind::kBool:
      absl::StrAppend(&out, " (true, false)");
      break;
    case Kind::kInt:
      absl::StrAppend(&out, " (", min, " to ", max, ")");
      break;
    case Kind::kEnum:
      absl::StrAppend(&out, " (", absl::StrJoin(choices, ", "), ")");
      break;
    case Kind::kString:
      break;
  }
  if (!only_with_option.empty()) {
    absl::StrAppend(&out, " [only with ", only_with_option, "=",
                    only_with_value, "]");
  }
  return out;
}

PassOptionList::PassOptionList(const char* shorthand) {
  for (absl::string_view entry :
       absl::StrSplit(shorthand, ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    const size_t equals = entry.find('=');
    const std::string name(absl::StripAsciiWhitespace(entry.substr(0, equals)));
    std::string value;
    if (equals != absl::string_view::npos) {
      value = std::string(absl::StripAsciiWhitespace(entry.substr(equals + 1)));
    }
    int64_t number = 0;
    if (value == "true" || value == "false") {
      decls_.push_back(BoolOption(name.c_str(), value == "true"));
    } else if (absl::SimpleAtoi(value, &number) && number >= -kMaxIntOption &&
               number <= kMaxIntOption) {
      decls_.push_back(
          IntOption(name.c_str(), number, -kMaxIntOption, kMaxIntOption));
    } else {
      decls_.push_back(StringOption(name.c_str(), value.c_str()));
    }
  }
}

const PassOptionDecl* PassOptionList::Find(absl::string_view name) const {
  for (const PassOptionDecl& decl : decls_) {
    if (decl.name == name) return &decl;
  }
  return nullptr;
}

absl::Status CheckOptionValue(const PassInfo& pass, const PassOptionDecl& decl,
                              absl::string_view value) {
  std::string expected;
  int64_t number = 0;
  switch (decl.kind) {
    case PassOptionDecl::Kind::kBool:
      if (!ParseBool(value)) expected = "a boolean (true or false)";
      break;
    case PassOptionDecl::Kind::kInt:
      if (!absl::SimpleAtoi(value, &number) || number < decl.min ||
          number > decl.max) {
        expected = absl::StrCat("an integer from ", decl.min, " to ", decl.max);
      }
      break;
    case PassOptionDecl::Kind::kEnum:
      if (std::find(decl.choices.begin(), decl.choices.end(), value) ==
          decl.choices.end()) {
        // "a", "a or b", "a, b or c".
        expected = decl.choices.back();
        if (decl.choices.size() > 1) {
          expected = absl::StrCat(
              absl::StrJoin(decl.choices.begin(), decl.choices.end() - 1, ", "),
              " or ", expected);
        }
      }
      break;
    case PassOptionDecl::Kind::kString:
      break;
  }
  if (expected.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("pass '", pass.name, "': option '", decl.name, "' expects ",
                   expected, ", got '", value, "'"));
}

absl::Status CheckOptionCombination(const PassInfo& pass,
                                    const OptionValues& values,
                                    size_t* offending) {
  for (size_t i = 0; i < values.size(); ++i) {
    const PassOptionDecl* decl = pass.options.Find(values[i].first);
    if (decl == nullptr || decl->only_with_option.empty()) continue;
    const PassOptionDecl* other = pass.options.Find(decl->only_with_option);
    KIR_CHECK(other != nullptr)
        << "option " << decl->name << " depends on undeclared option "
        << decl->only_with_option;
    std::string other_value = other->default_value;
    for (const auto& [name, value] : values) {
      if (name == other->name) other_value = value;
    }
    if (other_value == decl->only_with_value) continue;
    if (offending != nullptr) *offending = i;
    return absl::InvalidArgumentError(absl::StrCat(
        "pass '", pass.name, "': option '", decl->name, "' applies to ",
        decl->only_with_option, "=", decl->only_with_value, " only, not ",
        decl->only_with_option, "=", other_value));
  }
  return absl::OkStatus();
}

PassOptions::PassOptions(OptionValues values, std::string pass_name)
    : values_(std::move(values)), pass_(FindPass(pass_name)) {}

PassOptions::PassOptions(OptionValues values, const PassInfo& pass)
    : values_(std::move(values)), pass_(&pass) {}

absl::StatusOr<std::string> PassOptions::Get(absl::string_view name,
                                             PassOptionDecl::Kind kind) const {
  const PassOptionDecl* decl =
      pass_ != nullptr ? pass_->options.Find(name) : nullptr;
  KIR_CHECK(decl != nullptr)
      << "pass '" << (pass_ != nullptr ? pass_->name : "?")
      << "' reads option '" << name << "', which passes.def does not declare";
  KIR_CHECK(decl->kind == kind || (decl->kind == PassOptionDecl::Kind::kEnum &&
                                   kind == PassOptionDecl::Kind::kString))
      << "option '" << name << "' read as another kind than declared";
  // The last occurrence wins, as on a command line.
  const std::string* value = &decl->default_value;
  for (const auto& [key, given] : values_) {
    if (key == name) value = &given;
  }
  if (absl::Status status = CheckOptionValue(*pass_, *decl, *value);
      !status.ok()) {
    return status;
  }
  if (absl::Status status = CheckOptionCombination(*pass_, values_);
      !status.ok()) {
    return status;
  }
  return *value;
}

absl::StatusOr<bool> PassOptions::GetBool(absl::string_view name) const {
  absl::StatusOr<std::string> value = Get(name, PassOptionDecl::Kind::kBool);
  if (!value.ok()) return value.status();
  return *ParseBool(*value);
}

absl::StatusOr<int64_t> PassOptions::GetInt(absl::string_view name) const {
  absl::StatusOr<std::string> value = Get(name, PassOptionDecl::Kind::kInt);
  if (!value.ok()) return value.status();
  int64_t number = 0;
  KIR_CHECK(absl::SimpleAtoi(*value, &number));
  return number;
}

absl::StatusOr<std::string> PassOptions::GetString(
    absl::string_view name) const {
  return Get(name, PassOptionDecl::Kind::kString);
}

std::string PassOptions::ToString() const {
  if (values_.empty()) return "";
  return absl::StrCat("{",
                      absl::StrJoin(values_, ",",
                                    [](std::string* out, const auto& entry) {
                                      absl::StrAppend(out, entry.first, "=",
                                                      entry.second);
                                    }),
                      "}");
}

AnalysisManager& PassContext::Analyses(const Kernel& kernel) {
  if (analyses != nullptr) {
    KIR_CHECK(&analyses->kernel() == &kernel)
        << "a pass asked for the analyses of another kernel";
    return *analyses;
  }
  if (own_analyses == nullptr) {
    own_analyses = std::make_unique<AnalysisManager>(kernel);
  }
  KIR_CHECK(&own_analyses->kernel() == &kernel)
      << "a pass asked for the analyses of another kernel";
  return *own_analyses;
}

void PassStatistics::Add(absl::string_view counter, int64_t amount) {
  auto it = counters_.find(counter);
  if (it == counters_.end()) {
    it = counters_.emplace(std::string(counter), 0).first;
  }
  it->second += amount;
}

int64_t PassStatistics::Get(absl::string_view counter) const {
  auto it = counters_.find(counter);
  return it == counters_.end() ? 0 : it->second;
}

const std::vector<PassInfo>& RegisteredPasses() {
  static const std::vector<PassInfo>* const passes = new std::vector<PassInfo>{
#define KIR_PASS(name, function, summary, ...) \
  PassInfo{name, &function, summary, PassOptionList{__VA_ARGS__}},
#include "passes/passes.def"
#undef KIR_PASS
  };
  return *passes;
}

const PassInfo* FindPass(absl::string_view name) {
  for (const PassInfo& pass : RegisteredPasses()) {
    if (name == pass.name) return &pass;
  }
  return nullptr;
}

}  // namespace kir
