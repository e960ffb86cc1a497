// Hand-written lexer for the kir text format.
#include "parser/lexer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/utf8.h"

namespace kir {
namespace {

// Character classes, looked up in one table per byte.
enum CharClass : uint8_t {
  kDigitClass = 1,            // [0-9]
  kIdentifierStartClass = 2,  // [A-Za-z_]
  kValueCharClass = 4,        // [A-Za-z0-9_]
  kIdentifierCharClass = 8,   // [A-Za-z0-9_.]
  kHexDigitClass = 16,        // [0-9a-fA-F]
  kBlankClass = 32,           // ' ' '\t' '\r'
};

struct CharClassTable {
  uint8_t classes[256] = {};
  constexpr CharClassTable() {
    for (int c = 0; c < 256; ++c) {
      const bool digit = c >= '0' && c <= '9';
      const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      const bool start = letter || c == '_';
      uint8_t bits = 0;
      if (digit) bits |= kDigitClass;
      if (start) bits |= kIdentifierStartClass;
      if (start || digit) bits |= kValueCharClass | kIdentifierCharClass;
      if (c == '.') bits |= kIdentifierCharClass;
      if (digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) {
        bits |= kHexDigitClass;
      }
      if (c == ' ' || c == '\t' || c == '\r') bits |= kBlankClass;
      classes[c] = bits;
    }
  }
};
constexpr CharClassTable kCharClasses;

inline bool Is(char c, uint8_t char_class) {
  return (kCharClasses.classes[static_cast<unsigned char>(c)] & char_class) !=
         0;
}
bool IsDigit(char c) { return Is(c, kDigitClass); }
bool IsHexDigit(char c) { return Is(c, kHexDigitClass); }
bool IsIdentifierStart(char c) { return Is(c, kIdentifierStartClass); }
bool IsValueChar(char c) { return Is(c, kValueCharClass); }
bool IsIdentifierChar(char c) { return Is(c, kIdentifierCharClass); }

// Printable description of a byte for "unexpected character" errors.
std::string DescribeByte(char c) {
  unsigned char byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f)
    return absl::StrCat("'", std::string(1, c), "'");
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
  case Tok::name:                    \
    return description;
#define KIR_PUNCT(name, spelling) \
  case Tok::name:                 \
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
  token.text = absl::string_view(source_.data() + begin, pos_ - begin);
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
  const char* const data = source_.data();
  const size_t size = source_.size();
  size_t pos = pos_;
  while (pos < size) {
    const char c = data[pos];
    if (Is(c, kBlankClass)) {
      ++pos;
    } else if (c == '\n') {
      ++pos;
      ++line_;
      line_start_ = pos;
    } else if (c == '/' && pos + 1 < size && data[pos + 1] == '/') {
      const void* newline = std::memchr(data + pos, '\n', size - pos);
      pos = newline == nullptr
                ? size
                : static_cast<size_t>(static_cast<const char*>(newline) - data);
    } else {
      break;
    }
  }
  pos_ = pos;
}

namespace {

// The token kind of each single-character punctuation; kError elsewhere.
struct PunctuationTable {
  Tok kinds[256] = {};
  constexpr PunctuationTable() {
    for (Tok& kind : kinds) kind = Tok::kError;
#define KIR_TOKEN(name, description)
#define KIR_PUNCT(name, spelling) \
  kinds[static_cast<unsigned char>(spelling[0])] = Tok::name;
#include "parser/token_kinds.def"
#undef KIR_PUNCT
#undef KIR_TOKEN
  }
};
constexpr PunctuationTable kPunctuation;

}  // namespace

Token Lexer::Next() {
  SkipWhitespaceAndComments();
  const char* const data = source_.data();
  const size_t size = source_.size();
  const size_t begin = pos_;
  if (begin >= size) return Make(Tok::kEof, begin);
  const char c = data[begin];
  if (IsIdentifierStart(c)) {
    size_t pos = begin + 1;
    while (pos < size && IsIdentifierChar(data[pos])) ++pos;
    pos_ = pos;
    return Make(Tok::kIdentifier, begin);
  }
  if (c == '%') {
    size_t pos = begin + 1;
    while (pos < size && IsValueChar(data[pos])) ++pos;
    pos_ = pos;
    return Make(pos > begin + 1 ? Tok::kValueName : Tok::kPercent, begin);
  }
  if (IsDigit(c)) return LexNumber(begin);
  if (c == '"') return LexString(begin);
  ++pos_;
  const Tok kind = kPunctuation.kinds[static_cast<unsigned char>(c)];
  if (kind != Tok::kError) return Make(kind, begin);
  return MakeError(begin,
                   absl::StrCat("unexpected character ", DescribeByte(c)));
}

// integer ::= [0-9]+ | '0x' [0-9a-fA-F]+
// float   ::= [0-9]+ ('.' [0-9]*)? ([eE] [+-]? [0-9]+)?   (with '.' or
// exponent)
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
    if (exponent < size &&
        (source_[exponent] == '+' || source_[exponent] == '-')) {
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
// Escapes are checked here and decoded by the parser. The text is valid
// UTF-8 without control bytes other than tab: strings reach generated
// sources (ptx) and diagnostics.
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
    if (IsControlByte(c) && c != '\t') {
      ++pos_;
      return MakeError(pos_ - 1, absl::StrCat("string contains a control "
                                              "character (",
                                              DescribeByte(c),
                                              "); write \\n or \\t, or "
                                              "leave it out"));
    }
    if (static_cast<unsigned char>(c) >= 0x80) {
      const int length = Utf8SequenceLength(source_.substr(pos_));
      if (length == 0) {
        ++pos_;
        return MakeError(pos_ - 1, absl::StrCat("string is not valid UTF-8 (",
                                                DescribeByte(c), ")"));
      }
      pos_ += static_cast<size_t>(length);
      continue;
    }
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
