// Tests of the CUDA emitter: every lowered example and every op kind compile
// to an sm_90a cubin with NVRTC; the testdata/cuda goldens hold (through
// FileCheck, as lit runs them); the ABI, shared-memory layout, predication,
// pending counts and located errors are what the header promises.
#include "printer/cuda_emitter.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ir/shared_memory.h"
#include "ir/ir.h"
#include "parser/parser.h"
#include "printer/nvrtc_compiler.h"

namespace kir {
namespace {

namespace fs = std::filesystem;

std::string TestdataPath(const std::string& relative) {
  return absl::StrCat(KIR_TESTDATA_DIR, "/", relative);
}

std::string ReadText(const std::string& path) {
  std::ifstream file(path);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

// The emitter needs every shared allocation placed; these tests place them
// as plan-shared-memory{reuse=never} would (their goldens run that pass).
void PlaceShared(Module& module) {
  for (const auto& kernel : module.kernels) WriteLayoutWithoutReuse(*kernel);
}

std::unique_ptr<Module> ParseFile(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModuleString(ReadText(path), path);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  PlaceShared(**module);
  return std::move(*module);
}

std::unique_ptr<Module> Parse(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModuleString(text, "test.kir");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  PlaceShared(**module);
  return std::move(*module);
}

std::string EmitOrDie(const Module& module) {
  absl::StatusOr<std::string> cuda = EmitCuda(module);
  EXPECT_TRUE(cuda.ok()) << cuda.status();
  return cuda.ok() ? *cuda : "";
}

std::vector<std::string> FilesIn(const std::string& directory,
                                 absl::string_view suffix) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(directory)) {
    const std::string path = entry.path().string();
    if (absl::EndsWith(path, suffix)) files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Skips the test when NVRTC cannot be loaded here.
#define KIR_REQUIRE_NVRTC()                                        \
  do {                                                             \
    absl::StatusOr<std::string> version = NvrtcVersion();          \
    if (!version.ok()) GTEST_SKIP() << version.status().message(); \
  } while (false)

NvrtcOptions TestNvrtcOptions() {
  NvrtcOptions options;
  options.use_cache = false;  // always exercise the compiler
  return options;
}

// ---------------------------------------------------------------------------
// Compilation.

TEST(CudaEmitterTest, EveryLoweredExampleCompilesToAnSm90aCubin) {
  KIR_REQUIRE_NVRTC();
  const std::vector<std::string> examples =
      FilesIn(TestdataPath("examples"), ".lowered.kir");
  ASSERT_GE(examples.size(), 3u);
  for (const std::string& path : examples) {
    SCOPED_TRACE(path);
    std::unique_ptr<Module> module = ParseFile(path);
    ASSERT_NE(module, nullptr);
    const std::string cuda = EmitOrDie(*module);
    ASSERT_FALSE(cuda.empty());
    absl::StatusOr<std::string> cubin =
        CompileToCubin(cuda, "sm_90a", TestNvrtcOptions());
    ASSERT_TRUE(cubin.ok()) << cubin.status();
    EXPECT_EQ(cubin->substr(0, 4),
              "\x7f"
              "ELF");
  }
}

TEST(CudaEmitterTest, EveryOpKindButSplitKCompiles) {
  KIR_REQUIRE_NVRTC();
  std::unique_ptr<Module> module = ParseFile(TestdataPath("cuda/all_ops.kir"));
  ASSERT_NE(module, nullptr);
  std::set<OpKind> used;
  for (const auto& kernel : module->kernels) {
    Walk(kernel->body(), [&](const Op& op) { used.insert(op.kind()); });
  }
  for (int i = 0; i < kNumOpKinds; ++i) {
    const OpKind kind = static_cast<OpKind>(i);
    if (kind == OpKind::kSplitK) continue;
    EXPECT_TRUE(used.count(kind) > 0)
        << Mnemonic(kind) << " is not used by testdata/cuda/all_ops.kir";
  }
  const std::string cuda = EmitOrDie(*module);
  absl::StatusOr<std::string> cubin =
      CompileToCubin(cuda, "sm_90a", TestNvrtcOptions());
  ASSERT_TRUE(cubin.ok()) << cubin.status();
}

// The hand-lowered epilogue's synchronization, in the PTX NVRTC produces:
// stmatrix, fence.proxy.async.shared::cta, bar.sync, the TMA store, its
// commit and the wait for its reads, in that order.
TEST(CudaEmitterTest, EpiloguePtxKeepsTheLoweredOrder) {
  KIR_REQUIRE_NVRTC();
  std::unique_ptr<Module> module =
      ParseFile(TestdataPath("examples/epilogue.lowered.kir"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::string> ptx =
      CompileToPtx(EmitOrDie(*module), "compute_90a", TestNvrtcOptions());
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  size_t at = 0;
  for (const char* instruction :
       {"stmatrix.sync.aligned.m8n8.x4.shared.b16",
        "fence.proxy.async.shared::cta", "bar.sync 0",
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
        "cp.async.bulk.commit_group", "cp.async.bulk.wait_group.read 1"}) {
    const size_t found = ptx->find(instruction, at);
    ASSERT_NE(found, std::string::npos)
        << instruction << " missing after offset " << at;
    at = found + 1;
  }
}

// ---------------------------------------------------------------------------
// Goldens: the RUN line of each testdata/cuda file, with EmitCuda in place
// of `kir-opt --emit=cuda`.

std::string FindFileCheck() {
  if (const char* path = std::getenv("FILECHECK")) return path;
  for (const char* path : {"/usr/lib/llvm-19/bin/FileCheck",
                           "/usr/bin/FileCheck-19", "/usr/bin/FileCheck"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// Runs FileCheck with `check_file` on `input`; returns its output, empty on
// success.
std::string RunFileCheck(const std::string& filecheck,
                         const std::string& check_file,
                         const std::string& input) {
  const std::string input_path =
      absl::StrCat(testing::TempDir(), "/filecheck_input_", getpid(), ".txt");
  std::ofstream(input_path) << input;
  const std::string command =
      absl::StrCat(filecheck, " --input-file=", input_path, " ", check_file,
                   " -enable-var-scope --allow-unused-prefixes=false 2>&1");
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "cannot run FileCheck";
  char chunk[4096];
  size_t read;
  while ((read = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
    output.append(chunk, read);
  const int status = pclose(pipe);
  std::remove(input_path.c_str());
  if (status == 0) return "";
  return output.empty() ? "FileCheck failed" : output;
}

TEST(CudaEmitterTest, GoldensHold) {
  const std::string filecheck = FindFileCheck();
  if (filecheck.empty()) GTEST_SKIP() << "FileCheck not found (set FILECHECK)";
  const std::vector<std::string> goldens =
      FilesIn(TestdataPath("cuda"), ".kir");
  ASSERT_GE(goldens.size(), 8u);
  for (const std::string& path : goldens) {
    SCOPED_TRACE(path);
    const std::string text = ReadText(path);
    const size_t run = text.find("RUN:");
    ASSERT_NE(run, std::string::npos);
    const std::string run_line = text.substr(run, text.find('\n', run) - run);
    ASSERT_TRUE(absl::StrContains(run_line, "--emit=cuda")) << run_line;
    const bool expect_error = absl::StrContains(run_line, "RUN: not ");
    absl::StatusOr<std::unique_ptr<Module>> module =
        ParseModuleString(text, path);
    ASSERT_TRUE(module.ok()) << module.status();
    if (absl::StrContains(run_line, "plan-shared-memory")) PlaceShared(**module);
    absl::StatusOr<std::string> cuda = EmitCuda(**module);
    ASSERT_EQ(cuda.ok(), !expect_error) << cuda.status();
    const std::string input =
        cuda.ok() ? *cuda : std::string(cuda.status().message());
    EXPECT_EQ(RunFileCheck(filecheck, path, input), "");
  }
}

// ---------------------------------------------------------------------------
// Properties of the generated text.

// Every asm statement whose instruction fences, waits, copies, accesses
// memory or touches an mbarrier has a "memory" clobber (hopper-ptx.md R12).
TEST(CudaEmitterTest, AsmThatTouchesMemoryHasAMemoryClobber) {
  std::vector<std::string> paths =
      FilesIn(TestdataPath("examples"), ".lowered.kir");
  paths.push_back(TestdataPath("cuda/all_ops.kir"));
  int checked = 0;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    std::unique_ptr<Module> module = ParseFile(path);
    ASSERT_NE(module, nullptr);
    const std::string cuda = EmitOrDie(*module);
    for (size_t at = cuda.find("asm volatile("); at != std::string::npos;
         at = cuda.find("asm volatile(", at + 1)) {
      const size_t end = cuda.find(");", at);
      ASSERT_NE(end, std::string::npos);
      const std::string statement = cuda.substr(at, end - at);
      bool touches_memory = false;
      for (const char* word :
           {"fence", "wait", "cp.async", "cp.reduce", "mbarrier", "bar.sync",
            "bar.arrive", "barrier.cluster", "ld.", "st.", "atom.", "red.",
            "ldmatrix", "stmatrix", "wgmma", "prefetch"}) {
        if (absl::StrContains(statement, word)) touches_memory = true;
      }
      if (!touches_memory) continue;
      ++checked;
      EXPECT_TRUE(absl::StrContains(statement, "\"memory\"")) << statement;
    }
  }
  EXPECT_GT(checked, 40);
}

TEST(CudaEmitterTest, ElectedSingleIssueRegionIsPredicatedNotBranched) {
  std::unique_ptr<Module> module =
      ParseFile(TestdataPath("examples/epilogue.lowered.kir"));
  ASSERT_NE(module, nullptr);
  const std::string cuda = EmitOrDie(*module);
  EXPECT_FALSE(absl::StrContains(cuda, "if (v_elected)"));
  EXPECT_TRUE(absl::StrContains(
      cuda, "kir_tma_store_2d_if(static_cast<kir_u32>(v_elected), &v_out_map"));
  // The commit and waits run in the whole warp (see cuda_emitter.h).
  EXPECT_TRUE(absl::StrContains(cuda, "kir_bulk_commit();"));
  EXPECT_FALSE(absl::StrContains(cuda, "kir_bulk_commit_if"));
  EXPECT_TRUE(absl::StrContains(
      cuda, "@kir_p cp.async.bulk.tensor.2d.global.shared::cta"));
  // The warp test stays a (warp-uniform) branch.
  EXPECT_TRUE(absl::StrContains(cuda, "if (v_is_warp0) {"));
}

TEST(CudaEmitterTest, ElectedRegionWithALoopKeepsItsBranch) {
  std::unique_ptr<Module> module =
      ParseFile(TestdataPath("examples/ws_gemm.lowered.kir"));
  ASSERT_NE(module, nullptr);
  const std::string cuda = EmitOrDie(*module);
  EXPECT_TRUE(absl::StrContains(cuda, "if (v_elected_load) {"));
  EXPECT_TRUE(absl::StrContains(cuda, "kir_tma_load_2d(kir_smem_base"));
  EXPECT_FALSE(absl::StrContains(cuda, "kir_tma_load_2d_if"));
}

// The emitter decides nothing: an election uniform-predicates did not mark
// `{predicated}` stays a branch, however predicable its body.
TEST(CudaEmitterTest, UnmarkedElectionKeepsItsBranch) {
  std::unique_ptr<Module> module = Parse(R"(
kernel @k() block(32) {
  %c0 = const 0 : index
  %bar = alloc.shared : shared mbarrier[1]
  %e = elect.sync : i1
  if %e {
    mbarrier.init %bar[%c0] {count = 1}
  }
  %p = elect.sync : i1
  if %p {predicated} {
    mbarrier.init %bar[%c0] {count = 1}
  }
})");
  ASSERT_NE(module, nullptr);
  const std::string cuda = EmitOrDie(*module);
  EXPECT_TRUE(absl::StrContains(cuda, "if (v_e) {"));
  EXPECT_FALSE(absl::StrContains(cuda, "if (v_p)"));
  EXPECT_TRUE(absl::StrContains(
      cuda, "kir_mbarrier_init_if<1>(static_cast<kir_u32>(v_p),"));
}

// Emitted without the verifier, an illegal `{predicated}` is a located
// error, not a crash or a silently wrong predicate.
TEST(CudaEmitterTest, IllegalPredicatedIfIsALocatedError) {
  std::unique_ptr<Module> module = Parse(R"(
kernel @k(%g: global f32[32]) block(32) {
  %c0 = const 0 : index
  %one = const 1.0 : f32
  %e = elect.sync : i1
  if %e {predicated} {
    store %g[%c0], %one
  }
})");
  ASSERT_NE(module, nullptr);
  CudaEmitOptions options;
  options.verify = false;
  absl::StatusOr<std::string> cuda = EmitCuda(*module, options);
  ASSERT_FALSE(cuda.ok());
  EXPECT_TRUE(absl::StrContains(
      cuda.status().message(),
      "test.kir:6:3: error: if {predicated} cannot be issued branch-free: its "
      "body holds 'store'"))
      << cuda.status();
}

// The zero-init predicate is scale-d = !%p; the flag a constant 0.
TEST(CudaEmitterTest, ZeroInitPredicateIsScaleD) {
  std::unique_ptr<Module> module = Parse(R"(
kernel @k() block(128) {
  %c0 = const 0 : index
  %c2 = const 2 : index
  %c1 = const 1 : index
  %sa = alloc.shared {align = 1024, swizzle = 128} : shared f16[64, 64]
  %sb = alloc.shared {align = 1024, swizzle = 128} : shared f16[64, 64]
  %acc = alloc.reg : reg f32[32]
  wgmma.fence
  for %k = %c0 to %c2 step %c1 {
    %first = cmp eq %k, %c0 : i1
    wgmma %acc[%c0], %sa[%c0, %c0], %sb[%c0, %c0], %first {n = 64}
  }
  wgmma %acc[%c0], %sa[%c0, %c0], %sb[%c0, %c0] {n = 64, zero_init}
  %t = wgmma.commit : token<wgmma>
  wgmma.wait %t
})");
  ASSERT_NE(module, nullptr);
  const std::string cuda = EmitOrDie(*module);
  EXPECT_TRUE(
      absl::StrContains(cuda, "static_cast<kir_u32>(!v_first), v_acc[0]"));
  EXPECT_TRUE(absl::StrContains(cuda, "0u, v_acc[0]"));
  EXPECT_FALSE(absl::StrContains(cuda, "if (v_first)"));
}

TEST(CudaEmitterTest, WaitsUseThePendingGroupCount) {
  std::unique_ptr<Module> module =
      ParseFile(TestdataPath("examples/epilogue.lowered.kir"));
  ASSERT_NE(module, nullptr);
  const std::string cuda = EmitOrDie(*module);
  // In the loop %t@1 leaves this sub-tile's group pending; at exit none.
  EXPECT_TRUE(absl::StrContains(cuda, "kir_bulk_wait_read<1>();"));
  EXPECT_TRUE(absl::StrContains(cuda, "kir_bulk_wait_read<0>();"));
}

TEST(CudaEmitterTest, LineDirectivesPointAtTheKirSource) {
  const std::string path = TestdataPath("examples/epilogue.lowered.kir");
  std::unique_ptr<Module> module = ParseFile(path);
  ASSERT_NE(module, nullptr);
  const Op* store = nullptr;
  Walk(module->kernels[0]->body(), [&](const Op& op) {
    if (op.kind() == OpKind::kTmaStore) store = &op;
  });
  ASSERT_NE(store, nullptr);
  const std::string cuda = EmitOrDie(*module);
  EXPECT_TRUE(absl::StrContains(
      cuda, absl::StrCat("#line ", store->loc().line, " \"", path,
                         "\"\n        kir_tma_store_2d_if(")))
      << cuda;
  CudaEmitOptions no_lines;
  no_lines.line_directives = false;
  absl::StatusOr<std::string> plain = EmitCuda(*module, no_lines);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(absl::StrContains(*plain, "#line"));
}

TEST(CudaEmitterTest, UnloweredSplitKIsALocatedError) {
  const std::string path = TestdataPath("examples/splitk_gemm.kir");
  std::unique_ptr<Module> module = ParseFile(path);
  ASSERT_NE(module, nullptr);
  const Op* splitk = nullptr;
  Walk(module->kernels[0]->body(), [&](const Op& op) {
    if (op.kind() == OpKind::kSplitK) splitk = &op;
  });
  ASSERT_NE(splitk, nullptr);
  absl::StatusOr<std::string> cuda = EmitCuda(*module);
  ASSERT_FALSE(cuda.ok());
  EXPECT_TRUE(absl::StrContains(
      cuda.status().message(),
      absl::StrCat(
          splitk->loc().ToString(),
          ": error: splitk must be lowered by serialize-split-k before "
          "emission")))
      << cuda.status();
}

TEST(CudaEmitterTest, UnverifiedInputIsReportedNotEmitted) {
  std::unique_ptr<Module> module = Parse(R"(
kernel @bad(%x: global f32[4]) block(32) {
  %c0 = const 0 : index
  %v = load %x[%c0] : f32
  %w = exp %c0 : index
  store %x[%c0], %v
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::string> cuda = EmitCuda(*module);
  ASSERT_FALSE(cuda.ok());
  EXPECT_TRUE(absl::StrContains(cuda.status().message(), "test.kir:5:"))
      << cuda.status();
}

TEST(CudaEmitterTest, WgmmaNeedsSwizzledOperandsOfTheSwizzleWidth) {
  std::unique_ptr<Module> module = Parse(R"(
kernel @plain(%c: global f32[64, 64]) block(128) {
  %c0 = const 0 : index
  %sa = alloc.shared {align = 1024} : shared bf16[64, 16]
  %sb = alloc.shared {align = 1024, swizzle = 128} : shared bf16[64, 64]
  %acc = alloc.reg : reg f32[32]
  wgmma.fence
  wgmma %acc[%c0], %sa[%c0, %c0], %sb[%c0, %c0] {n = 64, zero_init}
  %t = wgmma.commit : token<wgmma>
  wgmma.wait %t
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::string> cuda = EmitCuda(*module);
  ASSERT_FALSE(cuda.ok());
  EXPECT_TRUE(absl::StrContains(cuda.status().message(),
                                "test.kir:8:3: error: wgmma operand A (%sa) "
                                "must be a swizzled shared allocation"))
      << cuda.status();
}

TEST(CudaEmitterTest, HalfConstantsRoundToNearestEven) {
  std::unique_ptr<Module> module = Parse(R"(
kernel @consts(%o: global bf16[8], %p: global f16[8]) block(32) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %a = const 0.1 : bf16
  %b = const 0.1 : f16
  %c = const 65519.0 : f16
  %d = const 5.9604644775390625e-08 : f16
  %e = const 1.00390625 : bf16
  %f = const -0.0 : bf16
  store %o[%c0], %a
  store %o[%c1], %e
  store %o[%c2], %f
  store %p[%c0], %b
  store %p[%c1], %c
  store %p[%c2], %d
})");
  ASSERT_NE(module, nullptr);
  const std::string cuda = EmitOrDie(*module);
  EXPECT_TRUE(absl::StrContains(cuda, "v_a = kir_bf16{0x3dcd}")) << cuda;
  EXPECT_TRUE(absl::StrContains(cuda, "v_b = kir_f16{0x2e66}"));
  // Just under the midpoint to infinity (65520, a verifier error since a
  // finite constant must stay finite): the largest finite f16.
  EXPECT_TRUE(absl::StrContains(cuda, "v_c = kir_f16{0x7bff}"));
  EXPECT_TRUE(
      absl::StrContains(cuda, "v_d = kir_f16{0x0001}"));  // smallest subnormal
  EXPECT_TRUE(absl::StrContains(
      cuda, "v_e = kir_bf16{0x3f80}"));  // 1 + 2^-8: tie, even
  EXPECT_TRUE(absl::StrContains(cuda, "v_f = kir_bf16{0x8000}"));
}

// ---------------------------------------------------------------------------
// ABI and shared-memory layout.

TEST(CudaAbiTest, ParametersThenSizesThenWorkspaces) {
  std::unique_ptr<Module> module =
      ParseFile(TestdataPath("examples/splitk_gemm.lowered.kir"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<CudaKernelAbi> abi = GetCudaKernelAbi(*module->kernels[0]);
  ASSERT_TRUE(abi.ok()) << abi.status();
  std::vector<std::string> names;
  std::vector<CudaKernelArg::Kind> kinds;
  for (const CudaKernelArg& arg : abi->args) {
    names.push_back(arg.name);
    kinds.push_back(arg.kind);
  }
  using Kind = CudaKernelArg::Kind;
  EXPECT_EQ(names,
            (std::vector<std::string>{"a", "b", "c", "ws", "ws_map", "alpha",
                                      "M", "N", "K", "S", "sem"}));
  EXPECT_EQ(kinds,
            (std::vector<Kind>{Kind::kTensor, Kind::kTensor, Kind::kTensor,
                               Kind::kTensor, Kind::kTensorMap, Kind::kScalar,
                               Kind::kSize, Kind::kSize, Kind::kSize,
                               Kind::kSize, Kind::kWorkspace}));
  EXPECT_EQ(abi->args[0].cuda_type, "kir_bf16*");
  EXPECT_EQ(abi->args[4].cuda_type, "const __grid_constant__ kir_tensor_map");
  EXPECT_EQ(abi->args[4].size_bytes, 128);
  EXPECT_EQ(abi->args[4].align_bytes, 128);
  EXPECT_EQ(abi->args[5].cuda_type, "float");
  EXPECT_EQ(abi->args[6].cuda_type, "kir_i64");
  const CudaKernelArg& sem = abi->args[10];
  EXPECT_EQ(sem.cuda_type, "kir_i32*");
  ASSERT_TRUE(sem.workspace_bytes.has_value());
  // i32[cdiv(M, 64), cdiv(N, 64)] for M = 100, N = 72: 2 * 2 * 4 bytes.
  const std::optional<int64_t> bytes = sem.workspace_bytes->Evaluate(
      [&](const Value* size) -> std::optional<int64_t> {
        if (size->name() == "M") return 100;
        if (size->name() == "N") return 72;
        return std::nullopt;
      });
  EXPECT_EQ(bytes, std::optional<int64_t>(16));
  EXPECT_EQ(abi->dynamic_smem_bytes, 64 * 64 * 4);
  EXPECT_EQ(abi->launch_bound_threads, std::optional<int64_t>(256));
  EXPECT_FALSE(abi->min_blocks_one);
  // The signature lists the arguments in the ABI's order.
  const std::string cuda = EmitOrDie(*module);
  EXPECT_TRUE(absl::StrContains(
      cuda,
      "splitk_gemm(\n    kir_bf16* v_a,\n    kir_bf16* v_b,\n    kir_bf16* "
      "v_c,\n"
      "    float* v_ws,\n    const __grid_constant__ kir_tensor_map v_ws_map,\n"
      "    float v_alpha,\n    kir_i64 v_M,\n    kir_i64 v_N,\n    kir_i64 "
      "v_K,\n"
      "    kir_i64 v_S,\n    kir_i32* v_sem) {"))
      << cuda;
}

TEST(CudaAbiTest, WarpSpecializedGemm) {
  std::unique_ptr<Module> module =
      ParseFile(TestdataPath("examples/ws_gemm.lowered.kir"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<CudaKernelAbi> abi = GetCudaKernelAbi(*module->kernels[0]);
  ASSERT_TRUE(abi.ok()) << abi.status();
  EXPECT_EQ(abi->symbol, "ws_gemm");
  // Two 4-stage 128x64 bf16 rings, then two rings of 4 mbarriers.
  ASSERT_EQ(abi->shared.size(), 4u);
  EXPECT_EQ(abi->shared[0].offset, 0);
  EXPECT_EQ(abi->shared[1].offset, 65536);
  EXPECT_EQ(abi->shared[2].offset, 131072);
  EXPECT_EQ(abi->shared[3].offset, 131104);
  EXPECT_EQ(abi->dynamic_smem_bytes, 131136);
  EXPECT_EQ(abi->launch_bound_threads, std::optional<int64_t>(384));
  EXPECT_TRUE(abi->min_blocks_one);  // setmaxnreg
  EXPECT_TRUE(absl::StrContains(EmitOrDie(*module),
                                "void __launch_bounds__(384, 1) ws_gemm("));
}

TEST(CudaAbiTest, SharedLayoutHonorsOffsetsAlignmentAndSwizzle) {
  std::unique_ptr<Module> module = Parse(R"(
kernel @layout() block(32) {
  %a = alloc.shared {align = 16} : shared f32[5]
  %b = alloc.shared {align = 16, swizzle = 64} : shared bf16[8, 32]
  %c = alloc.shared {align = 128, offset = 4096} : shared f32[32]
  %d = alloc.shared {align = 8, pad = 4} : shared bf16[2, 4]
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<CudaKernelAbi> abi = GetCudaKernelAbi(*module->kernels[0]);
  ASSERT_TRUE(abi.ok()) << abi.status();
  ASSERT_EQ(abi->shared.size(), 4u);
  // %c is placed explicitly; the others follow it, in program order.
  EXPECT_EQ(abi->shared[2].offset, 4096);
  EXPECT_EQ(abi->shared[0].offset, 4224);
  EXPECT_EQ(abi->shared[0].bytes, 20);
  // A 64-byte swizzle repeats every 512 bytes.
  EXPECT_EQ(abi->shared[1].align, 512);
  EXPECT_EQ(abi->shared[1].offset, 4608);
  EXPECT_EQ(abi->shared[3].offset, 4608 + 512);
  EXPECT_EQ(abi->shared[3].bytes, 2 * 8 * 2);  // rows padded by 4 elements
  EXPECT_EQ(abi->dynamic_smem_bytes, 4608 + 512 + 32);
}

TEST(CudaAbiTest, SwizzledAllocationAtAnUnalignedOffsetIsAnError) {
  std::unique_ptr<Module> module = Parse(R"(
kernel @misplaced() block(32) {
  %s = alloc.shared {align = 128, swizzle = 128, offset = 128} : shared bf16[8, 64]
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<CudaKernelAbi> abi = GetCudaKernelAbi(*module->kernels[0]);
  ASSERT_FALSE(abi.ok());
  EXPECT_TRUE(
      absl::StrContains(abi.status().message(),
                        "test.kir:3:3: error: shared allocation %s has offset "
                        "128, not a multiple of its alignment 1024"))
      << abi.status();
}

TEST(CudaAbiTest, SymbolsAvoidKeywordsAndRuntimeNames) {
  std::unique_ptr<Module> module = Parse(R"(
kernel @int() block(32) {
}
kernel @kir_swizzle() block(32) {
}
kernel @my.kernel() block(32) {
})");
  ASSERT_NE(module, nullptr);
  std::vector<std::string> symbols;
  for (const auto& kernel : module->kernels) {
    absl::StatusOr<CudaKernelAbi> abi = GetCudaKernelAbi(*kernel);
    ASSERT_TRUE(abi.ok());
    symbols.push_back(abi->symbol);
  }
  EXPECT_EQ(symbols,
            (std::vector<std::string>{"kir_kernel_int",
                                      "kir_kernel_kir_swizzle", "my_kernel"}));
}

}  // namespace
}  // namespace kir
