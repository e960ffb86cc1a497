#include "parser/source_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kir {

absl::StatusOr<std::string> ReadSourceText(const std::string& path,
                                           size_t max_bytes) {
  const bool is_stdin = path == "-";
  const std::string name = is_stdin ? "<stdin>" : path;
  const int fd = is_stdin ? STDIN_FILENO : open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open input file '", path,
                                            "': ", std::strerror(errno)));
  }
  struct FdCloser {
    int fd;
    bool owned;
    ~FdCloser() {
      if (owned) close(fd);
    }
  } closer{fd, !is_stdin};
  struct stat info;
  if (fstat(fd, &info) != 0) {
    return absl::DataLossError(absl::StrCat("cannot read input file '", name,
                                            "': ", std::strerror(errno)));
  }
  if (S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", name, "' is a directory, not a .kir file"));
  }
  const std::string limit_error = absl::StrCat(
      "input '", name, "' is larger than ", max_bytes,
      " bytes, the input limit (raise it with --max-input-bytes=N, e.g. 1G)");
  if (S_ISREG(info.st_mode) &&
      static_cast<uint64_t>(info.st_size) > max_bytes) {
    return absl::ResourceExhaustedError(limit_error);
  }
  std::string text;
  if (S_ISREG(info.st_mode)) text.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::DataLossError(absl::StrCat("cannot read input file '", name,
                                              "': ", std::strerror(errno)));
    }
    if (got == 0) break;
    if (text.size() + static_cast<size_t>(got) > max_bytes) {
      return absl::ResourceExhaustedError(limit_error);
    }
    text.append(buffer, static_cast<size_t>(got));
  }
  return text;
}

bool ParseByteCount(absl::string_view text, size_t* bytes) {
  text = absl::StripAsciiWhitespace(text);
  int shift = 0;
  if (!text.empty()) {
    switch (absl::ascii_toupper(static_cast<unsigned char>(text.back()))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      default:
        break;
    }
    if (shift > 0) text.remove_suffix(1);
  }
  uint64_t count = 0;
  if (text.empty() ||
      !absl::ascii_isdigit(static_cast<unsigned char>(text[0])) ||
      !absl::SimpleAtoi(text, &count) || count == 0 ||
      count > (uint64_t{1} << (62 - shift))) {
    return false;
  }
  *bytes = static_cast<size_t>(count << shift);
  return true;
}

}  // namespace kir
