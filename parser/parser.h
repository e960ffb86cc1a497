// Parses the kir text format (see ir/language.md) into a Module.
//
// Hand-written lexer and recursive-descent parser. Stops at the first error
// and returns it as a located diagnostic (`file:line:col: error: ...` with the
// source line and a caret). Never crashes, hangs or reads out of bounds on any
// input. Does not verify: run kir::Verify afterwards.
#ifndef KIR_PARSER_PARSER_H_
#define KIR_PARSER_PARSER_H_

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/ir.h"

namespace kir {

// Limits on the input, each reported as a located error when passed (so
// that recursion stays within the stack and positions fit an int):
// regions and parenthesised index expressions nest at most kMaxNesting
// deep; one index expression has at most kMaxExpressionOperators binary
// operators; a source has at most kMaxSourceBytes bytes (the tools read
// less by default, see parser/source_reader.h). kir-run's reference
// expressions take the same nesting and operator caps.
inline constexpr int kMaxNesting = 128;
inline constexpr int kMaxExpressionOperators = 512;
inline constexpr size_t kMaxSourceBytes = size_t{1} << 30;

// For recursive-descent parsers that honour kMaxNesting: counts one more
// level for the rest of the scope.
class NestingGuard {
 public:
  explicit NestingGuard(int& depth) : depth_(depth) { ++depth_; }
  ~NestingGuard() { --depth_; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;
  bool too_deep() const { return depth_ > kMaxNesting; }

 private:
  int& depth_;
};

absl::StatusOr<std::unique_ptr<Module>> ParseModule(
    std::shared_ptr<const SourceFile> source);

// Convenience for tests: parses `text` as if read from file `name`.
absl::StatusOr<std::unique_ptr<Module>> ParseModuleString(
    absl::string_view text, absl::string_view name = "<string>");

}  // namespace kir

#endif  // KIR_PARSER_PARSER_H_
