// Small helpers shared by the passes that insert and then prune ops.
#ifndef KIR_PASSES_OP_UTILS_H_
#define KIR_PASSES_OP_UTILS_H_

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "ir/ir.h"

namespace kir {

// The ops of `ops` in program order (a pre-order walk of the kernel body);
// ops outside the kernel are left out.
std::vector<Op*> InProgramOrder(Kernel& kernel,
                                const absl::flat_hash_set<Op*>& ops);

// Removes `op` from its region and destroys it.
void RemoveOp(Op* op);

}  // namespace kir

#endif  // KIR_PASSES_OP_UTILS_H_
