// Pass options, statistics and the registry built from passes.def.
#include "passes/pass.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "passes/canonicalize.h"
#include "passes/circular_buffer.h"
#include "passes/dce.h"
#include "passes/insert_async_waits.h"
#include "passes/insert_proxy_fences.h"
#include "passes/insert_syncs.h"
#include "passes/plan_shared_memory.h"
#include "passes/test_fail.h"
#include "passes/test_hoist_last_op.h"
#include "passes/uniform_predicates.h"

namespace kir {
namespace {

absl::Status OptionTypeError(const std::string& pass_name,
                             absl::string_view option,
                             absl::string_view expected,
                             absl::string_view got) {
  std::string prefix =
      pass_name.empty() ? "" : absl::StrCat("pass '", pass_name, "': ");
  return absl::InvalidArgumentError(absl::StrCat(
      prefix, "option '", option, "' expects ", expected, ", got '", got, "'"));
}

std::optional<bool> ParseBool(absl::string_view text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return std::nullopt;
}

}  // namespace

const std::string* PassOptions::Find(absl::string_view name) const {
  // The last occurrence wins, as on a command line.
  const std::string* found = nullptr;
  for (const auto& [key, value] : values_) {
    if (key == name) found = &value;
  }
  return found;
}

absl::StatusOr<bool> PassOptions::GetBool(absl::string_view name,
                                          bool default_value) const {
  const std::string* value = Find(name);
  if (value == nullptr) return default_value;
  std::optional<bool> parsed = ParseBool(*value);
  if (!parsed) {
    return OptionTypeError(pass_name_, name, "a boolean (true or false)",
                           *value);
  }
  return *parsed;
}

absl::StatusOr<int64_t> PassOptions::GetInt(absl::string_view name,
                                            int64_t default_value) const {
  const std::string* value = Find(name);
  if (value == nullptr) return default_value;
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(*value, &parsed)) {
    return OptionTypeError(pass_name_, name, "an integer", *value);
  }
  return parsed;
}

absl::StatusOr<std::string> PassOptions::GetString(
    absl::string_view name, absl::string_view default_value) const {
  const std::string* value = Find(name);
  if (value == nullptr) return std::string(default_value);
  return *value;
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

void PassStatistics::Add(absl::string_view counter, int64_t amount) {
  counters_[std::string(counter)] += amount;
}

const std::vector<PassInfo>& RegisteredPasses() {
  static const std::vector<PassInfo>* const passes = new std::vector<PassInfo>{
#define KIR_PASS(name, function, summary, options) \
  PassInfo{name, &function, summary, options},
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

std::vector<PassOptionSpec> AcceptedOptions(const PassInfo& pass) {
  std::vector<PassOptionSpec> specs;
  for (absl::string_view entry :
       absl::StrSplit(pass.options, ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    PassOptionSpec spec;
    size_t equals = entry.find('=');
    spec.name =
        std::string(absl::StripAsciiWhitespace(entry.substr(0, equals)));
    if (equals != absl::string_view::npos) {
      spec.default_value =
          std::string(absl::StripAsciiWhitespace(entry.substr(equals + 1)));
    }
    int64_t unused = 0;
    if (spec.default_value == "true" || spec.default_value == "false") {
      spec.kind = PassOptionSpec::Kind::kBool;
    } else if (absl::SimpleAtoi(spec.default_value, &unused)) {
      spec.kind = PassOptionSpec::Kind::kInt;
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace kir
