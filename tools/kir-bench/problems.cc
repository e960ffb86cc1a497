#include "tools/kir-bench/problems.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ir/diagnostics.h"

namespace kir::bench {
namespace {

// One comma-separated field, trimmed, with its 1-based column.
struct Field {
  absl::string_view text;
  int column = 1;
};

std::vector<Field> SplitFields(absl::string_view line) {
  std::vector<Field> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    absl::string_view raw = line.substr(start, comma == absl::string_view::npos
                                                   ? absl::string_view::npos
                                                   : comma - start);
    const size_t leading =
        raw.size() - absl::StripLeadingAsciiWhitespace(raw).size();
    fields.push_back({absl::StripAsciiWhitespace(raw),
                      static_cast<int>(start + leading) + 1});
    if (comma == absl::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

enum class Column {
  kM,
  kN,
  kK,
  kAMajor,
  kBMajor,
  kDtype,
  kOutDtype,
  kName,
  kConfig
};

const std::vector<std::pair<absl::string_view, Column>>& ColumnNames() {
  static const auto* names =
      new std::vector<std::pair<absl::string_view, Column>>{
          {"m", Column::kM},
          {"n", Column::kN},
          {"k", Column::kK},
          {"a_major", Column::kAMajor},
          {"b_major", Column::kBMajor},
          {"dtype", Column::kDtype},
          {"out_dtype", Column::kOutDtype},
          {"name", Column::kName},
          {"config", Column::kConfig}};
  return *names;
}

std::string KnownColumns() {
  std::vector<std::string> names;
  for (const auto& [name, column] : ColumnNames())
    names.push_back(std::string(name));
  return absl::StrJoin(names, ", ");
}

void AddError(ProblemList& list, int line, absl::Status status) {
  list.errors.push_back({line, std::move(status)});
}

bool IsSkipped(absl::string_view line) {
  absl::string_view text = absl::StripAsciiWhitespace(line);
  return text.empty() || text.front() == '#';
}

}  // namespace

double ProblemFlops(const gen::MatmulProblem& problem) {
  return 2.0 * static_cast<double>(problem.m) * static_cast<double>(problem.n) *
         static_cast<double>(problem.k);
}

ProblemList ParseProblemsCsv(const std::shared_ptr<const SourceFile>& file) {
  ProblemList list;
  const std::vector<absl::string_view> lines = absl::StrSplit(file->text, '\n');
  auto at = [&](int line, int column) {
    Location loc;
    loc.file = file;
    loc.line = line;
    loc.column = column;
    return loc;
  };
  // Column index -> meaning, from the header.
  std::vector<Column> header;
  int header_line = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int line_number = static_cast<int>(i) + 1;
    absl::string_view line = absl::StripSuffix(lines[i], "\r");
    if (IsSkipped(line)) continue;
    const std::vector<Field> fields = SplitFields(line);
    if (header_line == 0) {
      header_line = line_number;
      std::map<Column, int> seen;  // -> column of its first mention
      bool ok = true;
      for (const Field& field : fields) {
        const std::string name = absl::AsciiStrToLower(field.text);
        std::optional<Column> column;
        for (const auto& [known, value] : ColumnNames())
          if (name == known) column = value;
        if (!column) {
          AddError(
              list, line_number,
              Error(at(line_number, field.column))
                  << "unknown column '" << field.text
                  << "' in the header (the first line that is not blank or a "
                     "comment); known columns: "
                  << KnownColumns());
          ok = false;
          continue;
        }
        if (seen.count(*column)) {
          AddError(list, line_number,
                   Error(at(line_number, field.column))
                       << "column '" << name << "' appears twice");
          ok = false;
          continue;
        }
        seen[*column] = field.column;
        header.push_back(*column);
      }
      for (Column required : {Column::kM, Column::kN, Column::kK}) {
        if (!seen.count(required)) {
          const absl::string_view name = required == Column::kM   ? "m"
                                         : required == Column::kN ? "n"
                                                                  : "k";
          AddError(list, line_number,
                   Error(at(line_number, 1))
                       << "the header has no column '" << name
                       << "' (it needs m, n and k)");
          ok = false;
        }
      }
      if (!ok) return list;  // the lines cannot be read without it
      continue;
    }

    if (fields.size() != header.size()) {
      const int column = fields.size() > header.size()
                             ? fields[header.size()].column
                             : static_cast<int>(line.size()) + 1;
      AddError(list, line_number,
               Error(at(line_number, column))
                   << "expected " << header.size()
                   << " comma-separated fields (as the header on line "
                   << header_line << "), got " << fields.size());
      continue;
    }
    BenchProblem problem;
    problem.loc = at(line_number, 1);
    std::optional<gen::ElementType> out_dtype;
    bool ok = true;
    for (size_t f = 0; f < fields.size(); ++f) {
      const Field& field = fields[f];
      const Location loc = at(line_number, field.column);
      switch (header[f]) {
        case Column::kM:
        case Column::kN:
        case Column::kK: {
          const char* name = header[f] == Column::kM   ? "m"
                             : header[f] == Column::kN ? "n"
                                                       : "k";
          int64_t value = 0;
          if (!absl::SimpleAtoi(field.text, &value)) {
            AddError(list, line_number,
                     Error(loc) << "size " << name
                                << " must be a positive integer, got '"
                                << field.text << "'");
            ok = false;
          } else if (value <= 0) {
            AddError(list, line_number,
                     Error(loc) << "size " << name
                                << " must be at least 1, got " << value);
            ok = false;
          }
          (header[f] == Column::kM   ? problem.matmul.m
           : header[f] == Column::kN ? problem.matmul.n
                                     : problem.matmul.k) = value;
          break;
        }
        case Column::kAMajor:
        case Column::kBMajor: {
          const bool is_a = header[f] == Column::kAMajor;
          absl::StatusOr<gen::OperandMajor> major = gen::ParseOperandMajor(
              absl::AsciiStrToLower(field.text), is_a ? 'a' : 'b');
          if (!major.ok()) {
            AddError(list, line_number, Error(loc) << major.status().message());
            ok = false;
          } else {
            (is_a ? problem.matmul.a_major : problem.matmul.b_major) = *major;
          }
          break;
        }
        case Column::kDtype:
        case Column::kOutDtype: {
          absl::StatusOr<gen::ElementType> type =
              gen::ParseElementType(absl::AsciiStrToLower(field.text));
          if (!type.ok()) {
            AddError(list, line_number, Error(loc) << type.status().message());
            ok = false;
          } else if (header[f] == Column::kOutDtype) {
            out_dtype = *type;
          } else {
            problem.matmul.dtype = *type;
          }
          break;
        }
        case Column::kName:
          problem.name = std::string(field.text);
          break;
        case Column::kConfig:
          problem.config = std::string(field.text);
          problem.config_loc = loc;
          break;
      }
    }
    if (!ok) continue;
    problem.matmul.out_dtype = out_dtype.value_or(problem.matmul.dtype);
    if (problem.name.empty()) problem.name = ProblemKey(problem.matmul);
    list.problems.push_back(std::move(problem));
  }
  if (header_line == 0) {
    AddError(list, 1,
             Error(at(1, 1)) << "no header line: the first line that is not "
                                "blank or a comment names the columns, e.g. "
                                "m,n,k,a_major,b_major,dtype");
  }
  return list;
}

absl::Status ProblemList::Errors() const {
  std::vector<absl::Status> statuses;
  for (const ProblemError& error : errors) statuses.push_back(error.status);
  return JoinStatuses(statuses);
}

void ValidateProblems(
    ProblemList& list,
    const std::function<absl::Status(const BenchProblem&)>& validate) {
  std::vector<BenchProblem> kept;
  for (BenchProblem& problem : list.problems) {
    absl::Status status = validate(problem);
    if (status.ok()) {
      kept.push_back(std::move(problem));
      continue;
    }
    AddError(list, problem.loc.line, std::move(status));
  }
  list.problems = std::move(kept);
  // Keep the errors in line order, whichever check found them.
  std::stable_sort(list.errors.begin(), list.errors.end(),
                   [](const ProblemError& a, const ProblemError& b) {
                     return a.line < b.line;
                   });
}

}  // namespace kir::bench
