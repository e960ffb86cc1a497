// Shared by the fuzz targets: how a finding is reported.
#ifndef KIR_TOOLS_FUZZ_FAIL_H_
#define KIR_TOOLS_FUZZ_FAIL_H_

#include <cstdio>
#include <cstdlib>

#include "absl/strings/string_view.h"

namespace kir {

// Prints what broke, why, and the text involved, then aborts so that
// libFuzzer saves the input.
[[noreturn]] inline void FuzzFail(const char* target, absl::string_view what,
                                  absl::string_view why,
                                  absl::string_view text) {
  std::fprintf(stderr, "%s: %.*s\n%.*s\n--- text ---\n%.*s\n---\n", target,
               static_cast<int>(what.size()), what.data(),
               static_cast<int>(why.size()), why.data(),
               static_cast<int>(text.size()), text.data());
  std::abort();
}

}  // namespace kir

#endif  // KIR_TOOLS_FUZZ_FAIL_H_
