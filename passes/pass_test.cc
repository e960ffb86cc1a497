// Unit tests for pass options, statistics and the registry.
#include "passes/pass.h"

#include "gtest/gtest.h"

namespace kir {
namespace {

TEST(PassOptionsTest, TypedGettersReturnValuesOrDefaults) {
  PassOptions options({{"depth", "3"}, {"fast", "true"}, {"mode", "x"}}, "dce");
  EXPECT_EQ(*options.GetInt("depth", 7), 3);
  EXPECT_EQ(*options.GetInt("missing", 7), 7);
  EXPECT_TRUE(*options.GetBool("fast", false));
  EXPECT_FALSE(*options.GetBool("missing", false));
  EXPECT_EQ(*options.GetString("mode", "y"), "x");
  EXPECT_EQ(*options.GetString("missing", "y"), "y");
  EXPECT_EQ(options.ToString(), "{depth=3,fast=true,mode=x}");
  EXPECT_EQ(PassOptions().ToString(), "");
}

TEST(PassOptionsTest, WrongTypesNameThePassAndOption) {
  PassOptions options({{"depth", "deep"}, {"fast", "yes"}}, "dce");
  absl::StatusOr<int64_t> depth = options.GetInt("depth", 0);
  ASSERT_FALSE(depth.ok());
  EXPECT_EQ(depth.status().message(),
            "pass 'dce': option 'depth' expects an integer, got 'deep'");
  absl::StatusOr<bool> fast = options.GetBool("fast", false);
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.status().message(),
            "pass 'dce': option 'fast' expects a boolean (true or false), "
            "got 'yes'");
}

TEST(PassStatisticsTest, AddsAndKeepsNameOrder) {
  PassStatistics stats;
  stats.Add("zeta");
  stats.Add("alpha", 2);
  stats.Add("zeta", 3);
  ASSERT_EQ(stats.counters().size(), 2u);
  EXPECT_EQ(stats.counters().begin()->first, "alpha");
  EXPECT_EQ(stats.counters().at("alpha"), 2);
  EXPECT_EQ(stats.counters().at("zeta"), 4);
}

TEST(RegistryTest, FindsRegisteredPassesInTableOrder) {
  const std::vector<PassInfo>& passes = RegisteredPasses();
  ASSERT_GE(passes.size(), 2u);
  EXPECT_STREQ(passes[0].name, "canonicalize");
  EXPECT_STREQ(passes[1].name, "dce");
  EXPECT_EQ(FindPass("dce"), &passes[1]);
  EXPECT_EQ(FindPass("no-such-pass"), nullptr);
  for (const PassInfo& pass : passes) {
    EXPECT_NE(pass.run, nullptr) << pass.name;
    EXPECT_GT(std::string(pass.summary).size(), 0u) << pass.name;
  }
}

TEST(RegistryTest, OptionKindsComeFromDefaults) {
  PassInfo info{"fake", nullptr, "", "count=4, on=false,name=x, empty="};
  std::vector<PassOptionSpec> specs = AcceptedOptions(info);
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].name, "count");
  EXPECT_EQ(specs[0].default_value, "4");
  EXPECT_EQ(specs[0].kind, PassOptionSpec::Kind::kInt);
  EXPECT_EQ(specs[1].name, "on");
  EXPECT_EQ(specs[1].kind, PassOptionSpec::Kind::kBool);
  EXPECT_EQ(specs[2].kind, PassOptionSpec::Kind::kString);
  EXPECT_EQ(specs[3].name, "empty");
  EXPECT_EQ(specs[3].default_value, "");
  EXPECT_EQ(specs[3].kind, PassOptionSpec::Kind::kString);
  PassInfo none{"none", nullptr, "", ""};
  EXPECT_TRUE(AcceptedOptions(none).empty());
}

}  // namespace
}  // namespace kir
