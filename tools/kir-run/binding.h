// Resolving a run directive against its kernel, without a GPU: which
// parameter or size each name is, the sizes it binds, the shapes of tensors
// and of reference expressions, and the checks of ValidateDirective.
#ifndef KIR_TOOLS_KIR_RUN_BINDING_H_
#define KIR_TOOLS_KIR_RUN_BINDING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "tools/kir-run/directive.h"

namespace kir {

enum class NameKind { kSize, kTensor, kTensorMap, kScalar };

// The largest tensor rank kir-run binds (its reference kernels' limit).
inline constexpr int kMaxTensorRank = 8;

// What a directive's name stands for in a kernel.
struct NamedThing {
  NameKind kind;
  const Value* value = nullptr;
  const Param* param = nullptr;  // null for sizes
};

// Every size and parameter of `kernel`, by name (without '%').
std::map<std::string, NamedThing> NamesOf(const Kernel& kernel);

// "a size", "a tensor", ... (for messages).
const char* KindWord(NameKind kind);

// Size values bound by a directive.
using SizeBindings = std::map<const Value*, int64_t>;

// `expr` with the bound sizes; nullopt if one is unbound, it divides by
// zero or a result does not fit int64.
std::optional<int64_t> EvaluateShapeExpr(const IndexExpr& expr,
                                         const SizeBindings& sizes);

// The shape of buffer `value` with the bound sizes; a located error at `loc`
// if an extent does not evaluate (it divides by zero or overflows int64, said
// which) or is negative.
absl::StatusOr<std::vector<int64_t>> ShapeOf(const Value* value,
                                             const SizeBindings& sizes,
                                             const Location& loc);

// Where a tensor parameter's elements are: its shape, element strides
// (outermost first) and the bytes from its first element to past its last.
struct TensorExtent {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t bytes = 0;
};

// TensorExtent of tensor parameter `param`; a located error at `loc` when an
// extent or stride does not evaluate or is negative, or the span does not
// fit int64.
absl::StatusOr<TensorExtent> ExtentOf(const Param& param,
                                      const SizeBindings& sizes,
                                      const Location& loc);

// The launch shape of `kernel` with the bound sizes, each of grid, block and
// cluster within CUDA's limits (grid x up to 2^31 - 1, y and z up to
// 65535; a block of at most 1024 threads, z up to 64; at most 8 CTAs per
// cluster, dividing the grid); else an error at `loc` with a note at the
// clause in the kernel.
struct LaunchShape {
  int64_t grid[3], block[3], cluster[3];
};
absl::StatusOr<LaunchShape> LaunchShapeOf(const Kernel& kernel,
                                          const SizeBindings& sizes,
                                          const Location& loc);

// The shape of a reference expression ([] for a scalar), or a located error
// (an unknown name, a tensor map, mismatched shapes).
absl::StatusOr<std::vector<int64_t>> ReferenceShape(
    const RefExpr& expr, const std::map<std::string, NamedThing>& names,
    const SizeBindings& sizes);

// The sizes `directive` binds (integers >= 0, else a located error).
absl::StatusOr<SizeBindings> BindSizes(
    const RunDirective& directive,
    const std::map<std::string, NamedThing>& names);

// Checks a directive against the (unlowered) module: the kernel exists,
// every size, tensor and scalar parameter is bound with a value of the
// right kind (a scalar in its type's range), the launch shape, every
// tensor's and workspace's shape and size evaluate within the limits,
// every check names a tensor parameter, and every reference names a
// parameter or size and has the output's shape.
absl::Status ValidateDirective(const RunDirective& directive,
                               const Module& module);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_RUN_BINDING_H_
