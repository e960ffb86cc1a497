// Unit tests for --split-input-file splitting.
#include "tools/kir-opt/split_input.h"

#include "gtest/gtest.h"

namespace kir {
namespace {

TEST(SplitInputFileTest, NoSeparatorIsOneChunk) {
  std::vector<InputChunk> chunks = SplitInputFile("a\nb\n");
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].text, "a\nb\n");
  EXPECT_EQ(chunks[0].first_line, 1);
}

TEST(SplitInputFileTest, ChunksKeepTheFilesLineNumbers) {
  std::vector<InputChunk> chunks =
      SplitInputFile("one\ntwo\n// -----\nfour\n  // -----  \nsix");
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].text, "one\ntwo\n");
  // Line 4 of the file is line 4 of the chunk: three blank lines first.
  EXPECT_EQ(chunks[1].first_line, 4);
  EXPECT_EQ(chunks[1].text, "\n\n\nfour\n");
  EXPECT_EQ(chunks[2].first_line, 6);
  EXPECT_EQ(chunks[2].text, "\n\n\n\n\nsix");
}

TEST(SplitInputFileTest, OtherCommentsDoNotSplit) {
  std::vector<InputChunk> chunks =
      SplitInputFile("// ------\n// ----- x\n%a // -----\n");
  EXPECT_EQ(chunks.size(), 1u);
}

}  // namespace
}  // namespace kir
