// JSON text for the reports of kir-run and kir-bench (no CUDA).
#ifndef KIR_TOOLS_KIR_RUN_JSON_H_
#define KIR_TOOLS_KIR_RUN_JSON_H_

#include <string>

#include "absl/strings/string_view.h"

namespace kir {

// Escapes `text` as a JSON string (with the quotes).
std::string JsonString(absl::string_view text);

// A number as JSON: null when it is not finite (JSON has no NaN).
std::string JsonNumber(double value);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_RUN_JSON_H_
