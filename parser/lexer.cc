// Hand-written lexer for the kir text format.
#include "parser/lexer.h"

#include "absl/strings/str_cat.h"

namespace kir {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsIdentifierStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsValueChar(char c) { return IsIdentifierStart(c) || IsDigit(c); }
bool IsIdentifierChar(char c) { return IsValueChar(c) || c == '.'; }

// Printable description of a byte for "unexpected character" errors.
std::string DescribeByte(char c) {
  unsigned char byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) return absl::StrCat("'", std::string(1, c), "'");
  static const char kHex[] = "0123456789abcdef";
  std::string out = "byte 0x";
  out += kHex[byte >> 4];
  out += kHex[byte & 15];
  return out;
}

}  // namespace

absl::string_view TokDescription(Tok kind) {
  switch (kind) {
#define KIR_TOKEN(name, description) \
  case Tok::name:              \
    return description;
#define KIR_PUNCT(name, spelling) \
  case Tok::name:           \
    return "'" spelling "'";
#include "parser/token_kinds.def"
#undef KIR_PUNCT
#undef KIR_TOKEN
  }
  return "token";
}

Token Lexer::Make(Tok kind, size_t begin) const {
  Token token;
  token.kind = kind;
  token.text = source_.substr(begin, pos_ - begin);
  token.line = line_;
  token.column = static_cast<int>(begin - line_start_) + 1;
  return token;
}

Token Lexer::MakeError(size_t begin, std::string message) {
  error_ = std::move(message);
  Token token;
  token.kind = Tok::kError;
  token.text = source_.substr(begin, pos_ > begin ? pos_ - begin : 1);
  token.line = line_;
  token.column = static_cast<int>(begin - line_start_) + 1;
  return token;
}

void Lexer::SkipWhitespaceAndComments() {
  const size_t size = source_.size();
  while (pos_ < size) {
    char c = source_[pos_];
    if (c == '\n') {
      ++pos_;
      ++line_;
      line_start_ = pos_;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < size && source_[pos_ + 1] == '/') {
      size_t newline = source_.find('\n', pos_);
      pos_ = newline == absl::string_view::npos ? size : newline;
    } else {
      return;
    }
  }
}

Token Lexer::Next() {
  SkipWhitespaceAndComments();
  const size_t size = source_.size();
  const size_t begin = pos_;
  if (pos_ >= size) return Make(Tok::kEof, begin);
  char c = source_[pos_];
  if (IsIdentifierStart(c)) {
    ++pos_;
    while (pos_ < size && IsIdentifierChar(source_[pos_])) ++pos_;
    return Make(Tok::kIdentifier, begin);
  }
  if (IsDigit(c)) return LexNumber(begin);
  if (c == '"') return LexString(begin);
  if (c == '%') {
    ++pos_;
    if (pos_ < size && IsValueChar(source_[pos_])) {
      while (pos_ < size && IsValueChar(source_[pos_])) ++pos_;
      return Make(Tok::kValueName, begin);
    }
    return Make(Tok::kPercent, begin);
  }
  ++pos_;
  switch (c) {
    case '(': return Make(Tok::kLParen, begin);
    case ')': return Make(Tok::kRParen, begin);
    case '[': return Make(Tok::kLBracket, begin);
    case ']': return Make(Tok::kRBracket, begin);
    case '{': return Make(Tok::kLBrace, begin);
    case '}': return Make(Tok::kRBrace, begin);
    case '<': return Make(Tok::kLess, begin);
    case '>': return Make(Tok::kGreater, begin);
    case ',': return Make(Tok::kComma, begin);
    case ':': return Make(Tok::kColon, begin);
    case '=': return Make(Tok::kEqual, begin);
    case '@': return Make(Tok::kAt, begin);
    case '+': return Make(Tok::kPlus, begin);
    case '-': return Make(Tok::kMinus, begin);
    case '*': return Make(Tok::kStar, begin);
    case '/': return Make(Tok::kSlash, begin);
    default: break;
  }
  return MakeError(begin, absl::StrCat("unexpected character ", DescribeByte(c)));
}

// integer ::= [0-9]+ | '0x' [0-9a-fA-F]+
// float   ::= [0-9]+ ('.' [0-9]*)? ([eE] [+-]? [0-9]+)?   (with '.' or exponent)
Token Lexer::LexNumber(size_t begin) {
  const size_t size = source_.size();
  if (source_[pos_] == '0' && pos_ + 2 < size &&
      (source_[pos_ + 1] == 'x' || source_[pos_ + 1] == 'X') &&
      IsHexDigit(source_[pos_ + 2])) {
    pos_ += 2;
    while (pos_ < size && IsHexDigit(source_[pos_])) ++pos_;
    return Make(Tok::kInteger, begin);
  }
  while (pos_ < size && IsDigit(source_[pos_])) ++pos_;
  bool is_float = false;
  if (pos_ < size && source_[pos_] == '.') {
    is_float = true;
    ++pos_;
    while (pos_ < size && IsDigit(source_[pos_])) ++pos_;
  }
  if (pos_ < size && (source_[pos_] == 'e' || source_[pos_] == 'E')) {
    size_t exponent = pos_ + 1;
    if (exponent < size && (source_[exponent] == '+' || source_[exponent] == '-')) {
      ++exponent;
    }
    if (exponent < size && IsDigit(source_[exponent])) {
      is_float = true;
      pos_ = exponent;
      while (pos_ < size && IsDigit(source_[pos_])) ++pos_;
    }
  }
  return Make(is_float ? Tok::kFloat : Tok::kInteger, begin);
}

// string ::= '"' ( [^"\\\n] | '\\' ["\\nt] )* '"'
// Escapes are checked here and decoded by the parser.
Token Lexer::LexString(size_t begin) {
  const size_t size = source_.size();
  ++pos_;  // the opening quote
  while (pos_ < size) {
    char c = source_[pos_];
    if (c == '"') {
      ++pos_;
      return Make(Tok::kString, begin);
    }
    if (c == '\n') break;
    if (c == '\\') {
      if (pos_ + 1 >= size) break;
      char escaped = source_[pos_ + 1];
      if (escaped != '"' && escaped != '\\' && escaped != 'n' &&
          escaped != 't') {
        pos_ += 2;
        unsigned char byte = static_cast<unsigned char>(escaped);
        std::string sequence =
            byte > 0x20 && byte < 0x7f
                ? absl::StrCat("'\\", std::string(1, escaped), "'")
                : absl::StrCat("'\\' followed by ", DescribeByte(escaped));
        return MakeError(pos_ - 2,
                         absl::StrCat("unknown escape sequence ", sequence,
                                      "; strings take \\\", \\\\, \\n "
                                      "and \\t"));
      }
      pos_ += 2;
      continue;
    }
    ++pos_;
  }
  size_t end = pos_;
  pos_ = begin + 1;
  Token token = MakeError(begin, "unterminated string");
  pos_ = end;
  return token;
}

}  // namespace kir
