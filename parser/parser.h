// Parses the kir text format (see ir/language.md) into a Module.
//
// Hand-written lexer and recursive-descent parser. Stops at the first error
// and returns it as a located diagnostic (`file:line:col: error: ...` with the
// source line and a caret). Never crashes, hangs or reads out of bounds on any
// input. Does not verify: run kir::Verify afterwards.
#ifndef KIR_PARSER_PARSER_H_
#define KIR_PARSER_PARSER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/ir.h"

namespace kir {

absl::StatusOr<std::unique_ptr<Module>> ParseModule(
    std::shared_ptr<const SourceFile> source);

// Convenience for tests: parses `text` as if read from file `name`.
absl::StatusOr<std::unique_ptr<Module>> ParseModuleString(
    absl::string_view text, absl::string_view name = "<string>");

}  // namespace kir

#endif  // KIR_PARSER_PARSER_H_
