// Located diagnostics for user errors.
//
//   return Error(op.loc()) << "store index must be index, got " << type;
//
// An InFlightDiagnostic converts to an absl::Status (kInvalidArgument) whose
// message is rendered as
//
//   file:line:col: error: message
//   <source line>
//       ^
//   file:line:col: note: ...
//
// Several diagnostics may be joined into one status; each rendered
// diagnostic starts with a "file:line:col: severity: " line. The status
// also carries the diagnostics as values (DiagnosticsOf), which is what
// `kir-opt --verify-diagnostics` matches against: a message that happens to
// contain such a line is not taken for a second diagnostic.
#ifndef KIR_IR_DIAGNOSTICS_H_
#define KIR_IR_DIAGNOSTICS_H_

#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/location.h"

namespace kir {

enum class Severity { kError, kWarning, kNote };

struct Diagnostic {
  Severity severity = Severity::kError;
  Location loc;
  std::string message;
  std::vector<Diagnostic> notes;

  // Renders the diagnostic, its source line and caret, then its notes.
  std::string Render() const;
};

// A diagnostic being built with operator<<. Converts to absl::Status.
class InFlightDiagnostic {
 public:
  InFlightDiagnostic(Severity severity, Location loc);

  template <typename T>
  InFlightDiagnostic& operator<<(const T& value) {
    std::ostringstream stream;
    stream << value;
    diagnostic_.message += stream.str();
    return *this;
  }
  // Attaches a note pointing at another location.
  InFlightDiagnostic& Note(Location loc, std::string message);

  const Diagnostic& diagnostic() const { return diagnostic_; }
  absl::Status ToStatus() const;
  operator absl::Status() const { return ToStatus(); }  // NOLINT

 private:
  Diagnostic diagnostic_;
};

InFlightDiagnostic Error(const Location& loc);
InFlightDiagnostic Warning(const Location& loc);

// Joins the messages of several failed statuses into one status (first
// error code wins), and their diagnostics; returns OK when all are OK.
absl::Status JoinStatuses(const std::vector<absl::Status>& statuses);

// The diagnostics `status` carries as values: those InFlightDiagnostic::
// ToStatus put in it, in order, kept through JoinStatuses and
// KeepDiagnostics. A decoded location names its file but holds no text (no
// source line to echo). Empty for OK, and for a status no diagnostic made.
std::vector<Diagnostic> DiagnosticsOf(const absl::Status& status);

// `status` carrying, after its own, the diagnostics of `from`: for code
// that builds a new status around another's message (adding a line of
// context), so that the diagnostics stay values.
absl::Status KeepDiagnostics(absl::Status status, const absl::Status& from);

}  // namespace kir

#endif  // KIR_IR_DIAGNOSTICS_H_
