// Helpers that the passes' unit tests share: reading a testdata file,
// parsing, and running a pipeline. Only *_test.cc files include this (it
// uses GoogleTest and KIR_TESTDATA_DIR, which the test target defines).
#ifndef KIR_PASSES_TEST_HELPERS_H_
#define KIR_PASSES_TEST_HELPERS_H_

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "parser/parser.h"
#include "parser/testing/parse_for_test.h"
#include "passes/pipeline.h"

namespace kir {

// The text of testdata/<relative>, or "" when it cannot be read.
inline std::string ReadTestdata(const std::string& relative) {
  std::ifstream file(std::string(KIR_TESTDATA_DIR) + "/" + relative);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Runs `pipeline_text` over `module`, verifying after each pass, without
// writing a reproducer on failure.
inline absl::Status RunPasses(Module& module,
                              const std::string& pipeline_text) {
  absl::StatusOr<Pipeline> pipeline = ParsePipeline(pipeline_text);
  if (!pipeline.ok()) return pipeline.status();
  PipelineRunOptions options;
  options.write_reproducer = false;
  std::ostringstream log;
  return RunPipeline(module, *pipeline, options, log);
}

}  // namespace kir

#endif  // KIR_PASSES_TEST_HELPERS_H_
