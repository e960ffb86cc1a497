// Splitting at `// -----` while keeping the file's line numbers.
#include "tools/kir-opt/split_input.h"

#include "absl/strings/ascii.h"

namespace kir {

std::vector<InputChunk> SplitInputFile(absl::string_view text) {
  std::vector<InputChunk> chunks;
  InputChunk current;
  int line_number = 1;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    const size_t next = end == absl::string_view::npos ? text.size() : end + 1;
    absl::string_view line = text.substr(start, next - start);
    if (absl::StripAsciiWhitespace(line) == kSplitMarker) {
      chunks.push_back(std::move(current));
      current = InputChunk();
      // The next chunk starts on the following line: pad up to it.
      current.first_line = line_number + 1;
      current.text.assign(line_number, '\n');
    } else {
      current.text.append(line.data(), line.size());
    }
    ++line_number;
    start = next;
  }
  chunks.push_back(std::move(current));
  return chunks;
}

}  // namespace kir
