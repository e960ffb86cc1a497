#include "tools/kir-check/lower.h"

#include <fstream>
#include <sstream>

#include "analysis/verifier.h"
#include "parser/parser.h"
#include "passes/pipeline.h"

namespace kir::check {

std::shared_ptr<SourceFile> ReadSourceFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return nullptr;
  auto source = std::make_shared<SourceFile>();
  source->name = path;
  std::ostringstream text;
  text << file.rdbuf();
  source->text = text.str();
  return source;
}

absl::StatusOr<std::unique_ptr<Module>> ParseAndLower(
    const std::shared_ptr<const SourceFile>& source,
    const std::string& pipeline, bool verify) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(source);
  if (!module.ok()) return module.status();
  if (!verify) {
    if (!pipeline.empty())
      return absl::InvalidArgumentError("a pipeline needs verified input");
    return module;
  }
  if (absl::Status s = Verify(**module); !s.ok()) return s;
  if (pipeline.empty()) return module;
  absl::StatusOr<Pipeline> parsed = ParsePipeline(pipeline);
  if (!parsed.ok()) return parsed.status();
  PipelineRunOptions options;
  options.write_reproducer = false;
  std::ostringstream log;
  if (absl::Status s = RunPipeline(**module, *parsed, options, log); !s.ok())
    return s;
  return module;
}

}  // namespace kir::check
