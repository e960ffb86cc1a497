#include "tools/kir-check/check.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ir/diagnostics.h"
#include "tools/kir-check/values.h"
#include "tools/kir-run/binding.h"

namespace kir::check {
namespace {

std::vector<int64_t> ParamStrides(const Param& param,
                                  const std::vector<int64_t>& shape,
                                  const SizeBindings& sizes) {
  std::vector<int64_t> strides(shape.size(), 1);
  if (param.layout == TensorLayout::kStrided) {
    for (size_t d = 0; d < shape.size(); ++d)
      strides[d] = EvaluateShapeExpr(param.strides[d], sizes).value_or(0);
  } else if (param.layout == TensorLayout::kColumnMajor) {
    for (size_t d = 1; d < shape.size(); ++d)
      strides[d] = strides[d - 1] * shape[d - 1];
  } else {
    strides = RowMajorStrides(shape);
  }
  return strides;
}

std::string IndexText(const std::vector<int64_t>& index) {
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

// The first element where two runs' tensors differ, if any.
struct Difference {
  int64_t count = 0;
  std::vector<int64_t> index;
  std::string got, expected;
};

Difference Compare(const TensorData& got, const TensorData& expected) {
  Difference difference;
  const int64_t n = got.elements();
  const int bytes = DTypeBytes(got.dtype);
  std::vector<int64_t> index(got.shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) {
      for (int d = static_cast<int>(got.shape.size()) - 1; d >= 0; --d) {
        if (++index[d] < got.shape[d]) break;
        index[d] = 0;
      }
    }
    const Lane a = LoadLane(got.dtype, &got.bytes[got.Offset(index) * bytes]);
    const Lane b = LoadLane(expected.dtype,
                            &expected.bytes[expected.Offset(index) * bytes]);
    if (SameValue(got.dtype, a, b)) continue;
    if (difference.count++ == 0) {
      difference.index = index;
      difference.got = LaneToString(got.dtype, a);
      difference.expected = LaneToString(got.dtype, b);
    }
  }
  return difference;
}

}  // namespace

absl::StatusOr<std::vector<RunDirective>> DirectivesOf(
    const std::shared_ptr<const SourceFile>& source,
    const std::string& directive) {
  if (directive.empty()) return ParseRunDirectives(source);
  auto command_line = std::make_shared<SourceFile>();
  command_line->name = "<--directive>";
  command_line->text = absl::StrCat("// run: ", directive);
  return ParseRunDirectives(command_line);
}

absl::StatusOr<Launch> BuildLaunch(const RunDirective& directive,
                                   const Kernel& kernel) {
  const std::map<std::string, NamedThing> names = NamesOf(kernel);
  absl::StatusOr<SizeBindings> sizes = BindSizes(directive, names);
  if (!sizes.ok()) return sizes.status();
  Launch launch;
  for (const Binding& binding : directive.bindings) {
    auto found = names.find(binding.name);
    if (found == names.end()) {
      return Error(binding.loc)
             << "@" << kernel.name() << " has no " << binding.name;
    }
    const NamedThing& thing = found->second;
    switch (thing.kind) {
      case NameKind::kSize:
        launch.sizes[binding.name] = sizes->at(thing.value);
        break;
      case NameKind::kScalar:
        launch.scalars[binding.name] = binding.number;
        break;
      case NameKind::kTensor: {
        absl::StatusOr<std::vector<int64_t>> shape =
            ShapeOf(thing.value, *sizes, binding.loc);
        if (!shape.ok()) return shape.status();
        int64_t elements = 1;
        for (int64_t extent : *shape) elements *= extent;
        if (elements > (int64_t{1} << 28)) {
          return Error(binding.loc)
                 << "%" << binding.name << " has " << elements
                 << " elements, too many to interpret";
        }
        TensorData tensor =
            MakeTensor(thing.value->type().dtype(), *shape,
                       ParamStrides(*thing.param, *shape, *sizes));
        InitializeTensor(tensor, binding.init);
        launch.tensors[binding.name] = std::move(tensor);
        break;
      }
      case NameKind::kTensorMap:
        return Error(binding.loc) << "tensor maps are not bound";
    }
  }
  return launch;
}

absl::StatusOr<Launch> EmptyLaunch(const Kernel& kernel) {
  if (!kernel.sizes().empty() || !kernel.params().empty()) {
    return Error(kernel.loc())
           << "@" << kernel.name()
           << " has sizes or parameters: give a `// run:` directive (or "
              "--directive) to bind them";
  }
  return Launch();
}

absl::StatusOr<int> EvaluateChecks(
    const RunDirective& directive, const Kernel& kernel, const Launch& inputs,
    const std::map<std::string, TensorData>& outputs, std::string& log) {
  const std::map<std::string, NamedThing> names = NamesOf(kernel);
  auto lookup = [&](const std::string& name) -> absl::StatusOr<DenseF32> {
    auto tensor = inputs.tensors.find(name);
    if (tensor != inputs.tensors.end()) return TensorToF32(tensor->second);
    DenseF32 scalar;
    auto size = inputs.sizes.find(name);
    if (size != inputs.sizes.end()) {
      scalar.values = {static_cast<float>(size->second)};
      return scalar;
    }
    auto value = inputs.scalars.find(name);
    auto thing = names.find(name);
    if (value == inputs.scalars.end() || thing == names.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unbound name ", name));
    }
    // The value as the kernel sees it, rounded to the parameter's type.
    const DType dtype = thing->second.value->type().dtype();
    scalar.values = {static_cast<float>(
        LaneToDouble(dtype, DoubleToLane(dtype, value->second)))};
    return scalar;
  };
  int failed = 0;
  for (const Check& check : directive.checks) {
    absl::StatusOr<DenseF32> reference =
        EvaluateReference(*check.reference, lookup);
    if (!reference.ok()) return reference.status();
    auto output = outputs.find(check.output);
    if (output == outputs.end()) {
      return Error(check.loc) << "%" << check.output << " is not an output";
    }
    absl::StatusOr<OutputComparison> comparison = CompareOutput(
        output->second, *reference, check.exact, check.rtol, check.atol);
    if (!comparison.ok())
      return Error(check.loc) << comparison.status().message();
    const bool ok = comparison->mismatches == 0;
    if (!ok) ++failed;
    absl::StrAppend(
        &log, absl::StrFormat(
                  "  %s %s: %s (max abs err %.3g, max rel err %.3g over %d "
                  "elements)\n",
                  ok ? "ok" : "MISMATCH", check.output,
                  ok ? "matches"
                     : absl::StrCat(comparison->mismatches, " of ",
                                    comparison->elements, " elements differ"),
                  comparison->max_abs_error, comparison->max_rel_error,
                  comparison->elements));
    if (!ok) {
      const double bound =
          check.exact
              ? 0.0
              : check.atol + check.rtol * std::fabs(comparison->expected);
      absl::StrAppend(
          &log, absl::StrFormat(
                    "    first bad element %s%s: got %.8g, "
                    "expected %.8g (|diff| %.3g, allowed %.3g)\n",
                    check.output, IndexText(comparison->first_bad_index),
                    comparison->got, comparison->expected,
                    std::fabs(comparison->got - comparison->expected), bound));
    }
  }
  return failed;
}

CheckReport CheckKernel(const Program& checked, const Program* reference,
                        const RunDirective* directive, const Launch& launch,
                        const CheckOptions& options) {
  CheckReport report;
  report.op_executions.assign(checked.ops().size(), 0);
  std::map<std::string, TensorData> expected;
  if (reference != nullptr) {
    MachineOptions reference_options;
    reference_options.schedule = Schedule::kReference;
    RunOutcome outcome = RunKernel(*reference, launch, reference_options);
    report.reference_stats = outcome.stats;
    if (!outcome.error.ok()) {
      report.error = absl::InvalidArgumentError(
          absl::StrCat("the reference run of the unlowered kernel failed:\n",
                       outcome.error.message()));
      return report;
    }
    for (const Hazard& hazard : outcome.hazards.hazards()) {
      // Under the reference schedule only deadlocks and collective misuse
      // can show: the unlowered kernel itself is wrong.
      Hazard copy = hazard;
      copy.message = absl::StrCat(
          "in the reference run of the unlowered kernel: ", hazard.message);
      report.hazards.Add(std::move(copy));
    }
    expected = std::move(outcome.tensors);
  }
  for (int run = 0; run < options.seeds; ++run) {
    MachineOptions machine;
    machine.schedule = options.schedule;
    machine.track_hazards = true;
    machine.fence_model = options.fence_model;
    machine.seed = options.first_seed + static_cast<uint64_t>(run);
    RunOutcome outcome = RunKernel(checked, launch, machine);
    ++report.runs;
    report.stats.push_back(outcome.stats);
    for (size_t i = 0; i < outcome.op_executions.size(); ++i)
      report.op_executions[i] += outcome.op_executions[i];
    for (Hazard hazard : outcome.hazards.hazards()) {
      hazard.occurrences = 1;
      report.hazards.Add(std::move(hazard));
    }
    if (!outcome.error.ok()) {
      if (report.error.ok()) report.error = outcome.error;
      continue;
    }
    if (outcome.stopped) continue;
    bool mismatch = false;
    for (const auto& [name, tensor] : expected) {
      // The outputs are what the directive checks (a lowered kernel may use
      // other parameters as scratch, like split-K's workspace); without
      // checks, every tensor.
      if (directive != nullptr && !directive->checks.empty() &&
          std::none_of(
              directive->checks.begin(), directive->checks.end(),
              [&](const Check& check) { return check.output == name; }))
        continue;
      auto got = outcome.tensors.find(name);
      if (got == outcome.tensors.end()) continue;
      const Difference difference = Compare(got->second, tensor);
      if (difference.count == 0) continue;
      mismatch = true;
      Hazard hazard;
      hazard.kind = HazardKind::kOutput;
      hazard.key = name;
      hazard.message = absl::StrCat(
          "output %", name,
          " differs from the reference run of the unlowered "
          "kernel in ",
          difference.count, " elements (first ", name,
          IndexText(difference.index), ": got ", difference.got, ", expected ",
          difference.expected, ", seed ", machine.seed, ")");
      report.hazards.Add(std::move(hazard));
    }
    if (directive != nullptr && !directive->checks.empty()) {
      std::string log;
      absl::StatusOr<int> failed = EvaluateChecks(*directive, checked.kernel(),
                                                  launch, outcome.tensors, log);
      if (!failed.ok()) {
        if (report.error.ok()) report.error = failed.status();
      } else if (*failed > 0) {
        mismatch = true;
        Hazard hazard;
        hazard.kind = HazardKind::kOutput;
        hazard.key = "directive";
        std::vector<std::string> lines;
        for (absl::string_view line : absl::StrSplit(log, '\n')) {
          line = absl::StripLeadingAsciiWhitespace(line);
          if (absl::StartsWith(line, "MISMATCH") ||
              absl::StartsWith(line, "first bad"))
            lines.emplace_back(line);
        }
        hazard.message =
            absl::StrCat("the run directive's checks fail (seed ", machine.seed,
                         "): ", absl::StrJoin(lines, "; "));
        report.hazards.Add(std::move(hazard));
      }
    }
    if (mismatch) ++report.output_mismatches;
  }
  return report;
}

std::string RenderReport(const CheckReport& report, const Kernel& kernel) {
  std::string out;
  if (!report.error.ok()) absl::StrAppend(&out, report.error.message(), "\n");
  for (const Hazard& hazard : report.hazards.hazards()) {
    std::string suffix;
    if (hazard.occurrences < report.runs) {
      suffix = absl::StrCat(" (in ", hazard.occurrences, " of ", report.runs,
                            " runs)");
    }
    absl::StrAppend(&out, RenderHazard(hazard, kernel, suffix).Render());
  }
  return out;
}

}  // namespace kir::check
