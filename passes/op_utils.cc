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

bool OpSet::Insert(Op* op) {
  const size_t serial = static_cast<size_t>(op->serial());
  if (serial >= position_.size()) {
    // Room for the ops made after it too: a pass inserting ops asks next
    // about the next serials.
    position_.resize(std::max(serial + 1, 2 * position_.size()), 0);
  }
  if (position_[serial] != 0) return false;
  ops_.push_back(op);
  position_[serial] = static_cast<int>(ops_.size());
  return true;
}

bool OpSet::Erase(const Op* op) {
  if (!Contains(op)) return false;
  int& position = position_[op->serial()];
  // The last member takes the erased one's place.
  Op* last = ops_.back();
  ops_[position - 1] = last;
  position_[last->serial()] = position;
  position = 0;
  ops_.pop_back();
  return true;
}

std::vector<Op*> InProgramOrder(Kernel& kernel, const OpSet& set) {
  const std::vector<Op*>& ops = set.ops();
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
    // The set is kept by serial, which the walk reads from the op it
    // visits anyway.
    Walk(kernel.body(), [&](Op& op) {
      if (set.Contains(&op)) ordered.push_back(&op);
    });
    return ordered;
  }
  // Sorted by place (Op::IsBefore: time in the nesting depth per comparison).
  for (Op* op : ops) {
    if (op->TopLevelAncestor()->parent_region() == &kernel.body()) {
      ordered.push_back(op);
    }
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const Op* a, const Op* b) { return a != b && a->IsBefore(*b); });
  return ordered;
}

void RemoveOp(Op* op) {
  Region* region = op->parent_region();
  region->Take(region->IndexOf(op));
}

}  // namespace kir
