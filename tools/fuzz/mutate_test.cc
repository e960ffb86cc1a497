#include "tools/fuzz/mutate.h"

#include <memory>
#include <random>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "parser/parser.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

// A workspace that only a tensor map uses: no op reads `%ws`.
constexpr char kMappedWorkspace[] = R"(
kernel @mapped(%y: global f32[64, 64],
               %ws_map: tensormap f32[8, 64] of %ws) block(128) {
  %c0 = const 0 : index
  %ws = alloc.workspace : global f32[64, 64]
  %tid = thread.id x : index
  %v = const 1.0 : f32
  store %y[%c0, %c0], %v
}
)";

// True if `value` is a kernel size, a parameter or the result of an op
// still in `kernel`.
bool Defined(const Kernel& kernel, const Value* value) {
  for (const auto& size : kernel.sizes()) {
    if (size.get() == value) return true;
  }
  if (kernel.FindParam(value) != nullptr) return true;
  bool found = false;
  Walk(kernel.body(), [&](const Op& op) {
    for (int r = 0; r < op.num_results(); ++r) {
      found = found || op.result(r) == value;
    }
  });
  return found;
}

// The removal mutation once dropped `%ws` (nothing but the map uses it),
// and printing the map then read the freed value.
TEST(MutateIrTest, NeverRemovesAWorkspaceATensorMapMaps) {
  int removals = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    absl::StatusOr<std::unique_ptr<Module>> module =
        ParseModuleString(kMappedWorkspace, "mapped.kir");
    ASSERT_TRUE(module.ok()) << module.status();
    ASSERT_TRUE(Verify(**module).ok());
    Kernel& kernel = *(*module)->kernels.front();
    int ops_before = 0;
    Walk(kernel.body(), [&](const Op&) { ++ops_before; });
    std::mt19937_64 random(seed);
    if (!MutateIr(**module, random)) continue;
    int ops_after = 0;
    Walk(kernel.body(), [&](const Op&) { ++ops_after; });
    if (ops_after < ops_before) ++removals;
    kernel.ForEachParamUse([&](const Value* value) {
      EXPECT_TRUE(Defined(kernel, value)) << "seed " << seed;
    });
    EXPECT_FALSE(PrintModule(**module).empty());
  }
  // The seeds do reach the removal mutation (of `%tid`, which nothing
  // uses either), so the check above is not vacuous.
  EXPECT_GT(removals, 0);
}

TEST(MutateTokenTest, ReplacesOneTokenAndKeepsTheRest) {
  // One integer literal and no value name: the literal must change.
  std::string text = "const 7 : index // 9\n";
  std::mt19937_64 random(1);
  ASSERT_TRUE(MutateToken(text, random));
  EXPECT_NE(text, "const 7 : index // 9\n");
  EXPECT_TRUE(text.rfind("const ", 0) == 0) << text;
  EXPECT_NE(text.find(" : index // 9\n"), std::string::npos) << text;
  std::string empty = "// nothing\n";
  EXPECT_FALSE(MutateToken(empty, random));
}

}  // namespace
}  // namespace kir
