#include "tools/kir-run/directive.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ir/diagnostics.h"
#include "parser/parser.h"

namespace kir {
namespace {

// Reference expressions take the caps of kir-opt's parser (parser.h):
// parentheses, calls and unary minus nest at most kMaxNesting deep, and one
// expression has at most kMaxExpressionOperators binary operators and .T;
// the tree is walked recursively later.

std::string FormatNumber(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return absl::StrCat(value);
}

}  // namespace

std::string RefExpr::ToString() const {
  auto operand = [&](int i) { return operands[i]->ToString(); };
  switch (kind) {
    case Kind::kName:
      return name;
    case Kind::kNumber:
      return FormatNumber(number);
    case Kind::kNeg:
      return absl::StrCat("(-", operand(0), ")");
    case Kind::kAdd:
      return absl::StrCat("(", operand(0), " + ", operand(1), ")");
    case Kind::kSub:
      return absl::StrCat("(", operand(0), " - ", operand(1), ")");
    case Kind::kMul:
      return absl::StrCat("(", operand(0), " * ", operand(1), ")");
    case Kind::kDiv:
      return absl::StrCat("(", operand(0), " / ", operand(1), ")");
    case Kind::kMatmul:
      return absl::StrCat("(", operand(0), " @ ", operand(1), ")");
    case Kind::kTranspose:
      return absl::StrCat(operand(0), ".T");
    case Kind::kRound:
      return absl::StrCat(round_to, "(", operand(0), ")");
    case Kind::kExp:
      return absl::StrCat("exp(", operand(0), ")");
    case Kind::kAbs:
      return absl::StrCat("abs(", operand(0), ")");
  }
  return "?";
}

namespace {

struct Token {
  enum class Kind { kName, kNumber, kString, kPunct, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;  // names, numbers, punctuation; strings unquoted
  int column = 0;    // 1-based, in the source line
};

// Splits one directive (the text after `run:`) into tokens.
class DirectiveLexer {
 public:
  DirectiveLexer(absl::string_view line, int start_column)
      : line_(line), position_(start_column - 1) {}

  absl::Status Tokenize(const Location& line_loc, std::vector<Token>& out) {
    while (true) {
      while (position_ < line_.size() &&
             absl::ascii_isspace(static_cast<unsigned char>(line_[position_])))
        ++position_;
      Token token;
      token.column = static_cast<int>(position_) + 1;
      if (position_ >= line_.size()) {
        out.push_back(token);
        return absl::OkStatus();
      }
      const char c = line_[position_];
      if (absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t end = position_;
        while (end < line_.size() &&
               (absl::ascii_isalnum(static_cast<unsigned char>(line_[end])) ||
                line_[end] == '_'))
          ++end;
        token.kind = Token::Kind::kName;
        token.text = std::string(line_.substr(position_, end - position_));
        position_ = end;
      } else if (absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && position_ + 1 < line_.size() &&
                  absl::ascii_isdigit(
                      static_cast<unsigned char>(line_[position_ + 1])))) {
        size_t end = position_;
        while (end < line_.size()) {
          const char d = line_[end];
          const bool exponent_sign =
              (d == '+' || d == '-') && end > position_ &&
              (line_[end - 1] == 'e' || line_[end - 1] == 'E');
          if (!absl::ascii_isalnum(static_cast<unsigned char>(d)) && d != '.' &&
              !exponent_sign)
            break;
          // `.T` after a number is not part of it.
          if (d == '.' && end + 1 < line_.size() && line_[end + 1] == 'T')
            break;
          ++end;
        }
        token.kind = Token::Kind::kNumber;
        token.text = std::string(line_.substr(position_, end - position_));
        position_ = end;
      } else if (c == '\'' || c == '"') {
        const size_t close = line_.find(c, position_ + 1);
        if (close == absl::string_view::npos) {
          Location loc = line_loc;
          loc.column = token.column;
          return Error(loc) << "unterminated string in run directive";
        }
        token.kind = Token::Kind::kString;
        token.text =
            std::string(line_.substr(position_ + 1, close - position_ - 1));
        position_ = close + 1;
      } else {
        static constexpr absl::string_view kTwoCharacter[] = {"=>", "~=", "=="};
        token.kind = Token::Kind::kPunct;
        token.text = std::string(1, c);
        for (absl::string_view two : kTwoCharacter) {
          if (line_.substr(position_, 2) == two) token.text = std::string(two);
        }
        static constexpr absl::string_view kSingle = "@=()+-*/,;.";
        if (token.text.size() == 1 &&
            kSingle.find(c) == absl::string_view::npos) {
          Location loc = line_loc;
          loc.column = token.column;
          return Error(loc)
                 << "unexpected character '" << c << "' in run directive";
        }
        position_ += token.text.size();
      }
      out.push_back(std::move(token));
    }
  }

 private:
  absl::string_view line_;
  size_t position_;
};

class DirectiveParser {
 public:
  DirectiveParser(std::vector<Token> tokens, Location line_loc)
      : tokens_(std::move(tokens)), line_loc_(std::move(line_loc)) {}

  absl::Status Parse(RunDirective& directive) {
    // Options before the kernel.
    while (Peek().kind == Token::Kind::kName &&
           (Peek().text == "pipeline" || Peek().text == "workspace")) {
      if (Peek().text == "workspace") {
        if (absl::Status s = ParseWorkspace(directive); !s.ok()) return s;
        continue;
      }
      Next();
      if (absl::Status s = Expect("="); !s.ok()) return s;
      if (Peek().kind != Token::Kind::kString) {
        return Error(LocOf(Peek()))
               << "expected a quoted pipeline, e.g. pipeline='default'";
      }
      directive.pipeline_loc = LocOf(Peek());
      directive.pipeline = Next().text;
    }
    if (!IsPunct("@")) {
      return Error(LocOf(Peek())) << "expected '@kernel' after 'run:'";
    }
    Next();
    if (Peek().kind != Token::Kind::kName) {
      return Error(LocOf(Peek())) << "expected a kernel name after '@'";
    }
    directive.kernel_loc = LocOf(Peek());
    directive.kernel = Next().text;

    while (!IsPunct("=>")) {
      if (Peek().kind == Token::Kind::kEnd) {
        return Error(LocOf(Peek()))
               << "expected '=>' and the checks (e.g. `=> out ~= ref "
                  "rtol=1e-3`); a directive that checks nothing proves "
                  "nothing";
      }
      Binding binding;
      if (absl::Status s = ParseBinding(binding); !s.ok()) return s;
      for (const Binding& earlier : directive.bindings) {
        if (earlier.name == binding.name) {
          return Error(binding.loc)
                 << "'" << binding.name << "' is bound twice";
        }
      }
      directive.bindings.push_back(std::move(binding));
    }
    Next();  // =>
    while (true) {
      Check check;
      if (absl::Status s = ParseCheck(check); !s.ok()) return s;
      directive.checks.push_back(std::move(check));
      if (IsPunct(";")) {
        Next();
        continue;
      }
      if (Peek().kind != Token::Kind::kEnd) {
        return Error(LocOf(Peek()))
               << "expected ';' or the end of the directive, got '"
               << Peek().text << "'";
      }
      return absl::OkStatus();
    }
  }

 private:
  const Token& Peek(int ahead = 0) const {
    const size_t index = std::min(cursor_ + ahead, tokens_.size() - 1);
    return tokens_[index];
  }
  const Token& Next() {
    const Token& token = tokens_[cursor_];
    if (cursor_ + 1 < tokens_.size()) ++cursor_;
    return token;
  }
  bool IsPunct(absl::string_view text) const {
    return Peek().kind == Token::Kind::kPunct && Peek().text == text;
  }
  Location LocOf(const Token& token) const {
    Location loc = line_loc_;
    loc.column = token.column;
    return loc;
  }
  absl::Status Expect(absl::string_view text) {
    if (!IsPunct(text)) {
      return Error(LocOf(Peek()))
             << "expected '" << text << "', got '"
             << (Peek().kind == Token::Kind::kEnd ? "end of line" : Peek().text)
             << "'";
    }
    Next();
    return absl::OkStatus();
  }

  // 'workspace' '=' ('each' | 'once')
  absl::Status ParseWorkspace(RunDirective& directive) {
    const Location loc = LocOf(Peek());
    if (directive.workspace_loc.has_value()) {
      return (Error(loc) << "'workspace' is given twice")
          .Note(*directive.workspace_loc, "first given here");
    }
    Next();
    if (absl::Status s = Expect("="); !s.ok()) return s;
    const Token& value = Peek();
    if (value.kind != Token::Kind::kName ||
        (value.text != "each" && value.text != "once")) {
      return Error(LocOf(value))
             << "expected 'each' (zero the workspaces before every launch) "
                "or 'once' (zero them when they are allocated), got '"
             << (value.kind == Token::Kind::kEnd ? "end of line" : value.text)
             << "'";
    }
    directive.workspace = value.text == "once" ? WorkspaceZeroing::kOnce
                                               : WorkspaceZeroing::kEachLaunch;
    directive.workspace_loc = loc;
    Next();
    return absl::OkStatus();
  }

  // number ::= '-'? (digits | 'nan' | 'inf')
  absl::StatusOr<double> ParseNumber(std::string* text) {
    const Location loc = LocOf(Peek());
    std::string written;
    if (IsPunct("-")) {
      Next();
      written = "-";
    }
    const Token& token = Peek();
    double value = 0;
    if (token.kind == Token::Kind::kName &&
        (token.text == "nan" || token.text == "inf")) {
      value = token.text == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                  : std::numeric_limits<double>::infinity();
    } else if (token.kind != Token::Kind::kNumber ||
               !absl::SimpleAtod(token.text, &value)) {
      return Error(loc) << "expected a number, got '"
                        << (token.kind == Token::Kind::kEnd ? "end of line"
                                                            : token.text)
                        << "'";
    } else if (std::isinf(value)) {
      return Error(loc) << token.text
                        << " is out of range (it would be infinity; write "
                           "inf if that is meant)";
    }
    absl::StrAppend(&written, Next().text);
    if (text != nullptr) *text = written;
    return written[0] == '-' ? -value : value;
  }

  absl::Status ParseBinding(Binding& binding) {
    if (Peek().kind != Token::Kind::kName) {
      return Error(LocOf(Peek()))
             << "expected 'name=value', got '" << Peek().text << "'";
    }
    binding.loc = LocOf(Peek());
    binding.name = Next().text;
    if (absl::Status s = Expect("="); !s.ok()) return s;
    if (Peek().kind == Token::Kind::kName && Peek().text != "nan" &&
        Peek().text != "inf") {
      return ParseInit(binding.init);
    }
    absl::StatusOr<double> number = ParseNumber(&binding.number_text);
    if (!number.ok()) return number.status();
    binding.is_number = true;
    binding.number = *number;
    int64_t integer = 0;
    if (absl::SimpleAtoi(binding.number_text, &integer)) {
      binding.integer = integer;
    }
    return absl::OkStatus();
  }

  // normal(seed=1, mean=0, std=1), uniform(seed=1, low=-1, high=1),
  // randint(seed=1, low=-4, high=4), iota(start=0, step=1), fill(x), zeros.
  absl::Status ParseInit(InputInit& init) {
    const Location loc = LocOf(Peek());
    const std::string name = Next().text;
    if (name == "zeros") {
      init.kind = InputInit::Kind::kFill;
      init.first = 0;
      return absl::OkStatus();
    }
    struct Parameter {
      const char* name;
      double* value;
      bool required;
      bool seen = false;
    };
    std::vector<Parameter> parameters;
    double seed = 0;
    if (name == "normal") {
      init.kind = InputInit::Kind::kNormal;
      init.first = 0;
      init.second = 1;
      parameters = {{"seed", &seed, true},
                    {"mean", &init.first, false},
                    {"std", &init.second, false}};
    } else if (name == "uniform") {
      init.kind = InputInit::Kind::kUniform;
      init.first = -1;
      init.second = 1;
      parameters = {{"seed", &seed, true},
                    {"low", &init.first, false},
                    {"high", &init.second, false}};
    } else if (name == "randint") {
      init.kind = InputInit::Kind::kRandInt;
      init.first = -4;
      init.second = 4;
      parameters = {{"seed", &seed, true},
                    {"low", &init.first, false},
                    {"high", &init.second, false}};
    } else if (name == "iota") {
      init.kind = InputInit::Kind::kIota;
      init.first = 0;
      init.second = 1;
      parameters = {{"start", &init.first, false},
                    {"step", &init.second, false}};
    } else if (name == "fill") {
      init.kind = InputInit::Kind::kFill;
      if (absl::Status s = Expect("("); !s.ok()) return s;
      absl::StatusOr<double> value = ParseNumber(nullptr);
      if (!value.ok()) return value.status();
      init.first = *value;
      return Expect(")");
    } else {
      return Error(loc) << "unknown input '" << name
                        << "'; expected normal(seed=N), uniform(seed=N), "
                           "randint(seed=N), iota(), fill(x) or zeros, or a "
                           "number";
    }
    const bool has_arguments = IsPunct("(");
    if (has_arguments) {
      Next();
      while (!IsPunct(")")) {
        if (Peek().kind != Token::Kind::kName) {
          return Error(LocOf(Peek())) << "expected a parameter of '" << name
                                      << "', got '" << Peek().text << "'";
        }
        const Location parameter_loc = LocOf(Peek());
        const std::string parameter_name = Next().text;
        Parameter* parameter = nullptr;
        for (Parameter& candidate : parameters) {
          if (parameter_name == candidate.name) parameter = &candidate;
        }
        if (parameter == nullptr) {
          std::string known;
          for (const Parameter& candidate : parameters)
            absl::StrAppend(&known, known.empty() ? "" : ", ", candidate.name);
          return Error(parameter_loc)
                 << "'" << name << "' has no parameter '" << parameter_name
                 << "' (it takes " << known << ")";
        }
        if (parameter->seen) {
          return Error(parameter_loc)
                 << "'" << name << "' is given " << parameter_name << " twice";
        }
        if (absl::Status s = Expect("="); !s.ok()) return s;
        const Location value_loc = LocOf(Peek());
        absl::StatusOr<double> value = ParseNumber(nullptr);
        if (!value.ok()) return value.status();
        if (!std::isfinite(*value)) {
          return Error(value_loc) << parameter_name << " of '" << name
                                  << "' must be a finite number";
        }
        *parameter->value = *value;
        parameter->seen = true;
        if (IsPunct(",")) {
          Next();
        } else if (!IsPunct(")")) {
          return Error(LocOf(Peek()))
                 << "expected ',' or ')' in the parameters of '" << name
                 << "', got '"
                 << (Peek().kind == Token::Kind::kEnd ? "end of line"
                                                      : Peek().text)
                 << "'";
        }
      }
      Next();  // )
    }
    for (const Parameter& parameter : parameters) {
      if (parameter.required && !parameter.seen) {
        return Error(loc) << "'" << name << "' needs " << parameter.name
                          << "=N, so that runs are reproducible";
      }
    }
    if (seed < 0 || seed != std::floor(seed) || seed > 9.0e15) {
      return Error(loc) << "seed must be a non-negative integer";
    }
    if (init.kind == InputInit::Kind::kNormal && init.second < 0) {
      return Error(loc) << "the std of 'normal' must be >= 0, got "
                        << FormatNumber(init.second);
    }
    if (init.kind == InputInit::Kind::kUniform && init.first > init.second) {
      return Error(loc) << "'uniform' needs low <= high, got low="
                        << FormatNumber(init.first)
                        << " and high=" << FormatNumber(init.second);
    }
    init.seed = static_cast<uint64_t>(seed);
    if (init.kind == InputInit::Kind::kRandInt &&
        (init.first != std::floor(init.first) ||
         init.second != std::floor(init.second) || init.first > init.second ||
         std::fabs(init.first) > 1e9 || std::fabs(init.second) > 1e9)) {
      return Error(loc) << "randint needs integers low <= high (at most 1e9 "
                           "in magnitude)";
    }
    return absl::OkStatus();
  }

  absl::Status ParseCheck(Check& check) {
    if (Peek().kind != Token::Kind::kName) {
      return Error(LocOf(Peek()))
             << "expected an output to check (`out ~= ref rtol=..`), got '"
             << Peek().text << "'";
    }
    check.loc = LocOf(Peek());
    check.output = Next().text;
    if (IsPunct("==")) {
      check.exact = true;
    } else if (!IsPunct("~=")) {
      return Error(LocOf(Peek())) << "expected '==' (exact) or '~=' (with "
                                     "rtol=/atol=) after the output";
    }
    const Location op_loc = LocOf(Peek());
    Next();
    absl::StatusOr<std::unique_ptr<RefExpr>> reference = ParseExpr();
    if (!reference.ok()) return reference.status();
    check.reference = std::move(*reference);
    bool has_tolerance = false;
    bool seen[2] = {false, false};  // rtol, atol
    while (Peek().kind == Token::Kind::kName &&
           (Peek().text == "rtol" || Peek().text == "atol")) {
      const Location tolerance_loc = LocOf(Peek());
      const bool relative = Next().text == "rtol";
      if (seen[relative ? 0 : 1]) {
        return Error(tolerance_loc)
               << (relative ? "rtol" : "atol") << " is given twice";
      }
      seen[relative ? 0 : 1] = true;
      if (check.exact) {
        return Error(tolerance_loc)
               << "an exact check ('==') takes no tolerance; use '~='";
      }
      if (absl::Status s = Expect("="); !s.ok()) return s;
      absl::StatusOr<double> value = ParseNumber(nullptr);
      if (!value.ok()) return value.status();
      if (!(*value >= 0) || std::isinf(*value)) {
        return Error(tolerance_loc) << "a tolerance is a finite number >= 0";
      }
      (relative ? check.rtol : check.atol) = *value;
      has_tolerance = true;
    }
    if (!check.exact && !has_tolerance) {
      return Error(op_loc) << "'~=' needs a tolerance (rtol=X and/or "
                              "atol=X); use '==' for an exact comparison";
    }
    return absl::OkStatus();
  }

  absl::Status TooDeep() const {
    return Error(LocOf(Peek())) << "reference expression nests more than "
                                << kMaxNesting << " levels deep";
  }

  // One more binary operator (or .T) in the current check's expression.
  absl::Status CountOperator(const Location& loc) {
    if (++operators_ > kMaxExpressionOperators) {
      return Error(loc) << "reference expression has more than "
                        << kMaxExpressionOperators << " operators";
    }
    return absl::OkStatus();
  }

  // expr ::= term (('+' | '-') term)*
  absl::StatusOr<std::unique_ptr<RefExpr>> ParseExpr() {
    NestingGuard guard(depth_);
    if (guard.too_deep()) return TooDeep();
    if (depth_ == 1) operators_ = 0;
    absl::StatusOr<std::unique_ptr<RefExpr>> lhs = ParseTerm();
    if (!lhs.ok()) return lhs;
    while (IsPunct("+") || IsPunct("-")) {
      const Location loc = LocOf(Peek());
      const RefExpr::Kind kind =
          Next().text == "+" ? RefExpr::Kind::kAdd : RefExpr::Kind::kSub;
      if (absl::Status s = CountOperator(loc); !s.ok()) return s;
      absl::StatusOr<std::unique_ptr<RefExpr>> rhs = ParseTerm();
      if (!rhs.ok()) return rhs;
      lhs = Combine(kind, loc, std::move(*lhs), std::move(*rhs));
    }
    return lhs;
  }

  // term ::= unary (('*' | '/' | '@') unary)*
  absl::StatusOr<std::unique_ptr<RefExpr>> ParseTerm() {
    absl::StatusOr<std::unique_ptr<RefExpr>> lhs = ParseUnary();
    if (!lhs.ok()) return lhs;
    while (IsPunct("*") || IsPunct("/") || IsPunct("@")) {
      const Location loc = LocOf(Peek());
      const std::string op = Next().text;
      const RefExpr::Kind kind = op == "*"   ? RefExpr::Kind::kMul
                                 : op == "/" ? RefExpr::Kind::kDiv
                                             : RefExpr::Kind::kMatmul;
      if (absl::Status s = CountOperator(loc); !s.ok()) return s;
      absl::StatusOr<std::unique_ptr<RefExpr>> rhs = ParseUnary();
      if (!rhs.ok()) return rhs;
      lhs = Combine(kind, loc, std::move(*lhs), std::move(*rhs));
    }
    return lhs;
  }

  absl::StatusOr<std::unique_ptr<RefExpr>> ParseUnary() {
    if (IsPunct("-")) {
      NestingGuard guard(depth_);
      if (guard.too_deep()) return TooDeep();
      const Location loc = LocOf(Peek());
      Next();
      absl::StatusOr<std::unique_ptr<RefExpr>> operand = ParseUnary();
      if (!operand.ok()) return operand;
      auto expr = std::make_unique<RefExpr>();
      expr->kind = RefExpr::Kind::kNeg;
      expr->loc = loc;
      expr->operands.push_back(std::move(*operand));
      return expr;
    }
    absl::StatusOr<std::unique_ptr<RefExpr>> primary = ParsePrimary();
    if (!primary.ok()) return primary;
    while (IsPunct(".")) {
      const Location loc = LocOf(Peek());
      Next();
      if (Peek().kind != Token::Kind::kName || Peek().text != "T") {
        return Error(LocOf(Peek())) << "expected 'T' (transpose) after '.'";
      }
      // A chain of .T deepens the tree like a chain of operators.
      if (absl::Status s = CountOperator(loc); !s.ok()) return s;
      Next();
      auto expr = std::make_unique<RefExpr>();
      expr->kind = RefExpr::Kind::kTranspose;
      expr->loc = loc;
      expr->operands.push_back(std::move(*primary));
      primary = std::move(expr);
    }
    return primary;
  }

  absl::StatusOr<std::unique_ptr<RefExpr>> ParsePrimary() {
    const Token& token = Peek();
    const Location loc = LocOf(token);
    auto expr = std::make_unique<RefExpr>();
    expr->loc = loc;
    if (IsPunct("(")) {
      Next();
      absl::StatusOr<std::unique_ptr<RefExpr>> inner = ParseExpr();
      if (!inner.ok()) return inner;
      if (absl::Status s = Expect(")"); !s.ok()) return s;
      return inner;
    }
    if (token.kind == Token::Kind::kNumber ||
        (token.kind == Token::Kind::kName &&
         (token.text == "nan" || token.text == "inf"))) {
      absl::StatusOr<double> value = ParseNumber(nullptr);
      if (!value.ok()) return value.status();
      expr->kind = RefExpr::Kind::kNumber;
      expr->number = *value;
      return expr;
    }
    if (token.kind != Token::Kind::kName) {
      return Error(loc) << "expected a reference expression, got '"
                        << (token.kind == Token::Kind::kEnd ? "end of line"
                                                            : token.text)
                        << "'";
    }
    const std::string name = Next().text;
    if (!IsPunct("(")) {
      expr->kind = RefExpr::Kind::kName;
      expr->name = name;
      return expr;
    }
    if (name == "bf16" || name == "f16" || name == "f32") {
      expr->kind = RefExpr::Kind::kRound;
      expr->round_to = name;
    } else if (name == "exp") {
      expr->kind = RefExpr::Kind::kExp;
    } else if (name == "abs") {
      expr->kind = RefExpr::Kind::kAbs;
    } else {
      return Error(loc) << "no reference function '" << name
                        << "'; there are bf16, f16, f32 (rounding), exp, abs "
                           "and the operators + - * / @ .T";
    }
    Next();  // (
    absl::StatusOr<std::unique_ptr<RefExpr>> operand = ParseExpr();
    if (!operand.ok()) return operand;
    if (absl::Status s = Expect(")"); !s.ok()) return s;
    expr->operands.push_back(std::move(*operand));
    return expr;
  }

  static std::unique_ptr<RefExpr> Combine(RefExpr::Kind kind,
                                          const Location& loc,
                                          std::unique_ptr<RefExpr> lhs,
                                          std::unique_ptr<RefExpr> rhs) {
    auto expr = std::make_unique<RefExpr>();
    expr->kind = kind;
    expr->loc = loc;
    expr->operands.push_back(std::move(lhs));
    expr->operands.push_back(std::move(rhs));
    return expr;
  }

  std::vector<Token> tokens_;
  Location line_loc_;
  size_t cursor_ = 0;
  int depth_ = 0;      // of ParseExpr and unary minus
  int operators_ = 0;  // binary operators and .T in the current expression
};

}  // namespace

absl::StatusOr<std::vector<RunDirective>> ParseRunDirectives(
    const std::shared_ptr<const SourceFile>& source) {
  std::vector<RunDirective> directives;
  std::vector<absl::Status> errors;
  absl::string_view text = source->text;
  int line_number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == absl::string_view::npos) end = text.size();
    const absl::string_view line = text.substr(start, end - start);
    ++line_number;
    const size_t first = line.find_first_not_of(" \t");
    if (first != absl::string_view::npos &&
        absl::StartsWith(line.substr(first), "//")) {
      size_t after = line.find_first_not_of(" \t", first + 2);
      if (after != absl::string_view::npos &&
          absl::StartsWith(line.substr(after), "run:")) {
        RunDirective directive;
        directive.loc =
            Location{source, line_number, static_cast<int>(after) + 1};
        directive.text =
            std::string(absl::StripAsciiWhitespace(line.substr(after + 4)));
        std::vector<Token> tokens;
        DirectiveLexer lexer(line, static_cast<int>(after) + 5);
        absl::Status status = lexer.Tokenize(directive.loc, tokens);
        if (status.ok()) {
          status = DirectiveParser(std::move(tokens), directive.loc)
                       .Parse(directive);
        }
        if (status.ok()) {
          directives.push_back(std::move(directive));
        } else {
          errors.push_back(status);
        }
      }
    }
    if (end == text.size()) break;
    start = end + 1;
  }
  if (!errors.empty()) return JoinStatuses(errors);
  return directives;
}

}  // namespace kir
