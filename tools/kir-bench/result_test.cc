#include "tools/kir-bench/result.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kir::bench {
namespace {

ProblemResult Sample() {
  ProblemResult r;
  r.name = "llama \"up\", proj";
  r.key = "4096x11008x4096 a=k b=k bf16 out=bf16";
  r.line = 3;
  r.flops = 2.0 * 4096 * 11008 * 4096;
  r.config = "128x256x64 s4 ws coop wg2 c1x1 r8 epi=reuse";
  r.config_source = "heuristic";
  r.status = "passed";
  r.message = "line one\nline two\twith a tab";
  r.device = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  r.baseline_name = "cublasLt";
  r.baseline_ms = 0.5;
  r.baseline_repeat_ms = {0.5, 0.51, 0.49};
  VariantResult& v = r.variants.emplace_back();
  v.pipeline = "default";
  v.config = r.config;
  v.checked = true;
  v.passed = true;
  v.max_abs_error = 0.0625;
  v.median_ms = 0.625;
  v.min_ms = 0.6;
  v.max_ms = 0.7;
  v.repeat_ms = {0.6, 0.625, 0.7};
  v.registers = 168;
  v.spill_bytes = 0;
  v.shared_bytes = 213000;
  VariantResult& w = r.variants.emplace_back();
  w.pipeline = "default{fence=all}";
  w.median_ms = 0.75;
  w.repeat_ms = {0.66, 0.75, 0.84};
  r.candidates.push_back({"128x128x64 s6", "hang", NAN, NAN});
  r.heuristic_ms = 0.7;
  r.seconds = 3.25;
  r.log = "  ok c: matches\n";
  return r;
}

TEST(Result, RoundTripsThroughItsText) {
  const ProblemResult r = Sample();
  absl::StatusOr<ProblemResult> back = DeserializeResult(SerializeResult(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->name, r.name);
  EXPECT_EQ(back->message, r.message);
  EXPECT_EQ(back->flops, r.flops);
  EXPECT_EQ(back->baseline_repeat_ms, r.baseline_repeat_ms);
  ASSERT_EQ(back->variants.size(), 2u);
  EXPECT_EQ(back->variants[0].repeat_ms, r.variants[0].repeat_ms);
  EXPECT_EQ(back->variants[0].max_abs_error, 0.0625);
  EXPECT_EQ(back->variants[0].shared_bytes, 213000);
  EXPECT_TRUE(back->variants[0].passed);
  EXPECT_FALSE(back->variants[1].checked);
  EXPECT_TRUE(std::isnan(back->variants[1].max_abs_error));
  ASSERT_EQ(back->candidates.size(), 1u);
  EXPECT_EQ(back->candidates[0].status, "hang");
  EXPECT_EQ(back->heuristic_ms, 0.7);
  EXPECT_EQ(back->log, r.log);
  // Serializing again gives the same text.
  EXPECT_EQ(SerializeResult(*back), SerializeResult(r));
}

TEST(Result, RejectsBrokenText) {
  EXPECT_FALSE(DeserializeResult("").ok());  // no status
  EXPECT_FALSE(DeserializeResult("status passed\nv.median_ms 1\n").ok());
  EXPECT_FALSE(DeserializeResult("status passed\nline three\n").ok());
  EXPECT_FALSE(DeserializeResult("status passed\nbogus 1\n").ok());
}

TEST(Result, DerivedFigures) {
  const ProblemResult r = Sample();
  // 2 * 4096 * 11008 * 4096 flop in 0.625 ms.
  EXPECT_NEAR(Tflops(r, r.variants[0]), 591.0, 0.1);
  EXPECT_DOUBLE_EQ(PercentOfCublas(r, r.variants[0]), 80.0);
  // Per repeat: 0.66/0.6, 0.75/0.625, 0.84/0.7 = 1.1, 1.2, 1.2.
  EXPECT_NEAR(RatioToFirst(r, 1), 1.2, 1e-12);
  ProblemResult untimed = r;
  untimed.baseline_ms = NAN;
  EXPECT_TRUE(std::isnan(PercentOfCublas(untimed, r.variants[0])));
  EXPECT_TRUE(std::isnan(RatioToFirst(r, 5)));
}

}  // namespace
}  // namespace kir::bench
