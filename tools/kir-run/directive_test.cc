#include "tools/kir-run/directive.h"

#include <cmath>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "parser/parser.h"
#include "tools/kir-run/binding.h"

namespace kir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::shared_ptr<const SourceFile> Source(const std::string& text) {
  auto source = std::make_shared<SourceFile>();
  source->name = "test.kir";
  source->text = text;
  return source;
}

TEST(RunDirectiveTest, ParsesBindingsInitsAndChecks) {
  auto directives = ParseRunDirectives(Source(
      "// a comment\n"
      "  // run: pipeline='canonicalize,dce' @k M=4 x=normal(seed=3, std=2) "
      "y=uniform(seed=1, low=-2, high=5) z=iota(start=1, step=0.5) "
      "w=fill(-inf) v=zeros alpha=-1.25 => out ~= bf16(alpha * (x @ y.T)) "
      "rtol=1e-2 atol=1e-3; o2 == -x + 2\n"));
  ASSERT_TRUE(directives.ok()) << directives.status();
  ASSERT_EQ(directives->size(), 1u);
  const RunDirective& d = (*directives)[0];
  EXPECT_EQ(d.loc.line, 2);
  EXPECT_EQ(d.loc.column, 6);
  EXPECT_EQ(d.kernel, "k");
  EXPECT_EQ(d.pipeline, "canonicalize,dce");
  ASSERT_EQ(d.bindings.size(), 7u);
  EXPECT_TRUE(d.bindings[0].is_number);
  EXPECT_EQ(d.bindings[0].number_text, "4");
  EXPECT_EQ(d.bindings[1].init.kind, InputInit::Kind::kNormal);
  EXPECT_EQ(d.bindings[1].init.seed, 3u);
  EXPECT_EQ(d.bindings[1].init.first, 0);
  EXPECT_EQ(d.bindings[1].init.second, 2);
  EXPECT_EQ(d.bindings[2].init.kind, InputInit::Kind::kUniform);
  EXPECT_EQ(d.bindings[2].init.first, -2);
  EXPECT_EQ(d.bindings[2].init.second, 5);
  EXPECT_EQ(d.bindings[3].init.kind, InputInit::Kind::kIota);
  EXPECT_EQ(d.bindings[3].init.second, 0.5);
  EXPECT_TRUE(std::isinf(d.bindings[4].init.first));
  EXPECT_LT(d.bindings[4].init.first, 0);
  EXPECT_EQ(d.bindings[5].init.kind, InputInit::Kind::kFill);
  EXPECT_EQ(d.bindings[5].init.first, 0);
  EXPECT_EQ(d.bindings[6].number, -1.25);
  ASSERT_EQ(d.checks.size(), 2u);
  EXPECT_EQ(d.checks[0].output, "out");
  EXPECT_FALSE(d.checks[0].exact);
  EXPECT_EQ(d.checks[0].rtol, 1e-2);
  EXPECT_EQ(d.checks[0].atol, 1e-3);
  EXPECT_EQ(d.checks[0].reference->ToString(), "bf16((alpha * (x @ y.T)))");
  EXPECT_TRUE(d.checks[1].exact);
  EXPECT_EQ(d.checks[1].reference->ToString(), "((-x) + 2)");
}

TEST(RunDirectiveTest, ParsesRandint) {
  auto directives = ParseRunDirectives(Source(
      "// run: @k a=randint(seed=7) b=randint(seed=1, low=0, high=2) "
      "=> o == a @ b\n"));
  ASSERT_TRUE(directives.ok()) << directives.status();
  const RunDirective& d = (*directives)[0];
  EXPECT_EQ(d.bindings[0].init.kind, InputInit::Kind::kRandInt);
  EXPECT_EQ(d.bindings[0].init.seed, 7u);
  EXPECT_EQ(d.bindings[0].init.first, -4);
  EXPECT_EQ(d.bindings[0].init.second, 4);
  EXPECT_EQ(d.bindings[1].init.first, 0);
  EXPECT_EQ(d.bindings[1].init.second, 2);
}

TEST(RunDirectiveTest, WorkspaceZeroingDefaultsToEachLaunch) {
  auto directives = ParseRunDirectives(
      Source("// run: @k => o == x\n"
             "// run: workspace=once pipeline='default' @k => o == x\n"
             "// run: pipeline='dce' workspace=each @k => o == x\n"));
  ASSERT_TRUE(directives.ok()) << directives.status();
  ASSERT_EQ(directives->size(), 3u);
  EXPECT_EQ((*directives)[0].workspace, WorkspaceZeroing::kEachLaunch);
  EXPECT_FALSE((*directives)[0].workspace_loc.has_value());
  EXPECT_EQ((*directives)[1].workspace, WorkspaceZeroing::kOnce);
  ASSERT_TRUE((*directives)[1].workspace_loc.has_value());
  EXPECT_EQ((*directives)[1].workspace_loc->column, 9);
  EXPECT_EQ((*directives)[1].pipeline, "default");
  EXPECT_EQ((*directives)[2].workspace, WorkspaceZeroing::kEachLaunch);
  EXPECT_TRUE((*directives)[2].workspace_loc.has_value());
  EXPECT_EQ((*directives)[2].pipeline, "dce");
}

TEST(RunDirectiveTest, WorkspaceGivenTwiceNamesTheFirst) {
  auto directives = ParseRunDirectives(
      Source("// run: workspace=once workspace=each @k => o == x\n"));
  ASSERT_FALSE(directives.ok());
  EXPECT_THAT(directives.status().message(),
              HasSubstr("test.kir:1:24: error: 'workspace' is given twice"));
  EXPECT_THAT(directives.status().message(),
              HasSubstr("test.kir:1:9: note: first given here"));
}

TEST(RunDirectiveTest, PrecedenceMatchesNumpy) {
  auto directives =
      ParseRunDirectives(Source("// run: @k => o == a + b * c @ d - e / f\n"));
  ASSERT_TRUE(directives.ok()) << directives.status();
  EXPECT_EQ((*directives)[0].checks[0].reference->ToString(),
            "((a + ((b * c) @ d)) - (e / f))");
}

TEST(RunDirectiveTest, IgnoresOtherComments) {
  auto directives = ParseRunDirectives(
      Source("// RUN: kir-opt %s\n// running: no\n// run:x\nkernel @k\n"));
  // `run:x` is a directive (with an error); `RUN:` and `running:` are not.
  ASSERT_FALSE(directives.ok());
  EXPECT_THAT(directives.status().message(), HasSubstr("test.kir:3:8: error"));
}

struct BadDirective {
  const char* text;
  const char* message;
};

class RunDirectiveErrorTest : public ::testing::TestWithParam<BadDirective> {};

TEST_P(RunDirectiveErrorTest, IsALocatedError) {
  auto directives = ParseRunDirectives(Source(GetParam().text));
  ASSERT_FALSE(directives.ok());
  EXPECT_THAT(directives.status().message(), HasSubstr(GetParam().message));
  EXPECT_THAT(directives.status().message(), HasSubstr("test.kir:1:"));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, RunDirectiveErrorTest,
    ::testing::Values(
        BadDirective{"// run: k M=1 => o == a", "expected '@kernel'"},
        BadDirective{"// run: @k M=1", "a directive that checks nothing"},
        BadDirective{"// run: @k x=normal() => o == x", "needs seed=N"},
        BadDirective{"// run: @k x=normal(seed=1, sd=2) => o == x",
                     "has no parameter 'sd'"},
        BadDirective{"// run: @k x=gauss(seed=1) => o == x",
                     "unknown input 'gauss'"},
        BadDirective{"// run: @k x=1 x=2 => o == x", "bound twice"},
        BadDirective{"// run: @k => o ~= x", "'~=' needs a tolerance"},
        BadDirective{"// run: @k => o == x rtol=1", "takes no tolerance"},
        BadDirective{"// run: @k => o ~= x rtol=-1", "finite number >= 0"},
        BadDirective{"// run: @k => o ~= sin(x) atol=1",
                     "no reference function 'sin'"},
        BadDirective{"// run: @k => o == (x", "expected ')'"},
        BadDirective{"// run: @k => o == x.U", "expected 'T'"},
        BadDirective{"// run: @k => o == x o2 == y", "expected ';'"},
        BadDirective{"// run: @k => o == x $", "unexpected character '$'"},
        BadDirective{"// run: pipeline=dce @k => o == x",
                     "expected a quoted pipeline"},
        BadDirective{"// run: workspace=twice @k => o == x",
                     "expected 'each' (zero the workspaces before every "
                     "launch) or 'once' (zero them when they are allocated), "
                     "got 'twice'"},
        BadDirective{"// run: workspace='once' @k => o == x",
                     "expected 'each' (zero the workspaces"},
        BadDirective{"// run: workspace once @k => o == x",
                     "expected '=', got 'once'"},
        BadDirective{"// run: workspace=", "got 'end of line'"},
        BadDirective{"// run: @k x=normal(seed=1.5) => o == x",
                     "non-negative integer"},
        BadDirective{"// run: @k x=randint(seed=1, low=0.5) => o == x",
                     "randint needs integers"},
        BadDirective{"// run: @k x=randint(seed=1, low=3, high=2) => o == x",
                     "randint needs integers low <= high"}));

// Validation against a kernel (no GPU involved).
constexpr char kKernel[] = R"(
kernel @scale sizes(%M, %N)
    (%x: global f32[%M, %N], %y: global bf16[%M, %N],
     %y_map: tensormap bf16[8, 8] of %y, %alpha: f32)
    grid(1) block(32) {
}
)";

absl::Status Validate(const std::string& directive) {
  auto source = Source(directive + "\n" + kKernel);
  auto module = ParseModule(source);
  EXPECT_TRUE(module.ok()) << module.status();
  auto directives = ParseRunDirectives(source);
  EXPECT_TRUE(directives.ok()) << directives.status();
  return ValidateDirective((*directives)[0], **module);
}

TEST(ValidateDirectiveTest, IntegerScalarsAndTensorRanks) {
  auto source = Source(
      "// run: @k n=1.5 flag=2 x=zeros\n"
      "// run: @k n=3000000000 flag=1 x=zeros\n"
      "// run: @k n=-7 flag=0 x=zeros\n"
      "kernel @k (%n: i32, %flag: i1,\n"
      "    %x: global f32[1, 1, 1, 1, 1, 1, 1, 1, 2]) grid(1) block(32) {\n"
      "}\n");
  auto module = ParseModule(source);
  ASSERT_TRUE(module.ok()) << module.status();
  // Give each directive a check (the parser requires one).
  auto with_checks = std::make_shared<SourceFile>(*source);
  std::string& body = with_checks->text;
  for (size_t at = body.find("x=zeros"); at != std::string::npos;
       at = body.find("x=zeros", at + 1)) {
    body.insert(at + 7, " => x == 0");
  }
  auto directives = ParseRunDirectives(with_checks);
  ASSERT_TRUE(directives.ok()) << directives.status();
  ASSERT_EQ(directives->size(), 3u);
  absl::Status first = ValidateDirective((*directives)[0], **module);
  EXPECT_THAT(first.message(),
              HasSubstr("'n' is i32; it takes an integer in [-2147483648, "
                        "2147483647]"));
  EXPECT_THAT(first.message(), HasSubstr("'flag' is i1; it takes an integer "
                                         "in [0, 1]"));
  EXPECT_THAT(first.message(), HasSubstr("kir-run handles tensors of rank 8 "
                                         "at most; 'x' has rank 9"));
  absl::Status second = ValidateDirective((*directives)[1], **module);
  EXPECT_THAT(second.message(), HasSubstr("'n' is i32"));
  absl::Status third = ValidateDirective((*directives)[2], **module);
  EXPECT_THAT(third.message(), Not(HasSubstr("'n' is i32")));
  EXPECT_THAT(third.message(), Not(HasSubstr("'flag'")));
}

TEST(ValidateDirectiveTest, AcceptsAWellFormedDirective) {
  EXPECT_TRUE(Validate("// run: @scale M=3 N=5 x=normal(seed=1) alpha=2 "
                       "y=fill(nan) => y ~= bf16(alpha * x) rtol=1e-2 "
                       "atol=1e-3")
                  .ok());
}

struct BadBinding {
  const char* directive;
  const char* message;
};

class ValidateDirectiveErrorTest : public ::testing::TestWithParam<BadBinding> {
};

TEST_P(ValidateDirectiveErrorTest, IsALocatedError) {
  absl::Status status = Validate(GetParam().directive);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(GetParam().message));
  EXPECT_THAT(status.message(), HasSubstr("test.kir:1:"));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ValidateDirectiveErrorTest,
    ::testing::Values(
        BadBinding{"// run: @nope M=1 => y == x", "no kernel @nope"},
        BadBinding{"// run: @scale M=3 N=5 x=normal(seed=1) alpha=2 "
                   "y=zeros q=1 => y == x",
                   "has no parameter or size 'q'"},
        BadBinding{"// run: @scale M=3 N=5 x=normal(seed=1) alpha=2 y=zeros "
                   "y_map=zeros => y == x",
                   "is a tensor map"},
        BadBinding{"// run: @scale M=3 N=5 x=1 alpha=2 y=zeros => y == x",
                   "is a tensor; give it an input"},
        BadBinding{"// run: @scale M=3 N=5 x=zeros alpha=zeros y=zeros => y "
                   "== x",
                   "is a scalar; it takes a number"},
        BadBinding{"// run: @scale M=3.5 N=5 x=zeros alpha=1 y=zeros => y == "
                   "x",
                   "takes an integer >= 0"},
        BadBinding{"// run: @scale M=3 x=zeros alpha=1 y=zeros => y == x",
                   "needs a value for a size 'N'"},
        BadBinding{"// run: @scale M=3 N=5 alpha=1 y=zeros => y == 1",
                   "needs a value for a tensor 'x'"},
        BadBinding{"// run: @scale M=3 N=5 x=zeros alpha=1 y=zeros => alpha "
                   "== x",
                   "'alpha' is not a tensor parameter"},
        BadBinding{"// run: @scale M=3 N=5 x=zeros alpha=1 y=zeros => y == "
                   "x + z",
                   "'z' is not a parameter or size"},
        BadBinding{"// run: @scale M=3 N=5 x=zeros alpha=1 y=zeros => y == "
                   "x.T",
                   "the reference has shape [5, 3], but 'y' has shape [3, 5]"},
        BadBinding{"// run: @scale M=3 N=5 x=zeros alpha=1 y=zeros => y == "
                   "x @ x",
                   "'@' needs [m, k] @ [k, n], got [3, 5] @ [3, 5]"},
        BadBinding{"// run: @scale M=3 N=5 x=zeros alpha=1 y=zeros => y == "
                   "y_map",
                   "is a tensor map; name its tensor"}));

}  // namespace
}  // namespace kir
