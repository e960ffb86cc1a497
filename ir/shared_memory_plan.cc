#include "ir/shared_memory_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "ir/effects.h"

namespace kir {

void LaneSpan::Add(int from, int to) {
  if (from > to) std::swap(from, to);
  lo = std::min(lo, from);
  hi = std::max(hi, to);
}

namespace {

const Op* SharedAllocOf(const Value* buffer) {
  if (buffer == nullptr || buffer->kind() != Value::Kind::kResult) {
    return nullptr;
  }
  const Op* op = buffer->defining_op();
  return op != nullptr && op->kind() == OpKind::kAllocShared ? op : nullptr;
}

bool IsMbarrierBuffer(const Value* buffer) {
  return buffer != nullptr && buffer->type().is_buffer() &&
         buffer->type().dtype() == DType::kMbarrier;
}

}  // namespace

SharedLifetimes::SharedLifetimes(const Kernel& kernel,
                                 const SharedLifetimeOptions& options)
    : kernel_(kernel) {
  const Region& body = kernel.body();
  for (int i = 0; i < body.size(); ++i) {
    const Op& op = body.op(i);
    if (op.kind() == OpKind::kRole && op.num_regions() == 1) {
      top_roles_.push_back(&op);
      role_index_[&op] = i;
    }
  }
  Compute(kernel, options);
}

const SharedLifetime* SharedLifetimes::Find(const Op* alloc) const {
  auto it = lifetime_of_.find(alloc);
  return it == lifetime_of_.end() ? nullptr : &lifetimes_[it->second];
}

SharedLifetimes::Position SharedLifetimes::PositionOf(const Op& op) const {
  const Op* top = &op;
  const Op* child = nullptr;  // the ancestor directly inside `top`
  while (top->parent_op() != nullptr) {
    child = top;
    top = top->parent_op();
  }
  // A lane's index is the op's place in its region (the kernel body, or a
  // top-level role's), which the region keeps.
  Position position;
  if (child != nullptr && role_index_.count(top) != 0) {
    position.role = top;
    position.index = top->region(0).IndexOf(child);
  } else {
    position.index = kernel_.body().IndexOf(top);
  }
  return position;
}

int SharedLifetimes::LaneEnd(const Op* role) const {
  return role != nullptr ? role->region(0).size() - 1
                         : kernel_.body().size() - 1;
}

int SharedLifetimes::RoleIndex(const Op* role) const {
  return role_index_.at(role);
}

void SharedLifetimes::AddLive(SharedLifetime& lifetime, const Op* role,
                              int from, int to) {
  if (role != nullptr) {
    lifetime.roles[role].Add(from, to);
  } else {
    lifetime.top.Add(from, to);
  }
}

void SharedLifetimes::AddLiveToEnd(SharedLifetime& lifetime,
                                   const Position& from) {
  AddLive(lifetime, from.role, from.index, LaneEnd(from.role));
  if (from.role != nullptr) {
    lifetime.tail_from = std::min(lifetime.tail_from, RoleIndex(from.role) + 1);
  }
}

void SharedLifetimes::Compute(const Kernel& kernel,
                              const SharedLifetimeOptions& options) {
  for (const Op* alloc : SharedAllocations(kernel)) {
    lifetime_of_[alloc] = static_cast<int>(lifetimes_.size());
    SharedLifetime lifetime;
    lifetime.alloc = alloc;
    lifetime.mbarrier =
        alloc->num_results() == 1 && IsMbarrierBuffer(alloc->result());
    lifetimes_.push_back(std::move(lifetime));
  }

  // Every op in program order, and the synchronization the extensions
  // look for.
  std::vector<const Op*> ops;
  Walk(kernel.body(), [&](const Op& op) { ops.push_back(&op); });
  std::set<TokenKind> committed;
  std::map<const Value*, std::vector<const Op*>> mbarrier_waits;
  std::map<const Value*, std::vector<const Op*>> mbarrier_arrives;
  std::map<const Value*, std::vector<const Op*>> group_waits;  // by token
  for (const Op* op : ops) {
    const OpFacts& facts = FactsOf(op->kind());
    if (facts.sync == SyncKind::kGroupCommit && facts.group) {
      committed.insert(*facts.group);
    }
    if (facts.sync == SyncKind::kGroupWait) {
      for (const Operand& token : op->operands()) {
        if (token.value != nullptr) group_waits[token.value].push_back(op);
      }
    }
    if (op->num_operands() > 0 && op->operand_value(0) != nullptr) {
      if (op->kind() == OpKind::kMbarrierWait) {
        mbarrier_waits[op->operand_value(0)].push_back(op);
      } else if (op->kind() == OpKind::kMbarrierArrive ||
                 op->kind() == OpKind::kMbarrierArriveRemote) {
        mbarrier_arrives[op->operand_value(0)].push_back(op);
      }
    }
  }

  // A write an mbarrier completes: live in its lane until a wait there; in
  // the other roles until their last wait (or throughout).
  auto extend_fill = [&](SharedLifetime& lifetime, const Position& at,
                         const Value* barrier) {
    const std::vector<const Op*>& waits = mbarrier_waits[barrier];
    int last_own = -1;
    for (const Op* wait : waits) {
      const Position w = PositionOf(*wait);
      if (w.role == at.role && w.index >= at.index) {
        last_own = std::max(last_own, w.index);
      }
    }
    if (last_own >= 0) {
      AddLive(lifetime, at.role, at.index, last_own);
      if (at.role == nullptr) return;  // waited for before the roles
    } else {
      AddLiveToEnd(lifetime, at);
    }
    for (const Op* role : top_roles_) {
      if (role == at.role || role->region(0).empty()) continue;
      if (at.role == nullptr && RoleIndex(role) < at.index) continue;
      int last = -1;
      for (const Op* wait : waits) {
        const Position w = PositionOf(*wait);
        if (w.role == role) last = std::max(last, w.index);
      }
      AddLive(lifetime, role, 0, last >= 0 ? last : LaneEnd(role));
    }
  };

  // The stage loads of each ring allocation and the barriers they complete
  // on, for its empty barriers.
  std::map<const Op*, std::vector<std::pair<const Op*, const Value*>>> fills;

  for (size_t n = 0; n < ops.size(); ++n) {
    const Op& op = *ops[n];
    const MemoryEffects effects = MemoryEffectsOf(op);
    for (const MemoryEffect& effect : effects) {
      const Op* alloc = SharedAllocOf(effect.buffer);
      if (alloc == nullptr || lifetime_of_.count(alloc) == 0) continue;
      SharedLifetime& lifetime = lifetimes_[lifetime_of_.at(alloc)];
      const Position at = PositionOf(op);
      lifetime.first_access.emplace(at.role, std::make_pair(at.index, &op));
      AddLive(lifetime, at.role, at.index, at.index);
      if (lifetime.mbarrier) continue;
      switch (effect.completion) {
        case Completion::kMbarrier: {
          if (!effect.writes()) break;
          if (effect.remote) {
            // A peer CTA's store.remote lands here at any time after the
            // cluster barrier that follows the inits: live throughout.
            AddLive(lifetime, nullptr, 0, LaneEnd(nullptr));
            for (const Op* role : top_roles_) {
              if (!role->region(0).empty()) {
                AddLive(lifetime, role, 0, LaneEnd(role));
              }
            }
            break;
          }
          const Value* barrier = nullptr;
          for (const MemoryEffect& other : effects) {
            if (IsMbarrierBuffer(other.buffer)) barrier = other.buffer;
          }
          if (barrier == nullptr) {
            AddLiveToEnd(lifetime, at);
            break;
          }
          extend_fill(lifetime, at, barrier);
          fills[alloc].emplace_back(&op, barrier);
          break;
        }
        case Completion::kBulkGroup:
        case Completion::kWgmmaGroup:
        case Completion::kCpAsyncGroup: {
          const std::optional<TokenKind> group = FactsOf(op.kind()).group;
          if (!group || committed.count(*group) == 0) {
            if (!options.uncommitted_async_complete) AddLiveToEnd(lifetime, at);
            break;
          }
          // The group is the one the next commit of its kind closes.
          const Op* commit = nullptr;
          for (size_t m = n + 1; m < ops.size() && commit == nullptr; ++m) {
            const OpFacts& facts = FactsOf(ops[m]->kind());
            if (facts.sync == SyncKind::kGroupCommit && facts.group == group) {
              commit = ops[m];
            }
          }
          int last_wait = -1;
          if (commit != nullptr && commit->num_results() == 1) {
            for (const Op* wait : group_waits[commit->result()]) {
              const bool reads_only = wait->has_read() && wait->read();
              if (reads_only && effect.writes()) continue;
              const Position w = PositionOf(*wait);
              if (w.role == at.role) last_wait = std::max(last_wait, w.index);
            }
          }
          if (last_wait < 0) {
            AddLiveToEnd(lifetime, at);
          } else {
            AddLive(lifetime, at.role, at.index, last_wait);
          }
          break;
        }
        default:
          break;
      }
    }
  }

  // A ring stays live until its empty barrier is released: the mbarriers
  // waited on in the loop of a stage load, other than the one the load
  // completes on.
  for (const auto& [alloc, loads] : fills) {
    if (!alloc->ring()) continue;
    std::set<const Value*> empty;
    for (const auto& [load, completion] : loads) {
      const Value* full = completion;  // a lambda cannot capture a binding
      const Op* loop = load->EnclosingOp(OpKind::kFor);
      if (loop == nullptr || loop->num_regions() == 0) continue;
      Walk(loop->region(0), [&](const Op& op) {
        if (op.kind() == OpKind::kMbarrierWait && op.num_operands() > 0 &&
            op.operand_value(0) != full) {
          empty.insert(op.operand_value(0));
        }
      });
    }
    SharedLifetime& lifetime = lifetimes_[lifetime_of_.at(alloc)];
    for (const Value* barrier : empty) {
      for (const Op* arrive : mbarrier_arrives[barrier]) {
        const Position at = PositionOf(*arrive);
        const LaneSpan& span =
            at.role != nullptr ? lifetime.roles[at.role] : lifetime.top;
        if (!span.empty()) AddLive(lifetime, at.role, at.index, at.index);
      }
    }
  }

  // A role counts at its own index among the top-level points; a role
  // strictly between two of them holds the allocation throughout.
  for (SharedLifetime& lifetime : lifetimes_) {
    for (auto& [role, span] : lifetime.roles) {
      if (!span.empty()) lifetime.top.Add(RoleIndex(role));
    }
    for (const Op* role : top_roles_) {
      const int index = RoleIndex(role);
      if (lifetime.top.lo < index && index < lifetime.top.hi &&
          !role->region(0).empty()) {
        lifetime.roles[role] = LaneSpan();
        lifetime.roles[role].Add(0, LaneEnd(role));
      }
    }
    const int end = kernel.body().size() - 1;
    if (lifetime.tail_from <= end) lifetime.top.Add(lifetime.tail_from, end);
  }
}

bool SharedLifetimes::Disjoint(const Op* a, const Op* b) const {
  const SharedLifetime* la = Find(a);
  const SharedLifetime* lb = Find(b);
  if (la == nullptr || lb == nullptr || la->mbarrier || lb->mbarrier) {
    return false;
  }
  if (!la->top.Overlaps(lb->top)) return true;
  const int from = std::max(la->top.lo, lb->top.lo);
  const int to = std::min(la->top.hi, lb->top.hi);
  for (int t = from; t <= to; ++t) {
    const Op* op = &kernel_.body().op(t);
    if (role_index_.count(op) == 0) return false;
    auto sa = la->roles.find(op);
    auto sb = lb->roles.find(op);
    if (sa != la->roles.end() && sb != lb->roles.end() &&
        sa->second.Overlaps(sb->second)) {
      return false;
    }
  }
  return true;
}

std::vector<SharedLifetimes::Point> SharedLifetimes::Points() const {
  std::vector<Point> points;
  const Region& body = kernel_.body();
  for (int t = 0; t < body.size(); ++t) {
    const Op* op = &body.op(t);
    if (role_index_.count(op) != 0) {
      for (int j = 0; j < op->region(0).size(); ++j) {
        points.push_back(Point{op, j, &op->region(0).op(j)});
      }
    } else {
      points.push_back(Point{nullptr, t, op});
    }
  }
  return points;
}

bool SharedLifetimes::LiveAt(const Op* alloc, const Point& point) const {
  const SharedLifetime* lifetime = Find(alloc);
  if (lifetime == nullptr) return false;
  if (point.role == nullptr) return lifetime->top.Contains(point.index);
  auto span = lifetime->roles.find(point.role);
  return span != lifetime->roles.end() && span->second.Contains(point.index);
}

std::string SharedLifetimes::Describe(const Op* alloc) const {
  const SharedLifetime* lifetime = Find(alloc);
  if (lifetime == nullptr || lifetime->top.empty()) return "never accessed";
  std::vector<std::string> parts = {
      absl::StrCat("top [", lifetime->top.lo, ", ", lifetime->top.hi, "]")};
  for (const Op* role : top_roles_) {
    auto span = lifetime->roles.find(role);
    if (span == lifetime->roles.end() || span->second.empty()) continue;
    parts.push_back(absl::StrCat("@", role->name(), " [", span->second.lo, ", ",
                                 span->second.hi, "]"));
  }
  return absl::StrJoin(parts, ", ");
}

// ---------------------------------------------------------------------------
// Layout.

namespace {

// `lifetimes` is read only with reuse, and may be null without.
SharedLayoutPlan PlanLayout(const Kernel& kernel,
                            const SharedLifetimes* lifetimes,
                            const SharedMemoryRequest& request) {
  std::vector<SharedPlacement> items;
  auto add = [&]() {
    for (const auto& [bytes, align] : request.added) {
      SharedPlacement placed;
      placed.bytes = bytes;
      placed.align = std::max<int64_t>(align, 1);
      items.push_back(placed);
    }
  };
  bool added = false;
  for (const Op* alloc : SharedAllocations(kernel)) {
    if (alloc->num_results() != 1 || !alloc->result()->type().is_buffer()) {
      continue;  // V20
    }
    if (request.removed.count(alloc->result()) == 0) {
      std::optional<int64_t> bytes = SharedAllocationBytes(*alloc);
      if (auto it = request.bytes.find(alloc->result());
          it != request.bytes.end()) {
        bytes = it->second;
      }
      if (bytes) items.push_back(PlacementOf(*alloc, *bytes));
    }
    if (!added && alloc->result() == request.added_after) {
      add();
      added = true;
    }
  }
  if (!added) add();

  SharedLayoutPlan plan;
  std::vector<SharedPlacement> never = items;
  plan.total_without_reuse = PlaceWithoutReuse(never);
  auto keep = [&](const std::vector<SharedPlacement>& placements) {
    plan.placements.clear();
    for (const SharedPlacement& placed : placements) {
      if (placed.alloc != nullptr) plan.placements.push_back(placed);
    }
  };
  keep(never);
  plan.total = plan.total_without_reuse;
  if (request.reuse == SharedReuse::kNever) return plan;

  auto may_share = [&](const SharedPlacement& a, const SharedPlacement& b) {
    if (a.alloc == nullptr || b.alloc == nullptr) return false;
    if (request.kept_apart.count({a.alloc, b.alloc}) != 0 ||
        request.kept_apart.count({b.alloc, a.alloc}) != 0) {
      return false;
    }
    return lifetimes->Disjoint(a.alloc, b.alloc);
  };
  auto overlap = [](const SharedPlacement& a, const SharedPlacement& b) {
    return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
  };

  // Largest first, each at the lowest offset clear of every allocation it
  // may not share with.
  std::vector<SharedPlacement> placed = items;
  std::vector<int> order;
  std::vector<int> done;
  for (int i = 0; i < static_cast<int>(placed.size()); ++i) {
    if (placed[i].explicit_offset) {
      done.push_back(i);
    } else {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return placed[a].bytes > placed[b].bytes;
  });
  for (int i : order) {
    SharedPlacement& item = placed[i];
    std::vector<int64_t> candidates = {0};
    for (int j : done) {
      if (!may_share(item, placed[j])) {
        candidates.push_back(placed[j].offset + placed[j].bytes);
      }
    }
    std::sort(candidates.begin(), candidates.end());
    for (int64_t candidate : candidates) {
      item.offset = AlignUp(candidate, item.align);
      bool clear = true;
      for (int j : done) {
        if (!may_share(item, placed[j]) && overlap(item, placed[j])) {
          clear = false;
          break;
        }
      }
      if (clear) break;
    }
    done.push_back(i);
  }
  int64_t total = 0;
  for (const SharedPlacement& p : placed) {
    total = std::max(total, p.offset + p.bytes);
  }
  std::vector<std::pair<const Op*, const Op*>> aliased;
  for (size_t i = 0; i < placed.size(); ++i) {
    for (size_t j = i + 1; j < placed.size(); ++j) {
      if (placed[i].alloc == nullptr || placed[j].alloc == nullptr) continue;
      if (placed[i].explicit_offset && placed[j].explicit_offset) continue;
      if (overlap(placed[i], placed[j])) {
        aliased.emplace_back(placed[i].alloc, placed[j].alloc);
      }
    }
  }
  if (aliased.empty() || total >= plan.total_without_reuse) return plan;
  keep(placed);
  plan.total = total;
  plan.aliased = std::move(aliased);
  return plan;
}

}  // namespace

SharedLayoutPlan PlanSharedLayout(const Kernel& kernel,
                                  const SharedLifetimes& lifetimes,
                                  const SharedMemoryRequest& request) {
  return PlanLayout(kernel, &lifetimes, request);
}

SharedLayoutPlan PlanSharedLayoutWithoutReuse(
    const Kernel& kernel, const SharedMemoryRequest& request) {
  KIR_CHECK(request.reuse == SharedReuse::kNever)
      << "a layout with reuse needs the lifetimes";
  return PlanLayout(kernel, nullptr, request);
}

SharedMemoryEstimate EstimateSharedMemory(const Kernel& kernel,
                                          const SharedMemoryRequest& request,
                                          int64_t threads, int64_t registers) {
  SharedLifetimeOptions options;
  options.uncommitted_async_complete = true;
  const SharedLifetimes lifetimes(kernel, options);
  const SharedLayoutPlan plan = PlanSharedLayout(kernel, lifetimes, request);
  SharedMemoryEstimate estimate;
  estimate.bytes = plan.total;
  estimate.bytes_without_reuse = plan.total_without_reuse;
  BlockResources resources;
  resources.threads = threads;
  resources.registers = registers;
  resources.barriers = BarriersUsed(kernel);
  resources.shared_bytes = estimate.bytes;
  estimate.occupancy = BlocksPerSm(resources);
  resources.shared_bytes = estimate.bytes_without_reuse;
  estimate.occupancy_without_reuse = BlocksPerSm(resources);
  return estimate;
}

}  // namespace kir
