// A line-based unified diff, for --print-changed.
#ifndef KIR_PASSES_LINE_DIFF_H_
#define KIR_PASSES_LINE_DIFF_H_

#include <string>

#include "absl/strings/string_view.h"

namespace kir {

// The unified diff (`--- before_label`, `+++ after_label`, `@@ -a,b +c,d @@`
// hunks with `context` unchanged lines around each change) turning `before`
// into `after`, from a longest common subsequence of their lines; "" when
// they are equal. Very large inputs whose changed middles would make the
// LCS table too big get one hunk that replaces the whole middle.
std::string UnifiedDiff(absl::string_view before, absl::string_view after,
                        absl::string_view before_label,
                        absl::string_view after_label, int context = 3);

}  // namespace kir

#endif  // KIR_PASSES_LINE_DIFF_H_
