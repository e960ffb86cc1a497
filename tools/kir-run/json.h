// JSON text for the reports of kir-run and kir-bench, and a reader for them
// (kir-bench --resume reads an earlier run's report). No CUDA.
#ifndef KIR_TOOLS_KIR_RUN_JSON_H_
#define KIR_TOOLS_KIR_RUN_JSON_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kir {

// Escapes `text` as a JSON string (with the quotes).
std::string JsonString(absl::string_view text);

// A number as JSON: null when it is not finite (JSON has no NaN).
std::string JsonNumber(double value);

// A parsed JSON value (RFC 8259).
struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;  // in file order

  // The member named `key` of an object (the first), or nullptr.
  const JsonValue* Find(absl::string_view key) const;
};

// Parses a whole JSON text; an error names the line and column. Nesting
// deeper than 256 levels is an error, not a stack overflow.
absl::StatusOr<JsonValue> ParseJson(absl::string_view text);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_RUN_JSON_H_
