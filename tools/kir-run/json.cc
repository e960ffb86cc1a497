#include "tools/kir-run/json.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kir {

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(&out, absl::StrFormat("\\u%04x", c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  return absl::StrFormat("%.6g", value);
}

}  // namespace kir

namespace kir {
namespace {

class JsonParser {
 public:
  explicit JsonParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue value;
    if (absl::Status s = Parse(value, 0); !s.ok()) return s;
    SkipSpace();
    if (at_ != text_.size()) return Error("text after the JSON value");
    return value;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < at_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat(line, ":", column, ": invalid JSON: ", what));
  }

  void SkipSpace() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' ||
                                  text_[at_] == '\r' || text_[at_] == '\t'))
      ++at_;
  }

  bool Consume(absl::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  absl::Status Parse(JsonValue& value, int depth) {
    if (depth > 256) return Error("nested too deeply");
    SkipSpace();
    if (at_ >= text_.size()) return Error("unexpected end");
    const char c = text_[at_];
    if (c == '{') return ParseObject(value, depth);
    if (c == '[') return ParseArray(value, depth);
    if (c == '"') {
      value.kind = JsonValue::Kind::kString;
      return ParseString(value.string);
    }
    if (Consume("null")) {
      value.kind = JsonValue::Kind::kNull;
      return absl::OkStatus();
    }
    for (const bool boolean : {true, false}) {
      if (Consume(boolean ? "true" : "false")) {
        value.kind = JsonValue::Kind::kBool;
        value.boolean = boolean;
        return absl::OkStatus();
      }
    }
    return ParseNumber(value);
  }

  absl::Status ParseNumber(JsonValue& value) {
    const size_t start = at_;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    while (at_ < text_.size() &&
           (absl::ascii_isdigit(text_[at_]) || text_[at_] == '.' ||
            text_[at_] == 'e' || text_[at_] == 'E' || text_[at_] == '+' ||
            text_[at_] == '-'))
      ++at_;
    value.kind = JsonValue::Kind::kNumber;
    if (at_ == start ||
        !absl::SimpleAtod(text_.substr(start, at_ - start), &value.number) ||
        !absl::ascii_isdigit(text_[at_ - 1])) {
      at_ = start;
      return Error("expected a value");
    }
    return absl::OkStatus();
  }

  absl::Status ParseHex4(uint32_t& code) {
    if (at_ + 4 > text_.size()) return Error("short \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[at_++];
      int digit = absl::ascii_isdigit(h)   ? h - '0'
                  : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                  : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                           : -1;
      if (digit < 0) return Error("bad \\u escape");
      code = code * 16 + static_cast<uint32_t>(digit);
    }
    return absl::OkStatus();
  }

  static void AppendUtf8(uint32_t code, std::string& out) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  absl::Status ParseString(std::string& out) {
    ++at_;  // the opening quote
    out.clear();
    while (true) {
      if (at_ >= text_.size()) return Error("unterminated string");
      const char c = text_[at_++];
      if (c == '"') return absl::OkStatus();
      if (static_cast<unsigned char>(c) < 0x20)
        return Error("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) return Error("unterminated string");
      const char e = text_[at_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t code = 0;
          if (absl::Status s = ParseHex4(code); !s.ok()) return s;
          if (code >= 0xD800 && code < 0xDC00 && Consume("\\u")) {
            uint32_t low = 0;
            if (absl::Status s = ParseHex4(low); !s.ok()) return s;
            if (low < 0xDC00 || low >= 0xE000)
              return Error("bad surrogate pair");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(code, out);
          break;
        }
        default:
          --at_;
          return Error("bad escape");
      }
    }
  }

  absl::Status ParseArray(JsonValue& value, int depth) {
    ++at_;
    value.kind = JsonValue::Kind::kArray;
    SkipSpace();
    if (Consume("]")) return absl::OkStatus();
    while (true) {
      JsonValue& element = value.array.emplace_back();
      if (absl::Status s = Parse(element, depth + 1); !s.ok()) return s;
      SkipSpace();
      if (Consume("]")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }

  absl::Status ParseObject(JsonValue& value, int depth) {
    ++at_;
    value.kind = JsonValue::Kind::kObject;
    SkipSpace();
    if (Consume("}")) return absl::OkStatus();
    while (true) {
      SkipSpace();
      if (at_ >= text_.size() || text_[at_] != '"')
        return Error("expected a member name");
      auto& member = value.object.emplace_back();
      if (absl::Status s = ParseString(member.first); !s.ok()) return s;
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      if (absl::Status s = Parse(member.second, depth + 1); !s.ok()) return s;
      SkipSpace();
      if (Consume("}")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  absl::string_view text_;
  size_t at_ = 0;
};

}  // namespace

const JsonValue* JsonValue::Find(absl::string_view key) const {
  for (const auto& [name, value] : object)
    if (name == key) return &value;
  return nullptr;
}

absl::StatusOr<JsonValue> ParseJson(absl::string_view text) {
  return JsonParser(text).ParseDocument();
}

}  // namespace kir
