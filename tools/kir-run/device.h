// Thin, checked wrappers over the CUDA runtime for kir-run: the device probe,
// owned device memory, cubins loaded through the runtime's library API,
// tensor maps encoded through the driver entry point (no link to libcuda,
// so the binary starts where there is no driver), and CUDA events.
#ifndef KIR_TOOLS_KIR_RUN_DEVICE_H_
#define KIR_TOOLS_KIR_RUN_DEVICE_H_

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kir {

// OK, or an error naming the call and CUDA's message.
absl::Status CudaStatus(cudaError_t error, absl::string_view what);

#define KIR_CUDA_RETURN_IF_ERROR(call)                                   \
  do {                                                                   \
    if (absl::Status kir_cuda_status = ::kir::CudaStatus((call), #call); \
        !kir_cuda_status.ok())                                           \
      return kir_cuda_status;                                            \
  } while (0)

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;
  int sm_count = 0;
  int runtime_version = 0;  // 13000 for 13.0
  int driver_version = 0;
  int64_t max_shared_per_block_optin = 0;
  std::string uuid;
};

// Device 0 if it is usable by kir (compute capability 9.0, for sm_90a
// cubins); an error saying why not otherwise (no driver, no device, another
// architecture).
absl::StatusOr<DeviceInfo> ProbeDevice();

// Owned device memory, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* get() const { return pointer_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* pointer_ = nullptr;
  size_t bytes_ = 0;
};

// A cubin loaded with cudaLibraryLoadData; unloaded on destruction.
class LoadedLibrary {
 public:
  static absl::StatusOr<LoadedLibrary> Load(const std::string& cubin);
  LoadedLibrary() = default;
  LoadedLibrary(LoadedLibrary&& other) noexcept { *this = std::move(other); }
  LoadedLibrary& operator=(LoadedLibrary&& other) noexcept;
  ~LoadedLibrary();
  absl::StatusOr<cudaKernel_t> Kernel(const std::string& symbol) const;

 private:
  cudaLibrary_t library_ = nullptr;
};

// cuTensorMapEncodeTiled, looked up once through
// cudaGetDriverEntryPointByVersion.
absl::StatusOr<PFN_cuTensorMapEncodeTiled_v12000> TensorMapEncoder();

// Registers, local memory and static shared memory of a loaded kernel.
struct KernelResources {
  int registers = 0;
  int64_t local_bytes = 0;  // per thread (spills and local arrays)
  int64_t static_shared_bytes = 0;
};
absl::StatusOr<KernelResources> GetKernelResources(cudaKernel_t kernel);

// Median, min and max of samples (times in ms, times in us, or ratios:
// the caller knows the unit); empty gives zeros.
struct SampleStats {
  double median = 0, min = 0, max = 0;
  int samples = 0;
};
SampleStats Summarize(std::vector<double> samples);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_RUN_DEVICE_H_
