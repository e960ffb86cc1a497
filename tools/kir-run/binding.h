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

// `expr` with the bound sizes; nullopt if one is unbound.
std::optional<int64_t> EvaluateShapeExpr(const IndexExpr& expr,
                                         const SizeBindings& sizes);

// The shape of buffer `value` with the bound sizes; a located error at `loc`
// if an extent does not evaluate to a size >= 0.
absl::StatusOr<std::vector<int64_t>> ShapeOf(const Value* value,
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
// right kind, every check names a tensor parameter, and every reference
// names a parameter or size and has the output's shape.
absl::Status ValidateDirective(const RunDirective& directive,
                               const Module& module);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_RUN_BINDING_H_
