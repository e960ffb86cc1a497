// Unit tests for the dce pass.
#include "passes/dce.h"

#include <string>

#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "parser/parser.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

std::string AfterDce(absl::string_view text, PassStatistics* stats = nullptr) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  EXPECT_TRUE(Verify(**module).ok()) << Verify(**module);
  PassStatistics local;
  PassContext context{stats != nullptr ? *stats : local};
  for (auto& kernel : (*module)->kernels) {
    EXPECT_TRUE(EliminateDeadCode(*kernel, PassOptions(), context).ok());
  }
  absl::Status verified = Verify(**module);
  EXPECT_TRUE(verified.ok()) << verified;
  return PrintModule(**module);
}

constexpr char kKernel[] = R"(
kernel @k(%in: global f32[64], %out: global f32[64], %n: index) block(32) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %tid = thread.id x : index
  %a = add %tid, %c1 : index
  %b = mul %a, %a : index
  %dead_load = load %in[%b] : f32
  %v = load %in[%tid] : f32
  store %out[%c0], %v
  %p = cmp lt %tid, %n : i1
  if %p {
    %dead = add %tid, %tid : index
  }
  for %i = %c0 to %n step %c1 {
  }
  barrier.block
}
)";

TEST(DceTest, RemovesDeadChainsAndEmptyRegionsKeepsEffects) {
  PassStatistics stats;
  const std::string printed = AfterDce(kKernel, &stats);
  EXPECT_EQ(printed.find("%a ="), std::string::npos) << printed;
  EXPECT_EQ(printed.find("%b ="), std::string::npos) << printed;
  EXPECT_EQ(printed.find("%dead_load"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("if "), std::string::npos) << printed;
  EXPECT_EQ(printed.find("for "), std::string::npos) << printed;
  EXPECT_EQ(printed.find("%c1 ="), std::string::npos) << printed;
  EXPECT_NE(printed.find("store %out[%c0], %v"), std::string::npos) << printed;
  EXPECT_NE(printed.find("barrier.block"), std::string::npos) << printed;
  // %a %b %dead_load %dead %p %c1 (once the loop is gone).
  EXPECT_EQ(stats.counters().at("ops-removed"), 6);
  EXPECT_EQ(stats.counters().at("ifs-removed"), 1);
  EXPECT_EQ(stats.counters().at("loops-removed"), 1);
}

TEST(DceTest, IsIdempotent) {
  const std::string once = AfterDce(kKernel);
  PassStatistics stats;
  EXPECT_EQ(AfterDce(once, &stats), once);
  for (const auto& [name, value] : stats.counters()) {
    EXPECT_EQ(value, 0) << name;
  }
}

TEST(DceTest, KeepsOpsWithSideEffectsAndTheirOperands) {
  const std::string input = R"(
kernel @k(%counter: global i32[1]) block(32) {
  %c0 = const 0 : index
  %one = const 1 : i32
  %old = atomic add %counter[%c0], %one : i32
}
)";
  const std::string printed = AfterDce(input);
  EXPECT_NE(printed.find("%old = atomic add %counter[%c0], %one"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("%one = const 1 : i32"), std::string::npos) << printed;
}

}  // namespace
}  // namespace kir
