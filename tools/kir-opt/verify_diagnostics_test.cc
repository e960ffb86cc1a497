// Unit tests for --verify-diagnostics directive parsing and matching.
#include "tools/kir-opt/verify_diagnostics.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace kir {
namespace {

TEST(ParseExpectedDiagnosticsTest, ReadsEveryForm) {
  absl::StatusOr<std::vector<ExpectedDiagnostic>> expected =
      ParseExpectedDiagnostics(
          "x // expected-error {{same line}}\n"
          "// expected-error@+2 {{two down}}\n"
          "// expected-note@-1 {{one up}} expected-warning@7 {{absolute}}\n",
          "f.kir");
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(expected->size(), 4u);
  EXPECT_EQ((*expected)[0].severity, Severity::kError);
  EXPECT_EQ((*expected)[0].line, 1);
  EXPECT_EQ((*expected)[0].substring, "same line");
  EXPECT_EQ((*expected)[0].directive_column, 6);
  EXPECT_EQ((*expected)[1].line, 4);
  EXPECT_EQ((*expected)[2].severity, Severity::kNote);
  EXPECT_EQ((*expected)[2].line, 2);
  EXPECT_EQ((*expected)[3].severity, Severity::kWarning);
  EXPECT_EQ((*expected)[3].line, 7);
  EXPECT_EQ((*expected)[3].substring, "absolute");
}

TEST(ParseExpectedDiagnosticsTest, MalformedDirectivesAreLocatedErrors) {
  auto missing_braces =
      ParseExpectedDiagnostics("\n  // expected-error {missing}\n", "f.kir");
  ASSERT_FALSE(missing_braces.ok());
  EXPECT_EQ(missing_braces.status().message(),
            "f.kir:2:6: error: 'expected-error' needs a message in {{...}}");
  auto unclosed = ParseExpectedDiagnostics("// expected-note {{open\n", "f");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_NE(unclosed.status().message().find("no closing '}}'"),
            absl::string_view::npos);
  auto bad_offset =
      ParseExpectedDiagnostics("// expected-error@+ {{x}}\n", "f");
  ASSERT_FALSE(bad_offset.ok());
  EXPECT_NE(bad_offset.status().message().find("@+N, @-N or @N"),
            absl::string_view::npos);
  auto before_start =
      ParseExpectedDiagnostics("// expected-error@-1 {{x}}\n", "f");
  EXPECT_FALSE(before_start.ok());
}

TEST(ParseReportedDiagnosticsTest, SkipsSourceLinesAndCarets) {
  std::vector<ReportedDiagnostic> reported = ParseReportedDiagnostics(
      "dir/a:b.kir:3:5: error: bad thing\n"
      "  x: error: looks like a header but is source\n"
      "    ^\n"
      "dir/a:b.kir:1:1: note: see here\n"
      "kernel\n"
      "^\n"
      "<unknown>: warning: somewhere\n"
      "error: pass 'x' failed on kernel @k\n");
  ASSERT_EQ(reported.size(), 3u);
  EXPECT_TRUE(reported[0].located);
  EXPECT_EQ(reported[0].line, 3);
  EXPECT_EQ(reported[0].column, 5);
  EXPECT_EQ(reported[0].message, "bad thing");
  EXPECT_EQ(reported[1].severity, Severity::kNote);
  EXPECT_EQ(reported[1].line, 1);
  EXPECT_FALSE(reported[2].located);
  EXPECT_EQ(reported[2].severity, Severity::kWarning);
}

Location At(const std::shared_ptr<const SourceFile>& file, int line,
            int column) {
  Location loc;
  loc.file = file;
  loc.line = line;
  loc.column = column;
  return loc;
}

// The diagnostics travel in the status as values, notes after their
// diagnostic, through JoinStatuses and KeepDiagnostics (a pipeline failure
// adds its own lines around them); a message that contains what looks like
// a diagnostic's header is still one diagnostic.
TEST(ReportedDiagnosticsOfTest, ReadsTheValuesTheStatusCarries) {
  auto file = std::make_shared<SourceFile>();
  file->name = "dir/a:b.kir";
  file->text = "kernel @k() {\n  %x = add\n}\n";
  absl::Status first = Error(At(file, 2, 3)).Note(At(file, 1, 1), "kernel here")
                       << "bad thing\nother.kir:9:9: error: not a diagnostic";
  absl::Status second = Warning(Location()) << "somewhere";
  absl::Status joined = JoinStatuses({first, absl::OkStatus(), second});
  absl::Status wrapped =
      KeepDiagnostics(absl::InvalidArgumentError(absl::StrCat(
                          joined.message(), "\nerror: pass 'x' failed")),
                      joined);

  std::vector<Diagnostic> values = DiagnosticsOf(wrapped);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0].loc.file_name(), "dir/a:b.kir");
  ASSERT_EQ(values[0].notes.size(), 1u);
  EXPECT_EQ(values[0].notes[0].message, "kernel here");

  std::vector<ReportedDiagnostic> reported = ReportedDiagnosticsOf(wrapped);
  ASSERT_EQ(reported.size(), 3u);
  EXPECT_TRUE(reported[0].located);
  EXPECT_EQ(reported[0].severity, Severity::kError);
  EXPECT_EQ(reported[0].line, 2);
  EXPECT_EQ(reported[0].column, 3);
  EXPECT_EQ(reported[0].message,
            "bad thing\nother.kir:9:9: error: not a diagnostic");
  EXPECT_EQ(reported[1].severity, Severity::kNote);
  EXPECT_EQ(reported[1].line, 1);
  EXPECT_FALSE(reported[2].located);
  EXPECT_EQ(reported[2].severity, Severity::kWarning);
  EXPECT_EQ(reported[2].message, "somewhere");
}

// A failure that is no diagnostic cannot match a directive: it is reported
// as an unlocated error; success reports nothing.
TEST(ReportedDiagnosticsOfTest, PlainFailureIsOneUnlocatedError) {
  EXPECT_TRUE(ReportedDiagnosticsOf(absl::OkStatus()).empty());
  std::vector<ReportedDiagnostic> reported = ReportedDiagnosticsOf(
      absl::InvalidArgumentError("x.kir:1:1: error: only text"));
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_FALSE(reported[0].located);
  EXPECT_EQ(reported[0].message, "x.kir:1:1: error: only text");
}

ExpectedDiagnostic Expect(Severity severity, int line, std::string text) {
  ExpectedDiagnostic expected;
  expected.severity = severity;
  expected.line = line;
  expected.substring = std::move(text);
  expected.directive_line = line;
  expected.directive_column = 4;
  return expected;
}

ReportedDiagnostic Report(Severity severity, int line, std::string message) {
  ReportedDiagnostic reported;
  reported.severity = severity;
  reported.located = true;
  reported.line = line;
  reported.column = 2;
  reported.message = std::move(message);
  return reported;
}

TEST(CheckDiagnosticsTest, MatchesOneToOneBySeverityLineAndSubstring) {
  EXPECT_TRUE(CheckDiagnostics({Expect(Severity::kError, 3, "bad"),
                                Expect(Severity::kNote, 5, "here")},
                               {Report(Severity::kError, 3, "a bad thing"),
                                Report(Severity::kNote, 5, "defined here")},
                               "f.kir")
                  .ok());
  // Same line, wrong severity: one unexpected and one missing.
  absl::Status wrong =
      CheckDiagnostics({Expect(Severity::kWarning, 3, "bad")},
                       {Report(Severity::kError, 3, "a bad thing")}, "f.kir");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.message(),
            "f.kir:3:2: error: unexpected error: a bad thing\n"
            "f.kir:3:4: error: expected warning \"bad\" on line 3 was not "
            "produced");
  // Two identical diagnostics need two directives.
  EXPECT_FALSE(CheckDiagnostics({Expect(Severity::kError, 3, "bad")},
                                {Report(Severity::kError, 3, "bad"),
                                 Report(Severity::kError, 3, "bad")},
                                "f.kir")
                   .ok());
}

TEST(CheckDiagnosticsTest, UnlocatedDiagnosticsAreAlwaysUnexpected) {
  ReportedDiagnostic unlocated = Report(Severity::kError, 0, "lost");
  unlocated.located = false;
  absl::Status status = CheckDiagnostics({}, {unlocated}, "f.kir");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "f.kir: error: unexpected error without a location: lost");
}

}  // namespace
}  // namespace kir
