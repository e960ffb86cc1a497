// Reference results on the GPU, for kir-run's checks: input initialization,
// reference expressions evaluated in f32 (matrix products through cuBLASLt
// with f32 accumulation, the rest in small kernels compiled once with NVRTC),
// and the comparison of a kernel's output against a reference.
#ifndef KIR_TOOLS_KIR_RUN_REFERENCE_H_
#define KIR_TOOLS_KIR_RUN_REFERENCE_H_

#include <cublasLt.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/types.h"
#include "tools/kir-run/device.h"
#include "tools/kir-run/directive.h"

namespace kir {

// A kernel's tensor in global memory: logical shape and element strides,
// outermost first.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t elements() const;
};

// A dense, row-major f32 tensor on the device (rank 0: a scalar).
struct DenseTensor {
  std::vector<int64_t> shape;
  DeviceBuffer data;
  int64_t elements() const;
};

struct Comparison {
  int64_t elements = 0;
  int64_t mismatches = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;  // over elements whose reference is not 0
  // The first mismatching element (row-major logical order), if any.
  std::vector<int64_t> first_bad_index;
  double got = 0, expected = 0;
};

// Elementwise operations of the reference kernels (values shared with the
// device source in reference.cc).
enum class RefOp : int {
  kAdd = 0,
  kSub,
  kMul,
  kDiv,
  kNeg,
  kExp,
  kAbs,
  kRoundBf16,
  kRoundF16,
};

class ReferenceEngine {
 public:
  // Compiles (or finds in the cache) the support kernels and creates a
  // cuBLASLt handle.
  static absl::StatusOr<std::unique_ptr<ReferenceEngine>> Create();
  ~ReferenceEngine();

  absl::Status Initialize(const TensorView& tensor, const InputInit& init);
  absl::StatusOr<DenseTensor> ToF32(const TensorView& tensor);
  absl::StatusOr<DenseTensor> Scalar(double value);
  absl::StatusOr<DenseTensor> Unary(RefOp op, const DenseTensor& x);
  // Equal shapes, or one side a scalar.
  absl::StatusOr<DenseTensor> Binary(RefOp op, const DenseTensor& x,
                                     const DenseTensor& y);
  absl::StatusOr<DenseTensor> Transpose(const DenseTensor& x);
  // [m, k] @ [k, n] in f32 (CUBLAS_COMPUTE_32F: no TF32).
  absl::StatusOr<DenseTensor> Matmul(const DenseTensor& a,
                                     const DenseTensor& b);
  // `got` against `expected` (same shape, or a scalar expected).
  absl::StatusOr<Comparison> Compare(const TensorView& got,
                                     const DenseTensor& expected, bool exact,
                                     double rtol, double atol);

  // The baseline a matrix product is timed against: D[m, n] = alpha * A @ B
  // with the kernel's own element types and layouts, through cuBLASLt.
  // `a` is [m, k] and `b` is [k, n] as logical views (a transposed view is a
  // view with swapped shape and strides). Launches it `warmup` times
  // untimed, then `repeats` times each timed alone; returns the median.
  absl::StatusOr<double> TimeNativeMatmul(const TensorView& a,
                                          const TensorView& b,
                                          const TensorView& d, float alpha,
                                          int warmup, int repeats);

  cublasLtHandle_t blas() const { return blas_; }

 private:
  ReferenceEngine() = default;
  absl::Status Launch(cudaKernel_t kernel, int64_t elements, void** args);

  LoadedLibrary library_;
  cudaKernel_t init_ = nullptr, to_f32_ = nullptr, fill_ = nullptr,
               unary_ = nullptr, binary_ = nullptr, transpose_ = nullptr,
               compare_ = nullptr;
  cublasLtHandle_t blas_ = nullptr;
  DeviceBuffer blas_workspace_;
};

}  // namespace kir

#endif  // KIR_TOOLS_KIR_RUN_REFERENCE_H_
