#include "tools/kir-bench/resume.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "parser/source_reader.h"
#include "tools/kir-run/json.h"

namespace kir::bench {
namespace {

using Kind = JsonValue::Kind;

// Typed reads of an object's members; a member that is missing or of
// another type is an error naming it.
class Reader {
 public:
  Reader(const JsonValue& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  const JsonValue* Member(absl::string_view name, Kind kind) {
    const JsonValue* value = object_.Find(name);
    if (value == nullptr ||
        (value->kind != kind &&
         !(kind == Kind::kNumber && value->kind == Kind::kNull))) {
      if (error_.empty())
        error_ = absl::StrCat(where_, ": '", name, "' is missing or not ",
                              kind == Kind::kString   ? "a string"
                              : kind == Kind::kNumber ? "a number"
                              : kind == Kind::kBool   ? "true or false"
                              : kind == Kind::kArray  ? "an array"
                                                      : "an object");
      return nullptr;
    }
    return value;
  }
  void String(absl::string_view name, std::string& out) {
    if (const JsonValue* v = Member(name, Kind::kString)) out = v->string;
  }
  // null (a value that was not finite) reads as NaN.
  void Number(absl::string_view name, double& out) {
    if (const JsonValue* v = Member(name, Kind::kNumber))
      out = v->kind == Kind::kNull ? NAN : v->number;
  }
  template <typename Int>
  void Integer(absl::string_view name, Int& out) {
    double value = 0;
    Number(name, value);
    out = std::isfinite(value) ? static_cast<Int>(value) : Int{-1};
  }
  void Boolean(absl::string_view name, bool& out) {
    if (const JsonValue* v = Member(name, Kind::kBool)) out = v->boolean;
  }
  void Numbers(absl::string_view name, std::vector<double>& out) {
    out.clear();
    const JsonValue* v = Member(name, Kind::kArray);
    if (v == nullptr) return;
    for (const JsonValue& x : v->array)
      out.push_back(x.kind == Kind::kNumber ? x.number : NAN);
  }
  const std::string& error() const { return error_; }
  void Fail(const std::string& error) {
    if (error_.empty()) error_ = error;
  }

 private:
  const JsonValue& object_;
  std::string where_;
  std::string error_;
};

}  // namespace

absl::StatusOr<PreviousRun> ParsePreviousRun(absl::string_view json,
                                             const std::string& path) {
  absl::StatusOr<JsonValue> root = ParseJson(json);
  if (!root.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":", root.status().message()));
  PreviousRun run;
  run.path = path;
  if (root->kind != Kind::kObject || root->Find("tool") == nullptr ||
      root->Find("tool")->string != "kir-bench")
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a kir-bench JSON report"));
  Reader top(*root, path);
  if (const JsonValue* pipelines = top.Member("pipelines", Kind::kArray))
    for (const JsonValue& p : pipelines->array)
      run.pipelines.push_back(p.string);
  top.Boolean("tune", run.tune);
  const JsonValue* results = top.Member("results", Kind::kArray);
  if (!top.error().empty()) return absl::InvalidArgumentError(top.error());
  for (size_t i = 0; i < results->array.size(); ++i) {
    const JsonValue& x = results->array[i];
    const std::string where = absl::StrCat(path, ": result ", i + 1);
    if (x.kind != Kind::kObject)
      return absl::InvalidArgumentError(
          absl::StrCat(where, " is not an object"));
    Reader in(x, where);
    ProblemResult& r = run.results.emplace_back();
    in.String("name", r.name);
    in.String("key", r.key);
    in.Integer("line", r.line);
    in.Number("flops", r.flops);
    in.String("config", r.config);
    in.String("config_source", r.config_source);
    in.String("status", r.status);
    in.String("message", r.message);
    in.String("device", r.device);
    // Reports from before --gpus have no "gpu".
    if (x.Find("gpu") != nullptr) in.String("gpu", r.gpu);
    in.Number("seconds", r.seconds);
    if (const JsonValue* baseline = in.Member("baseline", Kind::kObject)) {
      Reader b(*baseline, absl::StrCat(where, ": baseline"));
      b.String("name", r.baseline_name);
      b.Number("median_ms", r.baseline_ms);
      b.Numbers("repeat_ms", r.baseline_repeat_ms);
      if (!b.error().empty()) in.Fail(b.error());
    }
    if (const JsonValue* variants = in.Member("variants", Kind::kArray)) {
      for (const JsonValue& y : variants->array) {
        if (y.kind != Kind::kObject) {
          in.Fail(absl::StrCat(where, ": a variant is not an object"));
          break;
        }
        Reader v(y, absl::StrCat(where, ": variant"));
        VariantResult& out = r.variants.emplace_back();
        v.String("pipeline", out.pipeline);
        v.String("config", out.config);
        v.Boolean("checked", out.checked);
        v.Boolean("passed", out.passed);
        v.Number("max_abs_error", out.max_abs_error);
        v.Number("max_rel_error", out.max_rel_error);
        v.Number("median_ms", out.median_ms);
        v.Number("min_ms", out.min_ms);
        v.Number("max_ms", out.max_ms);
        v.Numbers("repeat_ms", out.repeat_ms);
        v.Integer("registers", out.registers);
        v.Integer("spill_bytes", out.spill_bytes);
        v.Integer("shared_bytes", out.shared_bytes);
        if (!v.error().empty()) in.Fail(v.error());
      }
    }
    if (run.tune) {
      if (const JsonValue* h = in.Member("heuristic", Kind::kObject)) {
        Reader heuristic(*h, absl::StrCat(where, ": heuristic"));
        heuristic.String("config", r.heuristic_config);
        heuristic.Number("median_ms", r.heuristic_ms);
        heuristic.Number("cublas_ms", r.heuristic_cublas_ms);
        if (!heuristic.error().empty()) in.Fail(heuristic.error());
      }
      if (const JsonValue* list = in.Member("candidates", Kind::kArray)) {
        for (const JsonValue& y : list->array) {
          if (y.kind != Kind::kObject) continue;
          Reader c(y, absl::StrCat(where, ": candidate"));
          CandidateResult& out = r.candidates.emplace_back();
          c.String("config", out.config);
          c.String("status", out.status);
          c.Number("median_ms", out.median_ms);
          c.Number("cublas_ms", out.cublas_ms);
          if (!c.error().empty()) in.Fail(c.error());
        }
      }
    }
    if (!in.error().empty()) return absl::InvalidArgumentError(in.error());
    r.log = absl::StrCat("(from ", path, ")\n");
  }
  return run;
}

absl::StatusOr<PreviousRun> ReadPreviousRun(const std::string& path) {
  absl::StatusOr<std::string> text =
      ReadSourceText(path, kDefaultMaxInputBytes);
  if (!text.ok()) return text.status();
  return ParsePreviousRun(*text, path);
}

bool IsFinished(const ProblemResult& result) {
  return result.status == "passed" || result.status == "mismatch" ||
         result.status == "error";
}

absl::Status CheckSameRun(const PreviousRun& previous, const RunInfo& info) {
  if (previous.pipelines != info.pipelines || previous.tune != info.tune) {
    auto describe = [](const std::vector<std::string>& pipelines, bool tune) {
      return absl::StrCat(pipelines.size() > 1 ? "--compare " : "--pipeline ",
                          absl::StrJoin(pipelines, " "), tune ? " --tune" : "");
    };
    return absl::InvalidArgumentError(
        absl::StrCat("kir-bench: --resume: ", previous.path, " was a run with ",
                     describe(previous.pipelines, previous.tune), ", not ",
                     describe(info.pipelines, info.tune)));
  }
  return absl::OkStatus();
}

std::vector<std::optional<ProblemResult>> FinishedEarlier(
    const PreviousRun& previous, const std::vector<ProblemResult>& identities) {
  std::vector<std::optional<ProblemResult>> found(identities.size());
  for (size_t i = 0; i < identities.size(); ++i) {
    const ProblemResult& identity = identities[i];
    for (const ProblemResult& earlier : previous.results) {
      // Under --tune the configuration tuning started from.
      const std::string& config =
          previous.tune ? earlier.heuristic_config : earlier.config;
      if (earlier.name != identity.name || earlier.key != identity.key ||
          config != identity.config || !IsFinished(earlier))
        continue;
      found[i] = earlier;
      // Today's line in the CSV, and exact flops (the JSON rounds them).
      found[i]->line = identity.line;
      found[i]->flops = identity.flops;
      break;
    }
  }
  return found;
}

}  // namespace kir::bench
