// Splits kir source text into tokens (see ir/language.md for the grammar).
//
// The lexer never allocates per token: a token is a view into the source
// plus its line and column. It does not interpret literals; the parser
// converts integers, floats and strings where it needs their values. Minus
// signs are separate tokens, so `%N-1` is three tokens.
#ifndef KIR_PARSER_LEXER_H_
#define KIR_PARSER_LEXER_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace kir {

enum class Tok : uint8_t {
#define KIR_TOKEN(name, description) name,
#define KIR_PUNCT(name, spelling) name,
#include "parser/token_kinds.def"
#undef KIR_PUNCT
#undef KIR_TOKEN
};

// How a token kind is described in diagnostics: "identifier", "'('", ...
absl::string_view TokDescription(Tok kind);

struct Token {
  Tok kind = Tok::kEof;
  absl::string_view text;  // the spelling, a view into the source
  int line = 1;            // 1-based
  int column = 1;          // 1-based, in bytes

  bool is(Tok other) const { return kind == other; }
  bool IsIdentifier(absl::string_view spelling) const {
    return kind == Tok::kIdentifier && text == spelling;
  }
  // For a value token `%name`: the name without '%'.
  absl::string_view ValueName() const { return text.substr(1); }
};

class Lexer {
 public:
  explicit Lexer(absl::string_view source) : source_(source) {}

  // Returns the next token. At the end, returns kEof forever. On a lexical
  // error returns kError; `error()` then says why, and the token points at
  // the offending character.
  Token Next();

  const std::string& error() const { return error_; }

 private:
  Token Make(Tok kind, size_t begin) const;
  Token MakeError(size_t begin, std::string message);
  Token LexNumber(size_t begin);
  Token LexString(size_t begin);
  void SkipWhitespaceAndComments();

  absl::string_view source_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;  // offset of the first byte of the current line
  std::string error_;
};

}  // namespace kir

#endif  // KIR_PARSER_LEXER_H_
