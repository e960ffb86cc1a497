#include "tools/kir-run/binding.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/checked_math.h"
#include "ir/diagnostics.h"

namespace kir {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// A scalar parameter's value fits its type: integers are integer literals
// in range (exactly, not through a double), i1 is 0 or 1; floats do not
// round to infinity (inf itself may be written).
absl::Status CheckScalarValue(const Binding& binding, const Value* param) {
  const DType dtype = param->type().dtype();
  if (IsFloat(dtype)) {
    if (std::isfinite(binding.number) &&
        std::fabs(binding.number) >= FloatOverflowThreshold(dtype)) {
      return Error(binding.loc)
             << "'" << binding.name << "' is " << DTypeName(dtype) << "; "
             << binding.number_text
             << " is out of its range (it would round to infinity)";
    }
    return absl::OkStatus();
  }
  if (!IsInteger(dtype)) return absl::OkStatus();
  int64_t low = std::numeric_limits<int64_t>::min();
  int64_t high = std::numeric_limits<int64_t>::max();
  if (dtype == DType::kI1) {
    low = 0;
    high = 1;
  } else if (dtype == DType::kI32) {
    low = std::numeric_limits<int32_t>::min();
    high = std::numeric_limits<int32_t>::max();
  }
  if (!binding.integer || *binding.integer < low || *binding.integer > high) {
    return Error(binding.loc)
           << "'" << binding.name << "' is " << DTypeName(dtype)
           << "; it takes an integer in [" << low << ", " << high << "]";
  }
  return absl::OkStatus();
}

// "N=4, M=0": the sizes `expr` uses and their values.
std::string SizesOf(const IndexExpr& expr, const SizeBindings& sizes) {
  std::vector<const Value*> used;
  expr.CollectSizes(used);
  std::vector<std::string> parts;
  for (const Value* size : used) {
    auto it = sizes.find(size);
    std::string part = absl::StrCat(
        size->name(), "=", it == sizes.end() ? "?" : absl::StrCat(it->second));
    if (std::find(parts.begin(), parts.end(), part) == parts.end()) {
      parts.push_back(std::move(part));
    }
  }
  return absl::StrJoin(parts, ", ");
}

// Why `expr`, whose sizes are all bound, does not evaluate.
std::string WhyNotEvaluated(const IndexExpr& expr, const SizeBindings& sizes) {
  using Kind = IndexExpr::Kind;
  if (expr.kind() == Kind::kConstant) return "";
  if (expr.kind() == Kind::kSize) {
    return sizes.count(expr.size())
               ? ""
               : absl::StrCat("%", expr.size()->name(), " is not bound");
  }
  for (const IndexExpr* side : {&expr.lhs(), &expr.rhs()}) {
    std::string why = WhyNotEvaluated(*side, sizes);
    if (!why.empty()) return why;
  }
  const bool divides = expr.kind() == Kind::kDiv || expr.kind() == Kind::kMod ||
                       expr.kind() == Kind::kCeilDiv;
  if (divides && EvaluateShapeExpr(expr.rhs(), sizes) == 0) {
    return absl::StrCat(expr.ToString(), " divides by zero");
  }
  return absl::StrCat(expr.ToString(), " overflows 64 bits");
}

// `expr` evaluated, if it evaluates to at least `min`; else nullopt and
// `*why` says what happened: "(%N - 8) is -4 with N=4", "(%N / %D) does not
// evaluate with N=4, D=0: %N / %D divides by zero".
std::optional<int64_t> EvaluateAtLeast(const IndexExpr& expr,
                                       const SizeBindings& sizes, int64_t min,
                                       std::string* why) {
  std::optional<int64_t> value = EvaluateShapeExpr(expr, sizes);
  const std::string with = SizesOf(expr, sizes);
  const std::string context = with.empty() ? "" : absl::StrCat(" with ", with);
  if (!value) {
    *why = absl::StrCat("(", expr.ToString(), ") does not evaluate", context,
                        ": ", WhyNotEvaluated(expr, sizes));
    return std::nullopt;
  }
  if (*value < min) {
    *why = absl::StrCat("(", expr.ToString(), ") is ", *value, context);
    return std::nullopt;
  }
  return value;
}

// `expr` evaluated, non-negative; else an error at `loc` about `what`.
absl::StatusOr<int64_t> EvaluateNonNegative(const IndexExpr& expr,
                                            const SizeBindings& sizes,
                                            const std::string& what,
                                            const Location& loc) {
  std::string why;
  std::optional<int64_t> value = EvaluateAtLeast(expr, sizes, 0, &why);
  if (!value) {
    return Error(loc) << what << " " << why
                      << (EvaluateShapeExpr(expr, sizes) ? "; it must be >= 0"
                                                         : "");
  }
  return *value;
}

}  // namespace

std::map<std::string, NamedThing> NamesOf(const Kernel& kernel) {
  std::map<std::string, NamedThing> names;
  for (const auto& size : kernel.sizes()) {
    names[size->name()] = {NameKind::kSize, size.get(), nullptr};
  }
  for (const Param& param : kernel.params()) {
    NameKind kind = param.kind == Param::Kind::kTensor ? NameKind::kTensor
                    : param.kind == Param::Kind::kTensorMap
                        ? NameKind::kTensorMap
                        : NameKind::kScalar;
    names[param.value->name()] = {kind, param.value, &param};
  }
  return names;
}

const char* KindWord(NameKind kind) {
  switch (kind) {
    case NameKind::kSize:
      return "a size";
    case NameKind::kTensor:
      return "a tensor";
    case NameKind::kTensorMap:
      return "a tensor map";
    case NameKind::kScalar:
      return "a scalar";
  }
  return "?";
}

std::optional<int64_t> EvaluateShapeExpr(const IndexExpr& expr,
                                         const SizeBindings& sizes) {
  return expr.Evaluate([&](const Value* size) -> std::optional<int64_t> {
    auto it = sizes.find(size);
    if (it == sizes.end()) return std::nullopt;
    return it->second;
  });
}

absl::StatusOr<std::vector<int64_t>> ShapeOf(const Value* value,
                                             const SizeBindings& sizes,
                                             const Location& loc) {
  std::vector<int64_t> shape;
  const int rank = value->type().rank();
  for (int d = 0; d < rank; ++d) {
    absl::StatusOr<int64_t> extent = EvaluateNonNegative(
        value->type().shape()[d], sizes,
        absl::StrCat("extent ", d, " of %", value->name()), loc);
    if (!extent.ok()) return extent.status();
    shape.push_back(*extent);
  }
  return shape;
}

namespace {

// Index tuple `linear` (row-major over `shape`) as text, e.g. "[1, 0]".
std::string TupleText(int64_t linear, const std::vector<int64_t>& shape) {
  std::vector<int64_t> tuple(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    tuple[d] = linear % shape[d];
    linear /= shape[d];
  }
  return ShapeText(tuple);
}

// The language's layout rule: distinct in-bounds index tuples of a tensor
// have distinct addresses (the passes and checkers compare indices, not
// addresses). `extent` has elements and a byte span that fits 64 bits.
// Strides nested like a row- or column-major layout in some order (each at
// least the span of the smaller ones) are distinct by construction; others
// are checked by listing the offsets of up to kMaxListed elements, which
// names two elements that share one. Past that, the layout is refused as
// unproven.
absl::Status CheckDistinctAddresses(const TensorExtent& extent,
                                    const Value* value, const Location& loc) {
  const int rank = static_cast<int>(extent.shape.size());
  std::vector<int> dims;  // those with more than one index
  for (int d = 0; d < rank; ++d) {
    if (extent.shape[d] > 1) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end(), [&](int a, int b) {
    return extent.strides[a] < extent.strides[b];
  });
  // No overflow: every offset is within the byte span, which fits.
  int64_t span = 0;  // the largest offset of the dims seen so far
  bool nested = true;
  for (int d : dims) {
    if (extent.strides[d] <= span) nested = false;
    span += (extent.shape[d] - 1) * extent.strides[d];
  }
  if (nested) return absl::OkStatus();

  constexpr int64_t kMaxListed = int64_t{1} << 22;
  int64_t count = 1;
  for (int64_t n : extent.shape) {
    if (n > kMaxListed / count) {
      return Error(loc) << "the strides " << ShapeText(extent.strides)
                        << " of %" << value->name() << " of shape "
                        << ShapeText(extent.shape)
                        << " do not nest, and kir-run lists the addresses of "
                           "at most "
                        << kMaxListed
                        << " elements to show that distinct elements have "
                           "distinct addresses";
    }
    count *= n;
  }
  std::vector<std::pair<int64_t, int64_t>> offsets;  // (offset, linear)
  offsets.reserve(count);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t offset = 0, rest = linear;
    for (int d = rank - 1; d >= 0; --d) {
      offset += rest % extent.shape[d] * extent.strides[d];
      rest /= extent.shape[d];
    }
    offsets.emplace_back(offset, linear);
  }
  std::sort(offsets.begin(), offsets.end());
  for (size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i].first != offsets[i - 1].first) continue;
    return Error(loc) << "the strides " << ShapeText(extent.strides)
                      << " of %" << value->name() << " give elements "
                      << TupleText(offsets[i - 1].second, extent.shape)
                      << " and " << TupleText(offsets[i].second, extent.shape)
                      << " the same address (element offset "
                      << offsets[i].first
                      << "); distinct elements of a tensor may not alias";
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TensorExtent> ExtentOf(const Param& param,
                                      const SizeBindings& sizes,
                                      const Location& loc) {
  TensorExtent extent;
  const Value* value = param.value;
  absl::StatusOr<std::vector<int64_t>> shape = ShapeOf(value, sizes, loc);
  if (!shape.ok()) return shape.status();
  extent.shape = *std::move(shape);
  const int rank = static_cast<int>(extent.shape.size());
  extent.strides.assign(rank, 1);
  auto overflow = [&]() -> absl::Status {
    return Error(loc) << "%" << value->name() << " of shape ["
                      << absl::StrJoin(extent.shape, ", ")
                      << "] spans more bytes than fit in 64 bits";
  };
  if (param.layout == TensorLayout::kStrided) {
    for (int d = 0; d < rank; ++d) {
      absl::StatusOr<int64_t> stride = EvaluateNonNegative(
          param.strides[d], sizes,
          absl::StrCat("stride ", d, " of %", value->name()), loc);
      if (!stride.ok()) return stride.status();
      extent.strides[d] = *stride;
    }
  } else if (param.layout == TensorLayout::kColumnMajor) {
    for (int d = 1; d < rank; ++d) {
      std::optional<int64_t> stride =
          CheckedMul(extent.strides[d - 1], extent.shape[d - 1]);
      if (!stride) return overflow();
      extent.strides[d] = *stride;
    }
  } else {
    for (int d = rank - 2; d >= 0; --d) {
      std::optional<int64_t> stride =
          CheckedMul(extent.strides[d + 1], extent.shape[d + 1]);
      if (!stride) return overflow();
      extent.strides[d] = *stride;
    }
  }
  for (int64_t n : extent.shape) {
    if (n == 0) return extent;  // no elements, no bytes
  }
  // The last element's offset, plus one, in elements; then bytes.
  std::optional<int64_t> elements = 1;
  for (int d = 0; d < rank && elements; ++d) {
    std::optional<int64_t> step =
        CheckedMul(extent.shape[d] - 1, extent.strides[d]);
    elements = step ? CheckedAdd(*elements, *step) : std::nullopt;
  }
  std::optional<int64_t> bytes =
      elements ? CheckedMul(*elements, DTypeBytes(value->type().dtype()))
               : std::nullopt;
  if (!bytes) return overflow();
  extent.bytes = *bytes;
  if (param.layout == TensorLayout::kStrided) {
    absl::Status distinct = CheckDistinctAddresses(extent, value, loc);
    if (!distinct.ok()) return distinct;
  }
  return extent;
}

absl::StatusOr<LaunchShape> LaunchShapeOf(const Kernel& kernel,
                                          const SizeBindings& sizes,
                                          const Location& loc) {
  static constexpr const char* kAxes = "xyz";
  static constexpr int64_t kGridLimits[] = {2147483647, 65535, 65535};
  static constexpr int64_t kBlockLimits[] = {1024, 1024, 64};
  static constexpr int64_t kClusterLimits[] = {8, 8, 8};
  struct Clause {
    const char* name;
    const Dim3& dims;
    const int64_t* limits;
    int64_t* out;
  };
  LaunchShape shape;
  const Clause clauses[] = {
      {"grid", kernel.grid, kGridLimits, shape.grid},
      {"block", kernel.block, kBlockLimits, shape.block},
      {"cluster", kernel.cluster, kClusterLimits, shape.cluster}};
  // Notes point at the dimension in the kernel, or at the clause, or at the
  // kernel when the clause was left out.
  auto where = [&](const Dim3& dims, int axis) {
    return dims.dim_loc[axis].known() ? dims.dim_loc[axis]
           : dims.loc.known()         ? dims.loc
                                      : kernel.loc();
  };
  for (const Clause& clause : clauses) {
    for (int axis = 0; axis < 3; ++axis) {
      const IndexExpr& expr = clause.dims[axis];
      const std::string what =
          absl::StrCat(clause.name, " dimension ", std::string(1, kAxes[axis]),
                       " of @", kernel.name());
      std::string why;
      std::optional<int64_t> value = EvaluateAtLeast(expr, sizes, 1, &why);
      if (value && *value > clause.limits[axis]) {
        why = absl::StrCat("(", expr.ToString(), ") is ", *value);
        const std::string with = SizesOf(expr, sizes);
        if (!with.empty()) absl::StrAppend(&why, " with ", with);
        value.reset();
      }
      if (!value) {
        return (Error(loc) << what << " " << why << "; CUDA takes 1.."
                           << clause.limits[axis])
            .Note(where(clause.dims, axis), "the dimension is here");
      }
      clause.out[axis] = *value;
    }
  }
  const int64_t threads = shape.block[0] * shape.block[1] * shape.block[2];
  if (threads > 1024) {
    return (Error(loc) << "the block of @" << kernel.name() << " has "
                       << threads << " threads here; CUDA takes at most 1024")
        .Note(kernel.block.loc.known() ? kernel.block.loc : kernel.loc(),
              "the block is here");
  }
  const int64_t ctas = shape.cluster[0] * shape.cluster[1] * shape.cluster[2];
  if (ctas > 8) {
    return (Error(loc) << "a cluster of @" << kernel.name() << " has " << ctas
                       << " CTAs here; at most 8 (the portable limit)")
        .Note(kernel.cluster.loc.known() ? kernel.cluster.loc : kernel.loc(),
              "the cluster is here");
  }
  for (int axis = 0; axis < 3; ++axis) {
    if (shape.grid[axis] % shape.cluster[axis] != 0) {
      return (Error(loc) << "grid dimension " << std::string(1, kAxes[axis])
                         << " of @" << kernel.name() << " (" << shape.grid[axis]
                         << " here) is not a multiple of the cluster's ("
                         << shape.cluster[axis] << ")")
          .Note(where(kernel.grid, axis), "the dimension is here");
    }
  }
  return shape;
}

absl::StatusOr<std::vector<int64_t>> ReferenceShape(
    const RefExpr& expr, const std::map<std::string, NamedThing>& names,
    const SizeBindings& sizes) {
  using Kind = RefExpr::Kind;
  std::vector<std::vector<int64_t>> operands;
  for (const auto& operand : expr.operands) {
    absl::StatusOr<std::vector<int64_t>> shape =
        ReferenceShape(*operand, names, sizes);
    if (!shape.ok()) return shape;
    operands.push_back(std::move(*shape));
  }
  switch (expr.kind) {
    case Kind::kNumber:
      return std::vector<int64_t>{};
    case Kind::kName: {
      auto it = names.find(expr.name);
      if (it == names.end()) {
        return Error(expr.loc) << "'" << expr.name
                               << "' is not a parameter or size of the kernel";
      }
      if (it->second.kind == NameKind::kTensorMap) {
        return Error(expr.loc)
               << "'" << expr.name << "' is a tensor map; name its tensor";
      }
      if (it->second.kind != NameKind::kTensor) return std::vector<int64_t>{};
      return ShapeOf(it->second.value, sizes, expr.loc);
    }
    case Kind::kNeg:
    case Kind::kRound:
    case Kind::kExp:
    case Kind::kAbs:
      return operands[0];
    case Kind::kAdd:
    case Kind::kSub:
    case Kind::kMul:
    case Kind::kDiv:
      if (operands[0].empty()) return operands[1];
      if (operands[1].empty() || operands[0] == operands[1]) return operands[0];
      return Error(expr.loc)
             << "elementwise operands have shapes " << ShapeText(operands[0])
             << " and " << ShapeText(operands[1]);
    case Kind::kTranspose:
      if (operands[0].size() != 2) {
        return Error(expr.loc) << ".T needs a 2-D operand, got shape "
                               << ShapeText(operands[0]);
      }
      return std::vector<int64_t>{operands[0][1], operands[0][0]};
    case Kind::kMatmul:
      if (operands[0].size() != 2 || operands[1].size() != 2 ||
          operands[0][1] != operands[1][0]) {
        return Error(expr.loc)
               << "'@' needs [m, k] @ [k, n], got " << ShapeText(operands[0])
               << " @ " << ShapeText(operands[1]);
      }
      return std::vector<int64_t>{operands[0][0], operands[1][1]};
  }
  return std::vector<int64_t>{};
}

absl::StatusOr<SizeBindings> BindSizes(
    const RunDirective& directive,
    const std::map<std::string, NamedThing>& names) {
  SizeBindings sizes;
  for (const Binding& binding : directive.bindings) {
    auto it = names.find(binding.name);
    if (it == names.end() || it->second.kind != NameKind::kSize) continue;
    int64_t value = 0;
    if (!binding.is_number || !absl::SimpleAtoi(binding.number_text, &value) ||
        value < 0) {
      return Error(binding.loc)
             << "size '" << binding.name << "' takes an integer >= 0";
    }
    sizes[it->second.value] = value;
  }
  return sizes;
}

absl::Status ValidateDirective(const RunDirective& directive,
                               const Module& module) {
  const Kernel* kernel = module.FindKernel(directive.kernel);
  if (kernel == nullptr) {
    std::vector<std::string> known;
    for (const auto& k : module.kernels) known.push_back("@" + k->name());
    return Error(directive.kernel_loc)
           << "no kernel @" << directive.kernel << " in this file (it has "
           << (known.empty() ? "none" : absl::StrJoin(known, ", ")) << ")";
  }
  const std::map<std::string, NamedThing> names = NamesOf(*kernel);
  std::vector<absl::Status> errors;
  for (const Binding& binding : directive.bindings) {
    auto it = names.find(binding.name);
    if (it == names.end()) {
      errors.push_back(Error(binding.loc)
                       << "@" << kernel->name() << " has no parameter or size '"
                       << binding.name << "'");
      continue;
    }
    const NameKind kind = it->second.kind;
    if (kind == NameKind::kTensorMap) {
      errors.push_back(Error(binding.loc)
                       << "'" << binding.name
                       << "' is a tensor map; kir-run builds it from its "
                          "tensor, so it takes no value");
    } else if (kind == NameKind::kTensor && binding.is_number) {
      errors.push_back(Error(binding.loc)
                       << "'" << binding.name
                       << "' is a tensor; give it an input such as "
                          "normal(seed=1), uniform(seed=1), iota(), fill(x) "
                          "or zeros");
    } else if (kind != NameKind::kTensor && !binding.is_number) {
      errors.push_back(Error(binding.loc)
                       << "'" << binding.name << "' is " << KindWord(kind)
                       << "; it takes a number");
    } else if (kind == NameKind::kScalar) {
      if (absl::Status s = CheckScalarValue(binding, it->second.value); !s.ok())
        errors.push_back(s);
    } else if (kind == NameKind::kTensor &&
               it->second.value->type().rank() > kMaxTensorRank) {
      errors.push_back(Error(binding.loc)
                       << "kir-run handles tensors of rank " << kMaxTensorRank
                       << " at most; '" << binding.name << "' has rank "
                       << it->second.value->type().rank());
    }
  }
  absl::StatusOr<SizeBindings> sizes = BindSizes(directive, names);
  if (!sizes.ok()) errors.push_back(sizes.status());
  for (const auto& [name, thing] : names) {
    if (thing.kind == NameKind::kTensorMap) continue;
    bool bound = false;
    for (const Binding& binding : directive.bindings)
      bound = bound || binding.name == name;
    if (!bound) {
      errors.push_back(Error(directive.kernel_loc)
                       << "@" << kernel->name() << " needs a value for "
                       << KindWord(thing.kind) << " '" << name << "'"
                       << (thing.kind == NameKind::kTensor
                               ? " (outputs too: e.g. fill(nan), so that "
                                 "elements never written are caught)"
                               : ""));
    }
  }
  if (!errors.empty()) return JoinStatuses(errors);

  // What the sizes make of the launch, the tensors and the workspaces.
  absl::StatusOr<LaunchShape> launch =
      LaunchShapeOf(*kernel, *sizes, directive.kernel_loc);
  if (!launch.ok()) errors.push_back(launch.status());
  for (const Binding& binding : directive.bindings) {
    const NamedThing& thing = names.at(binding.name);
    if (thing.kind != NameKind::kTensor) continue;
    absl::StatusOr<TensorExtent> extent =
        ExtentOf(*thing.param, *sizes, binding.loc);
    if (!extent.ok()) errors.push_back(extent.status());
  }
  Walk(kernel->body(), [&](const Op& op) {
    if (op.kind() != OpKind::kAllocWorkspace || op.num_results() != 1) return;
    const Value* workspace = op.result();
    absl::StatusOr<std::vector<int64_t>> shape =
        ShapeOf(workspace, *sizes, directive.kernel_loc);
    std::optional<int64_t> elements =
        shape.ok() ? CheckedProduct(*shape) : std::nullopt;
    std::optional<int64_t> bytes =
        elements ? CheckedMul(*elements, DTypeBytes(workspace->type().dtype()))
                 : std::nullopt;
    if (!shape.ok()) {
      errors.push_back(shape.status());
    } else if (!bytes) {
      errors.push_back((Error(directive.kernel_loc)
                        << "workspace %" << workspace->name() << " of shape ["
                        << absl::StrJoin(*shape, ", ")
                        << "] has more bytes than fit in 64 bits")
                           .Note(op.loc(), "the workspace is allocated here"));
    }
  });
  if (!errors.empty()) return JoinStatuses(errors);

  for (const Check& check : directive.checks) {
    auto it = names.find(check.output);
    if (it == names.end() || it->second.kind != NameKind::kTensor) {
      errors.push_back(Error(check.loc)
                       << "'" << check.output
                       << "' is not a tensor parameter of @" << kernel->name());
      continue;
    }
    absl::StatusOr<std::vector<int64_t>> output_shape =
        ShapeOf(it->second.value, *sizes, check.loc);
    absl::StatusOr<std::vector<int64_t>> reference_shape =
        ReferenceShape(*check.reference, names, *sizes);
    if (!output_shape.ok()) {
      errors.push_back(output_shape.status());
    } else if (!reference_shape.ok()) {
      errors.push_back(reference_shape.status());
    } else if (!reference_shape->empty() && *reference_shape != *output_shape) {
      errors.push_back(Error(check.reference->loc)
                       << "the reference has shape "
                       << ShapeText(*reference_shape) << ", but '"
                       << check.output << "' has shape "
                       << ShapeText(*output_shape));
    }
  }
  return JoinStatuses(errors);
}

}  // namespace kir
