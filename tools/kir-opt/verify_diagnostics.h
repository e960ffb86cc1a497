// --verify-diagnostics: checks the diagnostics a run produced against
// `expected-error` / `expected-warning` / `expected-note` directives in the
// input, in the style of mlir-opt:
//
//   %x = add %a, %b : f32   // expected-error {{same line}}
//   // expected-error@+1 {{on the next line}}
//   // expected-note@-2 {{two lines up}}
//   // expected-warning@7 {{on line 7 of the file}}
//
// The diagnostics are the values the failure carries (ReportedDiagnosticsOf),
// not its text read back. The text between `{{` and `}}` must occur in the
// message of a diagnostic of that severity reported on that line (columns
// are not compared). Every directive must be matched by one diagnostic and
// every diagnostic by one directive.
#ifndef KIR_TOOLS_KIR_OPT_VERIFY_DIAGNOSTICS_H_
#define KIR_TOOLS_KIR_OPT_VERIFY_DIAGNOSTICS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/diagnostics.h"

namespace kir {

struct ExpectedDiagnostic {
  Severity severity = Severity::kError;
  int line = 0;  // the line the diagnostic must be reported on
  std::string substring;
  int directive_line = 0;  // where the directive is written
  int directive_column = 0;
};

// A reported diagnostic, or one of its notes.
struct ReportedDiagnostic {
  Severity severity = Severity::kError;
  bool located = false;  // false for `<unknown>: error: msg`
  int line = 0;
  int column = 0;
  std::string message;
};

// The directives in `text`, whose first line is line 1 of `file_name`. A
// directive that does not parse is an error located at it.
absl::StatusOr<std::vector<ExpectedDiagnostic>> ParseExpectedDiagnostics(
    absl::string_view text, absl::string_view file_name);

// The diagnostics a failed status carries as values (ir/diagnostics.h,
// DiagnosticsOf), each followed by its notes. A failure that carries none
// (not a diagnostic: a file that cannot be read, say) is one unlocated
// error with the status's message, which no directive can match.
std::vector<ReportedDiagnostic> ReportedDiagnosticsOf(
    const absl::Status& status);

// The diagnostics in rendered diagnostic text, skipping the source line and
// caret that follow each located one, and any other line: for tools whose
// reports are text (kir-check).
std::vector<ReportedDiagnostic> ParseReportedDiagnostics(
    absl::string_view rendered);

// OK when expected and reported diagnostics match one to one; otherwise an
// error with one `file:line:col: error: ...` line per missing or unexpected
// diagnostic, in line order.
absl::Status CheckDiagnostics(const std::vector<ExpectedDiagnostic>& expected,
                              const std::vector<ReportedDiagnostic>& reported,
                              absl::string_view file_name);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_OPT_VERIFY_DIAGNOSTICS_H_
