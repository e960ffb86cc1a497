// What a pass is: one function over one kernel, with options and a place to
// count what it did. Passes are registered in passes.def.
#ifndef KIR_PASSES_PASS_H_
#define KIR_PASSES_PASS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/ir.h"

namespace kir {

// `name=value` options given to one pass invocation (`dce{aggressive=true}`).
// Unknown names are rejected before the pass runs, against the option list
// in passes.def.
class PassOptions {
 public:
  PassOptions() = default;
  explicit PassOptions(std::vector<std::pair<std::string, std::string>> values,
                       std::string pass_name = "")
      : values_(std::move(values)), pass_name_(std::move(pass_name)) {}

  const std::vector<std::pair<std::string, std::string>>& values() const {
    return values_;
  }
  // The value of `name`, or `default_value` when absent; an error when the
  // value does not have the asked type ("pass 'dce': option 'x' expects an
  // integer, got 'y'"). Booleans are `true`/`false`/`1`/`0`.
  absl::StatusOr<bool> GetBool(absl::string_view name,
                               bool default_value) const;
  absl::StatusOr<int64_t> GetInt(absl::string_view name,
                                 int64_t default_value) const;
  absl::StatusOr<std::string> GetString(absl::string_view name,
                                        absl::string_view default_value) const;
  // Formats as `{a=1,b=x}`, or "" when empty.
  std::string ToString() const;

 private:
  const std::string* Find(absl::string_view name) const;
  std::vector<std::pair<std::string, std::string>> values_;
  std::string pass_name_;  // for error messages; may be empty
};

// Counters a pass bumps (`barriers-inserted`), printed by `--stats`.
// Ordered by name so output is deterministic.
class PassStatistics {
 public:
  void Add(absl::string_view counter, int64_t amount = 1);
  const std::map<std::string, int64_t>& counters() const { return counters_; }

 private:
  std::map<std::string, int64_t> counters_;
};

struct PassContext {
  PassStatistics& stats;
};

using PassFunction = absl::Status (*)(Kernel& kernel,
                                      const PassOptions& options,
                                      PassContext& context);

struct PassInfo {
  const char* name;  // the CLI name, kebab-case
  PassFunction run;
  const char* summary;
  // Accepted options, `name=default` comma-separated ("" for none).
  const char* options;
};

// Every registered pass, in passes.def order.
const std::vector<PassInfo>& RegisteredPasses();
const PassInfo* FindPass(absl::string_view name);

// One accepted option of a pass, split out of PassInfo::options. The
// default's spelling gives the option's type: `true`/`false` a boolean, an
// integer literal an integer, anything else a string.
struct PassOptionSpec {
  enum class Kind { kBool, kInt, kString };
  std::string name;
  std::string default_value;
  Kind kind = Kind::kString;
};
std::vector<PassOptionSpec> AcceptedOptions(const PassInfo& pass);

}  // namespace kir

#endif  // KIR_PASSES_PASS_H_
