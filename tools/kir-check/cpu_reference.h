// Run directives on the CPU: inputs generated as kir-run generates them on
// the GPU (the same counter-based generator, stored rounded to the tensor's
// type), reference expressions evaluated in f32 (matrix products with f32
// accumulation in k order), and outputs compared with the same rule.
#ifndef KIR_TOOLS_KIR_CHECK_CPU_REFERENCE_H_
#define KIR_TOOLS_KIR_CHECK_CPU_REFERENCE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "tools/kir-check/machine.h"
#include "tools/kir-run/directive.h"

namespace kir::check {

// Fills every element of `tensor` (row-major logical order i) as
// `init` says: normal, uniform, randint, iota or fill.
void InitializeTensor(TensorData& tensor, const InputInit& init);

// A dense row-major f32 tensor; rank 0 is a scalar.
struct DenseF32 {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

DenseF32 TensorToF32(const TensorData& tensor);

// Evaluates a reference expression. `lookup` gives the value of a name
// (a tensor before the launch, or a scalar or size as a rank-0 tensor).
absl::StatusOr<DenseF32> EvaluateReference(
    const RefExpr& expr,
    const std::function<absl::StatusOr<DenseF32>(const std::string&)>& lookup);

struct OutputComparison {
  int64_t elements = 0;
  int64_t mismatches = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::vector<int64_t> first_bad_index;
  double got = 0, expected = 0;
};

// `|got - expected| <= atol + rtol * |expected|` (or equality when
// `exact`), NaN matching only NaN and infinity only itself, in f32.
absl::StatusOr<OutputComparison> CompareOutput(const TensorData& got,
                                               const DenseF32& expected,
                                               bool exact, double rtol,
                                               double atol);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_CPU_REFERENCE_H_
