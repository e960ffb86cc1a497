// Unit tests for the unified line diff.
#include "passes/line_diff.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace kir {
namespace {

TEST(UnifiedDiffTest, EqualTextsHaveNoDiff) {
  EXPECT_EQ(UnifiedDiff("a\nb\n", "a\nb\n", "x", "y"), "");
}

TEST(UnifiedDiffTest, OneChangedLineWithContext) {
  const std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  const std::string after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
  EXPECT_EQ(UnifiedDiff(before, after, "before", "after"),
            "--- before\n+++ after\n"
            "@@ -2,7 +2,7 @@\n"
            " 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(UnifiedDiffTest, InsertionsAndDeletionsAtTheEnds) {
  EXPECT_EQ(UnifiedDiff("b\nc\n", "a\nb\nc\n", "x", "y"),
            "--- x\n+++ y\n@@ -1,2 +1,3 @@\n+a\n b\n c\n");
  EXPECT_EQ(UnifiedDiff("a\nb\nc\n", "a\nb\n", "x", "y"),
            "--- x\n+++ y\n@@ -1,3 +1,2 @@\n a\n b\n-c\n");
}

TEST(UnifiedDiffTest, NearbyChangesShareAHunkDistantOnesDoNot) {
  std::string before;
  for (int i = 1; i <= 20; ++i) before += absl::StrCat(i, "\n");
  std::string near = before;
  near.replace(near.find("3\n"), 2, "x\n");
  near.replace(near.find("8\n"), 2, "y\n");
  const std::string near_diff = UnifiedDiff(before, near, "a", "b");
  // Two "@@ -" headers when the changes are more than 6 lines apart.
  std::string far = before;
  far.replace(far.find("\n2\n") + 1, 2, "x\n");
  far.replace(far.find("\n19\n") + 1, 3, "y\n");
  const std::string far_diff = UnifiedDiff(before, far, "a", "b");
  int near_hunks = 0, far_hunks = 0;
  for (size_t p = near_diff.find("@@ -"); p != std::string::npos;
       p = near_diff.find("@@ -", p + 1)) {
    ++near_hunks;
  }
  for (size_t p = far_diff.find("@@ -"); p != std::string::npos;
       p = far_diff.find("@@ -", p + 1)) {
    ++far_hunks;
  }
  EXPECT_EQ(near_hunks, 1) << near_diff;
  EXPECT_EQ(far_hunks, 2) << far_diff;
}

TEST(UnifiedDiffTest, KeepsTheLongestCommonSubsequence) {
  // Moving one line: only that line is removed and added.
  const std::string diff =
      UnifiedDiff("a\nb\nc\nd\n", "b\nc\nd\na\n", "x", "y", /*context=*/0);
  EXPECT_EQ(diff, "--- x\n+++ y\n@@ -1 +0,0 @@\n-a\n@@ -4,0 +4 @@\n+a\n");
}

}  // namespace
}  // namespace kir
