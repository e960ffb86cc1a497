// Splits a kir-opt input at `// -----` lines (--split-input-file).
#ifndef KIR_TOOLS_KIR_OPT_SPLIT_INPUT_H_
#define KIR_TOOLS_KIR_OPT_SPLIT_INPUT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace kir {

// The separator between cases, on a line of its own.
inline constexpr char kSplitMarker[] = "// -----";

struct InputChunk {
  // The chunk's text, preceded by one empty line for every line of the file
  // before it, so that line numbers in diagnostics are those of the file.
  std::string text;
  int first_line = 1;  // of the chunk in the file, 1-based
};

// Splits at lines that read `// -----` (surrounding whitespace ignored);
// the separator lines belong to no chunk. A text without separators is one
// chunk.
std::vector<InputChunk> SplitInputFile(absl::string_view text);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_OPT_SPLIT_INPUT_H_
