// UTF-8 checks shared by the lexer (strings must be valid UTF-8) and the
// diagnostics (which echo source lines and must not echo raw control
// bytes to a terminal).
#ifndef KIR_IR_UTF8_H_
#define KIR_IR_UTF8_H_

#include <string>

#include "absl/strings/string_view.h"

namespace kir {

// The length (1 to 4) of the valid UTF-8 sequence `text` starts with; 0 if
// it starts with none (a stray continuation byte, an overlong form, a
// surrogate, a code point past U+10FFFF, a sequence cut short) or is empty.
int Utf8SequenceLength(absl::string_view text);

// Whether `c` is a control byte: below 0x20, or DEL.
inline bool IsControlByte(char c) {
  const unsigned char byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

// `text` with each control byte (except tab and newline) and each byte of
// invalid UTF-8 replaced by '?'.
std::string PrintableText(absl::string_view text);

}  // namespace kir

#endif  // KIR_IR_UTF8_H_
