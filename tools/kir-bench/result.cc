#include "tools/kir-bench/result.h"

#include <algorithm>
#include <functional>
#include <map>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace kir::bench {

double Tflops(const ProblemResult& problem, const VariantResult& variant) {
  if (!(variant.median_ms > 0)) return NAN;
  return problem.flops / (variant.median_ms * 1e-3) / 1e12;
}

double PercentOfCublas(const ProblemResult& problem,
                       const VariantResult& variant) {
  if (!(variant.median_ms > 0) || !(problem.baseline_ms > 0)) return NAN;
  return 100.0 * problem.baseline_ms / variant.median_ms;
}

double RatioToFirst(const ProblemResult& problem, size_t variant) {
  if (variant >= problem.variants.size()) return NAN;
  const std::vector<double>& first = problem.variants.front().repeat_ms;
  const std::vector<double>& other = problem.variants[variant].repeat_ms;
  std::vector<double> ratios;
  for (size_t r = 0; r < std::min(first.size(), other.size()); ++r) {
    if (first[r] > 0) ratios.push_back(other[r] / first[r]);
  }
  if (ratios.empty()) return NAN;
  std::sort(ratios.begin(), ratios.end());
  const size_t half = ratios.size() / 2;
  return ratios.size() % 2 ? ratios[half]
                           : (ratios[half - 1] + ratios[half]) / 2;
}

// The text form: one `field value` per line, values C-escaped; a `variant`
// or `candidate` line starts a new element, whose fields follow.
namespace {

std::string Number(double value) { return absl::StrFormat("%.17g", value); }

std::string Numbers(const std::vector<double>& values) {
  return absl::StrJoin(values, " ", [](std::string* out, double value) {
    out->append(Number(value));
  });
}

bool ParseNumbers(absl::string_view text, std::vector<double>& values) {
  values.clear();
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    double value = 0;
    if (!absl::SimpleAtod(word, &value)) return false;
    values.push_back(value);
  }
  return true;
}

}  // namespace

std::string SerializeResult(const ProblemResult& r) {
  std::string out;
  auto field = [&](absl::string_view name, absl::string_view value) {
    absl::StrAppend(&out, name, " ", absl::CEscape(value), "\n");
  };
  field("name", r.name);
  field("key", r.key);
  field("line", absl::StrCat(r.line));
  field("flops", Number(r.flops));
  field("config", r.config);
  field("config_source", r.config_source);
  field("status", r.status);
  field("message", r.message);
  field("device", r.device);
  field("gpu", r.gpu);
  field("baseline_name", r.baseline_name);
  field("baseline_ms", Number(r.baseline_ms));
  field("baseline_repeat_ms", Numbers(r.baseline_repeat_ms));
  field("heuristic_config", r.heuristic_config);
  field("heuristic_ms", Number(r.heuristic_ms));
  field("heuristic_cublas_ms", Number(r.heuristic_cublas_ms));
  field("seconds", Number(r.seconds));
  field("log", r.log);
  for (const VariantResult& v : r.variants) {
    out += "variant\n";
    field("v.pipeline", v.pipeline);
    field("v.config", v.config);
    field("v.checked", v.checked ? "1" : "0");
    field("v.passed", v.passed ? "1" : "0");
    field("v.max_abs_error", Number(v.max_abs_error));
    field("v.max_rel_error", Number(v.max_rel_error));
    field("v.median_ms", Number(v.median_ms));
    field("v.min_ms", Number(v.min_ms));
    field("v.max_ms", Number(v.max_ms));
    field("v.repeat_ms", Numbers(v.repeat_ms));
    field("v.registers", absl::StrCat(v.registers));
    field("v.spill_bytes", absl::StrCat(v.spill_bytes));
    field("v.shared_bytes", absl::StrCat(v.shared_bytes));
  }
  for (const CandidateResult& c : r.candidates) {
    out += "candidate\n";
    field("c.config", c.config);
    field("c.status", c.status);
    field("c.median_ms", Number(c.median_ms));
    field("c.cublas_ms", Number(c.cublas_ms));
  }
  return out;
}

absl::StatusOr<ProblemResult> DeserializeResult(absl::string_view text) {
  ProblemResult r;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++line_number;
    auto bad = [&](absl::string_view why) {
      return absl::DataLossError(absl::StrCat("result line ", line_number, ": ",
                                              why, ": '", line, "'"));
    };
    if (line == "variant") {
      r.variants.emplace_back();
      continue;
    }
    if (line == "candidate") {
      r.candidates.emplace_back();
      continue;
    }
    const size_t space = line.find(' ');
    if (space == absl::string_view::npos) return bad("no value");
    const absl::string_view name = line.substr(0, space);
    std::string value;
    if (!absl::CUnescape(line.substr(space + 1), &value))
      return bad("bad escape");
    auto number = [&](double& out) { return absl::SimpleAtod(value, &out); };
    auto integer = [&](auto& out) { return absl::SimpleAtoi(value, &out); };
    bool ok = true;
    if (absl::StartsWith(name, "v.")) {
      if (r.variants.empty()) return bad("a variant field before `variant`");
      VariantResult& v = r.variants.back();
      if (name == "v.pipeline")
        v.pipeline = value;
      else if (name == "v.config")
        v.config = value;
      else if (name == "v.checked")
        v.checked = value == "1";
      else if (name == "v.passed")
        v.passed = value == "1";
      else if (name == "v.max_abs_error")
        ok = number(v.max_abs_error);
      else if (name == "v.max_rel_error")
        ok = number(v.max_rel_error);
      else if (name == "v.median_ms")
        ok = number(v.median_ms);
      else if (name == "v.min_ms")
        ok = number(v.min_ms);
      else if (name == "v.max_ms")
        ok = number(v.max_ms);
      else if (name == "v.repeat_ms")
        ok = ParseNumbers(value, v.repeat_ms);
      else if (name == "v.registers")
        ok = integer(v.registers);
      else if (name == "v.spill_bytes")
        ok = integer(v.spill_bytes);
      else if (name == "v.shared_bytes")
        ok = integer(v.shared_bytes);
      else
        return bad("unknown field");
    } else if (absl::StartsWith(name, "c.")) {
      if (r.candidates.empty())
        return bad("a candidate field before `candidate`");
      CandidateResult& c = r.candidates.back();
      if (name == "c.config")
        c.config = value;
      else if (name == "c.status")
        c.status = value;
      else if (name == "c.median_ms")
        ok = number(c.median_ms);
      else if (name == "c.cublas_ms")
        ok = number(c.cublas_ms);
      else
        return bad("unknown field");
    } else if (name == "name")
      r.name = value;
    else if (name == "key")
      r.key = value;
    else if (name == "line")
      ok = integer(r.line);
    else if (name == "flops")
      ok = number(r.flops);
    else if (name == "config")
      r.config = value;
    else if (name == "config_source")
      r.config_source = value;
    else if (name == "status")
      r.status = value;
    else if (name == "message")
      r.message = value;
    else if (name == "device")
      r.device = value;
    else if (name == "gpu")
      r.gpu = value;
    else if (name == "baseline_name")
      r.baseline_name = value;
    else if (name == "baseline_ms")
      ok = number(r.baseline_ms);
    else if (name == "baseline_repeat_ms")
      ok = ParseNumbers(value, r.baseline_repeat_ms);
    else if (name == "heuristic_config")
      r.heuristic_config = value;
    else if (name == "heuristic_ms")
      ok = number(r.heuristic_ms);
    else if (name == "heuristic_cublas_ms")
      ok = number(r.heuristic_cublas_ms);
    else if (name == "seconds")
      ok = number(r.seconds);
    else if (name == "log")
      r.log = value;
    else
      return bad("unknown field");
    if (!ok) return bad("bad number");
  }
  if (r.status.empty()) return absl::DataLossError("the result has no status");
  return r;
}

}  // namespace kir::bench
