// NVRTC through dlopen, with an on-disk cache of compiled output.
#include "printer/nvrtc_compiler.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#ifdef KIR_SANITIZE
#include <sanitizer/lsan_interface.h>
#endif

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kir {
namespace {

// The parts of nvrtc.h used here (declared so that building needs no CUDA).
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
constexpr nvrtcResult kNvrtcSuccess = 0;

struct Nvrtc {
  const char* (*GetErrorString)(nvrtcResult);
  nvrtcResult (*Version)(int*, int*);
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int,
                               const char* const*, const char* const*);
  nvrtcResult (*DestroyProgram)(nvrtcProgram*);
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetPTX)(nvrtcProgram, char*);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*);
  std::string version;  // "major.minor"
  // From 12.9 NVRTC keeps compiled output in a cache of its own (off with
  // --no-cache).
  bool has_own_cache = false;
};

std::vector<std::string> CandidatePaths() {
  std::vector<std::string> paths;
  if (const char* explicit_path = std::getenv("KIR_NVRTC_LIBRARY")) {
    paths.push_back(explicit_path);
  }
#ifdef KIR_NVRTC_LIBRARY_PATH
  paths.push_back(KIR_NVRTC_LIBRARY_PATH);
#endif
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
    paths.push_back(name);
  }
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = std::getenv(variable)) {
      paths.push_back(absl::StrCat(root, "/lib64/libnvrtc.so"));
    }
  }
  paths.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  return paths;
}

template <typename Fn>
bool Bind(void* library, const char* name, Fn*& fn) {
  fn = reinterpret_cast<Fn*>(dlsym(library, name));
  return fn != nullptr;
}

absl::StatusOr<Nvrtc> LoadNvrtc() {
#ifdef KIR_SANITIZE
  // LeakSanitizer's check at exit, after NVRTC had compiled, crashed its
  // own tracer in a loaded sanitizer run of the test suite ("Tracer caught
  // signal 11"; never when run alone). Check now, before NVRTC is loaded,
  // instead: what leaked so far is reported, and the exit check is off
  // from here on.
  __lsan_do_leak_check();
#endif
  std::vector<std::string> tried;
  void* library = nullptr;
  for (const std::string& path : CandidatePaths()) {
    library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) break;
    const char* why = dlerror();
    tried.push_back(why != nullptr ? why : path);
  }
  if (library == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("NVRTC not found (set KIR_NVRTC_LIBRARY): ",
                     absl::StrJoin(tried, "; ")));
  }
  Nvrtc nvrtc;
  if (!Bind(library, "nvrtcGetErrorString", nvrtc.GetErrorString) ||
      !Bind(library, "nvrtcVersion", nvrtc.Version) ||
      !Bind(library, "nvrtcCreateProgram", nvrtc.CreateProgram) ||
      !Bind(library, "nvrtcDestroyProgram", nvrtc.DestroyProgram) ||
      !Bind(library, "nvrtcCompileProgram", nvrtc.CompileProgram) ||
      !Bind(library, "nvrtcGetProgramLogSize", nvrtc.GetProgramLogSize) ||
      !Bind(library, "nvrtcGetProgramLog", nvrtc.GetProgramLog) ||
      !Bind(library, "nvrtcGetPTXSize", nvrtc.GetPTXSize) ||
      !Bind(library, "nvrtcGetPTX", nvrtc.GetPTX) ||
      !Bind(library, "nvrtcGetCUBINSize", nvrtc.GetCUBINSize) ||
      !Bind(library, "nvrtcGetCUBIN", nvrtc.GetCUBIN)) {
    return absl::UnavailableError(
        "the NVRTC library lacks nvrtcGetCUBIN or another entry point (CUDA "
        ">= 11.1 needed)");
  }
  int major = 0;
  int minor = 0;
  if (nvrtc.Version(&major, &minor) != kNvrtcSuccess) {
    return absl::UnavailableError("nvrtcVersion failed");
  }
  nvrtc.version = absl::StrCat(major, ".", minor);
  nvrtc.has_own_cache = major > 12 || (major == 12 && minor >= 9);
  return nvrtc;
}

// Loaded once per process; the library stays loaded.
const absl::StatusOr<Nvrtc>& GetNvrtc() {
  static const absl::StatusOr<Nvrtc>* const nvrtc =
      new absl::StatusOr<Nvrtc>(LoadNvrtc());
  return *nvrtc;
}

// ---------------------------------------------------------------------------
// SHA-256 (FIPS 180-4).

constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t RotateRight(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void Sha256Block(const unsigned char* block, std::array<uint32_t, 8>& state) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) |
           (uint32_t{block[4 * i + 2]} << 8) | uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = RotateRight(w[i - 15], 7) ^ RotateRight(w[i - 15], 18) ^
                        (w[i - 15] >> 3);
    const uint32_t s1 = RotateRight(w[i - 2], 17) ^ RotateRight(w[i - 2], 19) ^
                        (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t s1 =
        RotateRight(e, 6) ^ RotateRight(e, 11) ^ RotateRight(e, 25);
    const uint32_t choose = (e & f) ^ (~e & g);
    const uint32_t t1 = h + s1 + choose + kRoundConstants[i] + w[i];
    const uint32_t s0 =
        RotateRight(a, 2) ^ RotateRight(a, 13) ^ RotateRight(a, 22);
    const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = s0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

// ---------------------------------------------------------------------------
// Cache.

std::string CacheDirectory(const NvrtcOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  if (const char* dir = std::getenv("KIR_CACHE_DIR")) {
    if (*dir != '\0') return dir;
  }
  if (const char* home = std::getenv("HOME")) {
    if (*home != '\0') return absl::StrCat(home, "/.cache/kir");
  }
  return "";
}

// mkdir -p; false when the directory cannot be made.
bool MakeDirectories(const std::string& path) {
  if (path.empty()) return false;
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) break;
  }
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool ReadFile(const std::string& path, std::string& contents) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  std::ostringstream buffer;
  buffer << file.rdbuf();
  contents = buffer.str();
  return static_cast<bool>(file) || file.eof();
}

// Writes a temporary file beside `path` and renames it into place; a
// failure leaves no entry (the cache is an optimization only).
void WriteFileAtomically(const std::string& path, absl::string_view contents) {
  static std::atomic<int> counter{0};
  const std::string temporary =
      absl::StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) return;
    file.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    // A short entry must never be renamed into place: small contents reach
    // the file only when the buffer is flushed, at close (a full disk, a
    // file size limit), so that is checked too.
    file.close();
    if (file.fail()) {
      std::remove(temporary.c_str());
      return;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
  }
}

enum class Output { kPtx, kCubin };

absl::StatusOr<std::string> Compile(absl::string_view source,
                                    absl::string_view arch,
                                    const NvrtcOptions& options, Output output,
                                    NvrtcCompileInfo* info) {
  const auto start = std::chrono::steady_clock::now();
  NvrtcCompileInfo ignored;
  if (info == nullptr) info = &ignored;
  *info = NvrtcCompileInfo();
  auto finish = [&](std::string compiled) {
    info->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return compiled;
  };
  const absl::StatusOr<Nvrtc>& loaded = GetNvrtc();
  if (!loaded.ok()) return loaded.status();
  const Nvrtc& nvrtc = *loaded;
  const bool cubin = output == Output::kCubin;
  if (cubin != (arch.substr(0, 3) == "sm_")) {
    return absl::InvalidArgumentError(
        absl::StrCat("architecture '", arch, "' cannot produce ",
                     cubin ? "a cubin (use sm_XX)" : "PTX (use compute_XX)"));
  }
  std::vector<std::string> flags = {absl::StrCat("--gpu-architecture=", arch),
                                    "--std=c++17"};
  if (options.line_info) flags.push_back("-lineinfo");
  if (options.ptxas_report) {
    flags.push_back("--ptxas-options=-v");
    if (nvrtc.has_own_cache) flags.push_back("--no-cache");
  }
  flags.insert(flags.end(), options.extra_options.begin(),
               options.extra_options.end());

  // The key covers everything the output depends on.
  std::string cache_path;
  if (options.use_cache) {
    const std::string directory = CacheDirectory(options);
    std::string key_material = absl::StrCat(
        "kir-nvrtc-cache-1", std::string(1, '\0'), cubin ? "cubin" : "ptx",
        std::string(1, '\0'), nvrtc.version, std::string(1, '\0'), arch);
    for (const std::string& flag : flags) {
      absl::StrAppend(&key_material, std::string(1, '\0'), flag);
    }
    absl::StrAppend(&key_material, std::string(1, '\0'), source);
    if (MakeDirectories(directory)) {
      cache_path = absl::StrCat(directory, "/", Sha256Hex(key_material),
                                cubin ? ".cubin" : ".ptx");
      std::string cached;
      if (ReadFile(cache_path, cached) && !cached.empty()) {
        info->cache_hit = true;
        ReadFile(cache_path + ".log", info->log);
        return finish(std::move(cached));
      }
    }
  }

  nvrtcProgram program = nullptr;
  const std::string text(source);
  nvrtcResult result =
      nvrtc.CreateProgram(&program, text.c_str(), options.program_name.c_str(),
                          0, nullptr, nullptr);
  if (result != kNvrtcSuccess) {
    return absl::InternalError(
        absl::StrCat("nvrtcCreateProgram: ", nvrtc.GetErrorString(result)));
  }
  std::vector<const char*> flag_pointers;
  for (const std::string& flag : flags) flag_pointers.push_back(flag.c_str());
  result = nvrtc.CompileProgram(program, static_cast<int>(flag_pointers.size()),
                                flag_pointers.data());
  size_t log_size = 0;
  std::string log;
  if (nvrtc.GetProgramLogSize(program, &log_size) == kNvrtcSuccess &&
      log_size > 1) {
    log.resize(log_size);
    nvrtc.GetProgramLog(program, &log[0]);
    log.resize(std::strlen(log.c_str()));
  }
  if (result != kNvrtcSuccess) {
    nvrtc.DestroyProgram(&program);
    return absl::InvalidArgumentError(
        absl::StrCat("NVRTC (", nvrtc.version, ", ", absl::StrJoin(flags, " "),
                     ") failed: ", nvrtc.GetErrorString(result), "\n", log));
  }
  size_t size = 0;
  std::string compiled;
  result = cubin ? nvrtc.GetCUBINSize(program, &size)
                 : nvrtc.GetPTXSize(program, &size);
  if (result == kNvrtcSuccess) {
    compiled.resize(size);
    result = cubin ? nvrtc.GetCUBIN(program, &compiled[0])
                   : nvrtc.GetPTX(program, &compiled[0]);
  }
  nvrtc.DestroyProgram(&program);
  if (result != kNvrtcSuccess) {
    return absl::InternalError(
        absl::StrCat("NVRTC output: ", nvrtc.GetErrorString(result)));
  }
  // PTX comes with its terminating NUL.
  if (!cubin && !compiled.empty() && compiled.back() == '\0')
    compiled.pop_back();
  info->log = log;
  if (!cache_path.empty()) {
    // The log first: a reader that finds the output finds its log too.
    WriteFileAtomically(cache_path + ".log", log);
    WriteFileAtomically(cache_path, compiled);
  }
  return finish(std::move(compiled));
}

}  // namespace

std::string Sha256Hex(absl::string_view data) {
  std::array<uint32_t, 8> state = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                   0xa54ff53a, 0x510e527f, 0x9b05688c,
                                   0x1f83d9ab, 0x5be0cd19};
  const uint64_t bit_length = static_cast<uint64_t>(data.size()) * 8;
  size_t offset = 0;
  for (; offset + 64 <= data.size(); offset += 64) {
    Sha256Block(reinterpret_cast<const unsigned char*>(data.data()) + offset,
                state);
  }
  // The tail, the 0x80 marker, zeros and the 64-bit length: one or two blocks.
  unsigned char tail[128] = {};
  const size_t rest = data.size() - offset;
  std::memcpy(tail, data.data() + offset, rest);
  tail[rest] = 0x80;
  const size_t blocks = rest + 1 + 8 <= 64 ? 1 : 2;
  for (int i = 0; i < 8; ++i) {
    tail[blocks * 64 - 1 - i] =
        static_cast<unsigned char>(bit_length >> (8 * i));
  }
  for (size_t i = 0; i < blocks; ++i) Sha256Block(tail + 64 * i, state);
  std::string hex;
  for (uint32_t word : state)
    absl::StrAppend(&hex, absl::Hex(word, absl::kZeroPad8));
  return hex;
}

absl::StatusOr<std::string> CompileToPtx(absl::string_view source,
                                         absl::string_view arch,
                                         const NvrtcOptions& options,
                                         NvrtcCompileInfo* info) {
  return Compile(source, arch, options, Output::kPtx, info);
}

absl::StatusOr<std::string> CompileToCubin(absl::string_view source,
                                           absl::string_view arch,
                                           const NvrtcOptions& options,
                                           NvrtcCompileInfo* info) {
  return Compile(source, arch, options, Output::kCubin, info);
}

absl::StatusOr<std::string> NvrtcVersion() {
  const absl::StatusOr<Nvrtc>& nvrtc = GetNvrtc();
  if (!nvrtc.ok()) return nvrtc.status();
  return nvrtc->version;
}

}  // namespace kir
