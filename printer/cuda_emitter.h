// Emits a module as one self-contained CUDA C++ translation unit for sm_90a
// (compilable by NVRTC with no include path, and by nvcc), and describes
// each kernel's launch ABI so that a runner builds arguments without
// guessing.
//
// Output layout: the prelude (fixed-width types, 16-bit float storage,
// kir_vec, kir_tensor_map, the dynamic shared memory window), the device
// runtime (one `__device__ __forceinline__` function per PTX primitive the
// kernels use, see cuda_runtime.h), then one `extern "C" __global__`
// function per kernel.
//
// What each op means in CUDA (the emitter's side of ir/language.md):
//   - Values are `const` locals named `v_<name>`; `index` is kir_i64, i1 is
//     bool, f16/bf16 are kir_f16/kir_bf16 bit patterns, vectors kir_vec.
//   - Integer add/sub/mul/neg/abs/shl wrap (computed on unsigned types);
//     div/rem truncate toward zero (C); shr is arithmetic (sign-filling) on
//     signed types. Float add/sub/mul/div/fma/sqrt are the IEEE round-to-
//     nearest-even intrinsics (never contracted into fma); exp is expf;
//     float min/max are fminf/fmaxf (a NaN operand yields the other one);
//     16-bit float arithmetic is the PTX .bf16/.f16 instruction, or f32
//     followed by one rounding (div, rem, exp, sqrt).
//   - cast: as ir/language.md; float to integer saturates (NaN gives 0);
//     a cast to i1 keeps the low bit (integers) or tests != 0 (floats).
//   - Buffers are addressed from the logical index: global tensors by their
//     layout (row-major, col-major, strides), shared allocations row-major
//     with `pad` on the innermost dimension and the TMA swizzle of
//     `swizzle` bytes on the byte offset, register buffers as local arrays
//     (constant indices keep them in registers).
//   - `if %e {predicated} { ... }` (marked by uniform-predicates, checked
//     by the verifier, V55; the emitter decides nothing) is emitted
//     without a branch: each op runs its instruction under `@p`, except
//     `bulk.commit` and `bulk.wait`, which the whole warp runs (the other
//     lanes commit empty groups, whose waits return at once): ptxas turns a
//     predicated commit or wait into a branch in a BSSY/BSYNC region.
//   - wgmma's zero-init predicate %p is its scale-d operand, `!%p`.
//   - Waits use PendingGroupsAfterWait as N (0 when unknown).
//
// Unlowered `splitk` cannot be emitted (serialize-split-k removes it).
#ifndef KIR_PRINTER_CUDA_EMITTER_H_
#define KIR_PRINTER_CUDA_EMITTER_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace kir {

struct CudaEmitOptions {
  // `#line N "file.kir"` before each op (and kernel), so that ptxas errors,
  // -lineinfo, compute-sanitizer and ncu point at the .kir source.
  bool line_directives = true;
  // Verify the module first; the emitter relies on verified IR.
  bool verify = true;
};

// One kernel argument. The order of a kernel's arguments is:
//   1. its parameters, in declaration order;
//   2. its symbolic sizes, in `sizes(...)` order, as int64;
//   3. its workspaces (alloc.workspace), in program order, as pointers.
struct CudaKernelArg {
  enum class Kind {
    kTensor,     // global tensor: pointer to element [0, ..., 0]
    kTensorMap,  // CUtensorMap (128 bytes, 128-aligned), __grid_constant__
    kScalar,     // scalar parameter, by value (i1 as a 1-byte bool)
    kSize,       // symbolic size, int64 by value
    kWorkspace,  // pointer to zero-filled global memory the launcher owns
  };
  Kind kind = Kind::kScalar;
  std::string name;       // the kir name, without '%'
  std::string cuda_type;  // as written in the kernel signature
  // Scalars and sizes: their type; tensors, maps, workspaces: the element.
  DType dtype = DType::kI32;
  int size_bytes = 0;            // of the argument itself (8 for a pointer)
  int align_bytes = 0;           // of the argument itself
  const Value* value = nullptr;  // the parameter, size or workspace value
  // kWorkspace: bytes to allocate (over the sizes) and their alignment.
  std::optional<IndexExpr> workspace_bytes;
  int64_t workspace_align = 0;
};

// Where a shared allocation lives in the dynamic shared memory window.
struct CudaSharedAllocation {
  const Value* buffer = nullptr;
  int64_t offset = 0;  // bytes from the window's (1024-aligned) start
  int64_t bytes = 0;   // including padding
  int64_t align = 0;   // effective alignment (swizzled: 8 * swizzle)
};

struct CudaKernelAbi {
  std::string kernel;  // the kir name
  std::string symbol;  // the extern "C" function name
  std::vector<CudaKernelArg> args;
  // Dynamic shared memory to launch with (cudaFuncSetAttribute beyond 48
  // KiB); every allocation is in it.
  int64_t dynamic_smem_bytes = 0;
  std::vector<CudaSharedAllocation> shared;  // program order
  // `__launch_bounds__(threads, 1 if min_blocks_one)` when the block is
  // constant; min_blocks_one for kernels that use setmaxnreg.
  std::optional<int64_t> launch_bound_threads;
  bool min_blocks_one = false;
  // `__cluster_dims__` compiled in when not 1x1x1 (x, y, z).
  std::array<int64_t, 3> cluster = {1, 1, 1};
};

// The launch ABI of one kernel. Fails (located) when a shared layout is
// invalid or the kernel needs more than 227 KiB of shared memory.
absl::StatusOr<CudaKernelAbi> GetCudaKernelAbi(const Kernel& kernel);

// The whole translation unit. Errors are located diagnostics.
absl::StatusOr<std::string> EmitCuda(const Module& module,
                                     const CudaEmitOptions& options = {});

}  // namespace kir

#endif  // KIR_PRINTER_CUDA_EMITTER_H_
