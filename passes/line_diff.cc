// Longest-common-subsequence line diff printed in unified format.
#include "passes/line_diff.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kir {
namespace {

// Beyond this many LCS cells the middle is replaced wholesale.
constexpr int64_t kMaxTableCells = int64_t{1} << 24;

enum class Edit { kKeep, kRemove, kAdd };

struct Line {
  Edit edit;
  absl::string_view text;
};

std::vector<absl::string_view> SplitLines(absl::string_view text) {
  if (text.empty()) return {};
  if (text.back() == '\n') text.remove_suffix(1);
  return absl::StrSplit(text, '\n');
}

// The edit script turning `a` into `b`: removals before additions within
// each changed stretch, as diff(1) prints them.
std::vector<Line> EditScript(const std::vector<absl::string_view>& a,
                             const std::vector<absl::string_view>& b) {
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) {
    ++prefix;
  }
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  const size_t n = a.size() - prefix - suffix;
  const size_t m = b.size() - prefix - suffix;
  std::vector<Line> script;
  for (size_t i = 0; i < prefix; ++i) script.push_back({Edit::kKeep, a[i]});
  if (static_cast<int64_t>(n + 1) * static_cast<int64_t>(m + 1) >
      kMaxTableCells) {
    for (size_t i = 0; i < n; ++i) {
      script.push_back({Edit::kRemove, a[prefix + i]});
    }
    for (size_t j = 0; j < m; ++j) {
      script.push_back({Edit::kAdd, b[prefix + j]});
    }
  } else {
    // lcs[i][j]: LCS length of a[prefix+i..] and b[prefix+j..].
    std::vector<std::vector<uint32_t>> lcs(n + 1,
                                           std::vector<uint32_t>(m + 1, 0));
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        lcs[i][j] = a[prefix + i] == b[prefix + j]
                        ? lcs[i + 1][j + 1] + 1
                        : std::max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[prefix + i] == b[prefix + j]) {
        script.push_back({Edit::kKeep, a[prefix + i]});
        ++i;
        ++j;
      } else if (j == m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1])) {
        script.push_back({Edit::kRemove, a[prefix + i]});
        ++i;
      } else {
        script.push_back({Edit::kAdd, b[prefix + j]});
        ++j;
      }
    }
  }
  for (size_t i = a.size() - suffix; i < a.size(); ++i) {
    script.push_back({Edit::kKeep, a[i]});
  }
  return script;
}

// "a,b" as in a hunk header; a count of 0 names the line before.
std::string Range(size_t start, size_t count) {
  if (count == 0) return absl::StrCat(start - 1, ",0");
  if (count == 1) return absl::StrCat(start);
  return absl::StrCat(start, ",", count);
}

}  // namespace

std::string UnifiedDiff(absl::string_view before, absl::string_view after,
                        absl::string_view before_label,
                        absl::string_view after_label, int context) {
  if (before == after) return "";
  const std::vector<Line> script =
      EditScript(SplitLines(before), SplitLines(after));
  const size_t size = script.size();
  const size_t ctx = static_cast<size_t>(std::max(context, 0));
  std::string out =
      absl::StrCat("--- ", before_label, "\n+++ ", after_label, "\n");
  // Line numbers (1-based) in before and after at each script position.
  std::vector<size_t> old_line(size + 1), new_line(size + 1);
  old_line[0] = new_line[0] = 1;
  for (size_t k = 0; k < size; ++k) {
    old_line[k + 1] = old_line[k] + (script[k].edit != Edit::kAdd ? 1 : 0);
    new_line[k + 1] = new_line[k] + (script[k].edit != Edit::kRemove ? 1 : 0);
  }
  size_t k = 0;
  while (k < size) {
    while (k < size && script[k].edit == Edit::kKeep) ++k;
    if (k == size) break;
    // A hunk: from `ctx` lines before this change to `ctx` lines after the
    // last change that is at most 2*ctx unchanged lines from the previous.
    const size_t begin = k >= ctx ? k - ctx : 0;
    size_t end = k;
    while (true) {
      while (end < size && script[end].edit != Edit::kKeep) ++end;
      size_t next = end;
      while (next < size && script[next].edit == Edit::kKeep) ++next;
      if (next < size && next - end <= 2 * ctx) {
        end = next;
        continue;
      }
      end = std::min(end + ctx, size);
      break;
    }
    size_t old_count = 0, new_count = 0;
    for (size_t i = begin; i < end; ++i) {
      if (script[i].edit != Edit::kAdd) ++old_count;
      if (script[i].edit != Edit::kRemove) ++new_count;
    }
    absl::StrAppend(&out, "@@ -", Range(old_line[begin], old_count), " +",
                    Range(new_line[begin], new_count), " @@\n");
    for (size_t i = begin; i < end; ++i) {
      const char mark = script[i].edit == Edit::kKeep     ? ' '
                        : script[i].edit == Edit::kRemove ? '-'
                                                          : '+';
      absl::StrAppend(&out, std::string(1, mark), script[i].text, "\n");
    }
    k = end;
  }
  return out;
}

}  // namespace kir
