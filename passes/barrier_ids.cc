// Named barrier ids; see barrier_ids.h.
#include "passes/barrier_ids.h"

#include "ir/effects.h"

namespace kir {

BarrierIdAllocator::BarrierIdAllocator(const Kernel& kernel) {
  Walk(kernel.body(), [&](const Op& op) {
    const SyncKind sync = FactsOf(op.kind()).sync;
    if (sync != SyncKind::kNamedBarrier &&
        sync != SyncKind::kNamedBarrierArrive) {
      return;
    }
    if (!op.has_id()) return;
    const Op* role = nullptr;
    for (const Op* parent = op.parent_op(); parent != nullptr;
         parent = parent->parent_op()) {
      if (parent->kind() == OpKind::kRole) role = parent;
    }
    Use& use = uses_[static_cast<int>(op.id())];
    use.roles.insert(role);
    if (op.has_threads()) use.counts.insert(op.threads());
  });
}

std::optional<int> BarrierIdAllocator::Allocate(const Op* role, int threads) {
  for (const auto& [id, use] : uses_) {
    if (id >= 1 && id <= 15 && role != nullptr && use.roles.size() == 1 &&
        *use.roles.begin() == role && use.counts.size() == 1 &&
        *use.counts.begin() == threads) {
      return id;
    }
  }
  for (int id = 1; id <= 15; ++id) {
    if (uses_.count(id)) continue;
    Use& use = uses_[id];
    use.roles.insert(role);
    use.counts.insert(threads);
    return id;
  }
  return std::nullopt;
}

}  // namespace kir
