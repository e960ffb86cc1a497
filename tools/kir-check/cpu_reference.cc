#include "tools/kir-check/cpu_reference.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/diagnostics.h"
#include "tools/kir-check/values.h"

namespace kir::check {
namespace {

// SplitMix64, as in kir-run's generator: element i of a tensor gets the
// same value for a seed whatever the tensor's size or layout.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double Unit(uint64_t bits) {  // (0, 1)
  return (static_cast<double>(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double CosPi(double x) {
  // cos(pi x) with the argument reduced first, so that multiples of 1/2
  // come out exact.
  double r = std::fmod(x, 2.0);
  if (r < 0) r += 2.0;
  if (r == 0.5 || r == 1.5) return 0.0;
  return std::cos(M_PI * r);
}

// What kir-run's store_element writes for a double (through f32 for the
// float types, rint for the integers).
Lane Stored(DType dtype, double value) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
      return F32ToLane(dtype, static_cast<float>(value));
    case DType::kI1:
      return value != 0.0;
    case DType::kI32:
      return IntToLane(dtype, static_cast<int32_t>(std::rint(value)));
    default:
      return IntToLane(dtype, static_cast<int64_t>(std::rint(value)));
  }
}

std::vector<int64_t> Unravel(int64_t linear,
                             const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// Calls fn(i, offset) for every element in row-major logical order.
template <typename Fn>
void ForEachElement(const TensorData& tensor, Fn&& fn) {
  const int64_t n = tensor.elements();
  const int rank = static_cast<int>(tensor.shape.size());
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    fn(i, offset);
    for (int d = rank - 1; d >= 0; --d) {
      offset += tensor.strides[d];
      if (++index[d] < tensor.shape[d]) break;
      offset -= tensor.strides[d] * tensor.shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace

void InitializeTensor(TensorData& tensor, const InputInit& init) {
  const int bytes = DTypeBytes(tensor.dtype);
  ForEachElement(tensor, [&](int64_t i, int64_t offset) {
    double v = init.first;
    const uint64_t base = init.seed * 0x632be59bd9b4e019ull + 2 * i;
    switch (init.kind) {
      case InputInit::Kind::kNormal: {
        const uint64_t h = Mix(base);
        const uint64_t g = Mix(h ^ 0xd6e8feb86659fd93ull);
        v = init.first + init.second * std::sqrt(-2.0 * std::log(Unit(h))) *
                             CosPi(2.0 * Unit(g));
        break;
      }
      case InputInit::Kind::kUniform:
        v = init.first + (init.second - init.first) * Unit(Mix(base));
        break;
      case InputInit::Kind::kRandInt:
        v = init.first +
            std::floor((init.second - init.first + 1.0) * Unit(Mix(base)));
        break;
      case InputInit::Kind::kIota:
        v = init.first + init.second * static_cast<double>(i);
        break;
      case InputInit::Kind::kFill:
        break;
    }
    StoreLane(tensor.dtype, Stored(tensor.dtype, v),
              &tensor.bytes[offset * bytes]);
  });
}

DenseF32 TensorToF32(const TensorData& tensor) {
  DenseF32 out;
  out.shape = tensor.shape;
  out.values.resize(tensor.elements());
  const int bytes = DTypeBytes(tensor.dtype);
  ForEachElement(tensor, [&](int64_t i, int64_t offset) {
    const Lane lane = LoadLane(tensor.dtype, &tensor.bytes[offset * bytes]);
    out.values[i] = static_cast<float>(LaneToDouble(tensor.dtype, lane));
  });
  return out;
}

namespace {

float RoundTo(const std::string& type, float x) {
  if (type == "bf16") return Bf16ToF32(F32ToBf16(x));
  if (type == "f16") return F16ToF32(F32ToF16(x));
  return x;
}

}  // namespace

absl::StatusOr<DenseF32> EvaluateReference(
    const RefExpr& expr,
    const std::function<absl::StatusOr<DenseF32>(const std::string&)>& lookup) {
  using Kind = RefExpr::Kind;
  std::vector<DenseF32> operands;
  for (const auto& operand : expr.operands) {
    absl::StatusOr<DenseF32> value = EvaluateReference(*operand, lookup);
    if (!value.ok()) return value;
    operands.push_back(std::move(*value));
  }
  DenseF32 out;
  auto unary = [&](auto fn) {
    out.shape = operands[0].shape;
    out.values.resize(operands[0].values.size());
    for (size_t i = 0; i < out.values.size(); ++i)
      out.values[i] = fn(operands[0].values[i]);
  };
  auto binary = [&](auto fn) -> absl::Status {
    const DenseF32& x = operands[0];
    const DenseF32& y = operands[1];
    const bool x_scalar = x.shape.empty(), y_scalar = y.shape.empty();
    if (!x_scalar && !y_scalar && x.shape != y.shape) {
      return Error(expr.loc) << "shapes " << ShapeText(x.shape) << " and "
                             << ShapeText(y.shape) << " differ";
    }
    out.shape = x_scalar ? y.shape : x.shape;
    const size_t n = x_scalar ? y.values.size() : x.values.size();
    out.values.resize(n);
    for (size_t i = 0; i < n; ++i)
      out.values[i] =
          fn(x.values[x_scalar ? 0 : i], y.values[y_scalar ? 0 : i]);
    return absl::OkStatus();
  };
  switch (expr.kind) {
    case Kind::kNumber:
      out.values = {static_cast<float>(expr.number)};
      return out;
    case Kind::kName:
      return lookup(expr.name);
    case Kind::kNeg:
      unary([](float x) { return -x; });
      return out;
    case Kind::kExp:
      unary([](float x) { return std::exp(x); });
      return out;
    case Kind::kAbs:
      unary([](float x) { return std::fabs(x); });
      return out;
    case Kind::kRound: {
      const std::string type = expr.round_to;
      unary([&](float x) { return RoundTo(type, x); });
      return out;
    }
    case Kind::kAdd:
      if (absl::Status s = binary([](float a, float b) { return a + b; });
          !s.ok())
        return s;
      return out;
    case Kind::kSub:
      if (absl::Status s = binary([](float a, float b) { return a - b; });
          !s.ok())
        return s;
      return out;
    case Kind::kMul:
      if (absl::Status s = binary([](float a, float b) { return a * b; });
          !s.ok())
        return s;
      return out;
    case Kind::kDiv:
      if (absl::Status s = binary([](float a, float b) { return a / b; });
          !s.ok())
        return s;
      return out;
    case Kind::kTranspose: {
      const DenseF32& x = operands[0];
      if (x.shape.size() != 2) {
        return Error(expr.loc)
               << ".T needs a 2-D operand, got shape " << ShapeText(x.shape);
      }
      const int64_t rows = x.shape[0], cols = x.shape[1];
      out.shape = {cols, rows};
      out.values.resize(x.values.size());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          out.values[c * rows + r] = x.values[r * cols + c];
      return out;
    }
    case Kind::kMatmul: {
      const DenseF32& a = operands[0];
      const DenseF32& b = operands[1];
      if (a.shape.size() != 2 || b.shape.size() != 2 ||
          a.shape[1] != b.shape[0]) {
        return Error(expr.loc)
               << "@ needs [m, k] @ [k, n], got " << ShapeText(a.shape) << " @ "
               << ShapeText(b.shape);
      }
      const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
      out.shape = {m, n};
      out.values.assign(m * n, 0.0f);
      for (int64_t i = 0; i < m; ++i) {
        float* row = &out.values[i * n];
        for (int64_t kk = 0; kk < k; ++kk) {
          const float x = a.values[i * k + kk];
          const float* b_row = &b.values[kk * n];
          // One multiply-add per step, rounded to f32 (the product is exact
          // in double; the sum is rounded there, then to f32).
          const double xd = x;
          for (int64_t j = 0; j < n; ++j)
            row[j] = static_cast<float>(xd * b_row[j] + row[j]);
        }
      }
      return out;
    }
  }
  return Error(expr.loc) << "unknown reference expression";
}

absl::StatusOr<OutputComparison> CompareOutput(const TensorData& got,
                                               const DenseF32& expected,
                                               bool exact, double rtol,
                                               double atol) {
  if (!expected.shape.empty() && expected.shape != got.shape) {
    return absl::InvalidArgumentError(
        absl::StrCat("the reference has shape ", ShapeText(expected.shape),
                     ", the output ", ShapeText(got.shape)));
  }
  OutputComparison result;
  const DenseF32 values = TensorToF32(got);
  result.elements = static_cast<int64_t>(values.values.size());
  const float relative = static_cast<float>(rtol);
  const float absolute = static_cast<float>(atol);
  for (int64_t i = 0; i < result.elements; ++i) {
    const float g = values.values[i];
    const float e = expected.values[expected.shape.empty() ? 0 : i];
    float abs_error, rel_error;
    bool ok;
    if (std::isnan(g) || std::isnan(e)) {
      ok = std::isnan(g) && std::isnan(e);
      abs_error = rel_error = ok ? 0.0f : INFINITY;
    } else if (std::isinf(g) || std::isinf(e)) {
      ok = g == e;
      abs_error = rel_error = ok ? 0.0f : INFINITY;
    } else {
      abs_error = std::fabs(g - e);
      rel_error = e != 0.0f ? abs_error / std::fabs(e) : 0.0f;
      ok = exact ? g == e : abs_error <= absolute + relative * std::fabs(e);
    }
    result.max_abs_error = std::max<double>(result.max_abs_error, abs_error);
    result.max_rel_error = std::max<double>(result.max_rel_error, rel_error);
    if (!ok) {
      if (result.mismatches == 0) {
        result.first_bad_index = Unravel(i, got.shape);
        result.got = g;
        result.expected = e;
      }
      ++result.mismatches;
    }
  }
  return result;
}

}  // namespace kir::check
