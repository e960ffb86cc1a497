// kir-bench's outputs: the table on stdout, CSV, JSON and an SVG bar chart
// of % of cuBLAS, and the progress line on stderr.
#ifndef KIR_TOOLS_KIR_BENCH_REPORT_H_
#define KIR_TOOLS_KIR_BENCH_REPORT_H_

#include <ostream>
#include <string>
#include <vector>

#include "tools/kir-bench/result.h"

namespace kir::bench {

// What the run was, for the headers of the outputs.
struct RunInfo {
  std::string problems_file;
  std::vector<std::string> pipelines;  // one, or the --compare list
  bool tune = false;
  std::string commit;
  std::string device;
  // The input's errors (rendered diagnostics), for the JSON.
  std::vector<std::string> input_errors;
};

// Geometric mean of the positive, finite values; NaN when there is none.
double GeometricMean(const std::vector<double>& values);

// For variant `v` (0-based): % of cuBLAS of each problem that passed and
// was timed.
std::vector<double> PercentsOfCublas(const std::vector<ProblemResult>& results,
                                     size_t variant);

// For variant `v` > 0: time(v) / time(P1) of each problem that passed
// (RatioToFirst).
std::vector<double> RatiosToFirst(const std::vector<ProblemResult>& results,
                                  size_t variant);

// A label per variant: the pipeline (--compare: "P1 <pipeline>").
std::vector<std::string> VariantLabels(const RunInfo& info);

// The table (one row per problem and variant), the geometric mean of % of
// cuBLAS per variant, and under --tune the heuristic against the tuned.
std::string FormatTable(const std::vector<ProblemResult>& results,
                        const RunInfo& info);
std::string FormatCsv(const std::vector<ProblemResult>& results,
                      const RunInfo& info);
std::string FormatJson(const std::vector<ProblemResult>& results,
                       const RunInfo& info);
// Grouped bars: % of cuBLAS per problem, one bar per variant, with 100%
// and 90% marked; problems without a time get no bar and a mark.
std::string FormatSvg(const std::vector<ProblemResult>& results,
                      const RunInfo& info);

// Progress on stderr: a bar redrawn in place on a terminal, otherwise one
// plain line per finished problem.
class Progress {
 public:
  Progress(std::ostream& out, int total, bool terminal);
  void Start(const std::string& name);
  void Finish(const ProblemResult& result);
  void Done();

 private:
  void Draw(const std::string& name);
  std::ostream& out_;
  int total_;
  int done_ = 0;
  int failed_ = 0;
  bool terminal_;
};

// One line describing a finished problem, e.g.
// "passed  4096x4096x4096 ...: 0.731 ms, 96.0% of cuBLAS".
std::string ResultLine(const ProblemResult& result);

}  // namespace kir::bench

#endif  // KIR_TOOLS_KIR_BENCH_REPORT_H_
