// Completion groups: which commit created the group a wait retires, and how
// many groups the wait may leave pending (the N of `wait_group N`).
#ifndef KIR_ANALYSIS_ASYNC_GROUPS_H_
#define KIR_ANALYSIS_ASYNC_GROUPS_H_

#include <optional>

#include "ir/ir.h"

namespace kir {

// For a bulk.wait, wgmma.wait or cp.async.wait: the number of groups of the
// same kind, committed by the same thread after the newest group it
// retires, that may stay in flight. nullopt when that cannot be counted
// statically (a commit under a condition between them); the emitter then
// waits for all (0).
std::optional<int> PendingGroupsAfterWait(const Op& wait);

}  // namespace kir

#endif  // KIR_ANALYSIS_ASYNC_GROUPS_H_
