#include "passes/op_utils.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"

namespace kir {
namespace {

// Sorting k ops by place costs about k log k path comparisons, a walk one
// visit per op of the kernel: walk once the ops are one in this many of
// those the kernel has made (an upper bound on those it holds).
constexpr size_t kWalkWhenOneIn = 32;

}  // namespace

std::vector<Op*> InProgramOrder(Kernel& kernel,
                                const absl::flat_hash_set<Op*>& ops) {
  std::vector<Op*> ordered;
  ordered.reserve(ops.size());
  // A pass that inserted an op per few ops asks this of a large share of
  // the kernel: one walk is then cheaper than sorting them by place.
  if (ops.size() * kWalkWhenOneIn >=
      static_cast<size_t>(kernel.op_serial_bound())) {
    // All in the kernel body (a straight-line kernel's barriers): placed by
    // position, without visiting the other ops.
    const Region& body = kernel.body();
    if (std::all_of(ops.begin(), ops.end(), [&](const Op* op) {
          return op->parent_region() == &body;
        })) {
      std::vector<Op*> at_position(body.size(), nullptr);
      for (Op* op : ops) at_position[body.IndexOf(op)] = op;
      for (Op* op : at_position) {
        if (op != nullptr) ordered.push_back(op);
      }
      return ordered;
    }
    // Marked by serial, which the walk reads from the op it visits anyway,
    // instead of a hash lookup per op of the kernel.
    std::vector<bool> marked(kernel.op_serial_bound());
    for (const Op* op : ops) {
      if (op->serial() < kernel.op_serial_bound()) marked[op->serial()] = true;
    }
    Walk(kernel.body(), [&](Op& op) {
      if (marked[op.serial()] && ops.contains(&op)) ordered.push_back(&op);
    });
    return ordered;
  }
  // Sorted by place: each op's path of (region number, position) from the
  // kernel body down, compared as a sequence, is the pre-order.
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
  for (const auto& [path, op] : placed) ordered.push_back(op);
  return ordered;
}

void RemoveOp(Op* op) {
  Region* region = op->parent_region();
  region->Take(region->IndexOf(op));
}

}  // namespace kir
