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
#include "parser/testing/parse_for_test.h"

namespace kir {

}  // namespace kir

#endif  // KIR_ANALYSIS_TEST_HELPERS_H_
