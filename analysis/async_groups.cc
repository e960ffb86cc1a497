// Counts the async groups a wait may leave pending.
//
// The count is taken along the structured path from the retired commit to
// the wait. The ifs and roles that enclose the commit or the wait are
// assumed taken (the wait is only meaningful on the paths where the commit
// ran). When the wait names an instance from earlier iterations, that
// assumption also covers those iterations, so it is made only for ifs whose
// condition does not change inside the loop. Any other if or role that may
// commit makes the count unknown, as does a loop with a non-constant trip
// count around commits. A wait inside a loop the commit is not in sees the
// fewest commits in that loop's first iteration, which is the count a
// `wait_group N` must use.
#include "analysis/async_groups.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/static_values.h"
#include "ir/checked_math.h"

namespace kir {
namespace {

std::optional<OpKind> CommitKindOf(OpKind wait) {
  switch (wait) {
    case OpKind::kBulkWait:
      return OpKind::kBulkCommit;
    case OpKind::kWgmmaWait:
      return OpKind::kWgmmaCommit;
    case OpKind::kCpAsyncWait:
      return OpKind::kCpAsyncCommit;
    default:
      return std::nullopt;
  }
}

// The sum of `counts`; nullopt when one is unknown or the sum overflows
// (group counts multiply with trip counts, which may be huge).
std::optional<int64_t> Sum(
    std::initializer_list<std::optional<int64_t>> counts) {
  int64_t total = 0;
  for (const std::optional<int64_t>& count : counts) {
    if (!count) return std::nullopt;
    std::optional<int64_t> next = CheckedAdd(total, *count);
    if (!next) return std::nullopt;
    total = *next;
  }
  return total;
}

// Counts commits of one kind, with the ifs and roles on the commit's and
// the wait's paths taken (the region index each takes).
class CommitCounter {
 public:
  explicit CommitCounter(OpKind commit) : commit_(commit) {}

  // Records the ifs and roles enclosing `op`, except ifs inside `loop`
  // whose condition is computed in it; false on a conflict (the commit and
  // the wait on different sides of one if).
  bool AssumePath(const Op& op, const Op* loop) {
    const Op* child = &op;
    for (const Op* parent = op.parent_op(); parent != nullptr;
         child = parent, parent = parent->parent_op()) {
      if (parent->kind() != OpKind::kIf && parent->kind() != OpKind::kRole) {
        continue;
      }
      if (loop != nullptr && parent->kind() == OpKind::kIf &&
          parent->IsInside(*loop) && parent->num_operands() > 0 &&
          loop->DefinesInside(*parent->operand_value(0))) {
        continue;
      }
      const int region = child->parent_region()->number_in_parent();
      auto [it, inserted] = taken_.emplace(parent, region);
      if (!inserted && it->second != region) return false;
    }
    return true;
  }

  // Commits in ops [begin, end) of `region`, run once.
  std::optional<int64_t> Range(const Region& region, int begin, int end) const {
    std::optional<int64_t> total = 0;
    for (int i = std::max(0, begin); i < std::min(end, region.size()); ++i) {
      total = Sum({total, OfOp(region.op(i))});
      if (!total) return std::nullopt;
    }
    return total;
  }
  std::optional<int64_t> All(const Region& region) const {
    return Range(region, 0, region.size());
  }

  std::optional<int64_t> OfOp(const Op& op) const {
    if (op.kind() == commit_) return 1;
    switch (op.kind()) {
      case OpKind::kFor: {
        std::optional<int64_t> body = All(op.region(0));
        if (!body || *body == 0) return body;
        std::optional<int64_t> trips = TripCount(op);
        if (!trips) return std::nullopt;
        return CheckedMul(*trips, *body);
      }
      case OpKind::kIf:
      case OpKind::kRole: {
        auto it = taken_.find(&op);
        if (it != taken_.end()) return All(op.region(it->second));
        // Not on the path: fine only if every side commits the same.
        std::optional<int64_t> first = All(op.region(0));
        std::optional<int64_t> second = op.kind() == OpKind::kIf
                                            ? All(op.region(1))
                                            : std::optional<int64_t>(0);
        if (!first || !second || *first != *second) return std::nullopt;
        return first;
      }
      default: {
        std::optional<int64_t> total = 0;
        for (int r = 0; r < op.num_regions(); ++r) {
          total = Sum({total, All(op.region(r))});
          if (!total) return std::nullopt;
        }
        return total;
      }
    }
  }

  // Commits after `op` up to the end of `stop`'s region that holds it
  // (`stop` null: the kernel body), leaving enclosing loops after their
  // last iteration.
  std::optional<int64_t> After(const Op& op, const Op* stop) const {
    std::optional<int64_t> total = 0;
    const Op* child = &op;
    for (;;) {
      const Region& region = *child->parent_region();
      total =
          Sum({total, Range(region, region.IndexOf(child) + 1, region.size())});
      if (!total) return std::nullopt;
      const Op* parent = child->parent_op();
      if (parent == stop || parent == nullptr) return total;
      if (parent->kind() == OpKind::kSplitK && &parent->region(0) == &region &&
          parent->num_regions() > 1) {
        total = Sum({total, All(parent->region(1))});
        if (!total) return std::nullopt;
      }
      child = parent;
    }
  }

  // Commits from the start of `stop`'s region up to `op`, entering loops in
  // their first iteration.
  std::optional<int64_t> Before(const Op& op, const Op* stop) const {
    std::optional<int64_t> total = 0;
    const Op* child = &op;
    for (;;) {
      const Region& region = *child->parent_region();
      total = Sum({total, Range(region, 0, region.IndexOf(child))});
      if (!total) return std::nullopt;
      const Op* parent = child->parent_op();
      if (parent == stop || parent == nullptr) return total;
      if (parent->kind() == OpKind::kSplitK && parent->num_regions() > 1 &&
          &parent->region(1) == &region) {
        total = Sum({total, All(parent->region(0))});
        if (!total) return std::nullopt;
      }
      child = parent;
    }
  }

 private:
  OpKind commit_;
  absl::flat_hash_map<const Op*, int> taken_;  // looked up, never iterated
};

// Pending groups for one retired token.
std::optional<int64_t> PendingFor(const Op& wait, const Operand& token,
                                  OpKind commit_kind) {
  const Value* value = token.value;
  if (value == nullptr || value->kind() != Value::Kind::kResult ||
      value->defining_op()->kind() != commit_kind || token.distance < 0) {
    return std::nullopt;
  }
  const Op& commit = *value->defining_op();
  if (commit.parent_region() == nullptr || wait.parent_region() == nullptr) {
    return std::nullopt;
  }
  const Op* loop = commit.parent_op();
  while (loop != nullptr && loop->kind() != OpKind::kFor) {
    loop = loop->parent_op();
  }
  CommitCounter counter(commit_kind);
  const Op* varying = token.distance > 0 ? loop : nullptr;
  if (!counter.AssumePath(commit, varying) ||
      !counter.AssumePath(wait, varying)) {
    return std::nullopt;
  }

  if (token.distance > 0) {
    // The instance from `distance` iterations of `loop` ago: the rest of
    // its iteration, the iterations in between, this one up to the wait.
    if (loop == nullptr || !wait.IsInside(*loop)) return std::nullopt;
    std::optional<int64_t> tail = counter.After(commit, loop);
    std::optional<int64_t> head = counter.Before(wait, loop);
    if (!tail || !head) return std::nullopt;
    std::optional<int64_t> between = 0;
    if (token.distance > 1) {
      std::optional<int64_t> body = counter.All(loop->region(0));
      if (!body) return std::nullopt;
      between = CheckedMul(token.distance - 1, *body);
    }
    return Sum({tail, between, head});
  }

  // The newest instance: the innermost region holding both, where the
  // commit's branch must come before the wait's.
  const Region* common = nullptr;
  for (const Op* current = &commit; current && !common;
       current = current->parent_op()) {
    if (wait.AncestorIn(*current->parent_region()) != nullptr) {
      common = current->parent_region();
    }
  }
  if (common == nullptr) return std::nullopt;
  const Op* commit_top = commit.AncestorIn(*common);
  const Op* wait_top = wait.AncestorIn(*common);
  if (commit_top == wait_top) {
    // Both inside one op, in different regions: only a splitk body runs
    // before its epilogue.
    if (commit_top->kind() != OpKind::kSplitK || commit_top == &wait) {
      return std::nullopt;
    }
    const Op* split = commit_top;
    if (!commit.IsInside(*split) || !wait.IsInside(*split) ||
        commit.AncestorIn(split->region(0)) == nullptr ||
        wait.AncestorIn(split->region(1)) == nullptr) {
      return std::nullopt;
    }
    std::optional<int64_t> tail = counter.After(commit, split);
    std::optional<int64_t> head = counter.Before(wait, split);
    return Sum({tail, head});
  }
  const int commit_index = common->IndexOf(commit_top);
  const int wait_index = common->IndexOf(wait_top);
  if (commit_index > wait_index) return std::nullopt;
  std::optional<int64_t> tail = commit_top == &commit
                                    ? std::optional<int64_t>(0)
                                    : counter.After(commit, commit_top);
  std::optional<int64_t> between =
      counter.Range(*common, commit_index + 1, wait_index);
  std::optional<int64_t> head = wait_top == &wait
                                    ? std::optional<int64_t>(0)
                                    : counter.Before(wait, wait_top);
  return Sum({tail, between, head});
}

}  // namespace

std::optional<int> PendingGroupsAfterWait(const Op& wait) {
  std::optional<OpKind> commit_kind = CommitKindOf(wait.kind());
  if (!commit_kind) return std::nullopt;
  if (wait.num_operands() == 0) return 0;  // waits for every group
  std::optional<int64_t> fewest;
  for (const Operand& token : wait.operands()) {
    std::optional<int64_t> pending = PendingFor(wait, token, *commit_kind);
    if (!pending) return std::nullopt;
    fewest = fewest ? std::min(*fewest, *pending) : *pending;
  }
  return static_cast<int>(std::min<int64_t>(*fewest, 1 << 30));
}

}  // namespace kir
