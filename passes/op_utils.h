// Small helpers shared by the passes that insert and then prune ops.
#ifndef KIR_PASSES_OP_UTILS_H_
#define KIR_PASSES_OP_UTILS_H_

#include <initializer_list>
#include <vector>

#include "ir/ir.h"

namespace kir {

// A set of one kernel's ops, kept by serial (Op::serial()). A pass that
// inserts ops front to back asks about ops made one after another, so it
// reads this set's vectors in order, where a hash set of addresses reads a
// random slot of a table that grows with the kernel (a cache miss per
// question in a kernel of a million ops).
class OpSet {
 public:
  OpSet() = default;
  OpSet(std::initializer_list<Op*> ops) {
    for (Op* op : ops) Insert(op);
  }

  // Adds `op`; false if it was a member.
  bool Insert(Op* op);
  // Removes `op`; false if it was not a member. A member must be erased
  // before it is destroyed (the set keeps its address).
  bool Erase(const Op* op);
  bool Contains(const Op* op) const {
    const size_t serial = static_cast<size_t>(op->serial());
    return serial < position_.size() && position_[serial] != 0;
  }
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }
  // The members, in no particular order.
  const std::vector<Op*>& ops() const { return ops_; }

 private:
  // By serial: the member's index in `ops_` plus one, or 0.
  std::vector<int> position_;
  std::vector<Op*> ops_;
};

// The ops of `ops` in program order (a pre-order walk of the kernel body);
// ops outside the kernel are left out.
std::vector<Op*> InProgramOrder(Kernel& kernel, const OpSet& ops);

// Removes `op` from its region and destroys it.
void RemoveOp(Op* op);

}  // namespace kir

#endif  // KIR_PASSES_OP_UTILS_H_
