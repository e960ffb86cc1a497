#include "ir/diagnostics.h"

#include "absl/strings/string_view.h"

#include "absl/strings/str_cat.h"

namespace kir {

absl::string_view SourceFile::Line(int line) const {
  if (line < 1) return {};
  size_t start = 0;
  for (int current = 1; current < line; ++current) {
    size_t newline = text.find('\n', start);
    if (newline == std::string::npos) return {};
    start = newline + 1;
  }
  size_t end = text.find('\n', start);
  if (end == std::string::npos) end = text.size();
  absl::string_view result(text.data() + start, end - start);
  if (!result.empty() && result.back() == '\r') result.remove_suffix(1);
  return result;
}

std::string Location::ToString() const {
  if (!known()) return "<unknown>";
  return absl::StrCat(file_name(), ":", line, ":", column);
}

std::string Location::LineColumn() const {
  return absl::StrCat(line, ":", column);
}

namespace {

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

void RenderOne(const Diagnostic& diagnostic, std::string& out) {
  const Location& loc = diagnostic.loc;
  absl::StrAppend(&out, loc.ToString(), ": ", SeverityName(diagnostic.severity),
                  ": ", diagnostic.message, "\n");
  if (!loc.known() || !loc.file) return;
  absl::string_view line = loc.file->Line(loc.line);
  absl::StrAppend(&out, line, "\n");
  // Keep tabs so the caret lines up under the same column in a terminal.
  std::string caret;
  for (int i = 1; i < loc.column && i - 1 < static_cast<int>(line.size());
       ++i) {
    caret += line[i - 1] == '\t' ? '\t' : ' ';
  }
  absl::StrAppend(&out, caret, "^\n");
}

}  // namespace

std::string Diagnostic::Render() const {
  std::string out;
  RenderOne(*this, out);
  for (const Diagnostic& note : notes) RenderOne(note, out);
  return out;
}

InFlightDiagnostic::InFlightDiagnostic(Severity severity, Location loc) {
  diagnostic_.severity = severity;
  diagnostic_.loc = std::move(loc);
}

InFlightDiagnostic& InFlightDiagnostic::Note(Location loc,
                                             std::string message) {
  Diagnostic note;
  note.severity = Severity::kNote;
  note.loc = std::move(loc);
  note.message = std::move(message);
  diagnostic_.notes.push_back(std::move(note));
  return *this;
}

absl::Status InFlightDiagnostic::ToStatus() const {
  std::string text = diagnostic_.Render();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return absl::InvalidArgumentError(text);
}

InFlightDiagnostic Error(const Location& loc) {
  return InFlightDiagnostic(Severity::kError, loc);
}

InFlightDiagnostic Warning(const Location& loc) {
  return InFlightDiagnostic(Severity::kWarning, loc);
}

absl::Status JoinStatuses(const std::vector<absl::Status>& statuses) {
  absl::Status first;
  std::string message;
  for (const absl::Status& status : statuses) {
    if (status.ok()) continue;
    if (first.ok()) first = status;
    if (!message.empty()) message += "\n";
    message += std::string(status.message());
  }
  if (first.ok()) return first;
  return absl::Status(first.code(), message);
}

}  // namespace kir
