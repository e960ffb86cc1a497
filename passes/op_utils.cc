#include "passes/op_utils.h"

namespace kir {

std::vector<Op*> InProgramOrder(Kernel& kernel, const std::set<Op*>& ops) {
  std::vector<Op*> ordered;
  Walk(kernel.body(), [&](Op& op) {
    if (ops.count(&op)) ordered.push_back(&op);
  });
  return ordered;
}

void RemoveOp(Op* op) {
  Region* region = op->parent_region();
  region->Take(region->IndexOf(op));
}

}  // namespace kir
