// Parsing for unit tests: a parse error fails the running test instead of
// ending the test binary.
#ifndef KIR_PARSER_TESTING_PARSE_FOR_TEST_H_
#define KIR_PARSER_TESTING_PARSE_FOR_TEST_H_

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "parser/parser.h"

namespace kir {

// Parses `text` as the module of file `file` (the name in diagnostics). On an
// error, records a failure of the running test, with the diagnostic and the
// text, and returns null: callers ASSERT on the result.
inline std::unique_ptr<Module> ParseForTest(
    absl::string_view text, absl::string_view file = "<string>") {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModuleString(text, file);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  return module.ok() ? *std::move(module) : nullptr;
}

// As ParseForTest, but an empty module instead of null, for callers that
// go on to print or compare the module.
inline std::unique_ptr<Module> ParseOrEmptyForTest(absl::string_view text) {
  std::unique_ptr<Module> module = ParseForTest(text);
  return module != nullptr ? std::move(module) : std::make_unique<Module>();
}

}  // namespace kir

#endif  // KIR_PARSER_TESTING_PARSE_FOR_TEST_H_
