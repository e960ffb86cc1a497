// Unit tests for pass options, statistics and the registry.
#include "passes/pass.h"

#include "gtest/gtest.h"

namespace kir {
namespace {

absl::Status LeaveKernelAsIs(Kernel&, const PassOptions&, PassContext&) {
  return absl::OkStatus();
}

// A pass with one option of each kind.
const PassInfo& FakePass() {
  static const PassInfo pass{
      "fake", &LeaveKernelAsIs, "",
      PassOptionList{IntOption("depth", 7, -1, 100), BoolOption("fast", false),
                     EnumOption("mode", {"y", "x"}),
                     OnlyWith(BoolOption("deep", true), "mode", "x"),
                     StringOption("note", "")}};
  return pass;
}

TEST(PassOptionsTest, TypedGettersReturnValuesOrDeclaredDefaults) {
  PassOptions options({{"depth", "3"}, {"fast", "true"}, {"mode", "x"}},
                      FakePass());
  EXPECT_EQ(*options.GetInt("depth"), 3);
  EXPECT_TRUE(*options.GetBool("fast"));
  EXPECT_EQ(*options.GetString("mode"), "x");
  EXPECT_TRUE(*options.GetBool("deep"));
  EXPECT_EQ(*options.GetString("note"), "");
  EXPECT_EQ(options.ToString(), "{depth=3,fast=true,mode=x}");
  PassOptions defaults({}, FakePass());
  EXPECT_EQ(*defaults.GetInt("depth"), 7);
  EXPECT_FALSE(*defaults.GetBool("fast"));
  EXPECT_EQ(*defaults.GetString("mode"), "y");
  EXPECT_EQ(PassOptions().ToString(), "");
}

TEST(PassOptionsTest, ValuesOutsideTheDeclarationNameThePassAndOption) {
  auto error_of = [](OptionValues values, absl::string_view name) {
    PassOptions options(std::move(values), FakePass());
    absl::Status status = name == "fast"   ? options.GetBool(name).status()
                          : name == "mode" ? options.GetString(name).status()
                                           : options.GetInt(name).status();
    EXPECT_FALSE(status.ok());
    return std::string(status.message());
  };
  EXPECT_EQ(error_of({{"depth", "deep"}}, "depth"),
            "pass 'fake': option 'depth' expects an integer from -1 to 100, "
            "got 'deep'");
  EXPECT_EQ(error_of({{"depth", "101"}}, "depth"),
            "pass 'fake': option 'depth' expects an integer from -1 to 100, "
            "got '101'");
  EXPECT_EQ(error_of({{"depth", "4294967296"}}, "depth"),
            "pass 'fake': option 'depth' expects an integer from -1 to 100, "
            "got '4294967296'");
  EXPECT_EQ(error_of({{"fast", "yes"}}, "fast"),
            "pass 'fake': option 'fast' expects a boolean (true or false), "
            "got 'yes'");
  EXPECT_EQ(error_of({{"mode", ""}}, "mode"),
            "pass 'fake': option 'mode' expects y or x, got ''");
  // A combination the declarations forbid fails every getter.
  EXPECT_EQ(error_of({{"deep", "false"}}, "depth"),
            "pass 'fake': option 'deep' applies to mode=x only, not mode=y");
}

TEST(PassOptionsTest, DescribeSaysWhatEachKindAccepts) {
  std::vector<std::string> described;
  for (const PassOptionDecl& decl : FakePass().options.decls()) {
    described.push_back(decl.Describe());
  }
  EXPECT_EQ(described, (std::vector<std::string>{
                           "depth=7 (-1 to 100)", "fast=false (true, false)",
                           "mode=y (y, x)",
                           "deep=true (true, false) [only with "
                           "mode=x]",
                           "note="}));
}

TEST(PassOptionsTest, ReadingAnUndeclaredOptionIsABug) {
  PassOptions options({}, FakePass());
  EXPECT_DEATH((void)options.GetInt("width"),
               "reads option 'width', which passes.def does not declare");
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

TEST(RegistryTest, ShorthandOptionKindsComeFromDefaults) {
  PassInfo info{"fake", nullptr, "", "count=4, on=false,name=x, empty="};
  const std::vector<PassOptionDecl>& decls = info.options.decls();
  ASSERT_EQ(decls.size(), 4u);
  EXPECT_EQ(decls[0].name, "count");
  EXPECT_EQ(decls[0].default_value, "4");
  EXPECT_EQ(decls[0].kind, PassOptionDecl::Kind::kInt);
  EXPECT_EQ(decls[0].max, kMaxIntOption);
  EXPECT_EQ(decls[1].name, "on");
  EXPECT_EQ(decls[1].kind, PassOptionDecl::Kind::kBool);
  EXPECT_EQ(decls[2].kind, PassOptionDecl::Kind::kString);
  EXPECT_EQ(decls[3].name, "empty");
  EXPECT_EQ(decls[3].default_value, "");
  EXPECT_EQ(decls[3].kind, PassOptionDecl::Kind::kString);
  PassInfo none{"none", nullptr, "", ""};
  EXPECT_TRUE(none.options.decls().empty());
}

TEST(RegistryTest, EveryRegisteredOptionDefaultIsAccepted) {
  for (const PassInfo& pass : RegisteredPasses()) {
    for (const PassOptionDecl& decl : pass.options.decls()) {
      EXPECT_TRUE(CheckOptionValue(pass, decl, decl.default_value).ok())
          << pass.name << " " << decl.name;
    }
  }
}

}  // namespace
}  // namespace kir
