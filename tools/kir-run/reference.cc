#include "tools/kir-run/reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "printer/nvrtc_compiler.h"
#include "tools/kir-run/binding.h"

namespace kir {
namespace {

constexpr int kMaxRank = kMaxTensorRank;

// Passed by value to the support kernels; the same layout is declared in
// kSupportSource.
struct DeviceTensorDesc {
  void* data;
  int dtype;
  int rank;
  long long shape[kMaxRank];
  long long strides[kMaxRank];
};

// Element type codes shared with kSupportSource.
int DTypeCode(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 0;
    case DType::kF16:
      return 1;
    case DType::kBF16:
      return 2;
    case DType::kI32:
      return 3;
    case DType::kI64:
    case DType::kIndex:
      return 4;
    case DType::kI1:
      return 5;
    case DType::kMbarrier:
      return 4;
  }
  return 0;
}

struct DeviceComparison {
  unsigned long long mismatches;
  unsigned long long first_bad;
  unsigned int max_abs_bits;  // non-negative floats order like their bits
  unsigned int max_rel_bits;
};

// The support kernels. Compiled with NVRTC for sm_90a like the kernels
// under test; independent of them, so a bug in the emitter cannot hide in
// the reference.
constexpr char kSupportSource[] = R"cuda(
typedef unsigned long long u64;
typedef unsigned int u32;
#define KIR_MAX_RANK 8
struct TensorDesc {
  void* data;
  int dtype;  // 0 f32, 1 f16, 2 bf16, 3 i32, 4 i64, 5 i1 (byte)
  int rank;
  long long shape[KIR_MAX_RANK];
  long long strides[KIR_MAX_RANK];
};
struct Comparison {
  u64 mismatches;
  u64 first_bad;
  u32 max_abs_bits;
  u32 max_rel_bits;
};

__device__ long long offset_of(const TensorDesc& t, long long linear) {
  long long offset = 0;
  for (int d = t.rank - 1; d >= 0; --d) {
    const long long extent = t.shape[d];
    offset += (linear % extent) * t.strides[d];
    linear /= extent;
  }
  return offset;
}

__device__ float f16_to_f32(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ unsigned short f32_to_f16(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ float bf16_to_f32(unsigned short b) {
  return __uint_as_float(((u32)b) << 16);
}
__device__ unsigned short f32_to_bf16(float f) {
  unsigned short b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}

__device__ double load_element(const TensorDesc& t, long long offset) {
  switch (t.dtype) {
    case 0: return ((const float*)t.data)[offset];
    case 1: return f16_to_f32(((const unsigned short*)t.data)[offset]);
    case 2: return bf16_to_f32(((const unsigned short*)t.data)[offset]);
    case 3: return ((const int*)t.data)[offset];
    case 4: return (double)((const long long*)t.data)[offset];
    default: return ((const unsigned char*)t.data)[offset];
  }
}

__device__ void store_element(const TensorDesc& t, long long offset, double v) {
  switch (t.dtype) {
    case 0: ((float*)t.data)[offset] = (float)v; break;
    case 1: ((unsigned short*)t.data)[offset] = f32_to_f16((float)v); break;
    case 2: ((unsigned short*)t.data)[offset] = f32_to_bf16((float)v); break;
    case 3: ((int*)t.data)[offset] = (int)rint(v); break;
    case 4: ((long long*)t.data)[offset] = (long long)rint(v); break;
    default: ((unsigned char*)t.data)[offset] = v != 0.0; break;
  }
}

// SplitMix64: a counter-based generator, so element i of a tensor gets the
// same value whatever the tensor's size, layout or launch shape.
__device__ u64 mix(u64 x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__device__ double unit(u64 bits) {  // (0, 1)
  return ((double)(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// kind: 0 normal(mean=a, std=b), 1 uniform[a, b), 2 iota(start=a, step=b),
// 3 fill(a), 4 randint[a, b].
extern "C" __global__ void kir_ref_init(TensorDesc t, int kind, u64 seed,
                                        double a, double b, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    double v;
    if (kind == 0) {
      const u64 h = mix(seed * 0x632be59bd9b4e019ull + 2 * i);
      const u64 g = mix(h ^ 0xd6e8feb86659fd93ull);
      v = a + b * sqrt(-2.0 * log(unit(h))) * cospi(2.0 * unit(g));
    } else if (kind == 1) {
      v = a + (b - a) * unit(mix(seed * 0x632be59bd9b4e019ull + 2 * i));
    } else if (kind == 2) {
      v = a + b * (double)i;
    } else if (kind == 4) {
      v = a + floor((b - a + 1.0) *
                    unit(mix(seed * 0x632be59bd9b4e019ull + 2 * i)));
    } else {
      v = a;
    }
    store_element(t, offset_of(t, i), v);
  }
}

extern "C" __global__ void kir_ref_to_f32(TensorDesc t, float* out,
                                          long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = (float)load_element(t, offset_of(t, i));
}

extern "C" __global__ void kir_ref_fill(float* out, float v, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = v;
}

__device__ float apply(int op, float x, float y) {
  switch (op) {
    case 0: return __fadd_rn(x, y);
    case 1: return __fsub_rn(x, y);
    case 2: return __fmul_rn(x, y);
    case 3: return __fdiv_rn(x, y);
    case 4: return -x;
    case 5: return expf(x);
    case 6: return fabsf(x);
    case 7: return bf16_to_f32(f32_to_bf16(x));
    default: return f16_to_f32(f32_to_f16(x));
  }
}

extern "C" __global__ void kir_ref_unary(float* out, const float* x, int op,
                                         long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = apply(op, x[i], 0.0f);
}

// x_step, y_step: 1 for a tensor, 0 for a broadcast scalar.
extern "C" __global__ void kir_ref_binary(float* out, const float* x,
                                          const float* y, int op, int x_step,
                                          int y_step, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = apply(op, x[i * x_step], y[i * y_step]);
}

extern "C" __global__ void kir_ref_transpose(float* out, const float* x,
                                             long long rows, long long cols) {
  const long long n = rows * cols;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const long long r = i / cols, c = i % cols;  // of x
    out[c * rows + r] = x[i];
  }
}

// |got - expected| <= atol + rtol * |expected| (exact: got == expected);
// NaN matches only NaN.
extern "C" __global__ void kir_ref_compare(TensorDesc got, const float* expected,
                                           int expected_step, int exact,
                                           float rtol, float atol,
                                           Comparison* result, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float g = (float)load_element(got, offset_of(got, i));
    const float e = expected[i * expected_step];
    float abs_error, rel_error;
    bool ok;
    if (isnan(g) || isnan(e)) {
      ok = isnan(g) && isnan(e);
      abs_error = rel_error = ok ? 0.0f : __int_as_float(0x7f800000);
    } else if (isinf(g) || isinf(e)) {
      ok = g == e;
      abs_error = rel_error = ok ? 0.0f : __int_as_float(0x7f800000);
    } else {
      abs_error = fabsf(g - e);
      rel_error = e != 0.0f ? abs_error / fabsf(e) : 0.0f;
      ok = exact ? g == e : abs_error <= atol + rtol * fabsf(e);
    }
    atomicMax(&result->max_abs_bits, __float_as_uint(abs_error));
    atomicMax(&result->max_rel_bits, __float_as_uint(rel_error));
    if (!ok) {
      atomicAdd(&result->mismatches, 1ull);
      atomicMin(&result->first_bad, (u64)i);
    }
  }
}
)cuda";

DeviceTensorDesc Describe(const TensorView& view) {
  DeviceTensorDesc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.data = view.data;
  desc.dtype = DTypeCode(view.dtype);
  desc.rank = static_cast<int>(view.shape.size());
  for (int d = 0; d < desc.rank; ++d) {
    desc.shape[d] = view.shape[d];
    desc.strides[d] = view.strides[d];
  }
  return desc;
}

int64_t Product(const std::vector<int64_t>& shape) {
  int64_t product = 1;
  for (int64_t extent : shape) product *= extent;
  return product;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<DenseTensor> MakeDense(std::vector<int64_t> shape) {
  DenseTensor tensor;
  tensor.shape = std::move(shape);
  absl::StatusOr<DeviceBuffer> data =
      DeviceBuffer::Allocate(sizeof(float) * Product(tensor.shape));
  if (!data.ok()) return data.status();
  tensor.data = std::move(*data);
  return tensor;
}

absl::Status BlasStatus(cublasStatus_t status, absl::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": cuBLASLt status ", static_cast<int>(status)));
}

#define KIR_BLAS_RETURN_IF_ERROR(call)                            \
  do {                                                            \
    if (absl::Status kir_blas_status = BlasStatus((call), #call); \
        !kir_blas_status.ok())                                    \
      return kir_blas_status;                                     \
  } while (0)

cudaDataType BlasType(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return CUDA_R_16F;
    case DType::kBF16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

// A column-major matrix as cuBLASLt sees it, from a logical 2-D view that
// is to be used as `rows x cols` (possibly through a transpose).
struct BlasOperand {
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t stored_rows = 0, stored_cols = 0, ld = 0;
};

// The operand `rows x cols` whose element (i, j) is at i * row_stride + j *
// col_stride.
absl::StatusOr<BlasOperand> AsBlasOperand(int64_t rows, int64_t cols,
                                          int64_t row_stride,
                                          int64_t col_stride) {
  BlasOperand operand;
  if (row_stride == 1 || rows == 1) {
    operand.op = CUBLAS_OP_N;
    operand.stored_rows = rows;
    operand.stored_cols = cols;
    operand.ld = std::max<int64_t>(col_stride, rows);
  } else if (col_stride == 1 || cols == 1) {
    operand.op = CUBLAS_OP_T;
    operand.stored_rows = cols;
    operand.stored_cols = rows;
    operand.ld = std::max<int64_t>(row_stride, cols);
  } else {
    return absl::UnimplementedError(
        "cuBLASLt needs one contiguous dimension per matrix");
  }
  return operand;
}

// Plans D = alpha * A @ B for logical views (A [m, k], B [k, n], D [m, n])
// as D^T = B^T A^T in cuBLASLt's column-major terms, and runs it `repeats`
// times; returns per-run times when `times` is given.
absl::Status RunLtMatmul(cublasLtHandle_t handle, void* workspace,
                         size_t workspace_bytes, const TensorView& a,
                         const TensorView& b, const TensorView& d, float alpha,
                         int repeats, std::vector<double>* times) {
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (d.strides[1] != 1 && n != 1) {
    return absl::UnimplementedError(
        "cuBLASLt baseline needs a row-major result");
  }
  // First operand: B^T (n x k); element (i, j) = B[j, i].
  absl::StatusOr<BlasOperand> first =
      AsBlasOperand(n, k, b.strides[1], b.strides[0]);
  if (!first.ok()) return first.status();
  // Second operand: A^T (k x m).
  absl::StatusOr<BlasOperand> second =
      AsBlasOperand(k, m, a.strides[1], a.strides[0]);
  if (!second.ok()) return second.status();

  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t layout_a = nullptr, layout_b = nullptr,
                         layout_d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  auto cleanup = [&]() {
    if (preference) cublasLtMatmulPreferenceDestroy(preference);
    if (layout_d) cublasLtMatrixLayoutDestroy(layout_d);
    if (layout_b) cublasLtMatrixLayoutDestroy(layout_b);
    if (layout_a) cublasLtMatrixLayoutDestroy(layout_a);
    if (operation) cublasLtMatmulDescDestroy(operation);
  };
  absl::Status status = [&]() -> absl::Status {
    KIR_BLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescCreate(&operation, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    KIR_BLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
        operation, CUBLASLT_MATMUL_DESC_TRANSA, &first->op, sizeof(first->op)));
    KIR_BLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(operation, CUBLASLT_MATMUL_DESC_TRANSB,
                                       &second->op, sizeof(second->op)));
    KIR_BLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(
        &layout_a, BlasType(b.dtype), first->stored_rows, first->stored_cols,
        first->ld));
    KIR_BLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(
        &layout_b, BlasType(a.dtype), second->stored_rows, second->stored_cols,
        second->ld));
    KIR_BLAS_RETURN_IF_ERROR(
        cublasLtMatrixLayoutCreate(&layout_d, BlasType(d.dtype), n, m,
                                   std::max<int64_t>(d.strides[0], n)));
    KIR_BLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&preference));
    uint64_t limit = workspace_bytes;
    KIR_BLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
        sizeof(limit)));
    cublasLtMatmulHeuristicResult_t heuristic;
    int found = 0;
    KIR_BLAS_RETURN_IF_ERROR(cublasLtMatmulAlgoGetHeuristic(
        handle, operation, layout_a, layout_b, layout_d, layout_d, preference,
        1, &heuristic, &found));
    if (found == 0) {
      return absl::UnimplementedError(
          "cuBLASLt has no algorithm for this matrix product");
    }
    const float beta = 0;
    cudaEvent_t start = nullptr, stop = nullptr;
    if (times != nullptr) {
      KIR_CUDA_RETURN_IF_ERROR(cudaEventCreate(&start));
      KIR_CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop));
    }
    for (int r = 0; r < repeats; ++r) {
      if (times != nullptr) KIR_CUDA_RETURN_IF_ERROR(cudaEventRecord(start));
      KIR_BLAS_RETURN_IF_ERROR(
          cublasLtMatmul(handle, operation, &alpha, b.data, layout_a, a.data,
                         layout_b, &beta, d.data, layout_d, d.data, layout_d,
                         &heuristic.algo, workspace, workspace_bytes, nullptr));
      if (times != nullptr) {
        KIR_CUDA_RETURN_IF_ERROR(cudaEventRecord(stop));
        KIR_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop));
        float ms = 0;
        KIR_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start, stop));
        times->push_back(ms);
      }
    }
    if (times != nullptr) {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
    }
    return CudaStatus(cudaDeviceSynchronize(), "cuBLASLt matmul");
  }();
  cleanup();
  return status;
}

constexpr size_t kBlasWorkspaceBytes = 32 << 20;

}  // namespace

int64_t TensorView::elements() const { return Product(shape); }
int64_t DenseTensor::elements() const { return Product(shape); }

absl::StatusOr<std::unique_ptr<ReferenceEngine>> ReferenceEngine::Create() {
  NvrtcOptions options;
  options.program_name = "kir_reference.cu";
  options.line_info = false;
  absl::StatusOr<std::string> cubin =
      CompileToCubin(kSupportSource, "sm_90a", options);
  if (!cubin.ok()) return cubin.status();
  std::unique_ptr<ReferenceEngine> engine(new ReferenceEngine());
  absl::StatusOr<LoadedLibrary> library = LoadedLibrary::Load(*cubin);
  if (!library.ok()) return library.status();
  engine->library_ = std::move(*library);
  struct Entry {
    const char* symbol;
    cudaKernel_t* kernel;
  };
  for (const Entry& entry : {Entry{"kir_ref_init", &engine->init_},
                             Entry{"kir_ref_to_f32", &engine->to_f32_},
                             Entry{"kir_ref_fill", &engine->fill_},
                             Entry{"kir_ref_unary", &engine->unary_},
                             Entry{"kir_ref_binary", &engine->binary_},
                             Entry{"kir_ref_transpose", &engine->transpose_},
                             Entry{"kir_ref_compare", &engine->compare_}}) {
    absl::StatusOr<cudaKernel_t> kernel = engine->library_.Kernel(entry.symbol);
    if (!kernel.ok()) return kernel.status();
    *entry.kernel = *kernel;
  }
  if (absl::Status s =
          BlasStatus(cublasLtCreate(&engine->blas_), "cublasLtCreate");
      !s.ok())
    return s;
  absl::StatusOr<DeviceBuffer> workspace =
      DeviceBuffer::Allocate(kBlasWorkspaceBytes);
  if (!workspace.ok()) return workspace.status();
  engine->blas_workspace_ = std::move(*workspace);
  return engine;
}

ReferenceEngine::~ReferenceEngine() {
  if (blas_ != nullptr) cublasLtDestroy(blas_);
}

absl::Status ReferenceEngine::Launch(cudaKernel_t kernel, int64_t elements,
                                     void** args) {
  const int64_t blocks = std::clamp<int64_t>((elements + 255) / 256, 1, 8192);
  KIR_CUDA_RETURN_IF_ERROR(cudaLaunchKernel(
      reinterpret_cast<const void*>(kernel),
      dim3(static_cast<unsigned>(blocks)), dim3(256), args, 0, nullptr));
  return CudaStatus(cudaDeviceSynchronize(), "reference kernel");
}

absl::Status ReferenceEngine::Initialize(const TensorView& tensor,
                                         const InputInit& init) {
  DeviceTensorDesc desc = Describe(tensor);
  int kind = static_cast<int>(init.kind);
  unsigned long long seed = init.seed;
  double first = init.first, second = init.second;
  long long n = tensor.elements();
  void* args[] = {&desc, &kind, &seed, &first, &second, &n};
  return Launch(init_, n, args);
}

absl::StatusOr<DenseTensor> ReferenceEngine::ToF32(const TensorView& tensor) {
  absl::StatusOr<DenseTensor> out = MakeDense(tensor.shape);
  if (!out.ok()) return out;
  DeviceTensorDesc desc = Describe(tensor);
  float* data = out->data.as<float>();
  long long n = tensor.elements();
  void* args[] = {&desc, &data, &n};
  if (absl::Status s = Launch(to_f32_, n, args); !s.ok()) return s;
  return out;
}

absl::StatusOr<DenseTensor> ReferenceEngine::Scalar(double value) {
  absl::StatusOr<DenseTensor> out = MakeDense({});
  if (!out.ok()) return out;
  float* data = out->data.as<float>();
  float v = static_cast<float>(value);
  long long n = 1;
  void* args[] = {&data, &v, &n};
  if (absl::Status s = Launch(fill_, n, args); !s.ok()) return s;
  return out;
}

absl::StatusOr<DenseTensor> ReferenceEngine::Unary(RefOp op,
                                                   const DenseTensor& x) {
  absl::StatusOr<DenseTensor> out = MakeDense(x.shape);
  if (!out.ok()) return out;
  float* data = out->data.as<float>();
  const float* input = x.data.as<float>();
  int code = static_cast<int>(op);
  long long n = x.elements();
  void* args[] = {&data, &input, &code, &n};
  if (absl::Status s = Launch(unary_, n, args); !s.ok()) return s;
  return out;
}

absl::StatusOr<DenseTensor> ReferenceEngine::Binary(RefOp op,
                                                    const DenseTensor& x,
                                                    const DenseTensor& y) {
  const bool x_scalar = x.shape.empty(), y_scalar = y.shape.empty();
  if (!x_scalar && !y_scalar && x.shape != y.shape) {
    return absl::InvalidArgumentError(
        absl::StrCat("shapes ", ShapeString(x.shape), " and ",
                     ShapeString(y.shape), " differ"));
  }
  absl::StatusOr<DenseTensor> out = MakeDense(x_scalar ? y.shape : x.shape);
  if (!out.ok()) return out;
  float* data = out->data.as<float>();
  const float* lhs = x.data.as<float>();
  const float* rhs = y.data.as<float>();
  int code = static_cast<int>(op);
  int x_step = x_scalar ? 0 : 1, y_step = y_scalar ? 0 : 1;
  long long n = out->elements();
  void* args[] = {&data, &lhs, &rhs, &code, &x_step, &y_step, &n};
  if (absl::Status s = Launch(binary_, n, args); !s.ok()) return s;
  return out;
}

absl::StatusOr<DenseTensor> ReferenceEngine::Transpose(const DenseTensor& x) {
  if (x.shape.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        ".T needs a 2-D operand, got shape ", ShapeString(x.shape)));
  }
  absl::StatusOr<DenseTensor> out = MakeDense({x.shape[1], x.shape[0]});
  if (!out.ok()) return out;
  float* data = out->data.as<float>();
  const float* input = x.data.as<float>();
  long long rows = x.shape[0], cols = x.shape[1];
  void* args[] = {&data, &input, &rows, &cols};
  if (absl::Status s = Launch(transpose_, rows * cols, args); !s.ok()) return s;
  return out;
}

absl::StatusOr<DenseTensor> ReferenceEngine::Matmul(const DenseTensor& a,
                                                    const DenseTensor& b) {
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0]) {
    return absl::InvalidArgumentError(
        absl::StrCat("@ needs [m, k] @ [k, n], got ", ShapeString(a.shape),
                     " @ ", ShapeString(b.shape)));
  }
  absl::StatusOr<DenseTensor> out = MakeDense({a.shape[0], b.shape[1]});
  if (!out.ok()) return out;
  auto view = [](const DenseTensor& t) {
    TensorView v;
    v.data = t.data.get();
    v.dtype = DType::kF32;
    v.shape = t.shape;
    v.strides = {t.shape[1], 1};
    return v;
  };
  if (a.shape[1] == 0) {
    // cuBLASLt rejects k = 0; the product is zero.
    void* data = out->data.get();
    KIR_CUDA_RETURN_IF_ERROR(
        cudaMemset(data, 0, sizeof(float) * out->elements()));
    return out;
  }
  if (absl::Status s =
          RunLtMatmul(blas_, blas_workspace_.get(), kBlasWorkspaceBytes,
                      view(a), view(b), view(*out), 1.0f, 1, nullptr);
      !s.ok())
    return s;
  return out;
}

absl::StatusOr<double> ReferenceEngine::TimeNativeMatmul(
    const TensorView& a, const TensorView& b, const TensorView& d, float alpha,
    int warmup, int repeats) {
  if (warmup > 0) {
    if (absl::Status s =
            RunLtMatmul(blas_, blas_workspace_.get(), kBlasWorkspaceBytes, a, b,
                        d, alpha, warmup, nullptr);
        !s.ok())
      return s;
  }
  std::vector<double> times;
  if (absl::Status s =
          RunLtMatmul(blas_, blas_workspace_.get(), kBlasWorkspaceBytes, a, b,
                      d, alpha, repeats, &times);
      !s.ok())
    return s;
  return Summarize(times).median;
}

absl::StatusOr<Comparison> ReferenceEngine::Compare(const TensorView& got,
                                                    const DenseTensor& expected,
                                                    bool exact, double rtol,
                                                    double atol) {
  if (!expected.shape.empty() && expected.shape != got.shape) {
    return absl::InvalidArgumentError(
        absl::StrCat("the reference has shape ", ShapeString(expected.shape),
                     ", the output ", ShapeString(got.shape)));
  }
  absl::StatusOr<DeviceBuffer> result_buffer =
      DeviceBuffer::Allocate(sizeof(DeviceComparison));
  if (!result_buffer.ok()) return result_buffer.status();
  DeviceComparison initial = {0, ~0ull, 0, 0};
  KIR_CUDA_RETURN_IF_ERROR(cudaMemcpy(result_buffer->get(), &initial,
                                      sizeof(initial), cudaMemcpyHostToDevice));
  DeviceTensorDesc desc = Describe(got);
  const float* reference = expected.data.as<float>();
  int step = expected.shape.empty() ? 0 : 1;
  int exact_flag = exact ? 1 : 0;
  float relative = static_cast<float>(rtol),
        absolute = static_cast<float>(atol);
  void* result_pointer = result_buffer->get();
  long long n = got.elements();
  void* args[] = {&desc,     &reference, &step,           &exact_flag,
                  &relative, &absolute,  &result_pointer, &n};
  if (absl::Status s = Launch(compare_, n, args); !s.ok()) return s;
  DeviceComparison result;
  KIR_CUDA_RETURN_IF_ERROR(cudaMemcpy(&result, result_buffer->get(),
                                      sizeof(result), cudaMemcpyDeviceToHost));
  Comparison comparison;
  comparison.elements = n;
  comparison.mismatches = static_cast<int64_t>(result.mismatches);
  float max_abs, max_rel;
  std::memcpy(&max_abs, &result.max_abs_bits, sizeof(float));
  std::memcpy(&max_rel, &result.max_rel_bits, sizeof(float));
  comparison.max_abs_error = max_abs;
  comparison.max_rel_error = max_rel;
  if (comparison.mismatches > 0) {
    long long linear = static_cast<long long>(result.first_bad);
    std::vector<int64_t> index(got.shape.size());
    for (int d = static_cast<int>(got.shape.size()) - 1; d >= 0; --d) {
      index[d] = linear % got.shape[d];
      linear /= got.shape[d];
    }
    comparison.first_bad_index = index;
    // Read the two values back through the same conversion.
    TensorView one = got;
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d)
      offset += index[d] * got.strides[d];
    one.data = static_cast<char*>(got.data) + offset * DTypeBytes(got.dtype);
    one.shape.assign(got.shape.size(), 1);
    absl::StatusOr<DenseTensor> got_value = ToF32(one);
    if (!got_value.ok()) return got_value.status();
    float value = 0;
    KIR_CUDA_RETURN_IF_ERROR(cudaMemcpy(&value, got_value->data.get(),
                                        sizeof(float), cudaMemcpyDeviceToHost));
    comparison.got = value;
    const int64_t expected_index =
        expected.shape.empty() ? 0 : static_cast<int64_t>(result.first_bad);
    KIR_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(&value, expected.data.as<float>() + expected_index,
                   sizeof(float), cudaMemcpyDeviceToHost));
    comparison.expected = value;
  }
  return comparison;
}

}  // namespace kir
