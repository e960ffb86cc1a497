// Helpers that the analyses' unit tests share. Only *_test.cc files include
// this (it uses GoogleTest).
#ifndef KIR_ANALYSIS_TEST_HELPERS_H_
#define KIR_ANALYSIS_TEST_HELPERS_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "parser/parser.h"

namespace kir {

// The parsed module; a parse error fails the test and gives null.
inline std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(text);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  return module.ok() ? *std::move(module) : nullptr;
}

}  // namespace kir

#endif  // KIR_ANALYSIS_TEST_HELPERS_H_
