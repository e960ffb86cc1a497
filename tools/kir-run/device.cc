#include "tools/kir-run/device.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kir {

absl::Status CudaStatus(cudaError_t error, absl::string_view what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorName(error),
                                          " (", cudaGetErrorString(error),
                                          ")"));
}

absl::StatusOr<DeviceInfo> ProbeDevice() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    return absl::UnavailableError(absl::StrCat(
        "no usable CUDA driver or device: ", cudaGetErrorString(error)));
  }
  if (count == 0) return absl::UnavailableError("no CUDA device");
  DeviceInfo info;
  cudaDeviceProp properties;
  KIR_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&properties, 0));
  info.name = properties.name;
  info.major = properties.major;
  info.minor = properties.minor;
  info.sm_count = properties.multiProcessorCount;
  info.max_shared_per_block_optin = properties.sharedMemPerBlockOptin;
  for (int i = 0; i < 16; ++i) {
    absl::StrAppend(
        &info.uuid,
        absl::Hex(static_cast<unsigned char>(properties.uuid.bytes[i]),
                  absl::kZeroPad2),
        i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
  }
  KIR_CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&info.runtime_version));
  KIR_CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&info.driver_version));
  if (info.major != 9 || info.minor != 0) {
    return absl::UnavailableError(absl::StrFormat(
        "device 0 (%s) has compute capability %d.%d; kir emits sm_90a code",
        info.name, info.major, info.minor));
  }
  return info;
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  DeviceBuffer buffer;
  // Zero-sized tensors still get a distinct, valid pointer.
  KIR_CUDA_RETURN_IF_ERROR(
      cudaMalloc(&buffer.pointer_, std::max<size_t>(bytes, 256)));
  buffer.bytes_ = bytes;
  return buffer;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  std::swap(pointer_, other.pointer_);
  std::swap(bytes_, other.bytes_);
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_ != nullptr) cudaFree(pointer_);
}

absl::StatusOr<LoadedLibrary> LoadedLibrary::Load(const std::string& cubin) {
  LoadedLibrary loaded;
  KIR_CUDA_RETURN_IF_ERROR(cudaLibraryLoadData(&loaded.library_, cubin.data(),
                                               nullptr, nullptr, 0, nullptr,
                                               nullptr, 0));
  return loaded;
}

LoadedLibrary& LoadedLibrary::operator=(LoadedLibrary&& other) noexcept {
  std::swap(library_, other.library_);
  return *this;
}

LoadedLibrary::~LoadedLibrary() {
  if (library_ != nullptr) cudaLibraryUnload(library_);
}

absl::StatusOr<cudaKernel_t> LoadedLibrary::Kernel(
    const std::string& symbol) const {
  cudaKernel_t kernel = nullptr;
  KIR_CUDA_RETURN_IF_ERROR(
      cudaLibraryGetKernel(&kernel, library_, symbol.c_str()));
  return kernel;
}

absl::StatusOr<PFN_cuTensorMapEncodeTiled_v12000> TensorMapEncoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 encoder = nullptr;
  if (encoder != nullptr) return encoder;
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  KIR_CUDA_RETURN_IF_ERROR(cudaGetDriverEntryPointByVersion(
      "cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || function == nullptr) {
    return absl::UnavailableError(
        "the driver has no cuTensorMapEncodeTiled (needs CUDA 12.0 or later)");
  }
  encoder = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  return encoder;
}

absl::StatusOr<KernelResources> GetKernelResources(cudaKernel_t kernel) {
  cudaFuncAttributes attributes;
  KIR_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(
      &attributes, reinterpret_cast<const void*>(kernel)));
  KernelResources resources;
  resources.registers = attributes.numRegs;
  resources.local_bytes = static_cast<int64_t>(attributes.localSizeBytes);
  resources.static_shared_bytes =
      static_cast<int64_t>(attributes.sharedSizeBytes);
  return resources;
}

SampleStats Summarize(std::vector<double> samples) {
  SampleStats stats;
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  stats.samples = static_cast<int>(n);
  stats.min = samples.front();
  stats.max = samples.back();
  stats.median =
      n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return stats;
}

}  // namespace kir
