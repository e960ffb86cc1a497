#include "passes/op_utils.h"

#include <algorithm>

namespace kir {

std::vector<Op*> InProgramOrder(Kernel& kernel, const std::set<Op*>& ops) {
  // Sorted by place rather than found by a walk of the whole kernel (a pass
  // that inserted a barrier per few ops asks this of a large share of it).
  std::vector<Op*> ordered;
  ordered.reserve(ops.size());
  for (Op* op : ops) {
    if (op->TopLevelAncestor()->parent_region() == &kernel.body()) {
      ordered.push_back(op);
    }
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const Op* a, const Op* b) { return a->IsBefore(*b); });
  return ordered;
}

void RemoveOp(Op* op) {
  Region* region = op->parent_region();
  region->Take(region->IndexOf(op));
}

}  // namespace kir
