// The static checkers behind `kir-opt --check-syncs` and `--check-fences`:
// clients of the ordering dataflow (analysis/ordering.h) that check any
// lowered kernel, written by hand or by passes, against the post-conditions
// of insert-syncs and insert-proxy-fences. The pairs come from a walk from
// scratch; whether each inserted barrier or fence is needed is asked of one
// kept dataflow (IncrementalOrdering), checked first to give the same pairs,
// so a check costs about two walks of the kernel, not one per barrier.
#ifndef KIR_ANALYSIS_SYNC_CHECK_H_
#define KIR_ANALYSIS_SYNC_CHECK_H_

#include "absl/status/status.h"
#include "analysis/ordering.h"
#include "ir/ir.h"

namespace kir {

// The post-condition of insert-syncs on a lowered kernel: every conflicting
// pair is ordered on every path, and every barrier a pass marked as
// inserted by `insert-syncs` is needed by at least one pair. Located errors
// otherwise (one per pair, at the later access, with a note at the earlier).
absl::Status CheckSyncs(const Kernel& kernel);

// The post-condition of insert-proxy-fences: every edge is fenced in the
// model, and every fence a pass marked as inserted by insert-proxy-fences is
// needed by at least one edge. Located errors otherwise.
absl::Status CheckProxyFences(const Kernel& kernel, FencePlacement placement);

}  // namespace kir

#endif  // KIR_ANALYSIS_SYNC_CHECK_H_
