// Dead code elimination to a fixed point; see dce.h.
#include "passes/dce.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/effects.h"

namespace kir {
namespace {

constexpr char kOpsRemoved[] = "ops-removed";
constexpr char kIfsRemoved[] = "ifs-removed";
constexpr char kLoopsRemoved[] = "loops-removed";

// Uses of each op result (only results are asked about): the first
// result's by its op's serial, in a table that the walks fill and read
// mostly in creation order, not a hash lookup per use; the others' (ops
// with several results are rare) in a map.
class UseCounts {
 public:
  explicit UseCounts(const Kernel& kernel)
      : first_results_(kernel.op_serial_bound(), 0) {}

  void Add(const Value* value, int delta) {
    if (value->kind() != Value::Kind::kResult) return;
    if (value->index() == 0) {
      first_results_[value->defining_op()->serial()] += delta;
    } else {
      other_results_[value] += delta;
    }
  }
  int Of(const Value* value) const {
    if (value->kind() != Value::Kind::kResult) return 0;  // never counted
    if (value->index() == 0) {
      return first_results_[value->defining_op()->serial()];
    }
    auto it = other_results_.find(value);
    return it == other_results_.end() ? 0 : it->second;
  }

 private:
  std::vector<int> first_results_;
  absl::flat_hash_map<const Value*, int> other_results_;
};

void CountUses(const Region& region, UseCounts& uses) {
  Walk(region, [&](const Op& op) {
    op.ForEachUse([&](const Value* value) { uses.Add(value, 1); });
  });
}

bool IsUnused(const Op& op, const UseCounts& uses) {
  for (int i = 0; i < op.num_results(); ++i) {
    if (uses.Of(op.result(i)) > 0) return false;
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
    op.ForEachUse([&](const Value* value) { uses.Add(value, -1); });
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
    UseCounts uses(kernel);
    CountUses(kernel.body(), uses);
    // A tensor map over a workspace keeps the allocation.
    kernel.ForEachParamUse([&](const Value* value) { uses.Add(value, 1); });
    changed = SweepRegion(kernel.body(), uses, context.stats);
    removed_any = removed_any || changed;
  }
  if (!removed_any) context.PreserveAll();
  return absl::OkStatus();
}

}  // namespace kir
