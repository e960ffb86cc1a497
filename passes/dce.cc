// Dead code elimination to a fixed point; see dce.h.
#include "passes/dce.h"

#include "absl/container/flat_hash_map.h"
#include "ir/effects.h"

namespace kir {
namespace {

constexpr char kOpsRemoved[] = "ops-removed";
constexpr char kIfsRemoved[] = "ifs-removed";
constexpr char kLoopsRemoved[] = "loops-removed";

using UseCounts = absl::flat_hash_map<const Value*, int>;

void CountUses(const Region& region, UseCounts& uses) {
  Walk(region, [&](const Op& op) {
    op.ForEachUse([&](const Value* value) { ++uses[value]; });
  });
}

bool IsUnused(const Op& op, const UseCounts& uses) {
  for (int i = 0; i < op.num_results(); ++i) {
    auto it = uses.find(op.result(i));
    if (it != uses.end() && it->second > 0) return false;
  }
  return true;
}

// Which counter removing `op` bumps, or null when it must stay.
const char* RemovalCounter(const Op& op, const UseCounts& uses) {
  switch (op.kind()) {
    case OpKind::kIf:
      for (int r = 0; r < op.num_regions(); ++r) {
        if (!op.region(r).empty()) return nullptr;
      }
      return kIfsRemoved;
    case OpKind::kFor:
      // A loop with no body does nothing, however many times.
      return op.num_regions() == 1 && op.region(0).empty() ? kLoopsRemoved
                                                           : nullptr;
    case OpKind::kPtx:
      return nullptr;
    default:
      break;
  }
  if (op.num_regions() > 0 || op.num_results() == 0 ||
      FactsOf(op.kind()).has_side_effects || !IsUnused(op, uses)) {
    return nullptr;
  }
  return kOpsRemoved;
}

// Removes dead ops of `region` back to front, so an op whose last user was
// just removed goes in the same sweep; updates `uses` as it goes. Returns
// whether anything was removed.
bool SweepRegion(Region& region, UseCounts& uses, PassStatistics& stats) {
  bool changed = false;
  for (int index = region.size() - 1; index >= 0; --index) {
    Op& op = region.op(index);
    for (int r = 0; r < op.num_regions(); ++r) {
      changed |= SweepRegion(op.region(r), uses, stats);
    }
    const char* counter = RemovalCounter(op, uses);
    if (counter == nullptr) continue;
    op.ForEachUse([&](const Value* value) { --uses[value]; });
    region.Take(index);
    stats.Add(counter);
    changed = true;
  }
  return changed;
}

}  // namespace

absl::Status EliminateDeadCode(Kernel& kernel, const PassOptions& options,
                               PassContext& context) {
  for (const char* counter : {kOpsRemoved, kIfsRemoved, kLoopsRemoved}) {
    context.stats.Add(counter, 0);
  }
  // One backward sweep removes most chains; uses inside a loop of values
  // defined later in it (`%t@1`) can need another.
  bool changed = true;
  bool removed_any = false;
  while (changed) {
    UseCounts uses;
    CountUses(kernel.body(), uses);
    // A tensor map over a workspace keeps the allocation.
    for (const Param& param : kernel.params()) {
      if (param.kind == Param::Kind::kTensorMap) ++uses[param.tensor];
    }
    changed = SweepRegion(kernel.body(), uses, context.stats);
    removed_any = removed_any || changed;
  }
  if (!removed_any) context.PreserveAll();
  return absl::OkStatus();
}

}  // namespace kir
