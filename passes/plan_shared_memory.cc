// Shared-memory planning; see plan_shared_memory.h.
//
// The layout comes from ir/shared_memory_plan.h (lifetimes and first-fit
// placement). The ordering its aliasing needs is checked with
// analysis/ordering.h on the kernel carrying the planned offsets: the pairs
// of accesses of two different allocations that now overlap and that nothing
// orders get one barrier before the later allocation's first access in its
// lane, and the analysis is asked again; a pair no barrier can order is
// kept apart and the layout planned again without it.
#include "passes/plan_shared_memory.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/ordering.h"
#include "analysis/thread_analysis.h"
#include "ir/builder.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"
#include "ir/shared_memory.h"
#include "ir/shared_memory_plan.h"
#include "passes/barrier_ids.h"
#include "passes/op_utils.h"

namespace kir {
namespace {

constexpr char kPlanSharedMemoryPassName[] = "plan-shared-memory";
// Replanning rounds; each keeps at least one more pair apart.
constexpr int kMaxRounds = 64;

using AllocPair = std::pair<const Op*, const Op*>;

AllocPair Ordered(const Op* a, const Op* b) {
  return a < b ? AllocPair{a, b} : AllocPair{b, a};
}

const Op* SharedAllocOf(const Value* buffer) {
  if (buffer == nullptr || buffer->kind() != Value::Kind::kResult) {
    return nullptr;
  }
  const Op* op = buffer->defining_op();
  return op != nullptr && op->kind() == OpKind::kAllocShared ? op : nullptr;
}

std::string Name(const Op& alloc) {
  return absl::StrCat("%", alloc.result()->name());
}

// The top-level role around `op`, or null.
const Op* TopRole(const Op* op) {
  const Op* top = op->TopLevelAncestor();
  return top != op && top->kind() == OpKind::kRole ? top : nullptr;
}

// A barrier to insert: before `before` in its region, inside `role` (a
// barrier.named over its threads) or at the top level (barrier.block).
struct BarrierSite {
  Op* before = nullptr;
  const Op* role = nullptr;
  std::vector<Location> because;
  std::set<AllocPair> pairs;
};

class Planner {
 public:
  Planner(Kernel& kernel, PassStatistics& stats, bool reuse, bool auto_reuse,
          int64_t registers)
      : kernel_(kernel),
        stats_(stats),
        reuse_(reuse),
        auto_reuse_(auto_reuse),
        registers_(registers) {}

  absl::Status Run() {
    const std::vector<const Op*> allocs = SharedAllocations(kernel_);
    bool all_placed = true;
    for (const Op* alloc : allocs) {
      all_placed = all_placed && alloc->has_offset();
    }
    const int barriers_before = BarriersUsed(kernel_);
    if (all_placed) {
      // Planned already (or placed by the author): nothing to decide.
      const SharedLayout layout = LayoutWithoutReuse(kernel_);
      for (const char* counter : {"reuse-declined", "pairs-kept-apart",
                                  "aliased-pairs", "barriers-inserted"}) {
        stats_.Add(counter, 0);
      }
      Report(layout.total, layout.total, barriers_before, barriers_before);
      return absl::OkStatus();
    }

    SharedLifetimeOptions lifetime_options;
    SharedMemoryRequest never_request;
    never_request.reuse = SharedReuse::kNever;
    const SharedLayoutPlan never =
        PlanSharedLayoutWithoutReuse(kernel_, never_request);

    SharedLayoutPlan chosen = never;
    // With one allocation nothing can share its bytes, and reuse gives the
    // layout without it: the lifetimes (a walk over every access) are
    // computed only when two allocations might share.
    if (reuse_ && allocs.size() >= 2) {
      chosen = PlanWithReuse(SharedLifetimes(kernel_, lifetime_options));
    }

    bool declined = false;
    if (auto_reuse_ && !chosen.aliased.empty()) {
      const std::optional<int64_t> threads = kernel_.block.StaticVolume();
      const bool fits_without = never.total <= kMaxSharedBytes;
      bool raises = false;
      if (threads.has_value()) {
        raises = Blocks(chosen.total, BarriersUsed(kernel_)) >
                 Blocks(never.total, barriers_before);
      }
      if (fits_without && !raises) {
        declined = true;
        for (Op* barrier : inserted_) RemoveOp(barrier);
        inserted_.clear();
        chosen = never;
      }
    }
    WriteOffsets(chosen);
    stats_.Add("reuse-declined", declined ? 1 : 0);
    stats_.Add("pairs-kept-apart", static_cast<int64_t>(kept_apart_.size()));
    stats_.Add("aliased-pairs", static_cast<int64_t>(chosen.aliased.size()));
    stats_.Add("barriers-inserted", static_cast<int64_t>(inserted_.size()));
    // Only the barriers inserted here can raise the count.
    Report(chosen.total, never.total,
           inserted_.empty() ? barriers_before : BarriersUsed(kernel_),
           barriers_before);
    if (chosen.total > kMaxSharedBytes) {
      // Positions as the kernel now stands, barriers included.
      const SharedLifetimes now(kernel_, lifetime_options);
      return OverLimit(chosen, now, reuse_);
    }
    return absl::OkStatus();
  }

 private:
  int Blocks(int64_t bytes, int barriers) const {
    BlockResources resources;
    resources.threads = kernel_.block.StaticVolume().value_or(0);
    resources.registers = registers_;
    resources.shared_bytes = bytes;
    resources.barriers = barriers;
    return BlocksPerSm(resources).blocks_per_sm;
  }

  void Report(int64_t bytes, int64_t without_reuse, int barriers,
              int barriers_without_reuse) {
    stats_.Add("bytes", bytes);
    stats_.Add("bytes-without-reuse", without_reuse);
    if (!kernel_.block.StaticVolume().has_value()) return;
    stats_.Add("blocks-per-sm", Blocks(bytes, barriers));
    stats_.Add("blocks-per-sm-without-reuse",
               Blocks(without_reuse, barriers_without_reuse));
  }

  // Plans with reuse until every aliased pair is ordered; inserts the
  // barriers that order them.
  SharedLayoutPlan PlanWithReuse(const SharedLifetimes& lifetimes) {
    SharedMemoryRequest request;
    request.reuse = SharedReuse::kAlways;
    for (int round = 0; round < kMaxRounds; ++round) {
      request.kept_apart = kept_apart_;
      SharedLayoutPlan plan = PlanSharedLayout(kernel_, lifetimes, request);
      if (plan.aliased.empty()) return plan;
      std::set<AllocPair> aliased;
      for (const auto& [a, b] : plan.aliased) aliased.insert(Ordered(a, b));
      WriteOffsets(plan);
      std::vector<UnorderedPair> pairs = AliasedPairs(aliased);
      if (pairs.empty()) return plan;
      bool replan = false;
      std::vector<BarrierSite> sites;
      for (const UnorderedPair& pair : pairs) {
        const AllocPair allocs = AllocsOf(pair);
        std::optional<BarrierSite> site = SiteFor(pair, lifetimes);
        if (!site) {
          kept_apart_.insert(allocs);
          replan = true;
          continue;
        }
        auto same = std::find_if(
            sites.begin(), sites.end(),
            [&](const BarrierSite& s) { return s.before == site->before; });
        if (same == sites.end()) {
          sites.push_back(*site);
          same = sites.end() - 1;
        }
        same->pairs.insert(allocs);
        for (const Op* op : {pair.first, pair.second}) {
          if (op->loc().known()) same->because.push_back(op->loc());
        }
      }
      if (!replan) {
        std::set<AllocPair> failed;
        if (!InsertBarriers(sites, failed)) {
          kept_apart_.insert(failed.begin(), failed.end());
          replan = true;
        } else {
          for (const UnorderedPair& pair : AliasedPairs(aliased)) {
            kept_apart_.insert(AllocsOf(pair));
            replan = true;
          }
        }
      }
      if (!replan) return plan;
      for (Op* barrier : inserted_) RemoveOp(barrier);
      inserted_.clear();
      ClearOffsets(plan);
    }
    SharedMemoryRequest never;
    never.reuse = SharedReuse::kNever;
    return PlanSharedLayout(kernel_, lifetimes, never);
  }

  AllocPair AllocsOf(const UnorderedPair& pair) const {
    const MemoryEffects first = MemoryEffectsOf(*pair.first);
    const MemoryEffects second = MemoryEffectsOf(*pair.second);
    return Ordered(SharedAllocOf(first[pair.first_effect].buffer),
                   SharedAllocOf(second[pair.second_effect].buffer));
  }

  // The pairs the sync analysis leaves unordered between accesses of two
  // allocations the plan lets share bytes.
  std::vector<UnorderedPair> AliasedPairs(const std::set<AllocPair>& aliased) {
    SyncAnalysisOptions options;
    options.complete_uncommitted_async = true;
    // Only pairs of two aliased allocations are compared.
    options.wanted_pairs = [&](const MemoryEffect& earlier,
                               const MemoryEffect& later) {
      const Op* a = SharedAllocOf(earlier.buffer);
      const Op* b = SharedAllocOf(later.buffer);
      return a != nullptr && b != nullptr && a != b &&
             aliased.count(Ordered(a, b)) != 0;
    };
    std::vector<UnorderedPair> out;
    for (const UnorderedPair& pair : FindUnorderedPairs(kernel_, options)) {
      const MemoryEffects first = MemoryEffectsOf(*pair.first);
      const MemoryEffects second = MemoryEffectsOf(*pair.second);
      if (pair.first_effect >= static_cast<int>(first.size()) ||
          pair.second_effect >= static_cast<int>(second.size())) {
        continue;
      }
      const Op* a = SharedAllocOf(first[pair.first_effect].buffer);
      const Op* b = SharedAllocOf(second[pair.second_effect].buffer);
      if (a == nullptr || b == nullptr || a == b) continue;
      if (aliased.count(Ordered(a, b)) != 0) out.push_back(pair);
    }
    return out;
  }

  // Where one barrier orders `pair`: before the later allocation's first
  // access in the lane of the pair's second access, after the first
  // access. Null when no barrier can (two roles, or a carried pair).
  std::optional<BarrierSite> SiteFor(const UnorderedPair& pair,
                                     const SharedLifetimes& lifetimes) {
    // Around a loop that holds both (a dependence carried to the next
    // iteration), a barrier before the later access does not order it.
    if (pair.carried && pair.carried_loop != nullptr &&
        pair.second->AncestorIn(pair.carried_loop->region(0)) != nullptr) {
      return std::nullopt;
    }
    const Op* first_role = TopRole(pair.first);
    const Op* second_role = TopRole(pair.second);
    if (first_role != nullptr && second_role != nullptr &&
        first_role != second_role) {
      return std::nullopt;  // concurrent roles: only their mbarriers can
    }
    const MemoryEffects effects = MemoryEffectsOf(*pair.second);
    const SharedLifetime* later =
        lifetimes.Find(SharedAllocOf(effects[pair.second_effect].buffer));
    if (later == nullptr) return std::nullopt;
    BarrierSite site;
    Region& body = kernel_.body();
    if (second_role != nullptr && first_role == second_role) {
      auto first_access = later->first_access.find(second_role);
      if (first_access == later->first_access.end()) return std::nullopt;
      Region& region = second_role->region(0);
      const Op* earlier = pair.first->AncestorIn(region);
      if (earlier == nullptr ||
          region.IndexOf(earlier) >= first_access->second.first) {
        return std::nullopt;
      }
      site.before = &region.op(first_access->second.first);
      site.role = second_role;
      return site;
    }
    // A barrier of the whole block, at the top level: before the later
    // allocation's first top-level access, or, when the later access is in
    // a role, before the first role after the earlier access (not between
    // two roles, which it would serialize).
    const int earlier = body.IndexOf(pair.first->TopLevelAncestor());
    int target = -1;
    if (second_role == nullptr) {
      auto first_access = later->first_access.find(nullptr);
      if (first_access == later->first_access.end()) return std::nullopt;
      target = first_access->second.first;
    } else {
      for (int i = earlier + 1; i < body.size() && target < 0; ++i) {
        if (body.op(i).kind() == OpKind::kRole) target = i;
      }
    }
    if (target <= earlier) return std::nullopt;
    site.before = &body.op(target);
    return site;
  }

  // Inserts one barrier per site; false (and the failing sites' pairs in
  // `failed`) when one would not be reached by all its threads.
  bool InsertBarriers(std::vector<BarrierSite>& sites,
                      std::set<AllocPair>& failed) {
    BarrierIdAllocator ids(kernel_);
    std::vector<std::pair<Op*, const BarrierSite*>> made;
    for (BarrierSite& site : sites) {
      Region& region = *site.before->parent_region();
      OpBuilder builder(region, region.IndexOf(site.before));
      std::sort(site.because.begin(), site.because.end(),
                [](const Location& a, const Location& b) {
                  return std::make_pair(a.line, a.column) <
                         std::make_pair(b.line, b.column);
                });
      site.because.erase(std::unique(site.because.begin(), site.because.end(),
                                     [](const Location& a, const Location& b) {
                                       return a.line == b.line &&
                                              a.column == b.column;
                                     }),
                         site.because.end());
      builder.set_loc(site.before->loc());
      builder.set_provenance(
          Provenance{kPlanSharedMemoryPassName, site.because});
      Op* barrier = nullptr;
      if (site.role != nullptr) {
        const int threads = static_cast<int>(
            (site.role->warp_end() - site.role->warp_begin()) * 32);
        std::optional<int> id = ids.Allocate(site.role, threads);
        if (!id) {
          failed.insert(site.pairs.begin(), site.pairs.end());
          continue;
        }
        barrier = builder.Create(OpKind::kBarrierNamed, {},
                                 {attr::id(*id), attr::threads(threads)});
      } else {
        barrier = builder.Create(OpKind::kBarrierBlock, {});
      }
      inserted_.push_back(barrier);
      made.emplace_back(barrier, &site);
    }
    // Every participant must reach it: guards uniform over the block (or
    // the role), and no divergent return before it.
    ThreadAnalysis threads(kernel_);
    for (const auto& [barrier, site] : made) {
      const Scope scope = site->role != nullptr ? Scope::kRole : Scope::kBlock;
      if (!threads.GuardsUniformOver(*barrier, scope)) {
        failed.insert(site->pairs.begin(), site->pairs.end());
      }
    }
    return failed.empty();
  }

  void WriteOffsets(const SharedLayoutPlan& plan) {
    for (const SharedPlacement& placed : plan.placements) {
      if (placed.explicit_offset) continue;
      const_cast<Op*>(placed.alloc)->set_offset(placed.offset);
    }
  }

  void ClearOffsets(const SharedLayoutPlan& plan) {
    for (const SharedPlacement& placed : plan.placements) {
      if (!placed.explicit_offset) {
        const_cast<Op*>(placed.alloc)->clear_offset();
      }
    }
  }

  // The layout does not fit: the program point where it is highest, and
  // what is live there.
  absl::Status OverLimit(const SharedLayoutPlan& plan,
                         const SharedLifetimes& lifetimes, bool reused) {
    const SharedLifetimes::Point* peak = nullptr;
    std::vector<const SharedPlacement*> peak_live;
    int64_t peak_top = -1;
    const std::vector<SharedLifetimes::Point> points = lifetimes.Points();
    for (const SharedLifetimes::Point& point : points) {
      int64_t top = 0;
      std::vector<const SharedPlacement*> live;
      for (const SharedPlacement& placed : plan.placements) {
        if (!lifetimes.LiveAt(placed.alloc, point)) continue;
        live.push_back(&placed);
        top = std::max(top, placed.offset + placed.bytes);
      }
      if (top > peak_top) {
        peak_top = top;
        peak = &point;
        peak_live = std::move(live);
      }
    }
    const Location at = peak != nullptr ? peak->op->loc() : kernel_.loc();
    std::sort(peak_live.begin(), peak_live.end(),
              [](const SharedPlacement* a, const SharedPlacement* b) {
                return a->offset < b->offset;
              });
    std::vector<std::string> names;
    for (const SharedPlacement* placed : peak_live) {
      names.push_back(absl::StrCat(Name(*placed->alloc), " (", placed->bytes,
                                   " bytes at ", placed->offset, ")"));
    }
    InFlightDiagnostic error = Error(at);
    error << "kernel @" << kernel_.name() << " needs " << plan.total
          << " bytes of shared memory" << (reused ? " after reuse" : "")
          << ", more than the " << kMaxSharedBytes
          << " a block can use; live here: "
          << (names.empty() ? std::string("nothing")
                            : absl::StrJoin(names, ", "));
    for (const SharedPlacement* placed : peak_live) {
      std::string live;
      const SharedLifetime* lifetime = lifetimes.Find(placed->alloc);
      if (lifetime != nullptr && !lifetime->top.empty()) {
        live = absl::StrCat(
            ", live from ",
            kernel_.body().op(lifetime->top.lo).loc().LineColumn(), " to ",
            kernel_.body().op(lifetime->top.hi).loc().LineColumn());
      }
      error.Note(placed->alloc->loc(),
                 absl::StrCat(Name(*placed->alloc), ": ", placed->bytes,
                              " bytes at offset ", placed->offset, live));
    }
    return error;
  }

  Kernel& kernel_;
  PassStatistics& stats_;
  const bool reuse_;
  const bool auto_reuse_;
  const int64_t registers_;
  std::set<AllocPair> kept_apart_;
  std::vector<Op*> inserted_;
};

}  // namespace

absl::Status PlanSharedMemory(Kernel& kernel, const PassOptions& options,
                              PassContext& context) {
  absl::StatusOr<std::string> reuse = options.GetString("reuse");
  if (!reuse.ok()) return reuse.status();
  absl::StatusOr<int64_t> registers = options.GetInt("regs");
  if (!registers.ok()) return registers.status();
  return Planner(kernel, context.stats, *reuse != "never", *reuse == "auto",
                 *registers)
      .Run();
}

}  // namespace kir
