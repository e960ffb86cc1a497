#include "ir/diagnostics.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ir/utf8.h"

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

// Source lines longer than this many characters are echoed as a window
// around the column, with "..." where they are cut.
constexpr int kMaxEchoedCharacters = 160;

// The echo of `line` under a diagnostic at byte `column` (1-based): one
// printable character per source character (control bytes and invalid
// UTF-8 shown as '?', tabs kept), then a line with the caret under the
// column.
std::string EchoWithCaret(absl::string_view line, int column) {
  struct Character {
    size_t begin;
    std::string shown;
  };
  std::vector<Character> characters;
  size_t caret = 0;  // index of the character holding the column
  bool caret_found = false;
  for (size_t i = 0; i < line.size();) {
    int length = Utf8SequenceLength(line.substr(i));
    std::string shown;
    if (length == 0 ||
        (length == 1 && IsControlByte(line[i]) && line[i] != '\t')) {
      length = 1;
      shown = "?";
    } else {
      shown = std::string(line.substr(i, static_cast<size_t>(length)));
    }
    if (!caret_found && static_cast<int>(i) + length >= column) {
      caret = characters.size();
      caret_found = true;
    }
    characters.push_back({i, std::move(shown)});
    i += static_cast<size_t>(length);
  }
  if (!caret_found) caret = characters.size();  // past the end of the line
  size_t first = 0, last = characters.size();
  if (characters.size() > kMaxEchoedCharacters) {
    const size_t half = kMaxEchoedCharacters / 2;
    first = caret > half ? caret - half : 0;
    last = std::min(characters.size(), first + kMaxEchoedCharacters);
    if (last - first < kMaxEchoedCharacters) {
      first = last - kMaxEchoedCharacters;
    }
  }
  std::string echo, marker;
  if (first > 0) {
    echo = "...";
    marker = "   ";
  }
  for (size_t c = first; c < last; ++c) {
    echo += characters[c].shown;
    // Keep tabs so the caret lines up under the same column in a terminal.
    if (c < caret) marker += characters[c].shown == "\t" ? '\t' : ' ';
  }
  if (last < characters.size()) echo += "...";
  return absl::StrCat(echo, "\n", marker, "^\n");
}

void RenderOne(const Diagnostic& diagnostic, std::string& out) {
  const Location& loc = diagnostic.loc;
  absl::StrAppend(&out,
                  PrintableText(absl::StrCat(loc.ToString(), ": ",
                                             SeverityName(diagnostic.severity),
                                             ": ", diagnostic.message)),
                  "\n");
  if (!loc.known() || !loc.file) return;
  absl::StrAppend(&out, EchoWithCaret(loc.file->Line(loc.line), loc.column));
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
