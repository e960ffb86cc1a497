#include "ir/utf8.h"

namespace kir {

int Utf8SequenceLength(absl::string_view text) {
  if (text.empty()) return 0;
  const auto byte = [&](size_t i) {
    return static_cast<unsigned char>(text[i]);
  };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  int length = 0;
  uint32_t code = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;  // a continuation byte, or 0xc0, 0xc1, 0xf5..0xff
  }
  if (text.size() < static_cast<size_t>(length)) return 0;
  for (int i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3f);
  }
  static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || code > 0x10ffff ||
      (code >= 0xd800 && code <= 0xdfff)) {
    return 0;
  }
  return length;
}

std::string PrintableText(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const int length = Utf8SequenceLength(text.substr(i));
    if (length == 0 || (length == 1 && IsControlByte(text[i]) &&
                        text[i] != '\t' && text[i] != '\n')) {
      out += '?';
      ++i;
      continue;
    }
    out.append(text.data() + i, static_cast<size_t>(length));
    i += static_cast<size_t>(length);
  }
  return out;
}

}  // namespace kir
