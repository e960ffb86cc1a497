#include "passes/op_utils.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"

namespace kir {

std::vector<Op*> InProgramOrder(Kernel& kernel, const std::set<Op*>& ops) {
  // Sorted by place rather than found by a walk of the whole kernel (a pass
  // that inserted a barrier per few ops asks this of a large share of it):
  // each op's path of (region number, position) from the kernel body down,
  // compared as a sequence, is the pre-order.
  using Path = absl::InlinedVector<int, 8>;
  std::vector<std::pair<Path, Op*>> placed;
  placed.reserve(ops.size());
  for (Op* op : ops) {
    Path path;
    const Op* at = op;
    for (; at->parent_op() != nullptr; at = at->parent_op()) {
      const Region& region = *at->parent_region();
      path.push_back(region.IndexOf(at));
      int number = 0;
      while (&at->parent_op()->region(number) != &region) ++number;
      path.push_back(number);
    }
    if (at->parent_region() != &kernel.body()) continue;  // not in `kernel`
    path.push_back(kernel.body().IndexOf(at));
    std::reverse(path.begin(), path.end());
    placed.emplace_back(std::move(path), op);
  }
  std::sort(placed.begin(), placed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Op*> ordered;
  ordered.reserve(placed.size());
  for (const auto& [path, op] : placed) ordered.push_back(op);
  return ordered;
}

void RemoveOp(Op* op) {
  Region* region = op->parent_region();
  region->Take(region->IndexOf(op));
}

}  // namespace kir
