// Tests of the shared compile path: it verifies once, lowers with the
// pipeline given, places shared memory only when asked and needed, and
// emits without verifying again what it has verified.
#include "tools/compile/compile.h"

#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace kir {
namespace {

std::shared_ptr<const SourceFile> Source(std::string text) {
  auto source = std::make_shared<SourceFile>();
  source->name = "test.kir";
  source->text = std::move(text);
  return source;
}

// One thread stores to shared memory; nothing is placed yet.
constexpr char kUnplaced[] = R"(kernel @k(%out: global f32[1]) block(32, 1, 1) {
  %c0 = const 0 : index
  %one = const 1.0 : f32
  %s = alloc.shared : shared f32[32]
  store %s[%c0], %one
  %v = load %s[%c0] : f32
  store %out[%c0], %v
}
)";

Pipeline Parsed(const std::string& text) {
  absl::StatusOr<Pipeline> pipeline = ParsePipeline(text);
  EXPECT_TRUE(pipeline.ok()) << pipeline.status();
  return pipeline.ok() ? *pipeline : Pipeline{};
}

TEST(Compile, RejectsInvalidInputBeforeAnyPass) {
  CompileOptions options;
  options.pipeline = Parsed("default");
  std::ostringstream log;
  absl::StatusOr<Compilation> lowered = Lower(
      Source("kernel @k() block(32, 1, 1) {\n  %x = add %y, %y : i32\n}\n"),
      options, log);
  ASSERT_FALSE(lowered.ok());
  EXPECT_TRUE(absl::StrContains(lowered.status().message(), "test.kir:2"))
      << lowered.status();
}

TEST(Compile, PlacesSharedMemoryOnlyWhenAsked) {
  std::ostringstream log;
  CompileOptions options;
  absl::StatusOr<Compilation> unplaced = Lower(Source(kUnplaced), options, log);
  ASSERT_TRUE(unplaced.ok()) << unplaced.status();
  EXPECT_FALSE(unplaced->placed_shared);
  // The emitter places nothing itself.
  EXPECT_FALSE(EmitLowered(*unplaced).ok());

  options.place_shared = true;
  absl::StatusOr<Compilation> placed = Lower(Source(kUnplaced), options, log);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_TRUE(placed->placed_shared);
  EXPECT_TRUE(placed->verified);
  absl::StatusOr<std::string> cuda = EmitLowered(*placed);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_TRUE(absl::StrContains(*cuda, "__launch_bounds__(32) k(")) << *cuda;
}

TEST(Compile, PipelinePlacementIsNotRepeated) {
  std::ostringstream log;
  CompileOptions options;
  options.pipeline = Parsed("default");
  options.place_shared = true;
  absl::StatusOr<Compilation> lowered = Lower(Source(kUnplaced), options, log);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_FALSE(lowered->placed_shared);  // plan-shared-memory already ran
  EXPECT_TRUE(EmitLowered(*lowered).ok());
}

TEST(Compile, UnverifiedPassesLeaveTheModuleToTheEmitter) {
  std::ostringstream log;
  CompileOptions options;
  options.pipeline = Parsed("canonicalize");
  options.run.verify_each = false;
  absl::StatusOr<Compilation> lowered = Lower(Source(kUnplaced), options, log);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_FALSE(lowered->verified);

  options.pipeline.clear();
  lowered = Lower(Source(kUnplaced), options, log);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_TRUE(lowered->verified);  // the input, and no pass ran

  options.verify = false;
  lowered = Lower(Source(kUnplaced), options, log);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_FALSE(lowered->verified);
}

}  // namespace
}  // namespace kir
