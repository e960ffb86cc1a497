#include "ir/diagnostics.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/types/optional.h"
#include "absl/strings/numbers.h"
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

// ---------------------------------------------------------------------------
// Diagnostics as status payloads.

namespace {

// The payload holding a status's diagnostics. Each diagnostic is encoded as
// `severity line column notes file-size:file message-size:message`, its
// notes following it the same way, so that encodings concatenate.
constexpr char kDiagnosticsPayload[] = "type.kir/diagnostics";

void Encode(const Diagnostic& diagnostic, std::string& out) {
  const std::string file =
      diagnostic.loc.file ? diagnostic.loc.file->name : std::string();
  absl::StrAppend(&out, static_cast<int>(diagnostic.severity), " ",
                  diagnostic.loc.line, " ", diagnostic.loc.column, " ",
                  diagnostic.notes.size(), " ", file.size(), ":", file, " ",
                  diagnostic.message.size(), ":", diagnostic.message, " ");
}

void EncodeWithNotes(const Diagnostic& diagnostic, std::string& out) {
  Encode(diagnostic, out);
  for (const Diagnostic& note : diagnostic.notes) {
    Diagnostic flat = note;
    flat.notes.clear();
    Encode(flat, out);
  }
}

// Reads one integer followed by `separator` from the front of `in`.
bool ReadInt(absl::string_view& in, char separator, int64_t& value) {
  const size_t end = in.find(separator);
  if (end == absl::string_view::npos ||
      !absl::SimpleAtoi(in.substr(0, end), &value)) {
    return false;
  }
  in.remove_prefix(end + 1);
  return true;
}

// Reads `size:bytes ` from the front of `in`.
bool ReadString(absl::string_view& in, std::string& value) {
  int64_t size = 0;
  if (!ReadInt(in, ':', size) || size < 0 ||
      static_cast<size_t>(size) + 1 > in.size()) {
    return false;
  }
  value = std::string(in.substr(0, static_cast<size_t>(size)));
  in.remove_prefix(static_cast<size_t>(size) + 1);
  return true;
}

bool Decode(absl::string_view& in, Diagnostic& diagnostic, int64_t& notes) {
  int64_t severity = 0, line = 0, column = 0;
  std::string file;
  if (!ReadInt(in, ' ', severity) || !ReadInt(in, ' ', line) ||
      !ReadInt(in, ' ', column) || !ReadInt(in, ' ', notes) ||
      !ReadString(in, file) || !ReadString(in, diagnostic.message) ||
      severity < static_cast<int>(Severity::kError) ||
      severity > static_cast<int>(Severity::kNote)) {
    return false;
  }
  diagnostic.severity = static_cast<Severity>(severity);
  diagnostic.loc.line = static_cast<int>(line);
  diagnostic.loc.column = static_cast<int>(column);
  if (!file.empty()) {
    auto source = std::make_shared<SourceFile>();
    source->name = std::move(file);
    diagnostic.loc.file = std::move(source);
  }
  return true;
}

std::string EncodedDiagnostics(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kDiagnosticsPayload);
  return payload ? std::string(*payload) : std::string();
}

}  // namespace

std::vector<Diagnostic> DiagnosticsOf(const absl::Status& status) {
  std::vector<Diagnostic> diagnostics;
  const std::string encoded = EncodedDiagnostics(status);
  absl::string_view in = encoded;
  while (!in.empty()) {
    Diagnostic diagnostic;
    int64_t notes = 0;
    if (!Decode(in, diagnostic, notes)) break;
    for (int64_t i = 0; i < notes; ++i) {
      Diagnostic note;
      int64_t nested = 0;
      if (!Decode(in, note, nested)) break;
      diagnostic.notes.push_back(std::move(note));
    }
    diagnostics.push_back(std::move(diagnostic));
  }
  return diagnostics;
}

absl::Status KeepDiagnostics(absl::Status status, const absl::Status& from) {
  const std::string kept = EncodedDiagnostics(from);
  if (kept.empty() || status.ok()) return status;
  status.SetPayload(kDiagnosticsPayload,
                    absl::Cord(EncodedDiagnostics(status) + kept));
  return status;
}

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
  absl::Status status = absl::InvalidArgumentError(text);
  std::string encoded;
  EncodeWithNotes(diagnostic_, encoded);
  status.SetPayload(kDiagnosticsPayload, absl::Cord(encoded));
  return status;
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
  std::string encoded;
  for (const absl::Status& status : statuses) {
    if (status.ok()) continue;
    if (first.ok()) first = status;
    if (!message.empty()) message += "\n";
    message += std::string(status.message());
    encoded += EncodedDiagnostics(status);
  }
  if (first.ok()) return first;
  absl::Status joined(first.code(), message);
  if (!encoded.empty())
    joined.SetPayload(kDiagnosticsPayload, absl::Cord(encoded));
  return joined;
}

}  // namespace kir
