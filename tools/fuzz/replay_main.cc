// Replays fuzzer inputs without libFuzzer, so that a normal (gcc) build can
// run tools/fuzz/regressions/ as a ctest test. Arguments are files or
// directories; every regular file in a directory except README.md is run
// once through LLVMFuzzerTestOneInput, in name order.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

bool IsInput(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && path.filename() != "README.md";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    std::error_code error;
    if (fs::is_directory(arg, error)) {
      for (const fs::directory_entry& entry : fs::directory_iterator(arg)) {
        if (IsInput(entry.path())) inputs.push_back(entry.path());
      }
    } else if (IsInput(arg)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "kir_fuzz_replay: no such input: %s\n", argv[i]);
      return 2;
    }
  }
  // Directory order is unspecified; replay in a stable order.
  std::sort(inputs.begin(), inputs.end());
  for (const fs::path& path : inputs) {
    std::ifstream file(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    // A crash or abort below names the input that caused it.
    std::fprintf(stderr, "replaying %s\n", path.c_str());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                           bytes.size());
  }
  std::printf("kir_fuzz_replay: %zu inputs replayed, none failed\n",
              inputs.size());
  return 0;
}
