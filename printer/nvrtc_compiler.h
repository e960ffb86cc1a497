// Compiles CUDA C++ (the emitter's output) with NVRTC to PTX or to a cubin.
//
// NVRTC is loaded at run time with dlopen, so programs that link this work
// on machines without CUDA or a GPU (compiling then fails with a status
// saying why). It is looked for at $KIR_NVRTC_LIBRARY, then at the path CMake
// found (KIR_NVRTC_LIBRARY_PATH), then as libnvrtc.so.13 / .12 / libnvrtc.so
// on the loader's path, then under $CUDA_HOME, $CUDA_PATH and
// /usr/local/cuda (lib64).
//
// Compiling to a cubin runs ptxas inside NVRTC, so invalid inline PTX is
// caught here, without a GPU. Results are cached on disk, keyed by the
// SHA-256 of the source, the NVRTC version, the options and the target,
// under $KIR_CACHE_DIR (else ~/.cache/kir); entries are written to a
// temporary file and renamed into place only once wholly written, so
// concurrent compilations (kir-bench's workers on several GPUs share the
// cache) never see a partial entry. NVRTC's own cache (12.9 and later) stays
// on except for a compile that asks for ptxas's report.
#ifndef KIR_PRINTER_NVRTC_COMPILER_H_
#define KIR_PRINTER_NVRTC_COMPILER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kir {

struct NvrtcOptions {
  // Passed to NVRTC after the defaults (--gpu-architecture, --std=c++17,
  // -lineinfo).
  std::vector<std::string> extra_options;
  // -lineinfo: with the emitter's #line directives, SASS maps to .kir lines.
  bool line_info = true;
  // ptxas's `-v` report (registers, spills) in the log. NVRTC's own cache
  // (12.9 and later) is then turned off: a cubin it serves from there comes
  // without the report, since ptxas did not run.
  bool ptxas_report = false;
  bool use_cache = true;
  // Empty: $KIR_CACHE_DIR, else $HOME/.cache/kir.
  std::string cache_dir;
  // The name NVRTC gives the source in diagnostics.
  std::string program_name = "kir.cu";
};

// What a compilation did, for reports (`kir-run --bench`).
struct NvrtcCompileInfo {
  bool cache_hit = false;
  double seconds = 0;  // wall time of the call, cache lookup included
  // NVRTC's log (warnings; ptxas's `-v` report when asked for with
  // `ptxas_report`), cached with the output.
  std::string log;
};

// PTX for a virtual architecture ("compute_90a").
absl::StatusOr<std::string> CompileToPtx(absl::string_view source,
                                         absl::string_view arch = "compute_90a",
                                         const NvrtcOptions& options = {},
                                         NvrtcCompileInfo* info = nullptr);

// A cubin for a real architecture ("sm_90a"). Errors carry the NVRTC log.
absl::StatusOr<std::string> CompileToCubin(absl::string_view source,
                                           absl::string_view arch = "sm_90a",
                                           const NvrtcOptions& options = {},
                                           NvrtcCompileInfo* info = nullptr);

// "13.0", or why NVRTC cannot be used here.
absl::StatusOr<std::string> NvrtcVersion();

// The lowercase hex SHA-256 of `data` (the cache key; exposed for tests).
std::string Sha256Hex(absl::string_view data);

}  // namespace kir

#endif  // KIR_PRINTER_NVRTC_COMPILER_H_
