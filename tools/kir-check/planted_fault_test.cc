// A wrong row planted in the passes' effects table (a TMA store that no
// longer reads its shared tile): the passes lower the epilogue example
// without the barrier, proxy fence and read-wait the tile needs, and
// kir-check, which does not read the table, must flag the result; without
// the fault the same lowering is clean.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/effects.h"
#include "tools/kir-check/check.h"
#include "tools/kir-check/lower.h"
#include "tools/kir-run/binding.h"

namespace kir::check {
namespace {

std::shared_ptr<SourceFile> Example(const std::string& name) {
  return ReadSourceFile(std::string(KIR_TESTDATA_DIR) + "/examples/" + name);
}

// The hazard classes kir-check reports on the epilogue lowered by the
// default pipeline, under the example's second directive.
std::set<std::string> CheckEpilogue() {
  std::shared_ptr<SourceFile> source = Example("epilogue.kir");
  absl::StatusOr<std::unique_ptr<Module>> reference = ParseAndLower(source, "");
  absl::StatusOr<std::unique_ptr<Module>> lowered =
      ParseAndLower(source, "default");
  EXPECT_TRUE(reference.ok() && lowered.ok());
  std::set<std::string> found;
  if (!reference.ok() || !lowered.ok()) return found;
  absl::StatusOr<std::vector<RunDirective>> directives =
      DirectivesOf(source, "");
  EXPECT_TRUE(directives.ok() && directives->size() == 2);
  const RunDirective& directive = (*directives)[1];
  const Kernel& kernel = *(*lowered)->kernels.front();
  absl::StatusOr<std::unique_ptr<Program>> program = Program::Create(kernel);
  absl::StatusOr<std::unique_ptr<Program>> reference_program =
      Program::Create(*(*reference)->kernels.front());
  absl::StatusOr<Launch> launch = BuildLaunch(directive, kernel);
  EXPECT_TRUE(program.ok() && reference_program.ok() && launch.ok());
  CheckOptions options;
  options.seeds = 3;
  const CheckReport report = CheckKernel(**program, reference_program->get(),
                                         &directive, *launch, options);
  EXPECT_TRUE(report.error.ok()) << report.error;
  for (const Hazard& hazard : report.hazards.hazards())
    found.insert(HazardKindName(hazard.kind));
  return found;
}

TEST(PlantedEffectsFault, KirCheckFlagsTheMiscompiledEpilogue) {
  EXPECT_TRUE(CheckEpilogue().empty());
  SetEffectsFaultForTesting(EffectsFault::kTmaStoreReadsNoSharedMemory);
  const std::set<std::string> found = CheckEpilogue();
  SetEffectsFaultForTesting(EffectsFault::kNone);
  std::cout << "kir-check on the miscompiled epilogue: "
            << absl::StrJoin(found, ", ") << "\n";
  // The tile is read by the TMA store before every writer's stmatrix is
  // ordered and fenced, and overwritten before the store read it.
  EXPECT_FALSE(found.empty());
  EXPECT_TRUE(found.count("source-overwritten") || found.count("async-race"))
      << absl::StrJoin(found, ", ");
  EXPECT_TRUE(found.count("output")) << absl::StrJoin(found, ", ");
}

}  // namespace
}  // namespace kir::check
