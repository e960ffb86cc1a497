#include "tools/kir-check/generator.h"

#include <map>
#include <string>

#include "absl/strings/match.h"
#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "parser/parser.h"
#include "tools/kir-check/check.h"
#include "tools/kir-check/fuzz.h"
#include "tools/kir-run/binding.h"

namespace kir::check {
namespace {

// Every generated kernel parses, verifies and has a valid run directive;
// over 300 seeds each feature the fuzzer is meant to exercise appears.
TEST(Generator, KernelsAreValidAndCoverTheFeatures) {
  std::map<std::string, int> seen;
  const char* features[] = {"role @",     "tma.load",      "tma.store",
                            "wgmma ",     "stmatrix",      "for %it",
                            "if %g",      "swizzle = 128", "block(32)",
                            "block(256)", "grid(2)"};
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const std::string text = GenerateKernel(seed);
    auto source = std::make_shared<SourceFile>();
    source->name = "fuzz.kir";
    source->text = text;
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(source);
    ASSERT_TRUE(module.ok())
        << "seed " << seed << ": " << module.status() << "\n"
        << text;
    absl::Status verified = Verify(**module);
    ASSERT_TRUE(verified.ok()) << "seed " << seed << ": " << verified << "\n"
                               << text;
    absl::StatusOr<std::vector<RunDirective>> directives =
        DirectivesOf(source, "");
    ASSERT_TRUE(directives.ok() && directives->size() == 1) << seed;
    ASSERT_TRUE(ValidateDirective(directives->front(), **module).ok()) << seed;
    for (const char* feature : features) {
      if (absl::StrContains(text, feature)) ++seen[feature];
    }
    // The same seed gives the same kernel.
    ASSERT_EQ(text, GenerateKernel(seed));
  }
  for (const char* feature : features)
    EXPECT_GT(seen[feature], 0) << "no kernel has " << feature;
}

TEST(SamplePipelines, DefaultFirstThenDistinctCombinations) {
  const std::vector<std::string> pipelines = SamplePipelines(7, 5);
  ASSERT_EQ(pipelines.size(), 6u);
  EXPECT_EQ(pipelines[0], "default");
  for (size_t i = 1; i < pipelines.size(); ++i) {
    EXPECT_TRUE(absl::StrContains(pipelines[i], "insert-proxy-fences{"));
    for (size_t j = 1; j < i; ++j) EXPECT_NE(pipelines[i], pipelines[j]);
  }
  EXPECT_EQ(SamplePipelines(7, 5), pipelines);
}

}  // namespace
}  // namespace kir::check
