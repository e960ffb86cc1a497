#include "tools/kir-run/ptxas_report.h"

#include "gtest/gtest.h"

namespace kir {
namespace {

// The shape of ptxas 13's report, two entry functions.
constexpr char kLog[] =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'kir_other' for 'sm_90a'\n"
    "ptxas info    : Function properties for kir_other\n"
    "    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
    "ptxas info    : Compiling entry function 'kir_gemm' for 'sm_90a'\n"
    "ptxas info    : Function properties for kir_gemm\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 168 registers\n";

// Each kernel's spills are the ones after its own name.
TEST(SpillReportTest, ReadsTheSpillsOfTheNamedEntry) {
  SpillReport gemm = ReadSpillReport(kLog, "kir_gemm", false);
  EXPECT_EQ(gemm.store_bytes, 0);
  EXPECT_EQ(gemm.load_bytes, 0);
  EXPECT_EQ(gemm.missing, "");
  SpillReport other = ReadSpillReport(kLog, "kir_other", false);
  EXPECT_EQ(other.store_bytes, 8);
  EXPECT_EQ(other.load_bytes, 4);
}

// A log without the kernel, or without any report, is said to be so, with
// where the log came from and how it starts.
TEST(SpillReportTest, SaysWhatTheLogHeldWhenTheReportIsMissing) {
  SpillReport absent = ReadSpillReport(kLog, "kir_missing", true);
  EXPECT_FALSE(absent.store_bytes.has_value());
  EXPECT_EQ(absent.missing.rfind("ptxas -v reported no spills for "
                                 "'kir_missing' (NVRTC log of ",
                                 0),
            0u)
      << absent.missing;
  EXPECT_NE(absent.missing.find(", from the cache, without that entry): "
                                "ptxas info    : 0 bytes gmem | "),
            std::string::npos)
      << absent.missing;
  SpillReport empty = ReadSpillReport("", "kir_gemm", false);
  EXPECT_EQ(empty.missing,
            "ptxas -v reported no spills for 'kir_gemm' (NVRTC log of 0 "
            "bytes, without that entry)");
}

}  // namespace
}  // namespace kir
