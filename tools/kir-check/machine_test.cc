// The interpreter, op by op, against hand-computed results.
#include "tools/kir-check/machine.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/verifier.h"
#include "gtest/gtest.h"
#include "parser/parser.h"
#include "tools/kir-check/layout.h"
#include "tools/kir-check/program.h"
#include "tools/kir-check/values.h"

namespace kir::check {
namespace {

struct KernelRun {
  std::unique_ptr<Module> module;
  std::unique_ptr<Program> program;
  RunOutcome outcome;
};

KernelRun RunText(const std::string& text, const Launch& launch,
                  MachineOptions options = {}) {
  KernelRun run;
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModuleString(text, "test.kir");
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return run;
  run.module = std::move(*module);
  absl::Status verified = Verify(*run.module);
  EXPECT_TRUE(verified.ok()) << verified.message();
  absl::StatusOr<std::unique_ptr<Program>> program =
      Program::Create(*run.module->kernels.front());
  EXPECT_TRUE(program.ok()) << program.status().message();
  if (!program.ok()) return run;
  run.program = std::move(*program);
  run.outcome = RunKernel(*run.program, launch, options);
  return run;
}

TensorData Tensor(DType dtype, std::vector<int64_t> shape) {
  return MakeTensor(dtype, shape, RowMajorStrides(shape));
}

int64_t Linear(const TensorData& t, const std::vector<int64_t>& index) {
  return t.Offset(index) * DTypeBytes(t.dtype);
}
double Get(const TensorData& t, const std::vector<int64_t>& index) {
  return LaneToDouble(t.dtype, LoadLane(t.dtype, &t.bytes[Linear(t, index)]));
}
void Set(TensorData& t, const std::vector<int64_t>& index, double value) {
  Lane lane = IsFloat(t.dtype)
                  ? F32ToLane(t.dtype, static_cast<float>(value))
                  : IntToLane(t.dtype, static_cast<int64_t>(value));
  StoreLane(t.dtype, lane, &t.bytes[Linear(t, index)]);
}
uint16_t Bits16(const TensorData& t, const std::vector<int64_t>& index) {
  uint16_t bits;
  std::memcpy(&bits, &t.bytes[Linear(t, index)], 2);
  return bits;
}

void ExpectClean(const KernelRun& run) {
  EXPECT_TRUE(run.outcome.error.ok()) << run.outcome.error.message();
  for (const Hazard& hazard : run.outcome.hazards.hazards())
    ADD_FAILURE() << "hazard: " << hazard.message;
}

MachineOptions Adversarial(uint64_t seed) {
  MachineOptions options;
  options.schedule = Schedule::kAdversarial;
  options.seed = seed;
  return options;
}

TEST(Machine, ThreadAndBlockIndices) {
  Launch launch;
  launch.tensors["out"] = Tensor(DType::kI32, {2, 64});
  KernelRun run = RunText(R"(
kernel @k(%out: global i32[2, 64]) grid(2) block(32, 2) {
  %tx = thread.id x : index
  %ty = thread.id y : index
  %b = block.id x : index
  %lane = lane.id : index
  %warp = warp.id : index
  %bdim = block.dim y : index
  %gdim = grid.dim x : index
  %c32 = const 32 : index
  %row = mul %ty, %c32 : index
  %t = add %row, %tx : index
  %c1000 = const 1000 : index
  %c100 = const 100 : index
  %c10 = const 10 : index
  %w = mul %warp, %c1000 : index
  %l = mul %lane, %c10 : index
  %v0 = add %w, %l : index
  %g = mul %gdim, %c100 : index
  %v1 = add %v0, %g : index
  %v2 = add %v1, %bdim : index
  %v = cast %v2 : i32
  store %out[%b, %t], %v
}
)",
                          launch);
  ExpectClean(run);
  const TensorData& out = run.outcome.tensors.at("out");
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 64; ++t)
      EXPECT_EQ(Get(out, {b, t}), 1000 * (t / 32) + 10 * (t % 32) + 200 + 2);
}

TEST(Machine, VectorLoadsAndStoresInEverySpace) {
  Launch launch;
  TensorData x = Tensor(DType::kF32, {4, 8});
  for (int i = 0; i < 32; ++i) Set(x, {i / 8, i % 8}, i + 0.5);
  launch.tensors["x"] = x;
  launch.tensors["y"] = Tensor(DType::kF32, {4, 8});
  KernelRun run = RunText(R"(
kernel @k(%x: global f32[4, 8], %y: global f32[4, 8]) grid(1) block(4) {
  %t = thread.id x : index
  %c0 = const 0 : index
  %c4 = const 4 : index
  %s = alloc.shared {pad = 4} : shared f32[4, 8]
  %r = alloc.reg : reg f32[8]
  %lo = load %x[%t, %c0] : vec<4xf32>
  %hi = load %x[%t, %c4] : vec<4xf32>
  store %s[%t, %c4], %lo
  store %s[%t, %c0], %hi
  %a = load %s[%t, %c0] : vec<4xf32>
  %b = load %s[%t, %c4] : vec<4xf32>
  store %r[%c0], %a
  store %r[%c4], %b
  %ra = load %r[%c0] : vec<4xf32>
  %rb = load %r[%c4] : vec<4xf32>
  store %y[%t, %c0], %ra
  store %y[%t, %c4], %rb
}
)",
                          launch);
  ExpectClean(run);
  const TensorData& y = run.outcome.tensors.at("y");
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c)
      EXPECT_EQ(Get(y, {r, c}), r * 8 + (c + 4) % 8 + 0.5) << r << "," << c;
}

TEST(Machine, ArithmeticFollowsTheLanguage) {
  Launch launch;
  launch.tensors["out"] = Tensor(DType::kF32, {6});
  launch.tensors["iout"] = Tensor(DType::kI32, {4});
  launch.scalars["a"] = 1.5;
  KernelRun run = RunText(R"(
kernel @k(%out: global f32[6], %iout: global i32[4], %a: f32) grid(1) block(1) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c3 = const 3 : index
  %c4 = const 4 : index
  %c5 = const 5 : index
  %m7 = const -7 : i32
  %two = const 2 : i32
  %q = div %m7, %two : i32
  %r = rem %m7, %two : i32
  %big = const 2147483647 : i32
  %one = const 1 : i32
  %wrap = add %big, %one : i32
  %sh = shl %one, %two : i32
  store %iout[%c0], %q
  store %iout[%c1], %r
  store %iout[%c2], %wrap
  store %iout[%c3], %sh
  %half = const 0.5 : f32
  %f = fma %a, %a, %half : f32
  store %out[%c0], %f
  %h = cast %a : bf16
  %h2 = mul %h, %h : bf16
  %back = cast %h2 : f32
  store %out[%c1], %back
  %s = sqrt %f : f32
  store %out[%c2], %s
  %p = cmp gt %a, %half : i1
  %sel = select %p, %a, %half : f32
  store %out[%c3], %sel
  %v = vec.from %a, %half : vec<2xf32>
  %e = vec.extract %v {lane = 1} : f32
  store %out[%c4], %e
  %n = neg %a : f32
  %ab = abs %n : f32
  %d = div %ab, %half : f32
  store %out[%c5], %d
}
)",
                          launch);
  ExpectClean(run);
  const TensorData& iout = run.outcome.tensors.at("iout");
  EXPECT_EQ(Get(iout, {0}), -3);
  EXPECT_EQ(Get(iout, {1}), -1);
  EXPECT_EQ(Get(iout, {2}), -2147483648.0);
  EXPECT_EQ(Get(iout, {3}), 4);
  const TensorData& out = run.outcome.tensors.at("out");
  EXPECT_EQ(Get(out, {0}), 2.75);
  EXPECT_EQ(Get(out, {1}), 2.25);  // 1.5 * 1.5 in bf16: exact
  EXPECT_EQ(Get(out, {2}), static_cast<float>(std::sqrt(2.75)));
  EXPECT_EQ(Get(out, {3}), 1.5);
  EXPECT_EQ(Get(out, {4}), 0.5);
  EXPECT_EQ(Get(out, {5}), 3.0);
}

// The PTX fragment figures in kir form: lane l's element e of a 16x16
// stmatrix box holds l*8+e (exact in bf16 below 256).
constexpr char kFragmentPrologue[] = R"(
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c3 = const 3 : index
  %c4 = const 4 : index
  %c5 = const 5 : index
  %c6 = const 6 : index
  %c7 = const 7 : index
  %c8 = const 8 : index
  %c16 = const 16 : index
  %c32 = const 32 : index
  %lane = lane.id : index
  %base = mul %lane, %c8 : index
)";

TEST(Machine, StmatrixPlacesFragmentsAsDocumented) {
  for (bool trans : {false, true}) {
    Launch launch;
    launch.tensors["out"] = Tensor(DType::kI32, {16, 16});
    std::string text = absl::StrCat(
        "kernel @k(%out: global i32[16, 16]) grid(1) block(32) {\n",
        kFragmentPrologue, "  %s = alloc.shared : shared bf16[16, 16]\n");
    std::string lanes;
    for (int e = 0; e < 8; ++e) {
      absl::StrAppend(&text, "  %i", e, " = add %base, %c", e, " : index\n",
                      "  %e", e, " = cast %i", e, " : bf16\n");
      absl::StrAppend(&lanes, e ? ", " : "", "%e", e);
    }
    absl::StrAppend(&text, "  %frag = vec.from ", lanes, " : vec<8xbf16>\n",
                    "  stmatrix %s[%c0, %c0], %frag", trans ? " {trans}" : "",
                    R"(
  barrier.block
  for %i = %c0 to %c8 step %c1 {
    %k = mul %i, %c32 : index
    %flat = add %k, %lane : index
    %r = div %flat, %c16 : index
    %c = rem %flat, %c16 : index
    %v = load %s[%r, %c] : bf16
    %w = cast %v : i32
    store %out[%r, %c], %w
  }
}
)");
    KernelRun run = RunText(text, launch);
    ExpectClean(run);
    const TensorData& out = run.outcome.tensors.at("out");
    for (int lane = 0; lane < 32; ++lane) {
      for (int e = 0; e < 8; ++e) {
        const auto [row, column] = MatrixFragmentElement(4, trans, lane, e);
        const double expected =
            Bf16ToF32(F32ToBf16(static_cast<float>(lane * 8 + e)));
        EXPECT_EQ(Get(out, {row, column}), expected)
            << "trans " << trans << " lane " << lane << " element " << e;
      }
    }
  }
}

// ldmatrix x2 (and .trans) hands lane l the elements the figure gives.
TEST(Machine, LdmatrixReadsFragmentsAsDocumented) {
  for (bool trans : {false, true}) {
    Launch launch;
    launch.tensors["out"] = Tensor(DType::kF32, {32, 4});
    const std::string shape = trans ? "[8, 16]" : "[16, 8]";
    const std::string columns = trans ? "%c16" : "%c8";
    const std::string text = absl::StrCat(
        "kernel @k(%out: global f32[32, 4]) grid(1) block(32) {\n",
        kFragmentPrologue, "  %s = alloc.shared : shared f16", shape, "\n",
        R"(  for %i = %c0 to %c4 step %c1 {
    %k = mul %i, %c32 : index
    %flat = add %k, %lane : index
    %r = div %flat, )",
        columns, R"( : index
    %c = rem %flat, )",
        columns, R"( : index
    %v = cast %flat : f16
    store %s[%r, %c], %v
  }
  barrier.block
  %frag = ldmatrix %s[%c0, %c0] {count = 2)",
        trans ? ", trans" : "",
        R"(} : vec<4xf16>
  for %e = %c0 to %c4 step %c1 {
    %x = vec.extract %frag {lane = 0} : f16
    %y = vec.extract %frag {lane = 1} : f16
    %z = vec.extract %frag {lane = 2} : f16
    %w = vec.extract %frag {lane = 3} : f16
    %xf = cast %x : f32
    %yf = cast %y : f32
    %zf = cast %z : f32
    %wf = cast %w : f32
    store %out[%lane, %c0], %xf
    store %out[%lane, %c1], %yf
    store %out[%lane, %c2], %zf
    store %out[%lane, %c3], %wf
  }
}
)");
    KernelRun run = RunText(text, launch);
    ExpectClean(run);
    const TensorData& out = run.outcome.tensors.at("out");
    const int width = trans ? 16 : 8;
    for (int lane = 0; lane < 32; ++lane) {
      for (int e = 0; e < 4; ++e) {
        const auto [row, column] = MatrixFragmentElement(2, trans, lane, e);
        EXPECT_EQ(Get(out, {lane, e}), row * width + column)
            << "trans " << trans << " lane " << lane << " element " << e;
      }
    }
  }
}

TEST(Machine, ShuffleModesAndElection) {
  for (Schedule schedule : {Schedule::kReference, Schedule::kAdversarial}) {
    Launch launch;
    launch.tensors["out"] = Tensor(DType::kI32, {5, 32});
    MachineOptions options;
    options.schedule = schedule;
    options.seed = 7;
    KernelRun run = RunText(R"(
kernel @k(%out: global i32[5, 32]) grid(1) block(32) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c3 = const 3 : index
  %c4 = const 4 : index
  %lane = lane.id : index
  %v = cast %lane : i32
  %d3 = const 3 : i32
  %src = const 5 : i32
  %a = shfl.sync idx %v, %src : i32
  %b = shfl.sync up %v, %d3 : i32
  %c = shfl.sync down %v, %d3 : i32
  %d = shfl.sync bfly %v, %d3 : i32
  store %out[%c0, %lane], %a
  store %out[%c1, %lane], %b
  store %out[%c2, %lane], %c
  store %out[%c3, %lane], %d
  %e1 = elect.sync : i1
  %e2 = elect.sync : i1
  %same = xor %e1, %e2 : i1
  %one = const 1 : i32
  %zero = const 0 : i32
  %x = select %e1, %one, %zero : i32
  %y = select %same, %one, %zero : i32
  %z = add %x, %y : i32
  %ten = const 10 : i32
  %zz = mul %y, %ten : i32
  %r = add %x, %zz : i32
  store %out[%c4, %lane], %r
}
)",
                            launch, options);
    ExpectClean(run);
    const TensorData& out = run.outcome.tensors.at("out");
    int elected = 0;
    for (int lane = 0; lane < 32; ++lane) {
      EXPECT_EQ(Get(out, {0, lane}), 5);
      EXPECT_EQ(Get(out, {1, lane}), lane >= 3 ? lane - 3 : lane);
      EXPECT_EQ(Get(out, {2, lane}), lane + 3 <= 31 ? lane + 3 : lane);
      EXPECT_EQ(Get(out, {3, lane}), lane ^ 3);
      // Exactly one lane elected, the same one both times.
      EXPECT_LE(Get(out, {4, lane}), 1);
      elected += static_cast<int>(Get(out, {4, lane}));
      if (schedule == Schedule::kReference)
        EXPECT_EQ(Get(out, {4, lane}), lane == 0 ? 1 : 0);
    }
    EXPECT_EQ(elected, 1);
  }
}

// barrier.red gives every participant the reduction of the generation's
// predicates (or, and, popc), per generation, in every schedule; a store
// before the vote is visible after it, as after barrier.named.
TEST(Machine, BarrierReductionVotesPerGeneration) {
  for (Schedule schedule : {Schedule::kReference, Schedule::kAdversarial}) {
    Launch launch;
    launch.tensors["out"] = Tensor(DType::kI32, {4, 96});
    MachineOptions options;
    options.schedule = schedule;
    options.seed = 3;
    KernelRun run = RunText(R"(
kernel @k(%out: global i32[4, 96]) grid(1) block(96) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c3 = const 3 : index
  %c5 = const 5 : index
  %c40 = const 40 : index
  %one = const 1 : i32
  %zero = const 0 : i32
  %t = thread.id x : index
  %word = alloc.shared : shared i32[1]
  %is5 = cmp eq %t, %c5 : i1
  %low = cmp lt %t, %c40 : i1
  %all = cmp lt %t, %c40 : i1
  %ever = cmp ge %t, %c0 : i1
  if %is5 {
    store %word[%c0], %one
  }
  %any = barrier.red or %is5 {id = 2, threads = 96} : i1
  %seen = load %word[%c0] : i32
  %every = barrier.red and %ever {id = 2, threads = 96} : i1
  %some = barrier.red and %all {id = 2, threads = 96} : i1
  %n = barrier.red popc %low {id = 2, threads = 96} : i32
  %a = select %any, %one, %zero : i32
  %b = select %every, %one, %zero : i32
  %c = select %some, %one, %zero : i32
  %ab = add %a, %seen : i32
  %ten = const 10 : i32
  %b10 = mul %b, %ten : i32
  %abc = add %ab, %b10 : i32
  store %out[%c0, %t], %abc
  store %out[%c1, %t], %c
  store %out[%c2, %t], %n
}
)",
                            launch, options);
    ExpectClean(run);
    const TensorData& out = run.outcome.tensors.at("out");
    for (int t = 0; t < 96; ++t) {
      EXPECT_EQ(Get(out, {0, t}), 12) << t;  // or: 1, seen: 1, and: 10
      EXPECT_EQ(Get(out, {1, t}), 0) << t;   // not all below 40
      EXPECT_EQ(Get(out, {2, t}), 40) << t;  // 40 of 96 below 40
    }
  }
}

// A generation of a named barrier that mixes bar.red with bar.sync is
// undefined in PTX: a located hazard.
TEST(Machine, BarrierReductionMixedWithSyncIsAHazard) {
  KernelRun run = RunText(R"(
kernel @k() grid(1) block(64) {
  %c32 = const 32 : index
  %t = thread.id x : index
  %warp0 = cmp lt %t, %c32 : i1
  if %warp0 {
    %v = barrier.red or %warp0 {id = 1, threads = 64} : i1
  } else {
    barrier.named {id = 1, threads = 64}
  }
}
)",
                          Launch(), Adversarial(1));
  ASSERT_TRUE(run.outcome.error.ok());
  bool found = false;
  for (const Hazard& hazard : run.outcome.hazards.hazards()) {
    if (hazard.kind == HazardKind::kBarrierCount &&
        absl::StrContains(hazard.message, "barrier 1 is reached by"))
      found = true;
  }
  EXPECT_TRUE(found);
}

// A TMA load of a 128-byte-swizzled box: generic loads see the logical
// tile; the bytes in shared memory (copied out raw with bulk.store) follow
// the PTX swizzle figure; out-of-bounds elements are filled.
TEST(Machine, TmaLoadSwizzlesAndFillsOutOfBounds) {
  for (bool nan_fill : {false, true}) {
    Launch launch;
    TensorData a = Tensor(DType::kBF16, {6, 64});
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 64; ++c)
        Set(a, {r, c}, r * 64 + c < 256 ? r * 64 + c : (r * 64 + c) % 256);
    launch.tensors["a"] = a;
    launch.tensors["logical"] = Tensor(DType::kBF16, {8, 64});
    launch.tensors["raw"] = Tensor(DType::kBF16, {8, 64});
    const std::string text = absl::StrCat(R"(
kernel @k(%a: global bf16[6, 64], %logical: global bf16[8, 64],
          %raw: global bf16[8, 64],
          %map: tensormap bf16[8, 64] of %a {swizzle = 128, oob = )",
                                          nan_fill ? "nan" : "zero", R"(})
    grid(1) block(64) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c8 = const 8 : index
  %t = thread.id x : index
  %s = alloc.shared {align = 1024, swizzle = 128} : shared bf16[8, 64]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %t0 = cmp eq %t, %c0 : i1
  if %t0 {
    mbarrier.init %bar[%c0] {count = 1}
    fence.mbarrier_init
  }
  barrier.block
  if %t0 {
    mbarrier.arrive_tx %bar[%c0] {bytes = 1024}
    tma.load %s[%c0, %c0], %map[%c0, %c0], %bar[%c0]
  }
  %p = const 0 : index
  mbarrier.wait %bar[%c0], %p
  for %r = %c0 to %c8 step %c1 {
    %v = load %s[%r, %t] : bf16
    store %logical[%r, %t], %v
  }
  barrier.block
  if %t0 {
    bulk.store %raw[%c0, %c0], %s[%c0, %c0] {bytes = 1024}
    %g = bulk.commit : token<bulk>
    bulk.wait %g
  }
}
)");
    KernelRun run = RunText(text, launch);
    ExpectClean(run);
    const TensorData& logical = run.outcome.tensors.at("logical");
    const TensorData& raw = run.outcome.tensors.at("raw");
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 64; ++c) {
        const bool inside = r < 6;
        const uint16_t expected =
            inside ? F32ToBf16(static_cast<float>(
                         r * 64 + c < 256 ? r * 64 + c : (r * 64 + c) % 256))
                   : (nan_fill ? 0x7fff : 0);
        EXPECT_EQ(Bits16(logical, {r, c}), expected) << r << "," << c;
        // Element (r, c) sits at the swizzled byte offset.
        const int64_t physical = SwizzleAddress(128, r * 128 + c * 2);
        EXPECT_EQ(Bits16(raw, {physical / 128, (physical % 128) / 2}), expected)
            << r << "," << c;
      }
    }
  }
}

// TMA store drops the box's out-of-bounds part; TMA reduce adds (f32,
// flushing subnormals to zero), takes minima and maxima.
TEST(Machine, TmaStoreClipsAndReduceCombines) {
  Launch launch;
  TensorData out = Tensor(DType::kF32, {3, 8});
  TensorData sum = Tensor(DType::kF32, {4, 8});
  TensorData low = Tensor(DType::kI32, {4, 8});
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 8; ++c) Set(out, {r, c}, -1);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c) {
      Set(sum, {r, c}, 100);
      Set(low, {r, c}, 5);
    }
  launch.tensors["out"] = out;
  launch.tensors["sum"] = sum;
  launch.tensors["low"] = low;
  KernelRun run = RunText(R"(
kernel @k(%out: global f32[3, 8], %sum: global f32[4, 8], %low: global i32[4, 8],
          %out_map: tensormap f32[4, 8] of %out,
          %sum_map: tensormap f32[4, 8] of %sum,
          %low_map: tensormap i32[4, 8] of %low) grid(1) block(32) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c8 = const 8 : index
  %t = thread.id x : index
  %s = alloc.shared {align = 128} : shared f32[4, 8]
  %si = alloc.shared {align = 128} : shared i32[4, 8]
  %r = div %t, %c8 : index
  %c = rem %t, %c8 : index
  %ti = cast %t : i32
  %tf = cast %t : f32
  store %s[%r, %c], %tf
  store %si[%r, %c], %ti
  fence.proxy.async shared_cta
  barrier.block
  %t0 = cmp eq %t, %c0 : i1
  if %t0 {
    tma.store %out_map[%c1, %c0], %s[%c0, %c0]
    tma.reduce add %sum_map[%c0, %c0], %s[%c0, %c0]
    tma.reduce min %low_map[%c0, %c0], %si[%c0, %c0]
    %g = bulk.commit : token<bulk>
    bulk.wait %g
  }
}
)",
                          launch);
  ExpectClean(run);
  const TensorData& o = run.outcome.tensors.at("out");
  const TensorData& s = run.outcome.tensors.at("sum");
  const TensorData& l = run.outcome.tensors.at("low");
  for (int c = 0; c < 8; ++c) EXPECT_EQ(Get(o, {0, c}), -1);
  for (int r = 1; r < 3; ++r)
    for (int c = 0; c < 8; ++c) EXPECT_EQ(Get(o, {r, c}), (r - 1) * 8 + c);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c) {
      EXPECT_EQ(Get(s, {r, c}), 100 + r * 8 + c);
      EXPECT_EQ(Get(l, {r, c}), std::min(5, r * 8 + c));
    }
}

// wgmma m64n8k16, A and B from shared memory (both major-nesses) or A from
// registers: D = C + A B^T (b_major = k) against a direct computation.
TEST(Machine, WgmmaComputesTheDocumentedProduct) {
  struct Variant {
    const char* a_shape;
    const char* b_shape;
    const char* attrs;
    bool a_m_major, b_n_major, a_in_registers;
  };
  const Variant variants[] = {
      {"[64, 16]", "[8, 16]", "{n = 8}", false, false, false},
      {"[16, 64]", "[8, 16]", "{n = 8, a_major = m}", true, false, false},
      {"[64, 16]", "[16, 8]", "{n = 8, b_major = n}", false, true, false},
      {"[64, 16]", "[8, 16]", "{n = 8}", false, false, true},
  };
  for (const Variant& variant : variants) {
    Launch launch;
    launch.tensors["d"] = Tensor(DType::kF32, {64, 8});
    std::string a_fill;
    if (variant.a_in_registers) {
      // Each thread's A fragment (8 elements) from the formula of the docs.
      a_fill = R"(
  %ar = alloc.reg : reg bf16[8]
  for %ja = %c0 to %c8 step %c1 {
    %jh_a = div %ja, %c2 : index
    %jhm_a = rem %jh_a, %c2 : index
    %row8_a = mul %jhm_a, %c8 : index
    %lr_a = div %lane, %c4 : index
    %w16_a = mul %warp, %c16 : index
    %row_a_a = add %w16_a, %lr_a : index
    %row_a = add %row_a_a, %row8_a : index
    %j4_a = div %ja, %c4 : index
    %col8_a = mul %j4_a, %c8 : index
    %lq_a = rem %lane, %c4 : index
    %lq2_a = mul %lq_a, %c2 : index
    %jm_a = rem %ja, %c2 : index
    %colb_a = add %col8_a, %lq2_a : index
    %col_a = add %colb_a, %jm_a : index
    %x_a = add %row_a, %col_a : index
    %xm_a = rem %x_a, %c5 : index
    %xv_a = cast %xm_a : bf16
    store %ar[%ja], %xv_a
  }
)";
    }
    const std::string a_operand =
        variant.a_in_registers ? "%ar[%c0]" : "%sa[%c0, %c0]";
    const std::string text = absl::StrCat(
        R"(
kernel @k(%d: global f32[64, 8]) grid(1) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c3 = const 3 : index
  %c4 = const 4 : index
  %c5 = const 5 : index
  %c8 = const 8 : index
  %c16 = const 16 : index
  %c32 = const 32 : index
  %c64 = const 64 : index
  %t = thread.id x : index
  %lane = lane.id : index
  %warp = warp.id : index
  %sa = alloc.shared {align = 128} : shared bf16)",
        variant.a_shape, R"(
  %sb = alloc.shared {align = 128} : shared bf16)",
        variant.b_shape, R"(
  %acc = alloc.reg : reg f32[4]
  // A[m][k] = (m + k) % 5, B[n][k] = (n * k) % 3 - 1, C = m - n.
  for %i = %c0 to %c8 step %c1 {
    %k128 = mul %i, %c128 : index
    %flat = add %k128, %t : index
    %m = div %flat, %c16 : index
    %k = rem %flat, %c16 : index
    %mk = add %m, %k : index
    %av = rem %mk, %c5 : index
    %af = cast %av : bf16
    )",
        variant.a_m_major ? "store %sa[%k, %m], %af" : "store %sa[%m, %k], %af",
        R"(
  }
  %in_b = cmp lt %t, %c128 : i1
  if %in_b {
    %n = div %t, %c16 : index
    %kb = rem %t, %c16 : index
    %nk = mul %n, %kb : index
    %nk3 = rem %nk, %c3 : index
    %bv = sub %nk3, %c1 : index
    %bi = cast %bv : i32
    %bf = cast %bi : bf16
    )",
        variant.b_n_major ? "store %sb[%kb, %n], %bf"
                          : "store %sb[%n, %kb], %bf",
        R"(
  }
)",
        a_fill, R"(
  for %j = %c0 to %c4 step %c1 {
    %jh_c = div %j, %c2 : index
    %jhm_c = rem %jh_c, %c2 : index
    %row8_c = mul %jhm_c, %c8 : index
    %lr_c = div %lane, %c4 : index
    %w16_c = mul %warp, %c16 : index
    %row_a_c = add %w16_c, %lr_c : index
    %row_c = add %row_a_c, %row8_c : index
    %lq_c = rem %lane, %c4 : index
    %lq2_c = mul %lq_c, %c2 : index
    %jm_c = rem %j, %c2 : index
    %col_c = add %lq2_c, %jm_c : index
    %ri_c = cast %row_c : i32
    %ci_c = cast %col_c : i32
    %cv_c = sub %ri_c, %ci_c : i32
    %cf_c = cast %cv_c : f32
    store %acc[%j], %cf_c
  }
  fence.proxy.async shared_cta
  barrier.block
  wgmma.fence
  wgmma %acc[%c0], )",
        a_operand, ", ", variant.b_n_major ? "%sb[%c0, %c0]" : "%sb[%c0, %c0]",
        " ", variant.attrs, R"(
  %tok = wgmma.commit : token<wgmma>
  wgmma.wait %tok
  for %j2 = %c0 to %c4 step %c1 {
    %j2h = div %j2, %c2 : index
    %j2hm = rem %j2h, %c2 : index
    %row8_d = mul %j2hm, %c8 : index
    %lr_d = div %lane, %c4 : index
    %w16_d = mul %warp, %c16 : index
    %row_a_d = add %w16_d, %lr_d : index
    %row_d = add %row_a_d, %row8_d : index
    %lq_d = rem %lane, %c4 : index
    %lq2_d = mul %lq_d, %c2 : index
    %j2m = rem %j2, %c2 : index
    %col_d = add %lq2_d, %j2m : index
    %v_d = load %acc[%j2] : f32
    store %d[%row_d, %col_d], %v_d
  }
}
)");
    std::string fixed = text;
    fixed.replace(fixed.find("  %c32 = const"), 0,
                  "  %c128 = const 128 : index\n");
    KernelRun run = RunText(fixed, launch);
    ExpectClean(run);
    const TensorData& d = run.outcome.tensors.at("d");
    for (int m = 0; m < 64; ++m) {
      for (int n = 0; n < 8; ++n) {
        double expected = m - n;
        for (int k = 0; k < 16; ++k)
          expected += ((m + k) % 5) * (((n * k) % 3) - 1);
        EXPECT_EQ(Get(d, {m, n}), expected)
            << variant.attrs
            << (variant.a_in_registers ? " A in registers" : "") << " at " << m
            << "," << n;
      }
    }
  }
}

// wgmmas of one warpgroup chain through their accumulator in issue order,
// however late the adversarial schedule runs each (PTX needs no fence
// between accumulator uses of same-shape wgmmas).
TEST(Machine, WgmmaAccumulatorChainsInIssueOrder) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Launch launch;
    launch.tensors["d"] = Tensor(DType::kF32, {128, 4});
    KernelRun run = RunText(R"(
kernel @k(%d: global f32[128, 4]) grid(1) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c4 = const 4 : index
  %c8 = const 8 : index
  %c16 = const 16 : index
  %t = thread.id x : index
  %sa = alloc.shared {align = 128} : shared bf16[64, 16]
  %sb = alloc.shared {align = 128} : shared bf16[8, 16]
  %acc = alloc.reg : reg f32[4]
  %one = const 1.0 : bf16
  %c128 = const 128 : index
  for %i = %c0 to %c8 step %c1 {
    %k = mul %i, %c128 : index
    %r = add %k, %t : index
    %row = div %r, %c16 : index
    %col = rem %r, %c16 : index
    store %sa[%row, %col], %one
  }
  %brow = div %t, %c16 : index
  %bcol = rem %t, %c16 : index
  store %sb[%brow, %bcol], %one
  fence.proxy.async shared_cta
  barrier.block
  wgmma.fence
  wgmma %acc[%c0], %sa[%c0, %c0], %sb[%c0, %c0] {n = 8, zero_init}
  wgmma %acc[%c0], %sa[%c0, %c0], %sb[%c0, %c0] {n = 8}
  wgmma %acc[%c0], %sa[%c0, %c0], %sb[%c0, %c0] {n = 8}
  %tok = wgmma.commit : token<wgmma>
  wgmma.wait %tok
  for %j = %c0 to %c4 step %c1 {
    %v = load %acc[%j] : f32
    store %d[%t, %j], %v
  }
}
)",
                            launch, Adversarial(seed));
    ExpectClean(run);
    for (int t = 0; t < 128; ++t)
      for (int j = 0; j < 4; ++j)
        ASSERT_EQ(Get(run.outcome.tensors.at("d"), {t, j}), 48)
            << "seed " << seed << " thread " << t;
  }
}

TEST(Machine, MbarrierPhasesParitiesAndTransactionBytes) {
  Launch launch;
  launch.tensors["out"] = Tensor(DType::kI32, {64});
  launch.tensors["src"] = Tensor(DType::kI32, {64});
  for (int i = 0; i < 64; ++i) Set(launch.tensors["src"], {i}, 3 * i);
  KernelRun run = RunText(R"(
kernel @k(%out: global i32[64], %src: global i32[64]) grid(1) block(64) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %t = thread.id x : index
  %s = alloc.shared {align = 128} : shared i32[64]
  %bar = alloc.shared {align = 8} : shared mbarrier[2]
  %t0 = cmp eq %t, %c0 : i1
  if %t0 {
    mbarrier.init %bar[%c0] {count = 2}
    mbarrier.init %bar[%c1] {count = 64}
    fence.mbarrier_init
  }
  barrier.block
  // A fresh barrier reports parity 1 complete.
  mbarrier.wait %bar[%c1], %c1
  // Phase 0 of bar[0]: thread 0's arrive with 256 bytes, thread 1's
  // arrive, and the bulk copy's bytes.
  if %t0 {
    mbarrier.arrive_tx %bar[%c0] {bytes = 256}
    bulk.load %s[%c0], %src[%c0], %bar[%c0] {bytes = 256}
  }
  %t1 = cmp eq %t, %c1 : i1
  if %t1 {
    mbarrier.arrive %bar[%c0]
  }
  mbarrier.wait %bar[%c0], %c0
  %v_d = load %s[%t] : i32
  store %out[%t], %v_d
  // Phase 0 of bar[1]: every thread arrives; then parity 0 completes.
  mbarrier.arrive %bar[%c1]
  mbarrier.wait %bar[%c1], %c0
}
)",
                          launch);
  ExpectClean(run);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(Get(run.outcome.tensors.at("out"), {i}), 3 * i);
}

TEST(Machine, AtomicsReturnOldValuesAndCombine) {
  Launch launch;
  launch.tensors["acc"] = Tensor(DType::kI32, {4});
  launch.tensors["old"] = Tensor(DType::kI32, {64});
  KernelRun run = RunText(R"(
kernel @k(%acc: global i32[4], %old: global i32[64]) grid(1) block(64) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c3 = const 3 : index
  %t = thread.id x : index
  %one = const 1 : i32
  %ti = cast %t : i32
  %o = atomic add %acc[%c0], %one : i32
  store %old[%t], %o
  red max %acc[%c1], %ti
  %neg = neg %ti : i32
  red min %acc[%c2], %neg
  %x = atomic exch %acc[%c3], %ti : i32
}
)",
                          launch);
  ExpectClean(run);
  const TensorData& acc = run.outcome.tensors.at("acc");
  EXPECT_EQ(Get(acc, {0}), 64);
  EXPECT_EQ(Get(acc, {1}), 63);
  EXPECT_EQ(Get(acc, {2}), -63);
  // Each thread saw a distinct old value 0..63.
  std::vector<int> seen(64, 0);
  for (int i = 0; i < 64; ++i)
    ++seen[static_cast<int>(Get(run.outcome.tensors.at("old"), {i}))];
  for (int count : seen) EXPECT_EQ(count, 1);
}

// Blocks pass a token through a semaphore: block b waits for b, adds one to
// the running value, releases b + 1. Every schedule gives 0, 1, 2, 3.
TEST(Machine, SemaphoresOrderBlocks) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Launch launch;
    launch.tensors["out"] = Tensor(DType::kI32, {4});
    launch.tensors["sem"] = Tensor(DType::kI32, {1});
    launch.tensors["value"] = Tensor(DType::kI32, {1});
    KernelRun run = RunText(R"(
kernel @k(%out: global i32[4], %sem: global i32[1], %value: global i32[1])
    grid(4) block(32) {
  %c0 = const 0 : index
  %t = thread.id x : index
  %b = block.id x : index
  %bi = cast %b : i32
  %one = const 1 : i32
  %next = add %bi, %one : i32
  %t0 = cmp eq %t, %c0 : i1
  if %t0 {
    sem.wait %sem[%c0], %bi
    %v_d = load %value[%c0] : i32
    store %out[%b], %v_d
    %w = add %v_d, %one : i32
    store %value[%c0], %w
    sem.release %sem[%c0], %next
  }
}
)",
                            launch, Adversarial(seed));
    ExpectClean(run);
    for (int b = 0; b < 4; ++b)
      EXPECT_EQ(Get(run.outcome.tensors.at("out"), {b}), b);
  }
}

// splitk (reference reading): the epilogue sees the partials summed in
// split order, once per output tile.
TEST(Machine, SplitKSumsPartialsInSplitOrder) {
  Launch launch;
  launch.tensors["out"] = Tensor(DType::kF32, {2, 32});
  KernelRun run = RunText(R"(
kernel @k(%out: global f32[2, 32]) grid(2, 1, 3) block(32) {
  %c0 = const 0 : index
  %t = thread.id x : index
  %x = block.id x : index
  %z = block.id z : index
  %acc = alloc.reg : reg f32[1]
  splitk %acc body {
    %c10 = const 10 : index
    %zz = mul %z, %c10 : index
    %v_d = add %zz, %t : index
    %vf = cast %v_d : f32
    store %acc[%c0], %vf
  } epilogue {
    %s = load %acc[%c0] : f32
    store %out[%x, %t], %s
  }
}
)",
                          launch);
  ExpectClean(run);
  for (int x = 0; x < 2; ++x)
    for (int t = 0; t < 32; ++t)
      EXPECT_EQ(Get(run.outcome.tensors.at("out"), {x, t}), 30 + 3 * t);
}

TEST(Machine, CpAsyncCopiesOnWait) {
  Launch launch;
  launch.tensors["src"] = Tensor(DType::kF32, {32});
  launch.tensors["dst"] = Tensor(DType::kF32, {32});
  for (int i = 0; i < 32; ++i) Set(launch.tensors["src"], {i}, i * 1.5);
  KernelRun run = RunText(R"(
kernel @k(%src: global f32[32], %dst: global f32[32]) grid(1) block(32) {
  %t = thread.id x : index
  %s = alloc.shared {align = 128} : shared f32[32]
  cp.async %s[%t], %src[%t] {bytes = 4}
  %g = cp.async.commit : token<cp_async>
  cp.async.wait %g
  %v_d = load %s[%t] : f32
  store %dst[%t], %v_d
}
)",
                          launch, Adversarial(3));
  ExpectClean(run);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(Get(run.outcome.tensors.at("dst"), {i}), i * 1.5);
}

// A cluster of two CTAs: CTA 0 multicasts one TMA load into both.
TEST(Machine, TmaMulticastWritesEveryCtaOfTheMask) {
  Launch launch;
  TensorData a = Tensor(DType::kF32, {4, 8});
  for (int i = 0; i < 32; ++i) Set(a, {i / 8, i % 8}, i);
  launch.tensors["a"] = a;
  launch.tensors["out"] = Tensor(DType::kF32, {2, 32});
  KernelRun run = RunText(R"(
kernel @k(%a: global f32[4, 8], %out: global f32[2, 32],
          %map: tensormap f32[4, 8] of %a) grid(2) block(32) cluster(2) {
  %c0 = const 0 : index
  %c8 = const 8 : index
  %t = thread.id x : index
  %rank = cluster.cta_rank : index
  %s = alloc.shared {align = 128} : shared f32[4, 8]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %t0 = cmp eq %t, %c0 : i1
  if %t0 {
    mbarrier.init %bar[%c0] {count = 1}
    fence.mbarrier_init
    mbarrier.arrive_tx %bar[%c0] {bytes = 128}
  }
  cluster.arrive
  cluster.wait
  %r0 = cmp eq %rank, %c0 : i1
  %issue = and %t0, %r0 : i1
  if %issue {
    tma.load %s[%c0, %c0], %map[%c0, %c0], %bar[%c0] {multicast = 3}
  }
  mbarrier.wait %bar[%c0], %c0
  %r = div %t, %c8 : index
  %c = rem %t, %c8 : index
  %v_d = load %s[%r, %c] : f32
  store %out[%rank, %t], %v_d
  cluster.arrive
  cluster.wait
}
)",
                          launch);
  ExpectClean(run);
  for (int rank = 0; rank < 2; ++rank)
    for (int i = 0; i < 32; ++i)
      EXPECT_EQ(Get(run.outcome.tensors.at("out"), {rank, i}), i);
}

TEST(Machine, DeadlockNamesTheWaitingOp) {
  KernelRun run = RunText(R"(
kernel @k() grid(1) block(32) {
  %c0 = const 0 : index
  %t = thread.id x : index
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %t0 = cmp eq %t, %c0 : i1
  if %t0 {
    mbarrier.init %bar[%c0] {count = 2}
    fence.mbarrier_init
  }
  barrier.block
  mbarrier.arrive %bar[%c0]
  mbarrier.wait %bar[%c0], %c0
}
)",
                          Launch(), Adversarial(1));
  ASSERT_TRUE(run.outcome.error.ok());
  // 32 arrivals on a count of 2: 16 phases complete; the waiters of parity
  // 0 can only see the latest completed phase, so they wait.
  bool found = false;
  for (const Hazard& hazard : run.outcome.hazards.hazards()) {
    if (hazard.kind == HazardKind::kDeadlock ||
        hazard.kind == HazardKind::kMbarrierCount)
      found = true;
  }
  EXPECT_TRUE(found);
}

TEST(Machine, OutOfBoundsAndUnsettledResultsAreLocatedErrors) {
  Launch launch;
  launch.tensors["out"] = Tensor(DType::kI32, {4});
  KernelRun run = RunText(R"(
kernel @k(%out: global i32[4]) grid(1) block(8) {
  %t = thread.id x : index
  %v_d = cast %t : i32
  store %out[%t], %v_d
}
)",
                          launch);
  ASSERT_FALSE(run.outcome.error.ok());
  EXPECT_TRUE(absl::StrContains(run.outcome.error.message(), "test.kir:5:3"))
      << run.outcome.error.message();
  EXPECT_TRUE(absl::StrContains(run.outcome.error.message(), "out of bounds"));
  KernelRun division = RunText(R"(
kernel @k(%out: global i32[4]) grid(1) block(4) {
  %t = thread.id x : index
  %v_d = cast %t : i32
  %q = div %v_d, %v_d : i32
  store %out[%t], %q
}
)",
                               launch);
  ASSERT_FALSE(division.outcome.error.ok());
  EXPECT_TRUE(
      absl::StrContains(division.outcome.error.message(), "division by zero"));
}

TEST(Program, UnmodeledOpsAreLocatedErrors) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModuleString(R"(
kernel @k(%out: global i32[4]) grid(1) block(4) {
  %a = const 1 : i32
  %r = ptx "add.s32 $0, $1, $1;" (%a) : i32
}
)",
                        "test.kir");
  ASSERT_TRUE(module.ok());
  absl::StatusOr<std::unique_ptr<Program>> program =
      Program::Create(*(*module)->kernels.front());
  ASSERT_FALSE(program.ok());
  EXPECT_TRUE(absl::StrContains(program.status().message(), "test.kir:4:"));
  EXPECT_TRUE(
      absl::StrContains(program.status().message(), "does not model `ptx`"));
}

}  // namespace
}  // namespace kir::check
