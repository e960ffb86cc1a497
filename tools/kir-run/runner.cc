#include "tools/kir-run/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "ir/diagnostics.h"
#include "ir/shared_memory.h"
#include "passes/pipeline.h"
#include "printer/kir_printer.h"
#include "re2/re2.h"
#include "tools/kir-run/device.h"
#include "tools/kir-run/ptxas_report.h"
#include "tools/kir-run/reference.h"

#ifndef KIR_GIT_COMMIT
#define KIR_GIT_COMMIT "unknown"
#endif

namespace kir {

namespace {

// ---------------------------------------------------------------------------
// Preparing a kernel (CPU only).

absl::Status WriteFile(const std::string& path, absl::string_view contents) {
  std::ofstream file(path, std::ios::binary);
  file.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::string Stem(absl::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash != absl::string_view::npos) path.remove_prefix(slash + 1);
  const size_t dot = path.find('.');
  return std::string(path.substr(0, dot));
}

}  // namespace

absl::StatusOr<PreparedKernel> PrepareKernel(
    const std::shared_ptr<const SourceFile>& source,
    const std::string& pipeline, const std::string& kernel_name,
    const std::string& dump_dir, const std::string& dump_tag, bool verify) {
  PreparedKernel prepared;
  prepared.pipeline = pipeline;
  CompileOptions compile_options;
  if (!pipeline.empty()) {
    absl::StatusOr<Pipeline> parsed = ParsePipeline(pipeline);
    if (!parsed.ok()) return parsed.status();
    compile_options.pipeline = *std::move(parsed);
  }
  compile_options.verify = verify;
  compile_options.place_shared = true;
  std::ostringstream log;
  absl::StatusOr<Compilation> lowered = Lower(source, compile_options, log);
  if (!lowered.ok()) return lowered.status();
  prepared.planned_shared = lowered->placed_shared;
  if (lowered->module->kernels.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source->name, ": no kernel to run"));
  }
  prepared.kernel = kernel_name.empty()
                        ? lowered->module->kernels.front().get()
                        : lowered->module->FindKernel(kernel_name);
  if (prepared.kernel == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("the pipeline removed kernel @", kernel_name));
  }
  absl::StatusOr<CudaKernelAbi> abi = GetCudaKernelAbi(*prepared.kernel);
  if (!abi.ok()) return abi.status();
  prepared.abi = std::move(*abi);
  absl::StatusOr<std::string> cuda = EmitLowered(*lowered, verify);
  if (!cuda.ok()) return cuda.status();
  prepared.module = std::move(lowered->module);
  prepared.cuda = std::move(*cuda);
  NvrtcOptions options;
  options.program_name = source->name;
  options.ptxas_report = true;
  absl::StatusOr<std::string> cubin =
      CompileToCubin(prepared.cuda, "sm_90a", options, &prepared.compile);
  if (!cubin.ok()) return cubin.status();
  prepared.cubin = std::move(*cubin);

  prepared.spills = ReadSpillReport(prepared.compile.log, prepared.abi.symbol,
                                    prepared.compile.cache_hit);

  if (!dump_dir.empty()) {
    std::string base = absl::StrCat(dump_dir, "/", Stem(source->name));
    if (!dump_tag.empty()) absl::StrAppend(&base, ".", dump_tag);
    PrintOptions print;
    print.provenance = true;
    for (const auto& [suffix, contents] :
         std::vector<std::pair<std::string, std::string>>{
             {".lowered.kir", PrintModule(*prepared.module, print)},
             {".cu", prepared.cuda},
             {".cubin", prepared.cubin}}) {
      if (absl::Status s = WriteFile(base + suffix, contents); !s.ok())
        return s;
    }
    NvrtcOptions ptx_options = options;
    ptx_options.extra_options.clear();
    absl::StatusOr<std::string> ptx =
        CompileToPtx(prepared.cuda, "compute_90a", ptx_options);
    if (!ptx.ok()) return ptx.status();
    if (absl::Status s = WriteFile(base + ".ptx", *ptx); !s.ok()) return s;
  }
  return prepared;
}

// ---------------------------------------------------------------------------
// Running on the GPU.

namespace {

// Host-side rounding of a scalar argument to a 16-bit float (round to
// nearest even), as the kernel would see it.
uint16_t FloatToBf16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return 0x7fc0;
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

uint16_t FloatToF16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint32_t sign = (bits >> 16) & 0x8000;
  if (std::isnan(value)) return static_cast<uint16_t>(sign | 0x7e00);
  float magnitude = std::fabs(value);
  if (magnitude >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00);
  if (magnitude < 6.103515625e-05f) {  // subnormal: multiples of 2^-24
    const float scaled = std::nearbyint(magnitude * 16777216.0f);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(scaled));
  }
  uint32_t m;
  std::memcpy(&m, &magnitude, 4);
  m += 0xfff + ((m >> 13) & 1);
  const uint32_t exponent = (m >> 23) - 127 + 15;
  return static_cast<uint16_t>(sign | (exponent << 10) | ((m >> 13) & 0x3ff));
}

float HalfBitsToFloat(uint16_t h, bool bf16) {
  if (bf16) {
    uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  const uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f,
                 mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400),
                           static_cast<int>(exponent) - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &magnitude, 4);
  bits |= sign;
  std::memcpy(&magnitude, &bits, 4);
  return magnitude;
}

// One 128-byte, 128-aligned argument slot (a CUtensorMap is the largest).
struct alignas(128) ArgSlot {
  unsigned char bytes[128];
};

// A kernel ready to launch: its memory, arguments and launch shape.
struct Launchable {
  LoadedLibrary library;
  cudaKernel_t kernel = nullptr;
  std::vector<std::unique_ptr<ArgSlot>> slots;
  std::vector<void*> args;
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attributes[1];
  // Zeroed when allocated; with `workspace=each` also before each launch.
  std::vector<DeviceBuffer*> workspaces;
  WorkspaceZeroing zeroing = WorkspaceZeroing::kEachLaunch;
  std::vector<DeviceBuffer> owned_workspaces;
};

struct BoundTensor {
  const Param* param = nullptr;
  TensorView view;
  DeviceBuffer buffer;
  const Binding* binding = nullptr;
};

// Everything a directive binds, shared by the pipeline variants.
struct Bindings {
  SizeBindings sizes;
  std::map<std::string, BoundTensor> tensors;  // by name
  std::map<std::string, double> scalars;       // scalars and sizes
  // Sizes and integer scalars, exactly (a double holds 53 bits).
  std::map<std::string, int64_t> integers;
};

absl::StatusOr<Bindings> AllocateBindings(const RunDirective& directive,
                                          const Kernel& kernel,
                                          ReferenceEngine& engine) {
  Bindings bindings;
  const std::map<std::string, NamedThing> names = NamesOf(kernel);
  absl::StatusOr<SizeBindings> sizes = BindSizes(directive, names);
  if (!sizes.ok()) return sizes.status();
  bindings.sizes = *sizes;
  for (const Binding& binding : directive.bindings) {
    const NamedThing& thing = names.at(binding.name);
    if (thing.kind != NameKind::kTensor) {
      bindings.scalars[binding.name] = binding.number;
      if (binding.integer) bindings.integers[binding.name] = *binding.integer;
      continue;
    }
    BoundTensor tensor;
    tensor.param = thing.param;
    tensor.binding = &binding;
    absl::StatusOr<TensorExtent> extent =
        ExtentOf(*thing.param, bindings.sizes, binding.loc);
    if (!extent.ok()) return extent.status();
    tensor.view.dtype = thing.value->type().dtype();
    tensor.view.shape = extent->shape;
    tensor.view.strides = extent->strides;
    absl::StatusOr<DeviceBuffer> buffer =
        DeviceBuffer::Allocate(static_cast<size_t>(extent->bytes));
    if (!buffer.ok()) return buffer.status();
    tensor.buffer = std::move(*buffer);
    tensor.view.data = tensor.buffer.get();
    bindings.tensors.emplace(binding.name, std::move(tensor));
  }
  return bindings;
}

absl::Status InitializeInputs(Bindings& bindings, ReferenceEngine& engine) {
  for (auto& [name, tensor] : bindings.tensors) {
    if (tensor.view.elements() == 0) continue;
    if (absl::Status s = engine.Initialize(tensor.view, tensor.binding->init);
        !s.ok())
      return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<CUtensorMapDataType> MapDataType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::kF16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::kBF16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::kI32:
      return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DType::kI64:
    case DType::kIndex:
      return CU_TENSOR_MAP_DATA_TYPE_INT64;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("no tensor map element type for ", DTypeName(dtype)));
  }
}

absl::Status EncodeTensorMap(const Param& map_param, const TensorView& tensor,
                             void* out) {
  absl::StatusOr<PFN_cuTensorMapEncodeTiled_v12000> encode = TensorMapEncoder();
  if (!encode.ok()) return encode.status();
  absl::StatusOr<CUtensorMapDataType> data_type = MapDataType(tensor.dtype);
  if (!data_type.ok()) return data_type.status();
  const int rank = static_cast<int>(tensor.shape.size());
  const std::vector<int64_t>& box = map_param.value->type().box();
  if (rank < 1 || rank > 5 || static_cast<int>(box.size()) != rank) {
    return Error(map_param.value->loc())
           << "a tensor map needs rank 1 to 5 and a box of the same rank";
  }
  if (tensor.strides[rank - 1] != 1) {
    return Error(map_param.value->loc())
           << "TMA needs the last dimension of %" << map_param.tensor->name()
           << " to be contiguous (its stride is " << tensor.strides[rank - 1]
           << ")";
  }
  // Innermost first, as the driver wants them.
  cuuint64_t dims[5], strides[5];
  cuuint32_t box_dims[5], element_strides[5];
  const int element_bytes = DTypeBytes(tensor.dtype);
  for (int i = 0; i < rank; ++i) {
    const int d = rank - 1 - i;
    dims[i] = static_cast<cuuint64_t>(std::max<int64_t>(tensor.shape[d], 1));
    box_dims[i] = static_cast<cuuint32_t>(box[d]);
    element_strides[i] = 1;
    if (i > 0)
      strides[i - 1] =
          static_cast<cuuint64_t>(tensor.strides[d]) * element_bytes;
  }
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  switch (map_param.swizzle) {
    case 32:
      swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
      break;
    case 64:
      swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
      break;
    case 128:
      swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
      break;
    default:
      break;
  }
  const CUtensorMapFloatOOBfill fill =
      map_param.oob == OobFill::kNan
          ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
          : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  const CUresult result = (*encode)(
      static_cast<CUtensorMap*>(out), *data_type, rank, tensor.data, dims,
      strides, box_dims, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, fill);
  if (result != CUDA_SUCCESS) {
    std::vector<std::string> dim_text, stride_text, box_text;
    for (int i = 0; i < rank; ++i) {
      dim_text.push_back(absl::StrCat(dims[i]));
      box_text.push_back(absl::StrCat(box_dims[i]));
      if (i + 1 < rank) stride_text.push_back(absl::StrCat(strides[i]));
    }
    return Error(map_param.value->loc())
           << "cuTensorMapEncodeTiled rejected the map of %"
           << map_param.tensor->name() << " (CUresult " << result
           << "; innermost first: dims {" << absl::StrJoin(dim_text, ", ")
           << "}, byte strides {" << absl::StrJoin(stride_text, ", ")
           << "}, box {" << absl::StrJoin(box_text, ", ")
           << "}; TMA needs 16-byte aligned strides and base)";
  }
  return absl::OkStatus();
}

// `integer` is the exact value of an integer scalar (ValidateDirective has
// checked that it is there and in range); floats use `value`.
absl::Status WriteScalar(DType dtype, double value,
                         std::optional<int64_t> integer, void* out) {
  if (IsInteger(dtype) && !integer) {
    return absl::InvalidArgumentError(
        absl::StrCat("an integer scalar needs an integer value"));
  }
  switch (dtype) {
    case DType::kF32: {
      const float f = static_cast<float>(value);
      std::memcpy(out, &f, 4);
      return absl::OkStatus();
    }
    case DType::kBF16: {
      const uint16_t h = FloatToBf16Bits(static_cast<float>(value));
      std::memcpy(out, &h, 2);
      return absl::OkStatus();
    }
    case DType::kF16: {
      const uint16_t h = FloatToF16Bits(static_cast<float>(value));
      std::memcpy(out, &h, 2);
      return absl::OkStatus();
    }
    case DType::kI1: {
      const bool b = *integer != 0;
      std::memcpy(out, &b, 1);
      return absl::OkStatus();
    }
    case DType::kI32: {
      const int32_t i = static_cast<int32_t>(*integer);
      std::memcpy(out, &i, 4);
      return absl::OkStatus();
    }
    case DType::kI64:
    case DType::kIndex: {
      const int64_t i = *integer;
      std::memcpy(out, &i, 8);
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("no scalar argument of type ", DTypeName(dtype)));
  }
}

// The value a scalar parameter has in the kernel (rounded to its type).
double ScalarAsSeen(DType dtype, double value) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<float>(value);
    case DType::kBF16:
      return HalfBitsToFloat(FloatToBf16Bits(static_cast<float>(value)), true);
    case DType::kF16:
      return HalfBitsToFloat(FloatToF16Bits(static_cast<float>(value)), false);
    case DType::kI1:
      return value != 0;
    case DType::kI32:
      return static_cast<int32_t>(value);
    default:
      return static_cast<double>(static_cast<int64_t>(value));
  }
}

absl::StatusOr<std::unique_ptr<Launchable>> MakeLaunchable(
    const PreparedKernel& prepared, Bindings& bindings,
    WorkspaceZeroing zeroing) {
  auto launchable = std::make_unique<Launchable>();
  launchable->zeroing = zeroing;
  absl::StatusOr<LoadedLibrary> library = LoadedLibrary::Load(prepared.cubin);
  if (!library.ok()) return library.status();
  launchable->library = std::move(*library);
  absl::StatusOr<cudaKernel_t> kernel =
      launchable->library.Kernel(prepared.abi.symbol);
  if (!kernel.ok()) return kernel.status();
  launchable->kernel = *kernel;
  const Kernel& ir = *prepared.kernel;
  // This kernel's own size values (each pipeline variant has its module).
  SizeBindings sizes;
  for (const auto& size : ir.sizes()) {
    auto bound = bindings.integers.find(size->name());
    KIR_CHECK(bound != bindings.integers.end())
        << "size %" << size->name() << " is unbound (ValidateDirective)";
    sizes[size.get()] = bound->second;
  }

  // Workspaces first: a tensor map may cover one.
  std::map<const Value*, void*> workspace_pointers;
  for (const CudaKernelArg& arg : prepared.abi.args) {
    if (arg.kind != CudaKernelArg::Kind::kWorkspace) continue;
    const std::optional<int64_t> bytes =
        EvaluateShapeExpr(*arg.workspace_bytes, sizes);
    if (!bytes.has_value() || *bytes < 0) {
      return Error(arg.value->loc()) << "the size of workspace %" << arg.name
                                     << " does not evaluate to bytes >= 0";
    }
    absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(*bytes);
    if (!buffer.ok()) return buffer.status();
    KIR_CUDA_RETURN_IF_ERROR(cudaMemset(buffer->get(), 0, buffer->bytes()));
    launchable->owned_workspaces.push_back(std::move(*buffer));
    workspace_pointers[arg.value] = launchable->owned_workspaces.back().get();
  }
  for (const CudaKernelArg& arg : prepared.abi.args) {
    auto slot = std::make_unique<ArgSlot>();
    std::memset(slot->bytes, 0, sizeof(slot->bytes));
    const std::string& name = arg.name;
    switch (arg.kind) {
      case CudaKernelArg::Kind::kTensor: {
        void* pointer = bindings.tensors.at(name).view.data;
        std::memcpy(slot->bytes, &pointer, sizeof(pointer));
        break;
      }
      case CudaKernelArg::Kind::kTensorMap: {
        const Param* param = ir.FindParam(arg.value);
        KIR_CHECK(param != nullptr && param->tensor != nullptr);
        TensorView view;
        if (auto workspace = workspace_pointers.find(param->tensor);
            workspace != workspace_pointers.end()) {
          // A workspace: row-major from its base.
          absl::StatusOr<std::vector<int64_t>> shape =
              ShapeOf(param->tensor, sizes, param->tensor->loc());
          if (!shape.ok()) return shape.status();
          view.data = workspace->second;
          view.dtype = param->tensor->type().dtype();
          view.shape = *shape;
          view.strides.assign(shape->size(), 1);
          for (int d = static_cast<int>(shape->size()) - 2; d >= 0; --d) {
            view.strides[d] = view.strides[d + 1] * (*shape)[d + 1];
          }
        } else {
          view = bindings.tensors.at(param->tensor->name()).view;
        }
        if (absl::Status s = EncodeTensorMap(*param, view, slot->bytes);
            !s.ok())
          return s;
        break;
      }
      case CudaKernelArg::Kind::kScalar:
        if (absl::Status s = WriteScalar(
                arg.dtype, bindings.scalars.at(name),
                bindings.integers.count(name)
                    ? std::optional<int64_t>(bindings.integers.at(name))
                    : std::nullopt,
                slot->bytes);
            !s.ok())
          return s;
        break;
      case CudaKernelArg::Kind::kSize: {
        const int64_t value = sizes.at(arg.value);
        std::memcpy(slot->bytes, &value, sizeof(value));
        break;
      }
      case CudaKernelArg::Kind::kWorkspace: {
        void* pointer = workspace_pointers.at(arg.value);
        std::memcpy(slot->bytes, &pointer, sizeof(pointer));
        break;
      }
    }
    launchable->args.push_back(slot->bytes);
    launchable->slots.push_back(std::move(slot));
  }
  for (DeviceBuffer& buffer : launchable->owned_workspaces)
    launchable->workspaces.push_back(&buffer);

  // ValidateDirective checked the unlowered kernel; a pass may have changed
  // the launch shape, so check again.
  absl::StatusOr<LaunchShape> shape = LaunchShapeOf(ir, sizes, ir.loc());
  if (!shape.ok()) return shape.status();
  auto dims = [](const int64_t values[3]) {
    return dim3(static_cast<unsigned>(values[0]),
                static_cast<unsigned>(values[1]),
                static_cast<unsigned>(values[2]));
  };
  const dim3 grid = dims(shape->grid);
  const dim3 block = dims(shape->block);
  const dim3 cluster = dims(shape->cluster);
  cudaLaunchConfig_t& config = launchable->config;
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes =
      static_cast<size_t>(prepared.abi.dynamic_smem_bytes);
  config.stream = nullptr;
  config.numAttrs = 0;
  config.attrs = launchable->attributes;
  if (cluster.x * cluster.y * cluster.z > 1) {
    launchable->attributes[0].id = cudaLaunchAttributeClusterDimension;
    launchable->attributes[0].val.clusterDim.x = cluster.x;
    launchable->attributes[0].val.clusterDim.y = cluster.y;
    launchable->attributes[0].val.clusterDim.z = cluster.z;
    config.numAttrs = 1;
  }
  if (prepared.abi.dynamic_smem_bytes > 48 * 1024) {
    KIR_CUDA_RETURN_IF_ERROR(cudaKernelSetAttributeForDevice(
        launchable->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
        static_cast<int>(prepared.abi.dynamic_smem_bytes), 0));
  }
  return launchable;
}

// With `workspace=once` the kernel keeps its workspaces as its next launch
// needs them (a split-K semaphore resets itself), and this does nothing.
absl::Status ResetWorkspaces(const Launchable& launchable) {
  if (launchable.zeroing == WorkspaceZeroing::kOnce) return absl::OkStatus();
  for (DeviceBuffer* workspace : launchable.workspaces) {
    KIR_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(workspace->get(), 0, workspace->bytes(), nullptr));
  }
  return absl::OkStatus();
}

absl::Status LaunchOnce(const Launchable& launchable) {
  return CudaStatus(
      cudaLaunchKernelExC(&launchable.config,
                          reinterpret_cast<const void*>(launchable.kernel),
                          const_cast<void**>(launchable.args.data())),
      "cudaLaunchKernelExC");
}

// Evaluates a reference expression; names denote values before the launch.
absl::StatusOr<DenseTensor> Evaluate(const RefExpr& expr,
                                     const Bindings& bindings,
                                     const Kernel& kernel,
                                     ReferenceEngine& engine) {
  using Kind = RefExpr::Kind;
  std::vector<DenseTensor> operands;
  for (const auto& operand : expr.operands) {
    absl::StatusOr<DenseTensor> value =
        Evaluate(*operand, bindings, kernel, engine);
    if (!value.ok()) return value;
    operands.push_back(std::move(*value));
  }
  absl::StatusOr<DenseTensor> result;
  switch (expr.kind) {
    case Kind::kNumber:
      result = engine.Scalar(expr.number);
      break;
    case Kind::kName: {
      auto tensor = bindings.tensors.find(expr.name);
      if (tensor != bindings.tensors.end()) {
        result = engine.ToF32(tensor->second.view);
        break;
      }
      const std::map<std::string, NamedThing> names = NamesOf(kernel);
      const NamedThing& thing = names.at(expr.name);
      double value = bindings.scalars.at(expr.name);
      if (thing.kind == NameKind::kScalar)
        value = ScalarAsSeen(thing.value->type().dtype(), value);
      result = engine.Scalar(value);
      break;
    }
    case Kind::kNeg:
      result = engine.Unary(RefOp::kNeg, operands[0]);
      break;
    case Kind::kExp:
      result = engine.Unary(RefOp::kExp, operands[0]);
      break;
    case Kind::kAbs:
      result = engine.Unary(RefOp::kAbs, operands[0]);
      break;
    case Kind::kRound:
      if (expr.round_to == "f32") {
        result = std::move(operands[0]);
      } else {
        result = engine.Unary(
            expr.round_to == "bf16" ? RefOp::kRoundBf16 : RefOp::kRoundF16,
            operands[0]);
      }
      break;
    case Kind::kAdd:
      result = engine.Binary(RefOp::kAdd, operands[0], operands[1]);
      break;
    case Kind::kSub:
      result = engine.Binary(RefOp::kSub, operands[0], operands[1]);
      break;
    case Kind::kMul:
      result = engine.Binary(RefOp::kMul, operands[0], operands[1]);
      break;
    case Kind::kDiv:
      result = engine.Binary(RefOp::kDiv, operands[0], operands[1]);
      break;
    case Kind::kTranspose:
      result = engine.Transpose(operands[0]);
      break;
    case Kind::kMatmul:
      result = engine.Matmul(operands[0], operands[1]);
      break;
  }
  if (!result.ok()) {
    return Error(expr.loc) << "evaluating the reference failed: "
                           << result.status().message();
  }
  return result;
}

// A matrix product whose operands are parameters (possibly transposed),
// found under roundings and scalar factors: the cuBLAS baseline to time.
struct NativeMatmul {
  const RefExpr* a = nullptr;  // kName
  bool a_transposed = false;
  const RefExpr* b = nullptr;
  bool b_transposed = false;
  std::vector<const RefExpr*> scale;  // scalar factors (names or numbers)
};

bool FindNativeMatmul(const RefExpr& expr, NativeMatmul& found) {
  using Kind = RefExpr::Kind;
  auto operand = [](const RefExpr& e, const RefExpr*& name, bool& transposed) {
    transposed = e.kind == Kind::kTranspose;
    const RefExpr& inner = transposed ? *e.operands[0] : e;
    if (inner.kind != Kind::kName) return false;
    name = &inner;
    return true;
  };
  switch (expr.kind) {
    case Kind::kRound:
      return FindNativeMatmul(*expr.operands[0], found);
    case Kind::kMul:
      for (int side = 0; side < 2; ++side) {
        const RefExpr& factor = *expr.operands[side];
        if (factor.kind == Kind::kNumber || factor.kind == Kind::kName) {
          if (!FindNativeMatmul(*expr.operands[1 - side], found)) continue;
          found.scale.push_back(&factor);
          return true;
        }
      }
      return false;
    case Kind::kMatmul:
      return operand(*expr.operands[0], found.a, found.a_transposed) &&
             operand(*expr.operands[1], found.b, found.b_transposed);
    default:
      return false;
  }
}

TensorView TransposedView(TensorView view) {
  std::swap(view.shape[0], view.shape[1]);
  std::swap(view.strides[0], view.strides[1]);
  return view;
}

std::string IndexText(const std::vector<int64_t>& index) {
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

// Times `launch` `iterations` times after `warmup` untimed runs; `reset`
// runs before each launch, outside the timed interval.
absl::StatusOr<SampleStats> Time(const std::function<absl::Status()>& launch,
                                 const std::function<absl::Status()>& reset,
                                 int warmup, int iterations) {
  for (int i = 0; i < warmup; ++i) {
    if (absl::Status s = reset(); !s.ok()) return s;
    if (absl::Status s = launch(); !s.ok()) return s;
  }
  KIR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  KIR_CUDA_RETURN_IF_ERROR(cudaEventCreate(&start));
  KIR_CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop));
  std::vector<double> samples;
  absl::Status status;
  for (int i = 0; i < iterations && status.ok(); ++i) {
    status = reset();
    if (status.ok())
      status = CudaStatus(cudaEventRecord(start), "cudaEventRecord");
    if (status.ok()) status = launch();
    if (status.ok())
      status = CudaStatus(cudaEventRecord(stop), "cudaEventRecord");
    if (status.ok()) status = CudaStatus(cudaEventSynchronize(stop), "kernel");
    float ms = 0;
    if (status.ok())
      status = CudaStatus(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    samples.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!status.ok()) return status;
  return Summarize(samples);
}

// Times in ms.
std::string TimeJson(const SampleStats& stats) {
  return absl::StrCat("{\"median_ms\": ", JsonNumber(stats.median),
                      ", \"min_ms\": ", JsonNumber(stats.min),
                      ", \"max_ms\": ", JsonNumber(stats.max),
                      ", \"samples\": ", stats.samples, "}");
}

struct Variant {
  PreparedKernel prepared;
  std::unique_ptr<Launchable> launchable;
  KernelResources resources;
  bool passed = true;
  bool checked = false;
  double max_abs_error = 0, max_rel_error = 0;
  std::vector<std::string> check_json;
  std::optional<SampleStats> time;
  std::vector<double> repeat_medians;
};

class DirectiveRun {
 public:
  DirectiveRun(const std::shared_ptr<const SourceFile>& source,
               const RunDirective& directive, const RunOptions& options,
               std::ostream& out)
      : source_(source), directive_(directive), options_(options), out_(out) {}

  int Run(std::string& json);
  DirectiveOutcome Outcome() const;

 private:
  absl::Status Execute();
  absl::Status PrepareVariants();
  absl::Status RunAndCheck(Variant& variant, bool report = true);
  absl::Status ReportOccupancy(Variant& variant);
  absl::StatusOr<uint64_t> OutputHash();
  absl::Status Repeat(Variant& variant);
  absl::Status Bench();
  std::string Json() const;

  std::string Where() const {
    return absl::StrCat(source_->name, ":", directive_.loc.line);
  }

  const std::shared_ptr<const SourceFile>& source_;
  const RunDirective& directive_;
  const RunOptions& options_;
  std::ostream& out_;

  std::optional<DeviceInfo> device_;
  std::unique_ptr<ReferenceEngine> engine_;
  std::vector<Variant> variants_;
  std::optional<Bindings> bindings_;
  std::vector<DenseTensor> references_;  // one per check
  bool mismatch_ = false;
  std::string error_;
  std::vector<std::string> bench_json_;
  std::string skip_reason_;  // no usable GPU
  std::string baseline_name_;
  std::optional<SampleStats> baseline_;
  std::vector<double> baseline_samples_;
};

absl::Status DirectiveRun::PrepareVariants() {
  std::vector<std::string> pipelines;
  if (!options_.compare_pipelines.empty()) {
    pipelines = options_.compare_pipelines;
  } else if (options_.pipeline.has_value()) {
    pipelines = {*options_.pipeline};
  } else {
    pipelines = {directive_.pipeline.value_or("")};
  }
  for (size_t i = 0; i < pipelines.size(); ++i) {
    Variant variant;
    const std::string tag = pipelines.size() > 1
                                ? absl::StrCat(directive_.kernel, ".p", i + 1)
                                : directive_.kernel;
    absl::StatusOr<PreparedKernel> prepared =
        PrepareKernel(source_, pipelines[i], directive_.kernel,
                      options_.dump_dir, tag, options_.verify);
    if (!prepared.ok()) return prepared.status();
    variant.prepared = std::move(*prepared);
    out_ << "  compile"
         << (pipelines.size() > 1 ? absl::StrCat(" P", i + 1) : "")
         << ": pipeline '" << pipelines[i] << "'"
         << (variant.prepared.planned_shared
                 ? absl::StrCat(" + ", kSharedLayoutPass,
                                " (shared allocations without offsets)")
                 : "")
         << (directive_.workspace == WorkspaceZeroing::kOnce
                 ? ", workspaces zeroed once"
                 : "")
         << ", " << (variant.prepared.compile.cache_hit ? "cache hit" : "NVRTC")
         << absl::StrFormat(" %.1f ms", variant.prepared.compile.seconds * 1e3)
         << "\n";
    variants_.push_back(std::move(variant));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> DirectiveRun::OutputHash() {
  // FNV-1a over the bytes of every checked output.
  uint64_t hash = 0xcbf29ce484222325ull;
  std::string bytes;
  for (const Check& check : directive_.checks) {
    const BoundTensor& output = bindings_->tensors.at(check.output);
    bytes.resize(output.buffer.bytes());
    KIR_CUDA_RETURN_IF_ERROR(cudaMemcpy(bytes.data(), output.buffer.get(),
                                        bytes.size(), cudaMemcpyDeviceToHost));
    for (unsigned char c : bytes) {
      hash ^= c;
      hash *= 0x100000001b3ull;
    }
  }
  return hash;
}

absl::Status DirectiveRun::Repeat(Variant& variant) {
  absl::StatusOr<uint64_t> first = OutputHash();
  if (!first.ok()) return first.status();
  const bool passed_first = variant.passed;
  int failed_runs = 0, differing_runs = 0;
  for (int run = 2; run <= options_.repetitions; ++run) {
    variant.passed = true;
    if (absl::Status s = RunAndCheck(variant, /*report=*/false); !s.ok())
      return s;
    if (!variant.passed) ++failed_runs;
    absl::StatusOr<uint64_t> hash = OutputHash();
    if (!hash.ok()) return hash.status();
    if (*hash != *first) ++differing_runs;
  }
  variant.passed = passed_first && failed_runs == 0 && differing_runs == 0;
  out_ << absl::StrFormat(
      "  %s: %d runs, %d failed their checks, %d not bit-identical to run 1\n",
      variant.passed ? "repeatable" : "NOT REPEATABLE", options_.repetitions,
      failed_runs + (passed_first ? 0 : 1), differing_runs);
  variant.check_json.push_back(
      absl::StrCat("{\"repetitions\": ", options_.repetitions,
                   ", \"failed_runs\": ", failed_runs + (passed_first ? 0 : 1),
                   ", \"differing_runs\": ", differing_runs, "}"));
  if (!variant.passed) mismatch_ = true;
  return absl::OkStatus();
}

absl::Status DirectiveRun::RunAndCheck(Variant& variant, bool report) {
  if (absl::Status s = InitializeInputs(*bindings_, *engine_); !s.ok())
    return s;
  if (absl::Status s = ResetWorkspaces(*variant.launchable); !s.ok()) return s;
  if (absl::Status s = LaunchOnce(*variant.launchable); !s.ok()) return s;
  if (absl::Status s = CudaStatus(cudaDeviceSynchronize(), "the kernel");
      !s.ok())
    return s;
  const std::string label =
      variants_.size() > 1
          ? absl::StrCat(" [P", &variant - variants_.data() + 1, "]")
          : "";
  for (size_t c = 0; c < directive_.checks.size(); ++c) {
    const Check& check = directive_.checks[c];
    const BoundTensor& output = bindings_->tensors.at(check.output);
    absl::StatusOr<Comparison> comparison = engine_->Compare(
        output.view, references_[c], check.exact, check.rtol, check.atol);
    if (!comparison.ok()) return comparison.status();
    const bool ok = comparison->mismatches == 0;
    variant.passed = variant.passed && ok;
    variant.checked = true;
    variant.max_abs_error =
        std::max(variant.max_abs_error, comparison->max_abs_error);
    variant.max_rel_error =
        std::max(variant.max_rel_error, comparison->max_rel_error);
    std::string line = absl::StrFormat(
        "  %s%s %s: %s (max abs err %.3g, max rel err %.3g over %d elements)",
        ok ? "ok" : "MISMATCH", label, check.output,
        ok ? "matches"
           : absl::StrCat(comparison->mismatches, " of ", comparison->elements,
                          " elements differ"),
        comparison->max_abs_error, comparison->max_rel_error,
        comparison->elements);
    if (report || !ok) out_ << line << "\n";
    std::string json = absl::StrCat(
        "{\"output\": ", JsonString(check.output),
        ", \"reference\": ", JsonString(check.reference->ToString()),
        ", \"passed\": ", ok ? "true" : "false",
        ", \"elements\": ", comparison->elements,
        ", \"mismatches\": ", comparison->mismatches,
        ", \"max_abs_error\": ", JsonNumber(comparison->max_abs_error),
        ", \"max_rel_error\": ", JsonNumber(comparison->max_rel_error));
    if (!ok) {
      const double bound =
          check.exact
              ? 0.0
              : check.atol + check.rtol * std::fabs(comparison->expected);
      out_ << absl::StrFormat(
          "    first bad element %s%s: got %.8g, expected %.8g (|diff| %.3g, "
          "allowed %.3g)\n",
          check.output, IndexText(comparison->first_bad_index), comparison->got,
          comparison->expected,
          std::fabs(comparison->got - comparison->expected), bound);
      absl::StrAppend(&json, ", \"first_bad_index\": [",
                      absl::StrJoin(comparison->first_bad_index, ", "),
                      "], \"got\": ", JsonNumber(comparison->got),
                      ", \"expected\": ", JsonNumber(comparison->expected));
    }
    if (report) variant.check_json.push_back(json + "}");
  }
  if (!variant.passed) mismatch_ = true;
  return absl::OkStatus();
}

absl::Status DirectiveRun::Bench() {
  auto timed = [&](Variant& variant) -> absl::StatusOr<SampleStats> {
    const Launchable& launchable = *variant.launchable;
    return Time([&] { return LaunchOnce(launchable); },
                [&] { return ResetWorkspaces(launchable); }, options_.warmup,
                options_.iterations);
  };
  auto no_reset = [] { return absl::OkStatus(); };

  // The baseline: cuBLASLt on the same operands for a matrix product,
  // otherwise a device-to-device copy moving as many bytes as the kernel's
  // tensors hold (each read or written once).
  std::string baseline_name;
  std::optional<SampleStats> baseline;
  // Times one more repeat of the baseline (its median launch time in ms).
  std::function<absl::StatusOr<double>()> time_baseline;
  std::optional<DeviceBuffer> baseline_output;
  const Check& first_check = directive_.checks.front();
  NativeMatmul matmul;
  const BoundTensor& output = bindings_->tensors.at(first_check.output);
  if (FindNativeMatmul(*first_check.reference, matmul) &&
      bindings_->tensors.count(matmul.a->name) &&
      bindings_->tensors.count(matmul.b->name)) {
    TensorView a = bindings_->tensors.at(matmul.a->name).view;
    TensorView b = bindings_->tensors.at(matmul.b->name).view;
    if (matmul.a_transposed) a = TransposedView(a);
    if (matmul.b_transposed) b = TransposedView(b);
    float alpha = 1;
    for (const RefExpr* factor : matmul.scale) {
      alpha *=
          factor->kind == RefExpr::Kind::kNumber
              ? static_cast<float>(factor->number)
              : static_cast<float>(bindings_->scalars.count(factor->name)
                                       ? bindings_->scalars.at(factor->name)
                                       : 1.0);
    }
    // Into a scratch output, so the kernel's result stays checkable.
    absl::StatusOr<DeviceBuffer> scratch = DeviceBuffer::Allocate(
        output.view.elements() * DTypeBytes(output.view.dtype));
    if (!scratch.ok()) return scratch.status();
    TensorView d = output.view;
    d.data = scratch->get();
    d.strides = {d.shape[1], 1};
    // One repeat up front tells whether cuBLASLt can do it at all; the
    // others are interleaved with the variants' below, warmed up like theirs.
    absl::StatusOr<double> ms = engine_->TimeNativeMatmul(
        a, b, d, alpha, options_.warmup, options_.iterations);
    if (ms.ok()) {
      baseline_samples_ = {*ms};
      baseline_name = "cublasLt";
      baseline_output = std::move(*scratch);
      time_baseline = [this, a, b, d, alpha]() {
        return engine_->TimeNativeMatmul(a, b, d, alpha, options_.warmup,
                                         options_.iterations);
      };
    } else {
      out_ << "  (no cuBLASLt baseline: " << ms.status().message() << ")\n";
    }
  }
  if (!time_baseline) {
    int64_t bytes = 0;
    for (const auto& [name, tensor] : bindings_->tensors)
      bytes += tensor.view.elements() * DTypeBytes(tensor.view.dtype);
    bytes = std::max<int64_t>(bytes / 2, 1);
    absl::StatusOr<DeviceBuffer> from = DeviceBuffer::Allocate(bytes);
    absl::StatusOr<DeviceBuffer> to = DeviceBuffer::Allocate(bytes);
    if (!from.ok()) return from.status();
    if (!to.ok()) return to.status();
    std::vector<double> samples;
    for (int r = 0; r < options_.repeats; ++r) {
      absl::StatusOr<SampleStats> copy = Time(
          [&] {
            return CudaStatus(
                cudaMemcpyAsync(to->get(), from->get(), bytes,
                                cudaMemcpyDeviceToDevice, nullptr),
                "cudaMemcpyAsync");
          },
          no_reset, options_.warmup, options_.iterations);
      if (!copy.ok()) return copy.status();
      samples.push_back(copy->median);
    }
    baseline = Summarize(samples);
    baseline_samples_ = samples;
    baseline_name = absl::StrCat("copy ", bytes, " B");
  }

  // Each variant: `repeats` medians, interleaved with each other and with
  // cuBLASLt's so that drift (clocks, temperature) hits all alike.
  std::vector<std::vector<double>> medians(variants_.size());
  for (int r = 0; r < options_.repeats; ++r) {
    if (time_baseline && r > 0) {
      absl::StatusOr<double> ms = time_baseline();
      if (!ms.ok()) return ms.status();
      baseline_samples_.push_back(*ms);
    }
    for (size_t k = 0; k < variants_.size(); ++k) {
      // Alternate the order between repeats.
      const size_t v = r % 2 == 0 ? k : variants_.size() - 1 - k;
      absl::StatusOr<SampleStats> stats = timed(variants_[v]);
      if (!stats.ok()) return stats.status();
      medians[v].push_back(stats->median);
    }
  }
  if (time_baseline) baseline = Summarize(baseline_samples_);
  for (size_t v = 0; v < variants_.size(); ++v) {
    Variant& variant = variants_[v];
    variant.time = Summarize(medians[v]);
    variant.repeat_medians = medians[v];
    const KernelResources& res = variant.resources;
    const std::string spills =
        variant.prepared.spills.store_bytes.has_value()
            ? absl::StrCat(*variant.prepared.spills.store_bytes, "/",
                           *variant.prepared.spills.load_bytes, " B")
            : "?";
    out_ << absl::StrFormat(
        "  time%s: median %.4f ms (min %.4f, max %.4f over %d x %d launches); "
        "speed %.3fx of %s (%.4f ms); %d registers, spills %s, local %d B, "
        "smem %d "
        "B\n",
        variants_.size() > 1 ? absl::StrCat(" P", v + 1) : "",
        variant.time->median, variant.time->min, variant.time->max,
        options_.repeats, options_.iterations,
        baseline->median / variant.time->median, baseline_name,
        baseline->median, res.registers, spills, res.local_bytes,
        variant.prepared.abi.dynamic_smem_bytes + res.static_shared_bytes);
    if (!variant.prepared.spills.missing.empty()) {
      out_ << "  note: " << variant.prepared.spills.missing << "\n";
    }
  }
  std::string compare_json;
  if (variants_.size() == 2) {
    // Ratio P2 / P1 per repeat: > 1 means P2 is slower.
    std::vector<double> ratios;
    for (int r = 0; r < options_.repeats; ++r)
      ratios.push_back(medians[1][r] / medians[0][r]);
    const SampleStats spread = Summarize(ratios);
    out_ << absl::StrFormat(
        "  compare: time(P2) / time(P1) = %.4f (min %.4f, max %.4f over %d "
        "repeats)\n",
        spread.median, spread.min, spread.max, spread.samples);
    compare_json = absl::StrCat(
        ", \"compare\": {\"ratio_p2_over_p1\": ", JsonNumber(spread.median),
        ", \"min\": ", JsonNumber(spread.min),
        ", \"max\": ", JsonNumber(spread.max),
        ", \"repeats\": ", spread.samples, ", \"per_repeat\": [",
        absl::StrJoin(
            ratios, ", ",
            [](std::string* o, double x) { o->append(JsonNumber(x)); }),
        "]}");
  }
  baseline_name_ = baseline_name;
  baseline_ = baseline;
  bench_json_.push_back(
      absl::StrCat("\"baseline\": {\"name\": ", JsonString(baseline_name),
                   ", \"time\": ", TimeJson(*baseline), "}", compare_json));
  return absl::OkStatus();
}

absl::Status DirectiveRun::ReportOccupancy(Variant& variant) {
  const cudaLaunchConfig_t& config = variant.launchable->config;
  const int64_t threads = static_cast<int64_t>(config.blockDim.x) *
                          config.blockDim.y * config.blockDim.z;
  int runtime_blocks = 0;
  KIR_CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &runtime_blocks,
      reinterpret_cast<const void*>(variant.launchable->kernel),
      static_cast<int>(threads), config.dynamicSmemBytes));
  BlockResources resources;
  resources.threads = threads;
  resources.registers = variant.resources.registers;
  resources.shared_bytes = variant.prepared.abi.dynamic_smem_bytes +
                           variant.resources.static_shared_bytes;
  resources.barriers = BarriersUsed(*variant.prepared.kernel);
  const Occupancy model = BlocksPerSm(resources);
  out_ << absl::StrFormat(
      "  occupancy: %d B dynamic shared memory (%d B static), %d registers, "
      "%d threads, %d barriers: %d blocks per SM "
      "(cudaOccupancyMaxActiveBlocksPerMultiprocessor), %d by the model "
      "(limited by %s)\n",
      variant.prepared.abi.dynamic_smem_bytes,
      variant.resources.static_shared_bytes, variant.resources.registers,
      threads, resources.barriers, runtime_blocks, model.blocks_per_sm,
      model.limited_by);
  if (runtime_blocks != model.blocks_per_sm) {
    out_ << "  FAIL occupancy: the model disagrees with the runtime\n";
    variant.passed = false;
    mismatch_ = true;
  }
  return absl::OkStatus();
}

absl::Status DirectiveRun::Execute() {
  absl::StatusOr<DeviceInfo> device = ProbeDevice();
  if (!device.ok()) return device.status();
  device_ = *device;
  if (absl::Status s = PrepareVariants(); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<ReferenceEngine>> engine =
      ReferenceEngine::Create();
  if (!engine.ok()) return engine.status();
  engine_ = std::move(*engine);
  absl::StatusOr<Bindings> bindings = AllocateBindings(
      directive_, *variants_.front().prepared.kernel, *engine_);
  if (!bindings.ok()) return bindings.status();
  bindings_ = std::move(*bindings);
  // References from the inputs as initialized (before any launch).
  if (absl::Status s = InitializeInputs(*bindings_, *engine_); !s.ok())
    return s;
  for (const Check& check : directive_.checks) {
    absl::StatusOr<DenseTensor> reference =
        Evaluate(*check.reference, *bindings_,
                 *variants_.front().prepared.kernel, *engine_);
    if (!reference.ok()) return reference.status();
    references_.push_back(std::move(*reference));
  }
  for (Variant& variant : variants_) {
    absl::StatusOr<std::unique_ptr<Launchable>> launchable =
        MakeLaunchable(variant.prepared, *bindings_, directive_.workspace);
    if (!launchable.ok()) return launchable.status();
    variant.launchable = std::move(*launchable);
    absl::StatusOr<KernelResources> resources =
        GetKernelResources(variant.launchable->kernel);
    if (!resources.ok()) return resources.status();
    variant.resources = *resources;
    if (options_.occupancy) {
      if (absl::Status s = ReportOccupancy(variant); !s.ok()) return s;
    }
    if (absl::Status s = RunAndCheck(variant); !s.ok()) return s;
    if (options_.repetitions > 1) {
      if (absl::Status s = Repeat(variant); !s.ok()) return s;
    }
  }
  if ((options_.bench || variants_.size() > 1) && !mismatch_) {
    if (absl::Status s = Bench(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string DirectiveRun::Json() const {
  std::string json =
      absl::StrCat("{\"file\": ", JsonString(source_->name),
                   ", \"line\": ", directive_.loc.line,
                   ", \"directive\": ", JsonString(directive_.text),
                   ", \"kernel\": ", JsonString(directive_.kernel),
                   ", \"commit\": ", JsonString(KIR_GIT_COMMIT));
  if (device_.has_value()) {
    absl::StrAppend(&json,
                    ", \"device\": {\"name\": ", JsonString(device_->name),
                    ", \"sm_count\": ", device_->sm_count,
                    ", \"runtime_version\": ", device_->runtime_version,
                    ", \"driver_version\": ", device_->driver_version, "}");
  }
  absl::StrAppend(&json, ", \"status\": ",
                  JsonString(!error_.empty() ? "error"
                             : mismatch_     ? "mismatch"
                                             : "passed"));
  if (!error_.empty())
    absl::StrAppend(&json, ", \"error\": ", JsonString(error_));
  absl::StrAppend(&json, ", \"variants\": [");
  for (size_t v = 0; v < variants_.size(); ++v) {
    const Variant& variant = variants_[v];
    absl::StrAppend(
        &json, v ? ", " : "",
        "{\"pipeline\": ", JsonString(variant.prepared.pipeline),
        ", \"compile\": {\"cache_hit\": ",
        variant.prepared.compile.cache_hit ? "true" : "false",
        ", \"seconds\": ", JsonNumber(variant.prepared.compile.seconds), "}",
        ", \"registers\": ", variant.resources.registers,
        ", \"local_bytes\": ", variant.resources.local_bytes,
        ", \"spill_store_bytes\": ",
        variant.prepared.spills.store_bytes.has_value()
            ? absl::StrCat(*variant.prepared.spills.store_bytes)
            : "null",
        ", \"shared_bytes\": ",
        variant.prepared.abi.dynamic_smem_bytes +
            variant.resources.static_shared_bytes,
        ", \"checks\": [", absl::StrJoin(variant.check_json, ", "), "]");
    if (variant.time.has_value())
      absl::StrAppend(&json, ", \"time\": ", TimeJson(*variant.time));
    absl::StrAppend(&json, "}");
  }
  absl::StrAppend(&json, "]");
  for (const std::string& bench : bench_json_)
    absl::StrAppend(&json, ", ", bench);
  return json + "}";
}

DirectiveOutcome DirectiveRun::Outcome() const {
  DirectiveOutcome outcome;
  outcome.status = !error_.empty() ? "error"
                   : mismatch_     ? "mismatch"
                                   : "passed";
  outcome.error = error_;
  if (!skip_reason_.empty()) {
    outcome.status = "skipped";
    outcome.error = skip_reason_;
  }
  for (const Variant& variant : variants_) {
    VariantOutcome& v = outcome.variants.emplace_back();
    v.pipeline = variant.prepared.pipeline;
    v.checked = variant.checked;
    v.passed = variant.checked && variant.passed;
    v.max_abs_error = variant.max_abs_error;
    v.max_rel_error = variant.max_rel_error;
    v.time = variant.time;
    v.repeat_medians = variant.repeat_medians;
    v.registers = variant.resources.registers;
    v.spill_store_bytes = variant.prepared.spills.store_bytes;
    v.spill_load_bytes = variant.prepared.spills.load_bytes;
    v.shared_bytes = variant.prepared.abi.dynamic_smem_bytes +
                     variant.resources.static_shared_bytes;
  }
  outcome.baseline_name = baseline_name_;
  outcome.baseline = baseline_;
  outcome.baseline_repeat_medians = baseline_samples_;
  return outcome;
}

int DirectiveRun::Run(std::string& json) {
  out_ << Where() << ": " << directive_.text << "\n";
  const absl::Status status = Execute();
  int code = kExitPassed;
  if (!status.ok()) {
    if (status.code() == absl::StatusCode::kUnavailable) {
      out_ << "  skipped: " << status.message() << "\n";
      skip_reason_ = std::string(status.message());
      json = Json();
      return kExitNoGpu;
    }
    error_ = std::string(status.message());
    out_ << "  ERROR: " << status.message() << "\n";
    code = kExitFailed;
  } else if (mismatch_) {
    code = kExitFailed;
  }
  json = Json();
  return code;
}

}  // namespace

absl::StatusOr<std::vector<RunDirective>> DirectivesToRun(
    const std::shared_ptr<const SourceFile>& source,
    const RunOptions& options) {
  if (options.directive.empty()) return ParseRunDirectives(source);
  auto command_line = std::make_shared<SourceFile>();
  command_line->name = "<--directive>";
  command_line->text = absl::StrCat("// run: ", options.directive);
  return ParseRunDirectives(command_line);
}

int MeasureLaunchOverhead(const std::shared_ptr<const SourceFile>& source,
                          std::ostream& out, std::string& json) {
  absl::StatusOr<std::vector<RunDirective>> directives =
      ParseRunDirectives(source);
  if (!directives.ok() || directives->empty()) {
    out << "kir-run: --launch-overhead needs a file with a run directive\n";
    return kExitFailed;
  }
  const RunDirective& directive = directives->front();
  absl::Status status = [&]() -> absl::Status {
    absl::StatusOr<PreparedKernel> prepared = PrepareKernel(
        source, directive.pipeline.value_or(""), directive.kernel, "", "");
    if (!prepared.ok()) return prepared.status();
    absl::StatusOr<std::unique_ptr<ReferenceEngine>> engine =
        ReferenceEngine::Create();
    if (!engine.ok()) return engine.status();
    absl::StatusOr<Bindings> bindings =
        AllocateBindings(directive, *prepared->kernel, **engine);
    if (!bindings.ok()) return bindings.status();
    if (absl::Status s = InitializeInputs(*bindings, **engine); !s.ok())
      return s;
    absl::StatusOr<std::unique_ptr<Launchable>> launchable =
        MakeLaunchable(*prepared, *bindings, directive.workspace);
    if (!launchable.ok()) return launchable.status();
    const Launchable& kernel = **launchable;
    // The direct call, with its own copy of the configuration.
    cudaLaunchConfig_t config = kernel.config;
    void** args = const_cast<void**>(kernel.args.data());
    const void* function = reinterpret_cast<const void*>(kernel.kernel);
    constexpr int kBlock = 100, kLaunches = 1000;
    std::vector<double> through_kir_run, direct;
    for (int round = 0; round < 2 * kLaunches / kBlock; ++round) {
      const bool use_kir_run = round % 2 == 0;
      for (int i = 0; i < kBlock; ++i) {
        const auto start = std::chrono::steady_clock::now();
        absl::Status launched =
            use_kir_run
                ? LaunchOnce(kernel)
                : CudaStatus(cudaLaunchKernelExC(&config, function, args),
                             "cudaLaunchKernelExC");
        const auto stop = std::chrono::steady_clock::now();
        if (!launched.ok()) return launched;
        (use_kir_run ? through_kir_run : direct)
            .push_back(std::chrono::duration<double, std::micro>(stop - start)
                           .count());
      }
      // Drain outside the timed calls, so the queue never fills.
      KIR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
    }
    const SampleStats ours = Summarize(through_kir_run);
    const SampleStats theirs = Summarize(direct);
    const double difference = ours.median - theirs.median;
    out << absl::StrFormat(
        "launch overhead (host wall time per call, median of %d): kir-run "
        "%.2f us, cudaLaunchKernelExC %.2f us, difference %.2f us (limit 5 "
        "us)\n",
        kLaunches, ours.median, theirs.median, difference);
    json = absl::StrCat("{\"kir_run_us\": ", JsonNumber(ours.median),
                        ", \"direct_us\": ", JsonNumber(theirs.median),
                        ", \"launches\": ", kLaunches, "}");
    if (difference > 5.0) {
      return absl::InternalError(
          "kir-run's launch path is more than 5 us "
          "slower than cudaLaunchKernelExC");
    }
    return absl::OkStatus();
  }();
  if (!status.ok()) {
    out << "kir-run: " << status.message() << "\n";
    return status.code() == absl::StatusCode::kUnavailable ? kExitNoGpu
                                                           : kExitFailed;
  }
  return kExitPassed;
}

int RunDirectiveInProcess(const std::shared_ptr<const SourceFile>& source,
                          int index, const RunOptions& options,
                          std::ostream& out, std::string& json,
                          DirectiveOutcome* outcome) {
  auto fail = [&](const std::string& message) {
    out << message << "\n";
    if (outcome != nullptr) {
      *outcome = DirectiveOutcome();
      outcome->status = "error";
      outcome->error = message;
    }
    return kExitFailed;
  };
  absl::StatusOr<std::vector<RunDirective>> directives =
      DirectivesToRun(source, options);
  if (!directives.ok()) return fail(std::string(directives.status().message()));
  if (index < 0 || index >= static_cast<int>(directives->size())) {
    return fail(absl::StrCat(source->name, ": no run directive #", index));
  }
  DirectiveRun run(source, (*directives)[index], options, out);
  const int code = run.Run(json);
  if (outcome != nullptr) {
    *outcome = run.Outcome();
  }
  return code;
}

}  // namespace kir
