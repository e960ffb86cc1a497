#include "tools/kir-run/json.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kir {
namespace {

using ::testing::HasSubstr;

TEST(Json, ReadsWhatTheWriterWrites) {
  const std::string name =
      "a \"quoted\"\tname\nwith \\ and \x01 and caf\xc3\xa9";
  const std::string text = "{\"name\": " + JsonString(name) +
                           ", \"ms\": " + JsonNumber(0.731) +
                           ", \"nan\": " + JsonNumber(NAN) +
                           ", \"list\": [1, -2.5e3, true, false, {}, []]}";
  absl::StatusOr<JsonValue> value = ParseJson(text);
  ASSERT_TRUE(value.ok()) << value.status();
  ASSERT_EQ(value->kind, JsonValue::Kind::kObject);
  EXPECT_EQ(value->Find("name")->string, name);
  EXPECT_DOUBLE_EQ(value->Find("ms")->number, 0.731);
  EXPECT_EQ(value->Find("nan")->kind, JsonValue::Kind::kNull);
  EXPECT_EQ(value->Find("missing"), nullptr);
  const JsonValue& list = *value->Find("list");
  ASSERT_EQ(list.array.size(), 6u);
  EXPECT_EQ(list.array[1].number, -2500);
  EXPECT_TRUE(list.array[2].boolean);
  EXPECT_FALSE(list.array[3].boolean);
  EXPECT_EQ(list.array[4].kind, JsonValue::Kind::kObject);
  EXPECT_EQ(list.array[5].kind, JsonValue::Kind::kArray);
}

TEST(Json, UnicodeEscapesBecomeUtf8) {
  absl::StatusOr<JsonValue> value =
      ParseJson(R"(["\u00e9\u20ac\ud83d\ude00\/"])");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(value->array[0].string, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80/");
}

TEST(Json, ErrorsAreLocatedAndNeverCrash) {
  for (const char* bad :
       {"", "{", "{\"a\" 1}", "[1,]", "[1 2]", "\"open", "tru", "-", "1.",
        "{\"a\": 1} x", "\"\\q\"", "\"\\u12g4\"", "{1: 2}"}) {
    EXPECT_FALSE(ParseJson(bad).ok()) << bad;
  }
  absl::StatusOr<JsonValue> value = ParseJson("{\n  \"a\": [1,\n  x]}");
  ASSERT_FALSE(value.ok());
  EXPECT_THAT(value.status().message(), HasSubstr("3:3: invalid JSON"));
  // Deep nesting is refused, not a stack overflow.
  EXPECT_FALSE(ParseJson(std::string(100000, '[')).ok());
}

}  // namespace
}  // namespace kir
