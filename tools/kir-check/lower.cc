#include "tools/kir-check/lower.h"

#include <fstream>
#include <sstream>

#include "passes/pipeline.h"
#include "tools/compile/compile.h"

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
  if (!verify && !pipeline.empty())
    return absl::InvalidArgumentError("a pipeline needs verified input");
  CompileOptions options;
  options.verify = verify;
  if (!pipeline.empty()) {
    absl::StatusOr<Pipeline> parsed = ParsePipeline(pipeline);
    if (!parsed.ok()) return parsed.status();
    options.pipeline = *std::move(parsed);
  }
  options.run.write_reproducer = false;
  std::ostringstream log;
  absl::StatusOr<Compilation> lowered = Lower(source, options, log);
  if (!lowered.ok()) return lowered.status();
  return std::move(lowered->module);
}

}  // namespace kir::check
