#include "tools/kir-bench/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tools/kir-run/json.h"

namespace kir::bench {
namespace {

std::string Fixed(double value, int digits) {
  if (!std::isfinite(value)) return "-";
  return absl::StrFormat("%.*f", digits, value);
}

std::string Percent(double value) {
  return std::isfinite(value) ? absl::StrFormat("%.1f%%", value) : "-";
}

std::string Scientific(double value) {
  return std::isfinite(value) ? absl::StrFormat("%.2e", value) : "-";
}

// Columns padded to their widest cell; `right` aligns numbers.
std::string Columns(const std::vector<std::vector<std::string>>& rows,
                    const std::vector<bool>& right) {
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      if (c) line += "  ";
      line += right[c] ? pad + row[c] : row[c] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string CsvField(absl::string_view text) {
  if (text.find_first_of(",\"\n") == absl::string_view::npos)
    return std::string(text);
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

std::string CsvNumber(double value) {
  return std::isfinite(value) ? absl::StrFormat("%.6g", value) : "";
}

std::string XmlText(absl::string_view text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

const VariantResult* VariantOf(const ProblemResult& result, size_t v) {
  return v < result.variants.size() ? &result.variants[v] : nullptr;
}

}  // namespace

double GeometricMean(const std::vector<double>& values) {
  double log_sum = 0;
  int count = 0;
  for (double value : values) {
    if (!(value > 0) || !std::isfinite(value)) continue;
    log_sum += std::log(value);
    ++count;
  }
  return count ? std::exp(log_sum / count) : NAN;
}

std::vector<double> PercentsOfCublas(const std::vector<ProblemResult>& results,
                                     size_t variant) {
  std::vector<double> percents;
  for (const ProblemResult& result : results) {
    const VariantResult* v = VariantOf(result, variant);
    if (!result.passed() || v == nullptr) continue;
    const double percent = PercentOfCublas(result, *v);
    if (std::isfinite(percent)) percents.push_back(percent);
  }
  return percents;
}

std::vector<double> RatiosToFirst(const std::vector<ProblemResult>& results,
                                  size_t variant) {
  std::vector<double> ratios;
  for (const ProblemResult& result : results) {
    if (!result.passed()) continue;
    const double ratio = RatioToFirst(result, variant);
    if (std::isfinite(ratio)) ratios.push_back(ratio);
  }
  return ratios;
}

std::vector<std::string> VariantLabels(const RunInfo& info) {
  std::vector<std::string> labels;
  for (size_t p = 0; p < info.pipelines.size(); ++p) {
    labels.push_back(info.pipelines.size() > 1
                         ? absl::StrCat("P", p + 1, " ", info.pipelines[p])
                         : info.pipelines[p]);
  }
  if (labels.empty()) labels.push_back("");
  return labels;
}

std::string FormatTable(const std::vector<ProblemResult>& results,
                        const RunInfo& info) {
  const std::vector<std::string> labels = VariantLabels(info);
  const bool compare = labels.size() > 1;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"problem", "configuration"};
  if (compare) header.push_back("pipeline");
  for (const char* column : {"ms", "TFLOP/s", "cuBLAS ms", "% cuBLAS"})
    header.push_back(column);
  if (compare) header.push_back("vs P1");
  for (const char* column : {"max abs err", "status"}) header.push_back(column);
  rows.push_back(header);
  for (const ProblemResult& result : results) {
    const size_t count = std::max<size_t>(1, compare ? labels.size() : 1);
    for (size_t v = 0; v < count; ++v) {
      const VariantResult* variant = VariantOf(result, v);
      std::vector<std::string> row = {v ? "" : result.name,
                                      v ? "" : result.config};
      if (compare) row.push_back(labels[v]);
      row.push_back(variant ? Fixed(variant->median_ms, 4) : "-");
      row.push_back(variant ? Fixed(Tflops(result, *variant), 1) : "-");
      row.push_back(v ? "" : Fixed(result.baseline_ms, 4));
      row.push_back(variant ? Percent(PercentOfCublas(result, *variant)) : "-");
      if (compare) row.push_back(v ? Fixed(RatioToFirst(result, v), 3) : "");
      row.push_back(variant && variant->checked
                        ? Scientific(variant->max_abs_error)
                        : "-");
      std::string status = result.status;
      if (variant && variant->checked && !variant->passed) status = "MISMATCH";
      row.push_back(
          v ? (variant && variant->checked && !variant->passed ? status : "")
            : status);
      rows.push_back(row);
    }
  }
  std::vector<bool> right(header.size(), true);
  right[0] = right[1] = true;
  right[0] = right[1] = false;
  if (compare) right[2] = false;
  right.back() = false;
  std::string out = Columns(rows, right);

  int failed = 0;
  for (const ProblemResult& result : results) failed += !result.passed();
  for (size_t v = 0; v < labels.size(); ++v) {
    const std::vector<double> percents = PercentsOfCublas(results, v);
    const double mean = GeometricMean(percents);
    const auto [low, high] =
        std::minmax_element(percents.begin(), percents.end());
    absl::StrAppend(&out, "geometric mean of % of cuBLAS", compare ? " (" : "",
                    compare ? labels[v] : "", compare ? ")" : "", ": ",
                    Percent(mean), " over ", percents.size(), " of ",
                    results.size(), " problems");
    if (!percents.empty())
      absl::StrAppend(&out, " (min ", Percent(*low), ", max ", Percent(*high),
                      ")");
    out += "\n";
  }
  for (size_t v = 1; compare && v < labels.size(); ++v) {
    const std::vector<double> ratios = RatiosToFirst(results, v);
    absl::StrAppend(&out, "geometric mean of time(P", v + 1,
                    ") / time(P1): ", Fixed(GeometricMean(ratios), 3), " over ",
                    ratios.size(), " problems\n");
  }
  if (failed)
    absl::StrAppend(&out, failed, " problem(s) did not pass (status above)\n");

  if (info.tune) {
    std::vector<std::vector<std::string>> tune_rows = {
        {"problem", "heuristic", "% cuBLAS", "tuned", "% cuBLAS", "speedup",
         "tried"}};
    std::vector<double> heuristic_percents, tuned_percents;
    for (const ProblemResult& result : results) {
      const double heuristic =
          result.heuristic_ms > 0
              ? 100 * result.heuristic_cublas_ms / result.heuristic_ms
              : NAN;
      const VariantResult* variant = VariantOf(result, 0);
      const double tuned =
          variant && result.passed() ? PercentOfCublas(result, *variant) : NAN;
      if (std::isfinite(heuristic) && std::isfinite(tuned)) {
        heuristic_percents.push_back(heuristic);
        tuned_percents.push_back(tuned);
      }
      tune_rows.push_back(
          {result.name, result.heuristic_config, Percent(heuristic),
           result.config, Percent(tuned),
           variant && result.heuristic_ms > 0
               ? Fixed(result.heuristic_ms / variant->median_ms, 3)
               : "-",
           absl::StrCat(result.candidates.size())});
    }
    absl::StrAppend(
        &out, "\nheuristic against tuned:\n",
        Columns(tune_rows, {false, false, true, false, true, true, true}),
        "geometric mean of % of cuBLAS over ", tuned_percents.size(),
        " problems: heuristic ", Percent(GeometricMean(heuristic_percents)),
        ", tuned ", Percent(GeometricMean(tuned_percents)), "\n");
  }
  return out;
}

std::string FormatCsv(const std::vector<ProblemResult>& results,
                      const RunInfo& info) {
  const std::vector<std::string> labels = VariantLabels(info);
  std::string out =
      "problem,line,m_n_k_layout,configuration,config_source,pipeline,"
      "status,message,kernel_ms,kernel_min_ms,kernel_max_ms,tflops,"
      "cublas_ms,percent_of_cublas,ratio_to_p1,max_abs_error,max_rel_error,"
      "registers,spill_bytes,shared_bytes,heuristic_config,heuristic_ms,"
      "heuristic_cublas_ms,device,gpu,seconds\n";
  for (const ProblemResult& result : results) {
    const size_t count = std::max<size_t>(1, result.variants.size());
    for (size_t v = 0; v < count; ++v) {
      const VariantResult* variant = VariantOf(result, v);
      const VariantResult empty;
      const VariantResult& x = variant ? *variant : empty;
      std::string pipeline =
          !x.pipeline.empty()
              ? x.pipeline
              : (v < info.pipelines.size() ? info.pipelines[v] : "");
      std::vector<std::string> fields = {
          CsvField(result.name),
          absl::StrCat(result.line),
          CsvField(result.key),
          CsvField(result.config),
          CsvField(result.config_source),
          CsvField(pipeline),
          CsvField(x.checked && !x.passed ? "mismatch" : result.status),
          CsvField(result.message),
          CsvNumber(x.median_ms),
          CsvNumber(x.min_ms),
          CsvNumber(x.max_ms),
          CsvNumber(variant ? Tflops(result, x) : NAN),
          CsvNumber(result.baseline_ms),
          CsvNumber(variant ? PercentOfCublas(result, x) : NAN),
          CsvNumber(v ? RatioToFirst(result, v) : NAN),
          CsvNumber(x.max_abs_error),
          CsvNumber(x.max_rel_error),
          variant ? absl::StrCat(x.registers) : "",
          variant && x.spill_bytes >= 0 ? absl::StrCat(x.spill_bytes) : "",
          variant ? absl::StrCat(x.shared_bytes) : "",
          CsvField(result.heuristic_config),
          CsvNumber(result.heuristic_ms),
          CsvNumber(result.heuristic_cublas_ms),
          CsvField(result.device),
          CsvField(result.gpu),
          CsvNumber(result.seconds)};
      out += absl::StrJoin(fields, ",") + "\n";
    }
  }
  return out;
}

std::string FormatJson(const std::vector<ProblemResult>& results,
                       const RunInfo& info) {
  auto numbers = [](const std::vector<double>& values) {
    return absl::StrCat("[",
                        absl::StrJoin(values, ", ",
                                      [](std::string* o, double x) {
                                        o->append(JsonNumber(x));
                                      }),
                        "]");
  };
  std::string out = absl::StrCat(
      "{\"tool\": \"kir-bench\", \"commit\": ", JsonString(info.commit),
      ", \"problems_file\": ", JsonString(info.problems_file),
      ", \"device\": ", JsonString(info.device), ", \"pipelines\": [",
      absl::StrJoin(info.pipelines, ", ",
                    [](std::string* o, const std::string& p) {
                      o->append(JsonString(p));
                    }),
      "], \"tune\": ", info.tune ? "true" : "false", ",\n \"summary\": [");
  const std::vector<std::string> labels = VariantLabels(info);
  for (size_t v = 0; v < labels.size(); ++v) {
    const std::vector<double> percents = PercentsOfCublas(results, v);
    absl::StrAppend(&out, v ? ", " : "",
                    "{\"variant\": ", JsonString(labels[v]),
                    ", \"geomean_percent_of_cublas\": ",
                    JsonNumber(GeometricMean(percents)),
                    ", \"problems_timed\": ", percents.size(),
                    ", \"problems\": ", results.size());
    if (v > 0) {
      absl::StrAppend(&out, ", \"geomean_ratio_to_p1\": ",
                      JsonNumber(GeometricMean(RatiosToFirst(results, v))));
    }
    out += "}";
  }
  absl::StrAppend(&out, "],\n \"input_errors\": [",
                  absl::StrJoin(info.input_errors, ", ",
                                [](std::string* o, const std::string& error) {
                                  o->append(JsonString(error));
                                }),
                  "],\n \"results\": [");
  for (size_t i = 0; i < results.size(); ++i) {
    const ProblemResult& r = results[i];
    absl::StrAppend(&out, i ? ",\n  " : "\n  ",
                    "{\"name\": ", JsonString(r.name),
                    ", \"key\": ", JsonString(r.key), ", \"line\": ", r.line,
                    ", \"flops\": ", JsonNumber(r.flops),
                    ", \"config\": ", JsonString(r.config),
                    ", \"config_source\": ", JsonString(r.config_source),
                    ", \"status\": ", JsonString(r.status),
                    ", \"message\": ", JsonString(r.message),
                    ", \"device\": ", JsonString(r.device),
                    ", \"gpu\": ", JsonString(r.gpu),
                    ", \"seconds\": ", JsonNumber(r.seconds),
                    ", \"baseline\": {\"name\": ", JsonString(r.baseline_name),
                    ", \"median_ms\": ", JsonNumber(r.baseline_ms),
                    ", \"repeat_ms\": ", numbers(r.baseline_repeat_ms), "}",
                    ", \"variants\": [");
    for (size_t v = 0; v < r.variants.size(); ++v) {
      const VariantResult& x = r.variants[v];
      absl::StrAppend(
          &out, v ? ", " : "", "{\"pipeline\": ", JsonString(x.pipeline),
          ", \"config\": ", JsonString(x.config),
          ", \"checked\": ", x.checked ? "true" : "false",
          ", \"passed\": ", x.passed ? "true" : "false",
          ", \"max_abs_error\": ", JsonNumber(x.max_abs_error),
          ", \"max_rel_error\": ", JsonNumber(x.max_rel_error),
          ", \"median_ms\": ", JsonNumber(x.median_ms),
          ", \"min_ms\": ", JsonNumber(x.min_ms),
          ", \"max_ms\": ", JsonNumber(x.max_ms),
          ", \"repeat_ms\": ", numbers(x.repeat_ms),
          ", \"tflops\": ", JsonNumber(Tflops(r, x)),
          ", \"percent_of_cublas\": ", JsonNumber(PercentOfCublas(r, x)),
          ", \"ratio_to_p1\": ", JsonNumber(v ? RatioToFirst(r, v) : NAN),
          ", \"registers\": ", x.registers, ", \"spill_bytes\": ",
          x.spill_bytes >= 0 ? absl::StrCat(x.spill_bytes) : "null",
          ", \"shared_bytes\": ", x.shared_bytes, "}");
    }
    out += "]";
    if (info.tune) {
      absl::StrAppend(&out, ", \"heuristic\": {\"config\": ",
                      JsonString(r.heuristic_config),
                      ", \"median_ms\": ", JsonNumber(r.heuristic_ms),
                      ", \"cublas_ms\": ", JsonNumber(r.heuristic_cublas_ms),
                      "}, \"candidates\": [");
      for (size_t c = 0; c < r.candidates.size(); ++c) {
        const CandidateResult& x = r.candidates[c];
        absl::StrAppend(&out, c ? ", " : "",
                        "{\"config\": ", JsonString(x.config),
                        ", \"status\": ", JsonString(x.status),
                        ", \"median_ms\": ", JsonNumber(x.median_ms),
                        ", \"cublas_ms\": ", JsonNumber(x.cublas_ms), "}");
      }
      out += "]";
    }
    out += "}";
  }
  out += "\n]}\n";
  return out;
}

namespace {

// What the chart draws: a series of % of cuBLAS (NaN: no bar) per problem.
struct PlotSeries {
  std::string label;
  std::vector<double> percent;
};

std::vector<PlotSeries> SeriesOf(const std::vector<ProblemResult>& results,
                                 const RunInfo& info) {
  std::vector<PlotSeries> series;
  if (info.tune) {
    PlotSeries heuristic{"heuristic", {}}, tuned{"tuned", {}};
    for (const ProblemResult& r : results) {
      heuristic.percent.push_back(
          r.heuristic_ms > 0 ? 100 * r.heuristic_cublas_ms / r.heuristic_ms
                             : NAN);
      const VariantResult* x = VariantOf(r, 0);
      tuned.percent.push_back(x && r.passed() ? PercentOfCublas(r, *x) : NAN);
    }
    return {heuristic, tuned};
  }
  const std::vector<std::string> labels = VariantLabels(info);
  for (size_t v = 0; v < labels.size(); ++v) {
    PlotSeries& one = series.emplace_back();
    one.label = labels[v].empty() ? "kernel" : labels[v];
    for (const ProblemResult& r : results) {
      const VariantResult* x = VariantOf(r, v);
      one.percent.push_back(x && r.passed() ? PercentOfCublas(r, *x) : NAN);
    }
  }
  return series;
}

}  // namespace

std::string FormatSvg(const std::vector<ProblemResult>& results,
                      const RunInfo& info) {
  const std::vector<PlotSeries> series = SeriesOf(results, info);
  const size_t variants = series.size();
  // Bars up to the largest value, at least 110% so the 100% line shows.
  double top = 110;
  for (const PlotSeries& one : series)
    for (double percent : one.percent)
      if (std::isfinite(percent)) top = std::max(top, percent * 1.05);
  top = std::ceil(top / 10) * 10;
  const double bar = 12, gap = 10, left = 60, plot_height = 300,
               top_margin = 50;
  const double group = bar * variants + gap;
  const double width = left + group * std::max<size_t>(results.size(), 1) + 200;
  const double bottom = top_margin + plot_height;
  const double height = bottom + 220;
  static const char* const kColors[] = {"#4e79a7", "#f28e2b", "#59a14f",
                                        "#e15759", "#76b7b2", "#edc948",
                                        "#b07aa1", "#ff9da7"};
  auto y_of = [&](double percent) {
    return bottom - plot_height * std::min(percent, top) / top;
  };
  std::string out = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%.0f\" y=\"20\" font-size=\"14\">%s: %% of cuBLAS per "
      "problem</text>\n",
      width, height, left, XmlText(info.problems_file));
  for (double tick = 0; tick <= top + 1e-9; tick += top > 150 ? 50 : 10) {
    absl::StrAppend(
        &out,
        absl::StrFormat("<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
                        "stroke=\"#ddd\"/><text x=\"%.0f\" y=\"%.1f\" "
                        "text-anchor=\"end\">%.0f%%</text>\n",
                        left, y_of(tick), width - 190, y_of(tick), left - 4,
                        y_of(tick) + 4, tick));
  }
  for (const auto& [percent, style] :
       {std::pair<double, const char*>{100, "stroke=\"black\""},
        {90, "stroke=\"black\" stroke-dasharray=\"4 3\""}}) {
    absl::StrAppend(
        &out, absl::StrFormat("<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" "
                              "y2=\"%.1f\" %s/>\n",
                              left, y_of(percent), width - 190, y_of(percent),
                              style));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const ProblemResult& r = results[i];
    const double x0 = left + gap / 2 + group * i;
    for (size_t v = 0; v < variants; ++v) {
      const double percent = series[v].percent[i];
      const double x_bar = x0 + bar * v;
      if (!std::isfinite(percent)) {
        absl::StrAppend(
            &out, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" fill=\"red\" "
                                  "text-anchor=\"middle\">x<title>%s: %s"
                                  "</title></text>\n",
                                  x_bar + bar / 2, bottom - 3, XmlText(r.name),
                                  XmlText(r.status)));
        continue;
      }
      absl::StrAppend(
          &out, absl::StrFormat(
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"%.1f\" fill=\"%s\"><title>%s, %s: %.1f%% of "
                    "cuBLAS</title></rect>\n",
                    x_bar, y_of(percent), bar - 1, bottom - y_of(percent),
                    kColors[v % 8], XmlText(r.name), XmlText(series[v].label),
                    percent));
    }
    absl::StrAppend(
        &out,
        absl::StrFormat("<text transform=\"translate(%.1f,%.1f) "
                        "rotate(60)\">%s</text>\n",
                        x0 + bar * variants / 2, bottom + 8, XmlText(r.name)));
  }
  for (size_t v = 0; v < variants; ++v) {
    const double mean = GeometricMean(series[v].percent);
    const double y = top_margin + 16 * v;
    absl::StrAppend(
        &out, absl::StrFormat(
                  "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" "
                  "fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">%s (geomean "
                  "%s)</text>\n",
                  width - 180, y, kColors[v % 8], width - 165, y + 9,
                  XmlText(series[v].label), XmlText(Percent(mean))));
  }
  out += "</svg>\n";
  return out;
}

std::string ResultLine(const ProblemResult& result) {
  std::string line = absl::StrFormat("%-8s %s", result.status, result.name);
  if (!result.variants.empty() && result.passed()) {
    const VariantResult& v = result.variants.front();
    absl::StrAppend(&line,
                    absl::StrFormat(": %.4f ms, %s of cuBLAS", v.median_ms,
                                    Percent(PercentOfCublas(result, v))));
  } else if (!result.message.empty()) {
    std::string message = result.message;
    const size_t newline = message.find('\n');
    if (newline != std::string::npos) message = message.substr(0, newline);
    absl::StrAppend(&line, ": ", message);
  }
  return line;
}

Progress::Progress(std::ostream& out, int total, bool terminal)
    : out_(out), total_(total), terminal_(terminal) {}

void Progress::Draw(const std::string& name) {
  constexpr int kWidth = 30;
  const int filled = total_ ? kWidth * done_ / total_ : kWidth;
  std::string label = name.size() > 40 ? name.substr(0, 37) + "..." : name;
  out_ << "\r\033[K[" << std::string(filled, '#')
       << std::string(kWidth - filled, '.') << "] " << done_ << "/" << total_;
  if (failed_) out_ << " (" << failed_ << " failed)";
  if (!label.empty()) out_ << " " << label;
  out_.flush();
}

void Progress::Start(const std::string& name) {
  if (terminal_) Draw(name);
}

void Progress::Finish(const ProblemResult& result) {
  ++done_;
  if (!result.passed()) ++failed_;
  if (terminal_) {
    Draw("");
  } else {
    out_ << "kir-bench: [" << done_ << "/" << total_ << "] "
         << ResultLine(result) << "\n";
    out_.flush();
  }
}

void Progress::Done() {
  if (terminal_) out_ << "\n";
  out_.flush();
}

}  // namespace kir::bench
