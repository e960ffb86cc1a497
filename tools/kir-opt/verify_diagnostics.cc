// Parsing and matching of expected-* directives; see verify_diagnostics.h.
#include "tools/kir-opt/verify_diagnostics.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kir {
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

constexpr std::pair<absl::string_view, Severity> kDirectives[] = {
    {"expected-error", Severity::kError},
    {"expected-warning", Severity::kWarning},
    {"expected-note", Severity::kNote},
};

std::vector<absl::string_view> Lines(absl::string_view text) {
  return absl::StrSplit(text, '\n');
}

absl::Status DirectiveError(absl::string_view file_name, int line, int column,
                            absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(file_name, ":", line, ":", column, ": error: ", message));
}

// Parses what follows `expected-<severity>` at `rest`: `(@[+-]?N)? {{...}}`.
// Returns the target line and the substring.
absl::StatusOr<std::pair<int, std::string>> ParseDirectiveTail(
    absl::string_view rest, int line, absl::string_view directive) {
  int target = line;
  if (absl::ConsumePrefix(&rest, "@")) {
    size_t length = 0;
    while (length < rest.size() &&
           (absl::ascii_isdigit(static_cast<unsigned char>(rest[length])) ||
            (length == 0 && (rest[0] == '+' || rest[0] == '-')))) {
      ++length;
    }
    absl::string_view number = rest.substr(0, length);
    int value = 0;
    const bool relative =
        !number.empty() && (number[0] == '+' || number[0] == '-');
    absl::string_view digits = relative ? number.substr(1) : number;
    if (digits.empty() || !absl::SimpleAtoi(digits, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", directive, "@' needs a line: @+N, @-N or @N"));
    }
    if (!relative) {
      target = value;
    } else {
      target = number[0] == '+' ? line + value : line - value;
    }
    if (target < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", directive, "' points before the first line"));
    }
    rest.remove_prefix(length);
  }
  rest = absl::StripLeadingAsciiWhitespace(rest);
  if (!absl::ConsumePrefix(&rest, "{{")) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", directive, "' needs a message in {{...}}"));
  }
  size_t close = rest.find("}}");
  if (close == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", directive, "' message has no closing '}}'"));
  }
  return std::make_pair(target, std::string(rest.substr(0, close)));
}

// Reads `file:line:col: severity: message` or `<unknown>: severity: message`.
std::optional<ReportedDiagnostic> ParseHeader(absl::string_view line) {
  // The earliest ": <severity>: " is the separator; file names may contain
  // ':' but are followed by the line and column.
  size_t best = absl::string_view::npos;
  Severity severity = Severity::kError;
  size_t marker_length = 0;
  for (const auto& [directive, candidate] : kDirectives) {
    std::string marker = absl::StrCat(": ", SeverityName(candidate), ": ");
    size_t pos = line.find(marker);
    if (pos < best) {
      best = pos;
      severity = candidate;
      marker_length = marker.size();
    }
  }
  if (best == absl::string_view::npos) return std::nullopt;
  ReportedDiagnostic diagnostic;
  diagnostic.severity = severity;
  diagnostic.message = std::string(line.substr(best + marker_length));
  absl::string_view where = line.substr(0, best);
  if (where == "<unknown>") return diagnostic;
  size_t column_colon = where.rfind(':');
  if (column_colon == absl::string_view::npos || column_colon == 0) {
    return std::nullopt;
  }
  size_t line_colon = where.rfind(':', column_colon - 1);
  if (line_colon == absl::string_view::npos) return std::nullopt;
  if (!absl::SimpleAtoi(
          where.substr(line_colon + 1, column_colon - line_colon - 1),
          &diagnostic.line) ||
      !absl::SimpleAtoi(where.substr(column_colon + 1), &diagnostic.column)) {
    return std::nullopt;
  }
  diagnostic.located = true;
  return diagnostic;
}

bool IsCaretLine(absl::string_view line) {
  bool caret = false;
  for (char c : line) {
    if (c == '^') {
      caret = true;
    } else if (c != ' ' && c != '\t') {
      return false;
    }
  }
  return caret;
}

}  // namespace

absl::StatusOr<std::vector<ExpectedDiagnostic>> ParseExpectedDiagnostics(
    absl::string_view text, absl::string_view file_name) {
  std::vector<ExpectedDiagnostic> expected;
  std::vector<absl::string_view> lines = Lines(text);
  for (size_t index = 0; index < lines.size(); ++index) {
    const int line = static_cast<int>(index) + 1;
    absl::string_view content = lines[index];
    size_t search = 0;
    while (true) {
      // The next directive on this line, whichever kind comes first.
      size_t pos = absl::string_view::npos;
      absl::string_view directive;
      Severity severity = Severity::kError;
      for (const auto& [name, candidate] : kDirectives) {
        size_t found = content.find(name, search);
        if (found < pos) {
          pos = found;
          directive = name;
          severity = candidate;
        }
      }
      if (pos == absl::string_view::npos) break;
      const int column = static_cast<int>(pos) + 1;
      auto parsed = ParseDirectiveTail(content.substr(pos + directive.size()),
                                       line, directive);
      if (!parsed.ok()) {
        return DirectiveError(file_name, line, column,
                              parsed.status().message());
      }
      expected.push_back(ExpectedDiagnostic{severity, parsed->first,
                                            parsed->second, line, column});
      search = pos + directive.size();
    }
  }
  return expected;
}

std::vector<ReportedDiagnostic> ReportedDiagnosticsOf(
    const absl::Status& status) {
  std::vector<ReportedDiagnostic> reported;
  if (status.ok()) return reported;
  auto add = [&](const Diagnostic& diagnostic) {
    ReportedDiagnostic out;
    out.severity = diagnostic.severity;
    out.located = diagnostic.loc.known();
    out.line = diagnostic.loc.line;
    out.column = diagnostic.loc.column;
    out.message = diagnostic.message;
    reported.push_back(std::move(out));
  };
  for (const Diagnostic& diagnostic : DiagnosticsOf(status)) {
    add(diagnostic);
    for (const Diagnostic& note : diagnostic.notes) add(note);
  }
  if (reported.empty()) {
    ReportedDiagnostic failure;
    failure.message = std::string(status.message());
    reported.push_back(std::move(failure));
  }
  return reported;
}

std::vector<ReportedDiagnostic> ParseReportedDiagnostics(
    absl::string_view rendered) {
  std::vector<ReportedDiagnostic> reported;
  std::vector<absl::string_view> lines = Lines(rendered);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::optional<ReportedDiagnostic> diagnostic = ParseHeader(lines[i]);
    if (!diagnostic) continue;
    // A located diagnostic is followed by its source line and a caret.
    if (diagnostic->located && i + 2 < lines.size() &&
        IsCaretLine(lines[i + 2])) {
      i += 2;
    }
    reported.push_back(std::move(*diagnostic));
  }
  return reported;
}

absl::Status CheckDiagnostics(const std::vector<ExpectedDiagnostic>& expected,
                              const std::vector<ReportedDiagnostic>& reported,
                              absl::string_view file_name) {
  std::vector<bool> matched(expected.size(), false);
  // (sort key, message) so that problems print in line order.
  std::vector<std::pair<std::pair<int, int>, std::string>> problems;
  for (const ReportedDiagnostic& diagnostic : reported) {
    bool found = false;
    if (diagnostic.located) {
      for (size_t i = 0; i < expected.size() && !found; ++i) {
        if (!matched[i] && expected[i].severity == diagnostic.severity &&
            expected[i].line == diagnostic.line &&
            diagnostic.message.find(expected[i].substring) !=
                std::string::npos) {
          matched[i] = true;
          found = true;
        }
      }
    }
    if (found) continue;
    if (diagnostic.located) {
      problems.push_back(
          {{diagnostic.line, diagnostic.column},
           absl::StrCat(file_name, ":", diagnostic.line, ":", diagnostic.column,
                        ": error: unexpected ",
                        SeverityName(diagnostic.severity), ": ",
                        diagnostic.message)});
    } else {
      problems.push_back(
          {{0, 0},
           absl::StrCat(file_name, ": error: unexpected ",
                        SeverityName(diagnostic.severity),
                        " without a location: ", diagnostic.message)});
    }
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (matched[i]) continue;
    const ExpectedDiagnostic& want = expected[i];
    problems.push_back(
        {{want.directive_line, want.directive_column},
         absl::StrCat(file_name, ":", want.directive_line, ":",
                      want.directive_column, ": error: expected ",
                      SeverityName(want.severity), " \"", want.substring,
                      "\" on line ", want.line, " was not produced")});
  }
  if (problems.empty()) return absl::OkStatus();
  std::stable_sort(
      problems.begin(), problems.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string message;
  for (const auto& problem : problems) {
    if (!message.empty()) message += "\n";
    message += problem.second;
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace kir
