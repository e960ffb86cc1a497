// What a pass is: one function over one kernel, with options and a place to
// count what it did. Passes are registered in passes.def.
#ifndef KIR_PASSES_PASS_H_
#define KIR_PASSES_PASS_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analysis/analysis_manager.h"
#include "ir/ir.h"

namespace kir {

struct PassInfo;

// One option a pass accepts, declared with the pass in passes.def. Its kind
// fixes the values ParsePipeline accepts, so that a wrong value is reported
// when the pipeline is parsed, before any pass runs.
struct PassOptionDecl {
  enum class Kind { kBool, kInt, kEnum, kString };
  std::string name;
  Kind kind = Kind::kString;
  std::string default_value;         // as it would be written in a pipeline
  int64_t min = 0, max = 0;          // kInt: the accepted range, inclusive
  std::vector<std::string> choices;  // kEnum: the accepted words
  // When set, the option may only be given together with
  // `only_with_option=only_with_value` (its default counts).
  std::string only_with_option, only_with_value;

  // `name=default` and what it accepts, e.g. `mode=shfl (shfl, none)`,
  // `max-pending=-1 (-1 to 2147483647)`.
  std::string Describe() const;
};

// Declarations, for passes.def.
PassOptionDecl BoolOption(const char* name, bool default_value);
PassOptionDecl IntOption(const char* name, int64_t default_value, int64_t min,
                         int64_t max);
// The first choice is the default.
PassOptionDecl EnumOption(const char* name, std::vector<std::string> choices);
PassOptionDecl StringOption(const char* name, const char* default_value);
// `decl`, accepted only together with `option=value`.
PassOptionDecl OnlyWith(PassOptionDecl decl, const char* option,
                        const char* value);

// The largest value an integer option may take unless it says otherwise:
// options end up in `int`s, and no count a pass takes comes near it.
inline constexpr int64_t kMaxIntOption = 2147483647;

// What a pass accepts: declarations, or the shorthand `"name=default,..."`
// whose kinds come from the defaults' spelling (`true`/`false` a boolean,
// an integer literal an integer in [-kMaxIntOption, kMaxIntOption],
// anything else a string).
class PassOptionList {
 public:
  PassOptionList() = default;
  PassOptionList(const char* shorthand);  // NOLINT: passes.def shorthand
  PassOptionList(std::initializer_list<PassOptionDecl> decls) : decls_(decls) {}
  const std::vector<PassOptionDecl>& decls() const { return decls_; }
  const PassOptionDecl* Find(absl::string_view name) const;

 private:
  std::vector<PassOptionDecl> decls_;
};

// Whether `value` is one `decl` accepts; else an error
// "pass 'x': option 'y' expects ..., got 'v'".
absl::Status CheckOptionValue(const PassInfo& pass, const PassOptionDecl& decl,
                              absl::string_view value);

using OptionValues = std::vector<std::pair<std::string, std::string>>;

// Whether options declared OnlyWith another option's value have it (given,
// or by default); else an error "pass 'x': option 'y' applies to z=v only,
// not z=w", and `*offending` (if not null) is the index in `values` of the
// option at fault.
absl::Status CheckOptionCombination(const PassInfo& pass,
                                    const OptionValues& values,
                                    size_t* offending = nullptr);

// `name=value` options given to one pass invocation
// (`insert-syncs{drop-sync=1}`). ParsePipeline has checked them against the
// pass's declarations; the getters check again, for options built
// directly, and return the declared default for options not given.
class PassOptions {
 public:
  PassOptions() = default;
  // Options for the pass registered (passes.def) as `pass_name`.
  explicit PassOptions(OptionValues values, std::string pass_name = "");
  // Options for `pass`, which need not be registered (tests).
  PassOptions(OptionValues values, const PassInfo& pass);

  const OptionValues& values() const { return values_; }
  // The value of declared option `name` (the default when not given), or
  // CheckOptionValue's error. Reading an option the pass does not declare
  // is a bug (KIR_CHECK). Enums are read as strings.
  absl::StatusOr<bool> GetBool(absl::string_view name) const;
  absl::StatusOr<int64_t> GetInt(absl::string_view name) const;
  absl::StatusOr<std::string> GetString(absl::string_view name) const;
  // Formats as `{a=1,b=x}`, or "" when empty.
  std::string ToString() const;

 private:
  // The value given for `name` or its default, after CheckOptionValue.
  absl::StatusOr<std::string> Get(absl::string_view name,
                                  PassOptionDecl::Kind kind) const;
  OptionValues values_;
  const PassInfo* pass_ = nullptr;
};

// Counters a pass bumps (`barriers-inserted`), printed by `--stats`.
// Ordered by name so output is deterministic.
class PassStatistics {
 public:
  // std::less<> finds a counter by string_view: bumping one allocates no
  // string (a pass may bump a counter per op it changes).
  using Counters = std::map<std::string, int64_t, std::less<>>;

  void Add(absl::string_view counter, int64_t amount = 1);
  // The counter's value; 0 when it was never bumped.
  int64_t Get(absl::string_view counter) const;
  const Counters& counters() const { return counters_; }

 private:
  Counters counters_;
};

// What a pass gets besides the kernel: its counters, the kernel's analyses
// and a place to say which of them it left valid.
struct PassContext {
  explicit PassContext(PassStatistics& stats,
                       AnalysisManager* analyses = nullptr)
      : stats(stats), analyses(analyses) {}

  PassStatistics& stats;
  // The pipeline's analyses of the kernel being transformed; null when a
  // pass is called directly (tests), where Analyses() makes its own.
  AnalysisManager* analyses = nullptr;
  // What the pass leaves valid. Nothing unless it says so: the runner then
  // drops every analysis of the kernel after the pass.
  PreservedAnalyses preserved;
  std::unique_ptr<AnalysisManager> own_analyses;

  // The analyses of `kernel`, the kernel the pass runs on.
  AnalysisManager& Analyses(const Kernel& kernel);
  // Shorthands: the analysis, built or cached.
  template <typename A>
  A& Get(const Kernel& kernel) {
    return Analyses(kernel).Get<A>();
  }
  template <typename A>
  void Preserve() {
    preserved.Preserve<A>();
  }
  // The pass changed nothing: every analysis stays, and the runner does not
  // verify the kernel again (--verify-analyses checks that it is unchanged).
  void PreserveAll() { preserved.PreserveAll(); }
};

using PassFunction = absl::Status (*)(Kernel& kernel,
                                      const PassOptions& options,
                                      PassContext& context);

struct PassInfo {
  const char* name;  // the CLI name, kebab-case
  PassFunction run;
  const char* summary;
  PassOptionList options;
};

// Every registered pass, in passes.def order.
const std::vector<PassInfo>& RegisteredPasses();
const PassInfo* FindPass(absl::string_view name);

}  // namespace kir

#endif  // KIR_PASSES_PASS_H_
