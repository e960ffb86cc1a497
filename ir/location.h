// Source locations. Every node keeps the place it came from so that any
// diagnostic, from the parser, the verifier or a pass, can point at it.
#ifndef KIR_IR_LOCATION_H_
#define KIR_IR_LOCATION_H_

#include <memory>
#include <string>
#include "absl/strings/string_view.h"

namespace kir {

// A named source text. Shared by every location that points into it so that
// diagnostics can print the offending line long after parsing.
struct SourceFile {
  std::string name;
  std::string text;

  // Returns line `line` (1-based) without its newline, or "" if out of range.
  absl::string_view Line(int line) const;
};

// A point in a source file; line and column are 1-based. A default-constructed
// location is unknown (built by C++ code rather than parsed).
struct Location {
  std::shared_ptr<const SourceFile> file;
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
  absl::string_view file_name() const {
    return file ? absl::string_view(file->name) : absl::string_view("<unknown>");
  }
  // "file:line:col", or "<unknown>".
  std::string ToString() const;
  // "line:col", the short form used in provenance lists.
  std::string LineColumn() const;
};

}  // namespace kir

#endif  // KIR_IR_LOCATION_H_
