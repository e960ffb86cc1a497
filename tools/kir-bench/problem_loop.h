// Running kir-bench's problems, each in a child process of its own under a
// watchdog: a kernel that hangs or a crash costs only its problem.
//
// The children are forked, not executed afresh, so the parent must not have
// initialized CUDA (kir-bench's parent only reads, generates and reports;
// the device is probed in a child too). A worker process of its own (one per
// GPU) can call the same functions.
#ifndef KIR_TOOLS_KIR_BENCH_PROBLEM_LOOP_H_
#define KIR_TOOLS_KIR_BENCH_PROBLEM_LOOP_H_

#include <functional>
#include <vector>

#include "tools/kir-bench/problems.h"
#include "tools/kir-bench/report.h"
#include "tools/kir-bench/result.h"

namespace kir::bench {

// Runs `work` in a forked child and returns its result; after
// `timeout_seconds` the child (and its process group) is killed and the
// result is `identity` with status "hang"; a child that dies without a
// result gives status "crash" (with the signal or exit code). `seconds` is
// set to the child's wall time either way. While the child runs, SIGINT,
// SIGTERM and SIGHUP kill it (its process group) and then this process.
ProblemResult RunInChild(const std::function<ProblemResult()>& work,
                         double timeout_seconds, const ProblemResult& identity);

// The name, key, line and flops of a problem, as every result carries them.
ProblemResult IdentityOf(const BenchProblem& problem);

// Runs `work` for each problem in its own child (RunInChild), in order,
// reporting to `progress` when given.
std::vector<ProblemResult> RunProblems(
    const std::vector<BenchProblem>& problems,
    const std::function<ProblemResult(const BenchProblem&)>& work,
    double timeout_seconds, Progress* progress);

}  // namespace kir::bench

#endif  // KIR_TOOLS_KIR_BENCH_PROBLEM_LOOP_H_
