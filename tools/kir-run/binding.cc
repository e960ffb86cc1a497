#include "tools/kir-run/binding.h"

#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/diagnostics.h"

namespace kir {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// A scalar parameter's value fits its type: integers are whole and in
// range, i1 is 0 or 1.
absl::Status CheckScalarValue(const Binding& binding, const Value* param) {
  const DType dtype = param->type().dtype();
  if (!IsInteger(dtype)) return absl::OkStatus();
  double low = -9.2233720368547758e18, high = 9.2233720368547748e18;
  if (dtype == DType::kI1) {
    low = 0;
    high = 1;
  } else if (dtype == DType::kI32) {
    low = -2147483648.0;
    high = 2147483647.0;
  }
  if (binding.number != std::floor(binding.number) || binding.number < low ||
      binding.number > high) {
    return Error(binding.loc)
           << "'" << binding.name << "' is " << DTypeName(dtype)
           << "; it takes a whole number in [" << low << ", " << high << "]";
  }
  return absl::OkStatus();
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
  for (const IndexExpr& extent : value->type().shape()) {
    std::optional<int64_t> evaluated = EvaluateShapeExpr(extent, sizes);
    if (!evaluated.has_value() || *evaluated < 0) {
      return Error(loc) << "the shape of %" << value->name() << " ("
                        << extent.ToString()
                        << ") does not evaluate to a size >= 0 here";
    }
    shape.push_back(*evaluated);
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
