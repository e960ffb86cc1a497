// Round trip over every valid testdata/**/*.kir case: printing is a fixed
// point after one parse, the reparsed module is structurally equal, and
// scrambling whitespace and comments does not change the printed output.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ir/equal.h"
#include "parser/lexer.h"
#include "parser/parser.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

struct Case {
  std::string name;  // file:first_line
  std::string text;
};

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Files that are meant to fail (diagnostic goldens) are skipped.
bool IsNegativeTest(const std::string& text) {
  if (absl::StrContains(text, "expected-error") ||
      absl::StrContains(text, "--verify-diagnostics")) {
    return true;
  }
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "// RUN: not")) return true;
  }
  return false;
}

// Every case of every valid .kir file under testdata/, split on `// -----`.
std::vector<Case> CollectCases() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(KIR_TESTDATA_DIR)) {
    if (entry.is_regular_file() && entry.path().extension() == ".kir") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Case> cases;
  for (const auto& path : files) {
    std::string text = ReadFile(path);
    if (IsNegativeTest(text)) continue;
    std::string relative =
        std::filesystem::relative(path, KIR_TESTDATA_DIR).string();
    std::string current;
    int line_number = 0, case_start = 1;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      ++line_number;
      if (absl::StripTrailingAsciiWhitespace(line) == "// -----") {
        cases.push_back({relative + ":" + std::to_string(case_start), current});
        current.clear();
        case_start = line_number + 1;
        continue;
      }
      current.append(line.data(), line.size());
      current += '\n';
    }
    cases.push_back({relative + ":" + std::to_string(case_start), current});
  }
  return cases;
}

// Re-emits `text` token by token with random whitespace, comments and
// indentation between tokens. Where the original had whitespace at least
// one blank goes back, so that tokens never merge.
std::string Scramble(const std::string& text, uint32_t seed) {
  std::mt19937 random(seed);
  static const char* const kSeparators[] = {
      " ",       "  ",
      "\n",      "\n      ",
      "\t",      " // note: a { b } %c\n",
      "\n\n   ", "\r\n",
      " //\n",   "\n// -- comment -- \"x\n  "};
  constexpr int kNumSeparators = sizeof(kSeparators) / sizeof(kSeparators[0]);
  Lexer lexer(text);
  std::string out;
  const char* previous_end = nullptr;
  for (Token token = lexer.Next(); !token.is(Tok::kEof); token = lexer.Next()) {
    EXPECT_FALSE(token.is(Tok::kError)) << lexer.error();
    if (token.is(Tok::kError)) break;
    if (previous_end != nullptr) {
      const bool had_space = token.text.data() != previous_end;
      const int choice = static_cast<int>(random() % (kNumSeparators + 2));
      if (choice < kNumSeparators) {
        out += kSeparators[choice];
      } else if (had_space) {
        out += ' ';
      }
    }
    out.append(token.text.data(), token.text.size());
    previous_end = token.text.data() + token.text.size();
  }
  out += '\n';
  return out;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RoundTripTest : public testing::TestWithParam<Case> {};

TEST_P(RoundTripTest, PrintIsAFixedPointAndStructurallyEqual) {
  const Case& c = GetParam();
  absl::StatusOr<std::unique_ptr<Module>> first =
      ParseModuleString(c.text, c.name);
  ASSERT_TRUE(first.ok()) << first.status().message();
  PrintOptions options;
  options.provenance = true;
  const std::string printed = PrintModule(**first, options);
  absl::StatusOr<std::unique_ptr<Module>> second =
      ParseModuleString(printed, c.name + " (printed)");
  ASSERT_TRUE(second.ok()) << second.status().message() << "\n" << printed;
  EXPECT_EQ(PrintModule(**second, options), printed);
  std::string why;
  EXPECT_TRUE(StructurallyEqual(**first, **second, &why)) << why;
}

TEST_P(RoundTripTest, ScrambledWhitespaceAndCommentsPrintTheSame) {
  const Case& c = GetParam();
  absl::StatusOr<std::unique_ptr<Module>> original =
      ParseModuleString(c.text, c.name);
  ASSERT_TRUE(original.ok()) << original.status().message();
  PrintOptions options;
  options.provenance = true;
  const std::string expected = PrintModule(**original, options);
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const std::string scrambled = Scramble(c.text, seed);
    absl::StatusOr<std::unique_ptr<Module>> parsed =
        ParseModuleString(scrambled, c.name + " (scrambled)");
    ASSERT_TRUE(parsed.ok())
        << "seed " << seed << ": " << parsed.status().message();
    EXPECT_EQ(PrintModule(**parsed, options), expected) << "seed " << seed;
  }
}

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  std::string name = std::to_string(info.index) + "_" + info.param.name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Testdata, RoundTripTest,
                         testing::ValuesIn(CollectCases()), CaseName);

TEST(RoundTripCorpusTest, FindsTheParserSamples) {
  // Guards against a wrong KIR_TESTDATA_DIR silently testing nothing.
  std::vector<Case> cases = CollectCases();
  EXPECT_TRUE(std::any_of(cases.begin(), cases.end(), [](const Case& c) {
    return absl::StartsWith(c.name, "parser/ops.kir");
  }));
}

TEST(ScrambleTest, ChangesTheTextButKeepsTokens) {
  const std::string text =
      "kernel @k(%x: f32) block(128) {\n  %c = const -1 : index\n}\n";
  const std::string scrambled = Scramble(text, 7);
  EXPECT_NE(scrambled, text);
  absl::StatusOr<std::unique_ptr<Module>> parsed = ParseModuleString(scrambled);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(PrintModule(**parsed), PrintModule(**ParseModuleString(text)));
}

}  // namespace
}  // namespace kir
