// Tests for insert-syncs: on random programs the result passes the
// independent checker (every conflicting pair ordered, every inserted
// barrier needed) or the pass reports a located error; a second run inserts
// nothing; provenance and drop-sync.
#include "passes/insert_syncs.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/sync_check.h"
#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "ir/sanitizers.h"
#include "parser/parser.h"
#include "parser/testing/parse_for_test.h"
#include "printer/kir_printer.h"

namespace kir {
namespace {

absl::Status RunPass(
    Kernel& kernel, PassStatistics& stats,
    std::vector<std::pair<std::string, std::string>> options = {}) {
  PassContext context{stats};
  return InsertSyncs(kernel, PassOptions(std::move(options), "insert-syncs"),
                     context);
}

// A random program of shared-memory accesses in nested loops and ifs.
class ProgramGenerator {
 public:
  explicit ProgramGenerator(uint32_t seed) : rng_(seed) {}

  std::string Generate() {
    body_.clear();
    names_ = 0;
    EmitBlock(/*depth=*/0, /*uniform=*/true);
    return absl::StrCat(
        "kernel @random() block(128) {\n"
        "  %c0 = const 0 : index\n"
        "  %c1 = const 1 : index\n"
        "  %c2 = const 2 : index\n"
        "  %c4 = const 4 : index\n"
        "  %c64 = const 64 : index\n"
        "  %c127 = const 127 : index\n"
        "  %c128 = const 128 : index\n"
        "  %f = const 1.0 : f32\n"
        "  %tx = thread.id x : index\n"
        "  %warp = warp.id : index\n"
        "  %bid = block.id x : index\n"
        "  %mirror = sub %c127, %tx : index\n"
        "  %next0 = add %tx, %c1 : index\n"
        "  %next = rem %next0, %c128 : index\n"
        "  %half = cmp lt %tx, %c64 : i1\n"
        "  %even_block = rem %bid, %c2 : index\n"
        "  %uniform = cmp eq %even_block, %c0 : i1\n"
        "  %s = alloc.shared : shared f32[2, 128]\n",
        body_, "}\n");
  }

 private:
  int Pick(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  std::string Fresh() { return absl::StrCat("%v", names_++); }

  void Line(int depth, const std::string& text) {
    absl::StrAppend(&body_, std::string(2 * depth + 2, ' '), text, "\n");
  }

  void EmitAccess(int depth, const std::string& stage) {
    const char* indices[] = {"%tx", "%mirror", "%c0", "%next"};
    std::string index = indices[Pick(0, 3)];
    std::string buffer_stage = Pick(0, 2) == 0 ? "%c1" : stage;
    if (Pick(0, 1) == 0) {
      Line(depth,
           absl::StrCat("store %s[", buffer_stage, ", ", index, "], %f"));
    } else {
      Line(depth, absl::StrCat(Fresh(), " = load %s[", buffer_stage, ", ",
                               index, "] : f32"));
    }
  }

  void EmitBlock(int depth, bool uniform, const std::string& stage = "%c0") {
    const int count = Pick(1, 4);
    for (int i = 0; i < count; ++i) {
      const int kind = depth >= 2 ? 0 : Pick(0, 5);
      if (kind <= 2) {
        EmitAccess(depth, stage);
      } else if (kind == 3) {
        std::string iv = Fresh();
        std::string next_stage = Fresh();
        Line(depth, absl::StrCat("for ", iv, " = %c0 to %c4 step %c1 {"));
        Line(depth + 1,
             absl::StrCat(next_stage, " = rem ", iv, ", %c2 : index"));
        EmitBlock(depth + 1, uniform, next_stage);
        Line(depth, "}");
      } else if (kind == 4) {
        Line(depth, "if %uniform {");
        EmitBlock(depth + 1, uniform, stage);
        Line(depth, "} else {");
        EmitBlock(depth + 1, uniform, stage);
        Line(depth, "}");
      } else {
        // Divergent: only the lower half of the block.
        Line(depth, "if %half {");
        EmitBlock(depth + 1, false, stage);
        Line(depth, "}");
      }
    }
  }

  std::mt19937 rng_;
  std::string body_;
  int names_ = 0;
};

TEST(InsertSyncsTest, RandomProgramsPassTheCheckerOrFailWithALocatedError) {
  ProgramGenerator generator(/*seed=*/4);
  int ordered = 0, errors = 0, barriers = 0;
  for (int n = 0; n < SanitizerScaled(200); ++n) {
    const std::string text = generator.Generate();
    std::unique_ptr<Module> module = ParseForTest(text, "random.kir");
    ASSERT_NE(module, nullptr);
    Kernel& kernel = *module->kernels[0];
    ASSERT_TRUE(Verify(*module).ok());
    PassStatistics stats;
    absl::Status status = RunPass(kernel, stats);
    if (!status.ok()) {
      // Only a divergent branch can make placement impossible, and the
      // error points into the source.
      EXPECT_NE(status.message().find("not uniform over the block"),
                std::string::npos)
          << status << "\n"
          << text;
      EXPECT_NE(status.message().find("random.kir:"), std::string::npos)
          << status;
      ++errors;
      continue;
    }
    ++ordered;
    barriers += stats.Get("block-barriers-inserted");
    EXPECT_TRUE(Verify(*module).ok()) << PrintModule(*module);
    absl::Status check = CheckSyncs(kernel);
    EXPECT_TRUE(check.ok()) << check << "\n" << PrintModule(*module);
    // Idempotent.
    PassStatistics again;
    ASSERT_TRUE(RunPass(kernel, again).ok());
    EXPECT_EQ(again.Get("block-barriers-inserted"), 0);
    EXPECT_EQ(again.Get("pairs-only-one-barrier-orders"), 0);
  }
  std::printf(
      "insert-syncs: %d random programs ordered (%d barriers), %d "
      "rejected with a located error\n",
      ordered, barriers, errors);
  EXPECT_GT(ordered, SanitizerScaled(80));
  EXPECT_GT(errors, SanitizerScaled(10));
}

constexpr char kEpilogueLike[] = R"(
kernel @k(%g: global f32[64, 64], %map: tensormap f32[16, 32] of %g)
    block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c8 = const 8 : index
  %f = const 1.0 : f32
  %tx = thread.id x : index
  %s = alloc.shared {align = 128} : shared f32[2, 16, 32]
  %t0 = cmp eq %tx, %c0 : i1
  for %i = %c0 to %c8 step %c1 {
    %stage = rem %i, %c2 : index
    store %s[%stage, %c0, %tx], %f
    if %t0 {
      tma.store %map[%c0, %c0], %s[%stage, %c0, %c0]
      %t = bulk.commit : token<bulk>
      bulk.wait %t@1 {read}
    }
  }
  if %t0 {
    bulk.wait %t {read}
  }
})";

TEST(InsertSyncsTest, ProvenanceNamesTheAccessesEachBarrierOrders) {
  std::unique_ptr<Module> module = ParseForTest(kEpilogueLike, "random.kir");
  ASSERT_NE(module, nullptr);
  PassStatistics stats;
  ASSERT_TRUE(RunPass(*module->kernels[0], stats).ok());
  std::vector<std::string> provenance;
  Walk(module->kernels[0]->body(), [&](const Op& op) {
    if (op.kind() != OpKind::kBarrierBlock) return;
    EXPECT_EQ(op.provenance().pass, "insert-syncs");
    std::string locations;
    for (const Location& loc : op.provenance().because) {
      absl::StrAppend(&locations, loc.LineColumn(), " ");
    }
    provenance.push_back(locations);
  });
  // The store (line 14) and the TMA store (line 16) for both barriers.
  EXPECT_EQ(provenance, (std::vector<std::string>{"14:5 16:7 ", "14:5 16:7 "}));
  EXPECT_TRUE(CheckSyncs(*module->kernels[0]).ok());
}

TEST(InsertSyncsTest, DropSyncRemovesOneBarrierAndTheCheckerNotices) {
  for (int drop : {1, 2}) {
    std::unique_ptr<Module> module = ParseForTest(kEpilogueLike, "random.kir");
    ASSERT_NE(module, nullptr);
    PassStatistics stats;
    ASSERT_TRUE(RunPass(*module->kernels[0], stats,
                        {{"drop-sync", std::to_string(drop)}})
                    .ok());
    EXPECT_EQ(stats.Get("barriers-dropped"), 1);
    int barriers = 0;
    Walk(module->kernels[0]->body(),
         [&](const Op& op) { barriers += op.kind() == OpKind::kBarrierBlock; });
    EXPECT_EQ(barriers, 1);
    EXPECT_FALSE(CheckSyncs(*module->kernels[0]).ok()) << "drop " << drop;
  }
}

TEST(InsertSyncsTest, NegativeDropSyncIsRejected) {
  std::unique_ptr<Module> module = ParseForTest(kEpilogueLike, "random.kir");
  ASSERT_NE(module, nullptr);
  PassStatistics stats;
  absl::Status status =
      RunPass(*module->kernels[0], stats, {{"drop-sync", "-1"}});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("expects an integer from 0 to"),
            std::string::npos);
}

// Four nested loops around a cross-thread RAW: the ordering analysis
// restarts each inner loop's fixed point from the last one, so the time does
// not multiply with the depth (it took 13 s here before, 0.6 s after).
TEST(InsertSyncsTest, DeepLoopNestsStayFast) {
  std::string text =
      "kernel @k (%out: global f32[64]) block(64) {\n"
      "  %c0 = const 0 : index\n  %c1 = const 1 : index\n"
      "  %c2 = const 2 : index\n  %c63 = const 63 : index\n"
      "  %one = const 1.0 : f32\n"
      "  %s = alloc.shared : shared f32[64]\n"
      "  %tid = thread.id x : index\n  %rev = sub %c63, %tid : index\n";
  constexpr int kDepth = 4;
  for (int d = 0; d < kDepth; ++d)
    absl::StrAppend(&text, "for %i", d, " = %c0 to %c2 step %c1 {\n");
  absl::StrAppend(&text,
                  "store %s[%tid], %one\n%v = load %s[%rev] : f32\n"
                  "store %out[%tid], %v\n");
  for (int d = 0; d < kDepth; ++d) absl::StrAppend(&text, "}\n");
  absl::StrAppend(&text, "}\n");
  std::unique_ptr<Module> module = ParseForTest(text, "random.kir");
  ASSERT_NE(module, nullptr);
  PassStatistics stats;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(RunPass(*module->kernels[0], stats).ok());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 6.0 * kSanitizerSlowdown);
  // RAW before the load and WAR before the next iteration's store.
  EXPECT_EQ(stats.Get("block-barriers-inserted"), 2);
  EXPECT_TRUE(CheckSyncs(*module->kernels[0]).ok());
}

// A straight-line kernel of `units` copies of a shared write, a read of
// another thread's element and a register store.
std::string StraightLineKernel(int units) {
  std::string text =
      "kernel @k () block(128) {\n"
      "  %c0 = const 0 : index\n  %c127 = const 127 : index\n"
      "  %one = const 1.0 : f32\n  %tid = thread.id x : index\n"
      "  %rev = sub %c127, %tid : index\n"
      "  %s = alloc.shared : shared f32[128]\n"
      "  %acc = alloc.reg : reg f32[1]\n";
  for (int u = 0; u < units; ++u) {
    absl::StrAppend(&text, "  store %s[%tid], %one\n  %v", u,
                    " = load %s[%rev] : f32\n  store %acc[%c0], %v", u, "\n");
  }
  absl::StrAppend(&text, "}\n");
  return text;
}

// The statistic counts the pairs only one barrier orders, which the pass
// asks for anyway to drop needless barriers: linear in the kernel. (It
// counted every ordered pair before, from a walk whose state held every
// access: a million pairs here, and --stats on 100k such ops ran out of
// memory; RunPipelineTest.StatisticsCostNoOrderingWork checks the work.)
TEST(InsertSyncsTest, CountsThePairsEachBarrierAloneOrders) {
  constexpr int kUnits = 1000;
  std::unique_ptr<Module> module =
      ParseForTest(StraightLineKernel(kUnits), "random.kir");
  ASSERT_NE(module, nullptr);
  PassStatistics stats;
  ASSERT_TRUE(RunPass(*module->kernels[0], stats).ok());
  // RAW before each read, WAR before each next write: each orders one pair.
  EXPECT_EQ(stats.Get("block-barriers-inserted"), 2 * kUnits - 1);
  EXPECT_EQ(stats.Get("pairs-only-one-barrier-orders"), 2 * kUnits - 1);
}

}  // namespace
}  // namespace kir
