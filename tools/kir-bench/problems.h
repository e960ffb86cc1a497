// The problem list kir-bench reads: a CSV of matrix products, one a line.
//
//   # comments and blank lines are ignored
//   m,n,k,a_major,b_major,dtype
//   4096,4096,4096,k,k,bf16
//
// The first other line is the header naming the columns, in any order:
// m, n, k (required), a_major (k|m, default k), b_major (k|n, default k),
// dtype (bf16|f16, default bf16), out_dtype (bf16|f16|f32, default dtype),
// name (default: the problem's key), config (a kir-gen configuration such
// as "128x256x64 s4", replacing the heuristic's). A bad line is a located error
// and the other lines still run.
#ifndef KIR_TOOLS_KIR_BENCH_PROBLEMS_H_
#define KIR_TOOLS_KIR_BENCH_PROBLEMS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ir/location.h"
#include "tools/kir-bench/tune_cache.h"
#include "tools/kir-gen/matmul.h"

namespace kir::bench {

struct BenchProblem {
  std::string name;
  gen::MatmulProblem matmul;
  Location loc;  // column 1 of its line
  // The config column, when there is one and it is not empty.
  std::string config;
  Location config_loc;
};

struct ProblemError {
  int line = 0;
  absl::Status status;  // a located diagnostic
};

struct ProblemList {
  std::vector<BenchProblem> problems;  // the lines without errors
  std::vector<ProblemError> errors;    // in line order
  // Every error, rendered, joined (OK when there is none).
  absl::Status Errors() const;
};

ProblemList ParseProblemsCsv(const std::shared_ptr<const SourceFile>& file);

// Drops the problems `validate` rejects, keeping its error (the validator
// locates it, e.g. at the problem's line or its config field: a tile that
// does not fit in shared memory); errors stay in line order.
void ValidateProblems(
    ProblemList& list,
    const std::function<absl::Status(const BenchProblem&)>& validate);

// 2 * m * n * k.
double ProblemFlops(const gen::MatmulProblem& problem);

}  // namespace kir::bench

#endif  // KIR_TOOLS_KIR_BENCH_PROBLEMS_H_
