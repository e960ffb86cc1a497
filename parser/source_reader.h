// Reading a source file for the tools, with a size limit: a directory, a
// device that never ends (/dev/zero) or an unexpectedly large file is a
// clear error instead of an empty module or a process that grows until it
// is killed.
#ifndef KIR_PARSER_SOURCE_READER_H_
#define KIR_PARSER_SOURCE_READER_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kir {

// The default limit of the tools' --max-input-bytes: 256 MiB, five times
// the largest input the benchmarks use (1M ops, about 50 MB).
inline constexpr size_t kDefaultMaxInputBytes = size_t{256} << 20;

// The contents of `path` ("-": standard input), which must be a regular
// file, a pipe or a terminal of at most `max_bytes` bytes. The error
// names the file and, for the limit, how to raise it.
absl::StatusOr<std::string> ReadSourceText(const std::string& path,
                                           size_t max_bytes);

// Parses a byte count for --max-input-bytes: digits with an optional K, M
// or G (powers of 1024); false if it is not one or is 0.
bool ParseByteCount(absl::string_view text, size_t* bytes);

}  // namespace kir

#endif  // KIR_PARSER_SOURCE_READER_H_
