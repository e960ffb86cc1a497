// Tests of NVRTC compilation: PTX and cubin output, errors with the NVRTC
// log, invalid inline PTX caught only by the cubin path (ptxas), and the
// on-disk cache. Skipped where NVRTC cannot be loaded.
#include "printer/nvrtc_compiler.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace kir {
namespace {

namespace fs = std::filesystem;

#define KIR_REQUIRE_NVRTC()                                        \
  do {                                                             \
    absl::StatusOr<std::string> version = NvrtcVersion();          \
    if (!version.ok()) GTEST_SKIP() << version.status().message(); \
  } while (false)

constexpr char kKernel[] = R"(
extern "C" __global__ void scale(float* x, float a) {
  x[threadIdx.x] = x[threadIdx.x] * a;
}
)";

NvrtcOptions Uncached() {
  NvrtcOptions options;
  options.use_cache = false;
  return options;
}

// A fresh directory under the test's temporary directory.
std::string FreshDirectory(const std::string& name) {
  const std::string path =
      absl::StrCat(testing::TempDir(), "/", name, "_", getpid());
  fs::remove_all(path);
  return path;
}

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length goes into a second padding block.
  EXPECT_EQ(
      Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000, 'a')),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

TEST(NvrtcCompilerTest, CompilesToPtxAndCubin) {
  KIR_REQUIRE_NVRTC();
  absl::StatusOr<std::string> ptx =
      CompileToPtx(kKernel, "compute_90a", Uncached());
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_TRUE(absl::StrContains(*ptx, ".target sm_90a"));
  EXPECT_TRUE(absl::StrContains(*ptx, ".entry scale("));
  EXPECT_NE(ptx->back(), '\0');
  absl::StatusOr<std::string> cubin =
      CompileToCubin(kKernel, "sm_90a", Uncached());
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_EQ(cubin->substr(0, 4),
            "\x7f"
            "ELF");
}

TEST(NvrtcCompilerTest, ErrorsCarryTheLog) {
  KIR_REQUIRE_NVRTC();
  NvrtcOptions options = Uncached();
  options.program_name = "broken.cu";
  absl::StatusOr<std::string> ptx =
      CompileToPtx("extern \"C\" __global__ void k() { undeclared = 1; }",
                   "compute_90a", options);
  ASSERT_FALSE(ptx.ok());
  EXPECT_EQ(ptx.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(ptx.status().message(), "broken.cu(1)"))
      << ptx.status();
  EXPECT_TRUE(absl::StrContains(ptx.status().message(), "undeclared"))
      << ptx.status();
}

// NVRTC copies inline asm into the PTX unchecked; ptxas rejects it, which
// only the cubin path runs.
TEST(NvrtcCompilerTest, InvalidInlinePtxIsCaughtByTheCubinPath) {
  KIR_REQUIRE_NVRTC();
  constexpr char kBadAsm[] = R"(
extern "C" __global__ void k() { asm volatile("not.an.instruction;" ::: "memory"); }
)";
  EXPECT_TRUE(CompileToPtx(kBadAsm, "compute_90a", Uncached()).ok());
  absl::StatusOr<std::string> cubin =
      CompileToCubin(kBadAsm, "sm_90a", Uncached());
  ASSERT_FALSE(cubin.ok());
  EXPECT_TRUE(absl::StrContains(cubin.status().message(), "ptxas"))
      << cubin.status();
}

TEST(NvrtcCompilerTest, ArchitectureMustMatchTheOutput) {
  KIR_REQUIRE_NVRTC();
  EXPECT_FALSE(CompileToCubin(kKernel, "compute_90a", Uncached()).ok());
  EXPECT_FALSE(CompileToPtx(kKernel, "sm_90a", Uncached()).ok());
}

// NVRTC 12.9 and later serve a repeated compile from a cache of their own,
// without running ptxas, so without its report: kir-run printed "spills ?"
// for a kernel another process had compiled first. (It can fail only where
// that cache is on, which it is not on a machine without a GPU; there
// kir-run/ptxas_report.kir is the test that fails without the fix.)
TEST(NvrtcCompilerTest, EveryCompileOfTheSameSourceHasThePtxasReport) {
  KIR_REQUIRE_NVRTC();
  NvrtcOptions options = Uncached();
  options.ptxas_report = true;
  for (int attempt = 0; attempt < 2; ++attempt) {
    NvrtcCompileInfo info;
    absl::StatusOr<std::string> cubin =
        CompileToCubin(kKernel, "sm_90a", options, &info);
    ASSERT_TRUE(cubin.ok()) << cubin.status();
    EXPECT_TRUE(absl::StrContains(info.log, "bytes spill stores"))
        << "compile " << attempt + 1 << ": " << info.log;
  }
}

TEST(NvrtcCompilerTest, CachesByContentAndOptions) {
  KIR_REQUIRE_NVRTC();
  NvrtcOptions options;
  options.cache_dir = FreshDirectory("kir_nvrtc_cache");
  options.ptxas_report = true;
  NvrtcCompileInfo info;
  absl::StatusOr<std::string> first =
      CompileToCubin(kKernel, "sm_90a", options, &info);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(info.cache_hit);
  EXPECT_TRUE(absl::StrContains(info.log, "registers")) << info.log;
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(options.cache_dir)) {
    entries.push_back(entry.path());
  }
  std::sort(entries.begin(), entries.end());
  // The output and its log; no temporary file left behind.
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].extension(), ".cubin");
  EXPECT_EQ(entries[1].string(), entries[0].string() + ".log");
  // A second compilation reads the entry: make it recognizable.
  std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << "cached";
  absl::StatusOr<std::string> second =
      CompileToCubin(kKernel, "sm_90a", options, &info);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, "cached");
  EXPECT_TRUE(info.cache_hit);
  // The log comes back with the cached output.
  EXPECT_TRUE(absl::StrContains(info.log, "registers")) << info.log;
  // Other options, another key.
  options.line_info = false;
  absl::StatusOr<std::string> third =
      CompileToCubin(kKernel, "sm_90a", options);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->substr(0, 4),
            "\x7f"
            "ELF");
  // PTX is a different entry too.
  absl::StatusOr<std::string> ptx =
      CompileToPtx(kKernel, "compute_90a", options);
  ASSERT_TRUE(ptx.ok());
  EXPECT_TRUE(absl::StrContains(*ptx, ".entry scale("));
  int count = 0;
  for (const auto& entry : fs::directory_iterator(options.cache_dir)) {
    (void)entry;
    ++count;
  }
  EXPECT_EQ(count, 6);  // three entries, each with its log
  fs::remove_all(options.cache_dir);
}

TEST(NvrtcCompilerTest, AWriteThatFailsLeavesNoEntry) {
  // Workers on several GPUs share the cache: a writer that cannot write a
  // whole entry (here a file size limit below the PTX's size; a full disk
  // alike) must leave nothing that a later compilation would take for
  // the output.
  KIR_REQUIRE_NVRTC();
  NvrtcOptions options;
  options.cache_dir = FreshDirectory("kir_nvrtc_short_write");
  options.line_info = false;
  const pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit = {64, 64};
    setrlimit(RLIMIT_FSIZE, &limit);
    _exit(CompileToPtx(kKernel, "compute_90a", options).ok() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(writer, &status, 0), writer);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (const auto& entry : fs::directory_iterator(options.cache_dir)) {
    EXPECT_NE(entry.path().extension(), ".ptx") << entry.path();
    EXPECT_FALSE(absl::StrContains(entry.path().string(), ".tmp."))
        << entry.path();
  }
  NvrtcCompileInfo info;
  absl::StatusOr<std::string> ptx =
      CompileToPtx(kKernel, "compute_90a", options, &info);
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_FALSE(info.cache_hit);
  EXPECT_TRUE(absl::StrContains(*ptx, ".entry scale(")) << *ptx;
  fs::remove_all(options.cache_dir);
}

TEST(NvrtcCompilerTest, CacheDirectoryFromTheEnvironment) {
  KIR_REQUIRE_NVRTC();
  const std::string directory = FreshDirectory("kir_nvrtc_env_cache");
  setenv("KIR_CACHE_DIR", directory.c_str(), 1);
  absl::StatusOr<std::string> ptx =
      CompileToPtx(kKernel, "compute_90a", NvrtcOptions());
  unsetenv("KIR_CACHE_DIR");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_TRUE(fs::exists(directory));
  EXPECT_FALSE(fs::is_empty(directory));
  fs::remove_all(directory);
}

}  // namespace
}  // namespace kir
