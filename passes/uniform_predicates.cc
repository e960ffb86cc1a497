// Warp-uniform, single-issue predicates; see uniform_predicates.h.
//
// The pass plans every rewrite on the unmodified kernel (the thread analysis
// describes that kernel), then applies the plans in program order, so names
// and output are deterministic.
#include "passes/uniform_predicates.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/thread_analysis.h"
#include "ir/builder.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"

namespace kir {
namespace {

constexpr char kUniformPredicatesPassName[] = "uniform-predicates";
constexpr int kWarpSize = 32;
constexpr int kWarpgroupSize = 128;

// Counters, all reported so that --stats output has a stable shape.
constexpr char kBroadcastsInserted[] = "broadcasts-inserted";
constexpr char kGuardsRewritten[] = "guards-rewritten";
constexpr char kIssuesElected[] = "issues-elected";
constexpr char kIssuesWrapped[] = "issues-wrapped";
constexpr char kIssuesLeft[] = "issues-left";
constexpr char kConstantsSubstituted[] = "constants-substituted";
constexpr char kIssuesPredicated[] = "issues-predicated";

// A guard condition split at `and`s into conjuncts the backend already sees
// as uniform and conjuncts whose per-thread values are known.
struct Conjuncts {
  std::vector<Value*> uniform;
  std::vector<const std::vector<int64_t>*> exact;

  bool TrueAt(int thread) const {
    for (const std::vector<int64_t>* values : exact) {
      if ((*values)[thread] == 0) return false;
    }
    return true;
  }
};

// The warps in which a rewritten guard must hold and those (among the warps
// that reach it) in which it must not; both sorted.
struct WarpSplit {
  std::vector<int> true_warps;
  std::vector<int> false_warps;
};

struct GuardRewrite {
  Conjuncts conjuncts;
  WarpSplit split;
};

// A guard that selects threads of one warp: becomes `warp == K` with an
// elected region inside.
struct Election {
  Conjuncts conjuncts;
  WarpSplit split;  // true_warps = {K}
  // Values the body reads that differ between lanes, with their value in
  // the thread(s) the author chose.
  std::vector<std::pair<Value*, int64_t>> constants;
  bool bulk = false;  // the body holds bulk-group ops
  int issues = 0;     // single-issue ops in the body
};

// Consecutive single-issue ops of one region that several threads run:
// wrapped in `if warp == K { elect }`.
struct Wrap {
  Op* first = nullptr;
  Op* last = nullptr;
  int warp = 0;
  // Whether other warps reach the run too, so that it needs `warp == K`
  // around the election.
  bool select_warp = false;
  bool bulk = false;
};

enum class GuardKind {
  kBackendUniform,  // nothing to do
  kRewrite,         // uniform by arithmetic: a plan was recorded
  kNotUniform,      // provably differs within a group
  kUnknown,         // cannot be computed per thread
};

bool IsBulkGroupOp(const Op& op) {
  const OpFacts& facts = FactsOf(op.kind());
  return facts.group == TokenKind::kBulk ||
         facts.completion == Completion::kBulkGroup;
}

bool ContainsReturn(const Op& op) {
  bool found = op.kind() == OpKind::kReturn;
  for (int r = 0; r < op.num_regions() && !found; ++r) {
    Walk(op.region(r), [&](const Op& nested) {
      found = found || nested.kind() == OpKind::kReturn;
    });
  }
  return found;
}

// The enclosing ops of `op`, outermost first, with the index of the region
// that holds the next one.
std::vector<std::pair<Op*, int>> GuardChain(const Op& op) {
  std::vector<std::pair<Op*, int>> chain;
  const Op* child = &op;
  for (Op* parent = op.parent_op(); parent != nullptr;
       parent = parent->parent_op()) {
    int index = 0;
    for (int r = 0; r < parent->num_regions(); ++r) {
      if (child->parent_region() == &parent->region(r)) index = r;
    }
    chain.push_back({parent, index});
    child = parent;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::string ThreadRange(const std::vector<int>& threads) {
  if (threads.empty()) return "none";
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < threads.size()) {
    size_t j = i;
    while (j + 1 < threads.size() && threads[j + 1] == threads[j] + 1) ++j;
    parts.push_back(i == j ? absl::StrCat(threads[i])
                           : absl::StrCat(threads[i], "-", threads[j]));
    i = j + 1;
  }
  return absl::StrJoin(parts, ", ");
}

class UniformPredicatesPass {
 public:
  UniformPredicatesPass(Kernel& kernel, bool rewrite, PassContext& context)
      : kernel_(kernel),
        rewrite_(rewrite),
        context_(context),
        stats_(context.stats) {}

  absl::Status Run() {
    for (const char* counter :
         {kBroadcastsInserted, kGuardsRewritten, kIssuesElected, kIssuesWrapped,
          kIssuesLeft, kConstantsSubstituted, kIssuesPredicated}) {
      stats_.Add(counter, 0);
    }
    absl::Status status = Rewrite();
    if (status.ok()) MarkPredicatedIssues();
    return status;
  }

 private:
  absl::Status Rewrite() {
    std::vector<Op*> single_issue, collectives;
    auto issued_apart = [](OpKind kind) {
      const ExecClass exec = FactsOf(kind).exec;
      return exec == ExecClass::kSingleIssue ||
             exec == ExecClass::kWarpCollective ||
             exec == ExecClass::kWarpgroupCollective;
    };
    if (kernel_.MayHoldAny(issued_apart)) {
      Walk(kernel_.body(), [&](Op& op) {
        const ExecClass exec = FactsOf(op.kind()).exec;
        if (exec == ExecClass::kSingleIssue) single_issue.push_back(&op);
        if (exec == ExecClass::kWarpCollective ||
            exec == ExecClass::kWarpgroupCollective) {
          collectives.push_back(&op);
        }
      });
    }
    if (single_issue.empty() && collectives.empty()) {
      context_.PreserveAll();  // nothing to rewrite
      return absl::OkStatus();
    }

    analysis_ = &context_.Get<ThreadAnalysis>(kernel_);
    num_threads_ = analysis_->num_threads().value_or(0);
    std::vector<absl::Status> errors;
    for (Op* op : collectives) {
      absl::Status status = PlanCollective(*op);
      if (!status.ok()) errors.push_back(status);
    }
    if (!errors.empty()) return JoinStatuses(errors);

    // The broadcast needs every lane of every warp (shfl.sync with a full
    // mask): in a block with a partial last warp the warp predicates are
    // built from warp.id itself, and only complete warps elect.
    if (!rewrite_ || num_threads_ == 0) return absl::OkStatus();
    partial_warp_ = num_threads_ % kWarpSize != 0;
    for (Op* op : single_issue) PlanSingleIssue(*op);
    DropBulkPlansIfAnyLeft();
    Apply();
    return absl::OkStatus();
  }

  // Every elected `if` (this run's and those already there) whose body can
  // issue branch-free gets `predicated`, so that the backend issues each of
  // its ops under the elected lane's predicate instead of branching around
  // them (hopper-ptx.md section 5.4). An attribute changes no analysis.
  void MarkPredicatedIssues() {
    if (!kernel_.MayHold(OpKind::kIf)) return;
    Walk(kernel_.body(), [&](Op& op) {
      if (op.kind() != OpKind::kIf || op.predicated() ||
          !CanIssuePredicated(op) || !HoldsSingleIssue(op.region(0))) {
        return;
      }
      op.set_predicated(true);
      stats_.Add(kIssuesPredicated);
    });
  }
  // -------------------------------------------------------------------------
  // What the backend can see as uniform.

  // Whether ptxas can tell `value` is the same in every lane: it is built
  // from launch constants, block indices, parameters and `shfl.sync idx`
  // broadcasts, never from thread, lane or warp ids.
  bool BackendUniform(const Value* value) {
    auto it = backend_uniform_.find(value);
    if (it != backend_uniform_.end()) return it->second;
    backend_uniform_[value] = false;  // breaks cycles through `%t@1` uses
    bool uniform = false;
    switch (value->kind()) {
      case Value::Kind::kSize:
      case Value::Kind::kParam:
        uniform = true;
        break;
      case Value::Kind::kRegionArgument: {
        const Op* owner = value->owning_region()->parent_op();
        uniform = owner != nullptr && owner->kind() == OpKind::kFor &&
                  owner->num_operands() == 3;
        for (int i = 0; uniform && i < owner->num_operands(); ++i) {
          uniform = BackendUniform(owner->operand_value(i));
        }
        break;
      }
      case Value::Kind::kResult:
        uniform = ResultBackendUniform(*value->defining_op());
        break;
    }
    backend_uniform_[value] = uniform;
    return uniform;
  }

  bool ResultBackendUniform(const Op& op) {
    switch (op.kind()) {
      // The per-thread sources: what this pass replaces.
      case OpKind::kThreadId:
      case OpKind::kLaneId:
      case OpKind::kWarpId:
      case OpKind::kElectSync:
        return false;
      case OpKind::kShflSync:
        // An idx shuffle from a uniform lane broadcasts; any shuffle of a
        // uniform value stays uniform.
        return (op.mode() == ShuffleMode::kIdx &&
                BackendUniform(op.operand_value(1))) ||
               BackendUniform(op.operand_value(0));
      default:
        break;
    }
    if (FactsOf(op.kind()).has_side_effects || op.num_regions() > 0 ||
        !MemoryEffectsOf(op).empty()) {
      return false;
    }
    bool uniform = true;
    op.ForEachUse([&](const Value* used) {
      uniform = uniform && used != nullptr && BackendUniform(used);
    });
    return uniform;
  }

  // An elect.sync result, or an `and` with one.
  bool ElectDerived(const Value* value) const {
    if (value->kind() != Value::Kind::kResult) return false;
    const Op& op = *value->defining_op();
    if (op.kind() == OpKind::kElectSync) return true;
    if (op.kind() != OpKind::kAnd || op.num_operands() != 2) return false;
    return ElectDerived(op.operand_value(0)) ||
           ElectDerived(op.operand_value(1));
  }

  bool Decompose(Value* condition, Conjuncts* out) {
    if (BackendUniform(condition)) {
      out->uniform.push_back(condition);
      return true;
    }
    if (const std::vector<int64_t>* values =
            analysis_->PerThreadValues(condition)) {
      out->exact.push_back(values);
      return true;
    }
    if (condition->kind() == Value::Kind::kResult) {
      const Op& op = *condition->defining_op();
      if (op.kind() == OpKind::kAnd && op.num_operands() == 2 &&
          condition->type().is_scalar(DType::kI1)) {
        return Decompose(op.operand_value(0), out) &&
               Decompose(op.operand_value(1), out);
      }
    }
    return false;
  }

  // -------------------------------------------------------------------------
  // Guards.

  // Classifies the condition of `if_op` over groups of `group_size`
  // threads; records a rewrite when it is uniform only by arithmetic. On
  // kNotUniform, `*differing` names the group and its true/false threads.
  GuardKind PlanGuard(Op& if_op, int group_size,
                      std::string* differing = nullptr) {
    Value* condition = if_op.operand_value(0);
    if (BackendUniform(condition)) return GuardKind::kBackendUniform;
    Conjuncts conjuncts;
    if (!Decompose(condition, &conjuncts) || conjuncts.exact.empty()) {
      return GuardKind::kUnknown;
    }
    const ThreadSet& threads = analysis_->ExecutingThreads(if_op);
    if (!threads.known()) return GuardKind::kUnknown;
    for (int start = 0; start < num_threads_; start += group_size) {
      std::vector<int> on, off;
      for (int t = start; t < std::min(num_threads_, start + group_size); ++t) {
        if (!threads.Contains(t)) continue;
        (conjuncts.TrueAt(t) ? on : off).push_back(t);
      }
      if (!on.empty() && !off.empty()) {
        if (differing != nullptr) {
          *differing =
              absl::StrCat(group_size == kWarpSize ? "warp " : "warpgroup ",
                           start / group_size, ": true in threads ",
                           ThreadRange(on), ", false in ", ThreadRange(off));
        }
        return GuardKind::kNotUniform;
      }
    }
    WarpSplit split = SplitByWarp(conjuncts, threads);
    // A guard that never holds guards dead code: leave it.
    if (split.true_warps.empty()) return GuardKind::kUnknown;
    // Uniform, but no broadcast to restate it with: nothing to do.
    if (!rewrite_ || num_threads_ % kWarpSize != 0) {
      return GuardKind::kBackendUniform;
    }
    guard_rewrites_[&if_op] =
        GuardRewrite{std::move(conjuncts), std::move(split)};
    return GuardKind::kRewrite;
  }

  WarpSplit SplitByWarp(const Conjuncts& conjuncts,
                        const ThreadSet& threads) const {
    WarpSplit split;
    for (int warp = 0; warp * kWarpSize < num_threads_; ++warp) {
      bool reached = false, holds = false;
      for (int t = warp * kWarpSize;
           t < std::min(num_threads_, (warp + 1) * kWarpSize); ++t) {
        if (!threads.Contains(t)) continue;
        reached = true;
        holds = holds || conjuncts.TrueAt(t);
      }
      if (reached)
        (holds ? split.true_warps : split.false_warps).push_back(warp);
    }
    return split;
  }

  // Plans the ifs of `chain` before position `end` that are uniform by
  // arithmetic (the guards outside an elected region).
  void PlanOuterGuards(const std::vector<std::pair<Op*, int>>& chain,
                       size_t end) {
    for (size_t i = 0; i < end; ++i) {
      if (chain[i].first->kind() == OpKind::kIf) {
        PlanGuard(*chain[i].first, kWarpSize);
      }
    }
  }

  absl::Status PlanCollective(Op& op) {
    const bool warp = FactsOf(op.kind()).exec == ExecClass::kWarpCollective;
    const int group_size = warp ? kWarpSize : kWarpgroupSize;
    const char* group_name = warp ? "warp" : "warpgroup";
    const ThreadSet& threads = analysis_->ExecutingThreads(op);
    if (threads.known() && num_threads_ % group_size != 0) {
      const int last_start = num_threads_ / group_size * group_size;
      for (int t = last_start; t < num_threads_; ++t) {
        if (!threads.Contains(t)) continue;
        return Error(op.loc())
               << op.mnemonic() << " is " << group_name << "-collective, but "
               << group_name << " " << last_start / group_size
               << " of this block of " << num_threads_ << " threads has only "
               << num_threads_ - last_start << " of its " << group_size
               << " threads";
      }
    }
    for (const auto& [guard, region] : GuardChain(op)) {
      if (guard->kind() != OpKind::kIf) continue;
      std::string differing;
      if (PlanGuard(*guard, group_size, &differing) == GuardKind::kNotUniform) {
        return (Error(op.loc())
                << op.mnemonic() << " is " << group_name << "-collective: all "
                << group_size << " threads of a " << group_name
                << " must run it together, but a condition around it differs "
                   "between them")
            .Note(guard->loc(),
                  absl::StrCat("this condition is not ", group_name,
                               "-uniform (", differing, ")"));
      }
    }
    return absl::OkStatus();
  }

  // -------------------------------------------------------------------------
  // Single-issue ops.

  void PlanSingleIssue(Op& op) {
    const std::vector<std::pair<Op*, int>> chain = GuardChain(op);
    // Already elected: only the guards outside the election matter.
    for (size_t i = chain.size(); i-- > 0;) {
      const auto& [guard, region] = chain[i];
      if (guard->kind() == OpKind::kIf && region == 0 &&
          ElectDerived(guard->operand_value(0))) {
        PlanOuterGuards(chain, i);
        return;
      }
    }
    // A guard that selects threads of one warp, outermost first.
    for (size_t i = 0; i < chain.size(); ++i) {
      Op* guard = chain[i].first;
      if (guard->kind() != OpKind::kIf || chain[i].second != 0) continue;
      if (elections_.contains(guard)) return;
      std::optional<Election> election = PlanElection(*guard);
      if (!election.has_value()) continue;
      PlanOuterGuards(chain, i);
      elections_[guard] = *std::move(election);
      return;
    }
    // Several threads run it: issue it once.
    if (!analysis_->IsSingleThread(op) && PlanWrap(op, chain)) return;
    ++issues_left_;
    bulk_left_ = bulk_left_ || IsBulkGroupOp(op);
  }

  std::optional<Election> PlanElection(Op& if_op) {
    Value* condition = if_op.operand_value(0);
    if (!if_op.region(1).empty() || BackendUniform(condition) ||
        ElectDerived(condition)) {
      return std::nullopt;
    }
    Election election;
    if (!Decompose(condition, &election.conjuncts) ||
        election.conjuncts.exact.empty()) {
      return std::nullopt;
    }
    const ThreadSet& threads = analysis_->ExecutingThreads(if_op);
    if (!threads.known()) return std::nullopt;
    std::vector<int> chosen;
    for (int t = 0; t < num_threads_; ++t) {
      if (threads.Contains(t) && election.conjuncts.TrueAt(t)) {
        chosen.push_back(t);
      }
    }
    if (chosen.empty()) return std::nullopt;
    const int warp = chosen.front() / kWarpSize;
    if (chosen.back() / kWarpSize != warp) return std::nullopt;
    // elect.sync needs the whole warp here, converged.
    for (int t = warp * kWarpSize; t < (warp + 1) * kWarpSize; ++t) {
      if (!threads.Contains(t)) return std::nullopt;
    }
    if (static_cast<int>(chosen.size()) == kWarpSize) {
      return std::nullopt;  // the whole warp: uniform, not a selection
    }
    if (!analysis_->GuardsUniformOver(if_op, Scope::kWarp)) {
      return std::nullopt;
    }
    // The elected lane must compute what the chosen thread did.
    std::vector<Value*> outside;
    absl::flat_hash_set<Value*> seen;
    Walk(if_op.region(0), [&](Op& nested) {
      election.bulk = election.bulk || IsBulkGroupOp(nested);
      election.issues +=
          FactsOf(nested.kind()).exec == ExecClass::kSingleIssue ? 1 : 0;
      nested.ForEachUse([&](Value*& value) {
        if (value != nullptr && !if_op.DefinesInside(*value) &&
            seen.insert(value).second) {
          outside.push_back(value);
        }
      });
    });
    for (Value* value : outside) {
      if (value->type().is_token() ||
          analysis_->UniformScope(value) >= Scope::kWarp) {
        continue;
      }
      const std::vector<int64_t>* values = analysis_->PerThreadValues(value);
      if (values == nullptr || !value->type().is_scalar() ||
          !IsInteger(value->type().dtype())) {
        return std::nullopt;
      }
      for (int t : chosen) {
        if ((*values)[t] != (*values)[chosen.front()]) return std::nullopt;
      }
      election.constants.push_back({value, (*values)[chosen.front()]});
    }
    election.split.true_warps = {warp};
    for (int w : SplitByWarp(Conjuncts{}, threads).true_warps) {
      if (w != warp) election.split.false_warps.push_back(w);
    }
    return election;
  }

  bool PlanWrap(Op& op, const std::vector<std::pair<Op*, int>>& chain) {
    const ThreadSet& threads = analysis_->ExecutingThreads(op);
    if (!threads.known() || threads.Count() < 2 || !threads.IsWarpAligned() ||
        !analysis_->GuardsUniformOver(op, Scope::kWarp)) {
      return false;
    }
    // The run of single-issue ops around `op` in its region.
    Region& region = *op.parent_region();
    const int index = region.IndexOf(&op);
    auto single_issue = [&](int i) {
      return FactsOf(region.op(i).kind()).exec == ExecClass::kSingleIssue;
    };
    int begin = index, end = index;
    while (begin > 0 && single_issue(begin - 1)) --begin;
    while (end + 1 < region.size() && single_issue(end + 1)) ++end;
    for (const Wrap& wrap : wraps_) {
      if (wrap.first == &region.op(begin)) return true;
    }
    const std::vector<int> warps = threads.Warps();
    const Scope needed = warps.size() == 1 ? Scope::kWarp
                         : analysis_->EnclosingRole(op) != nullptr
                             ? Scope::kRole
                             : Scope::kBlock;
    Wrap wrap;
    for (int i = begin; i <= end; ++i) {
      bool uniform = true;
      region.op(i).ForEachUse([&](const Value* value) {
        if (value == nullptr || value->type().is_token()) return;
        if (analysis_->UniformScope(value) >= needed) return;
        const std::vector<int64_t>* values = analysis_->PerThreadValues(value);
        const int first = warps.front() * kWarpSize;
        for (int t = 0; values != nullptr && t < num_threads_; ++t) {
          if (threads.Contains(t) && (*values)[t] != (*values)[first]) {
            values = nullptr;
          }
        }
        uniform = uniform && values != nullptr;
      });
      if (!uniform) return false;
      wrap.bulk = wrap.bulk || IsBulkGroupOp(region.op(i));
    }
    // elect.sync runs over the full warp: the issuing warp must be complete.
    if ((warps.front() + 1) * kWarpSize > num_threads_) return false;
    PlanOuterGuards(chain, chain.size());
    wrap.first = &region.op(begin);
    wrap.last = &region.op(end);
    wrap.warp = warps.front();
    wrap.select_warp = warps.size() > 1;
    wraps_.push_back(wrap);
    return true;
  }

  // Bulk groups belong to the issuing thread: if one bulk-group op keeps
  // its author's guard, moving the others to an elected lane would split
  // issue, commit and wait between threads.
  void DropBulkPlansIfAnyLeft() {
    if (!bulk_left_) return;
    std::vector<Op*> dropped;
    for (const auto& [guard, election] : elections_) {
      if (!election.bulk) continue;
      dropped.push_back(guard);
      issues_left_ += election.issues;
    }
    for (Op* guard : dropped) elections_.erase(guard);
    std::vector<Wrap> kept;
    for (const Wrap& wrap : wraps_) {
      if (wrap.bulk) {
        Region& region = *wrap.first->parent_region();
        issues_left_ +=
            region.IndexOf(wrap.last) - region.IndexOf(wrap.first) + 1;
      } else {
        kept.push_back(wrap);
      }
    }
    wraps_ = std::move(kept);
  }

  // -------------------------------------------------------------------------
  // Applying the plans.

  void Apply() {
    stats_.Add(kIssuesLeft, issues_left_);
    if (guard_rewrites_.empty() && elections_.empty() && wraps_.empty()) {
      return;
    }
    // Program order of the planned ops (pointer-keyed maps have none).
    std::vector<Op*> planned;
    absl::flat_hash_set<const Op*> wrap_firsts;
    for (const Wrap& wrap : wraps_) wrap_firsts.insert(wrap.first);
    Walk(kernel_.body(), [&](Op& op) {
      if (guard_rewrites_.contains(&op) || elections_.contains(&op) ||
          wrap_firsts.contains(&op)) {
        planned.push_back(&op);
      }
    });
    // Only a run of one warp needs no warp predicate, hence no broadcast.
    const bool needs_broadcast =
        !guard_rewrites_.empty() || !elections_.empty() ||
        std::any_of(wraps_.begin(), wraps_.end(),
                    [](const Wrap& wrap) { return wrap.select_warp; });
    if (needs_broadcast) EnsureBroadcast(planned.front());
    analysis_ = nullptr;  // it describes the kernel before the rewrite

    for (Op* op : planned) {
      auto guard = guard_rewrites_.find(op);
      if (guard != guard_rewrites_.end()) {
        ReplaceCondition(*op, guard->second.conjuncts, guard->second.split);
        stats_.Add(kGuardsRewritten);
      }
      auto election = elections_.find(op);
      if (election != elections_.end()) {
        ReplaceCondition(*op, election->second.conjuncts,
                         election->second.split);
        Elect(*op, election->second.constants);
        stats_.Add(kIssuesElected);
      }
      for (const Wrap& wrap : wraps_) {
        if (wrap.first == op) {
          WrapRun(wrap);
          stats_.Add(kIssuesWrapped);
        }
      }
    }
    RemoveDeadConditions();
  }

  Provenance Inserted(std::vector<Location> because = {}) const {
    return Provenance{kUniformPredicatesPassName, std::move(because)};
  }

  // Finds the broadcast an earlier run inserted, or inserts one before the
  // top-level op that holds `first_use`.
  void EnsureBroadcast(Op* first_use) {
    Region& body = kernel_.body();
    const int use_index = body.IndexOf(first_use->TopLevelAncestor());
    for (int i = 0; i < use_index; ++i) {
      Op& op = body.op(i);
      if (op.kind() == OpKind::kShflSync && IsBroadcastOfWarpId(op)) {
        warp_uniform_ = op.result();
        lane0_ = op.operand_value(1);
        preamble_end_ = i + 1;
        SeedPredicates(i + 1, use_index);
        return;
      }
    }
    // Threads that returned early would be missing from the shuffle.
    int index = use_index;
    for (int i = 0; i < use_index; ++i) {
      if (ContainsReturn(body.op(i))) index = 0;
    }
    OpBuilder b(body, index);
    b.set_provenance(Inserted());
    Value* warp_id = b.Create(OpKind::kWarpId, {}, {},
                              {Type::Scalar(DType::kIndex)}, {"warp_id"})
                         ->result();
    Value* warp_id32 = b.Create(OpKind::kCast, {Use(warp_id)}, {},
                                {Type::Scalar(DType::kI32)}, {"warp_id32"})
                           ->result();
    lane0_ = b.Constant(0, DType::kI32, partial_warp_ ? "warp0" : "lane0");
    if (partial_warp_) {
      // The partial warp cannot take part in a full-warp shuffle: compare
      // the warp index itself (uniform, though the backend cannot tell).
      warp_uniform_ = warp_id32;
      preamble_end_ = b.index();
      return;
    }
    warp_uniform_ = b.Create(OpKind::kShflSync, {Use(warp_id32), Use(lane0_)},
                             {attr::mode(ShuffleMode::kIdx)},
                             {Type::Scalar(DType::kI32)}, {"warp_uniform"})
                        ->result();
    preamble_end_ = b.index();
    stats_.Add(kBroadcastsInserted);
  }

  bool IsBroadcastOfWarpId(const Op& shfl) const {
    if (shfl.mode() != ShuffleMode::kIdx || shfl.num_operands() != 2) {
      return false;
    }
    const Op* cast = shfl.operand_value(0)->defining_op();
    const Op* lane = shfl.operand_value(1)->defining_op();
    if (cast == nullptr || lane == nullptr || cast->kind() != OpKind::kCast ||
        lane->kind() != OpKind::kConst || lane->value().int_value != 0) {
      return false;
    }
    const Op* warp_id = cast->operand_value(0)->defining_op();
    return warp_id != nullptr && warp_id->kind() == OpKind::kWarpId;
  }

  // Reuses warp predicates an earlier run left in the preamble.
  void SeedPredicates(int begin, int end) {
    Region& body = kernel_.body();
    for (int i = begin; i < end; ++i) {
      Op& op = body.op(i);
      if (op.kind() != OpKind::kCmp || op.operand_value(0) != warp_uniform_) {
        continue;
      }
      const Op* bound = op.operand_value(1)->defining_op();
      if (bound == nullptr || bound->kind() != OpKind::kConst) continue;
      predicates_[absl::StrCat(EnumName(op.pred()), bound->value().int_value)] =
          op.result();
      preamble_end_ = std::max(preamble_end_, i + 1);
    }
  }

  // Appends an op to the preamble.
  Op* PreambleOp(OpKind kind, std::vector<Operand> operands, AttrList attrs,
                 Type type, const std::string& name) {
    OpBuilder b(kernel_.body(), preamble_end_);
    b.set_provenance(Inserted());
    Op* op =
        b.Create(kind, std::move(operands), std::move(attrs), {type}, {name});
    preamble_end_ = b.index();
    return op;
  }

  Value* WarpConstant(int warp) {
    if (warp == 0) return lane0_;
    auto it = warp_constants_.find(warp);
    if (it != warp_constants_.end()) return it->second;
    Value* value =
        PreambleOp(OpKind::kConst, {}, {attr::value(Attribute::Integer(warp))},
                   Type::Scalar(DType::kI32), absl::StrCat("warp", warp))
            ->result();
    warp_constants_[warp] = value;
    return value;
  }

  // `%warp_uniform <pred> warp`, once per kernel.
  Value* WarpCompare(const std::string& pred, int warp,
                     const std::string& name) {
    const std::string key = absl::StrCat(pred, warp);
    auto it = predicates_.find(key);
    if (it != predicates_.end()) return it->second;
    Value* bound = WarpConstant(warp);
    Value* result = PreambleOp(OpKind::kCmp, {Use(warp_uniform_), Use(bound)},
                               {{"pred", Attribute::Enum(pred)}},
                               Type::Scalar(DType::kI1), name)
                        ->result();
    predicates_[key] = result;
    return result;
  }

  Value* WarpCombine(OpKind kind, const std::string& key, Value* lhs,
                     Value* rhs, const std::string& name) {
    auto it = predicates_.find(key);
    if (it != predicates_.end()) return it->second;
    Value* result = PreambleOp(kind, {Use(lhs), Use(rhs)}, {},
                               Type::Scalar(DType::kI1), name)
                        ->result();
    predicates_[key] = result;
    return result;
  }

  // warps [first, last], as simply as the warps that must stay false allow.
  Value* WarpRange(int first, int last, const std::vector<int>& false_warps) {
    if (first == last) {
      return WarpCompare("eq", first, absl::StrCat("is_warp", first));
    }
    const bool none_below = std::none_of(false_warps.begin(), false_warps.end(),
                                         [&](int w) { return w < first; });
    const bool none_above = std::none_of(false_warps.begin(), false_warps.end(),
                                         [&](int w) { return w > last; });
    if (none_below) {
      return WarpCompare("lt", last + 1, absl::StrCat("warp_lt", last + 1));
    }
    if (none_above) {
      return WarpCompare("ge", first, absl::StrCat("warp_ge", first));
    }
    Value* ge = WarpCompare("ge", first, absl::StrCat("warp_ge", first));
    Value* lt = WarpCompare("lt", last + 1, absl::StrCat("warp_lt", last + 1));
    return WarpCombine(OpKind::kAnd,
                       absl::StrCat("range", first, "_", last + 1), ge, lt,
                       absl::StrCat("in_warps", first, "_", last + 1));
  }

  // A predicate over the broadcast warp index that holds in `true_warps`
  // and not in `false_warps` (other warps do not reach the guard).
  Value* WarpPredicate(const WarpSplit& split) {
    std::vector<int> reached = split.true_warps;
    reached.insert(reached.end(), split.false_warps.begin(),
                   split.false_warps.end());
    std::sort(reached.begin(), reached.end());
    std::set<int> holds(split.true_warps.begin(), split.true_warps.end());
    // Runs of true warps among the warps that reach the guard.
    std::vector<std::pair<int, int>> runs;
    bool in_run = false;
    for (int warp : reached) {
      if (holds.count(warp) == 0) {
        in_run = false;
      } else if (in_run) {
        runs.back().second = warp;
      } else {
        runs.push_back({warp, warp});
        in_run = true;
      }
    }
    Value* result = nullptr;
    std::string key;
    for (const auto& [first, last] : runs) {
      Value* run = WarpRange(first, last, split.false_warps);
      if (result == nullptr) {
        result = run;
        key = run->name();
      } else {
        key = absl::StrCat(key, "|", run->name());
        result = WarpCombine(OpKind::kOr, key, result, run, "in_warps");
      }
    }
    return result;
  }

  // Replaces the condition of `if_op` by the warp predicate, and-ed with the
  // conjuncts the backend already sees as uniform.
  void ReplaceCondition(Op& if_op, const Conjuncts& conjuncts,
                        const WarpSplit& split) {
    Value* old_condition = if_op.operand_value(0);
    Value* condition = WarpPredicate(split);
    if (!conjuncts.uniform.empty()) {
      Region& region = *if_op.parent_region();
      OpBuilder b(region, region.IndexOf(&if_op));
      b.set_loc(if_op.loc());
      b.set_provenance(Inserted());
      for (Value* uniform : conjuncts.uniform) {
        condition = b.Binary(OpKind::kAnd, condition, uniform,
                             absl::StrCat(old_condition->name(), "_uniform"));
      }
    }
    if_op.mutable_operand(0).value = condition;
    replaced_conditions_.push_back(old_condition);
  }

  std::vector<Location> SingleIssueLocations(const Region& region) const {
    std::vector<Location> locations;
    Walk(region, [&](const Op& op) {
      if (FactsOf(op.kind()).exec == ExecClass::kSingleIssue &&
          op.loc().known()) {
        locations.push_back(op.loc());
      }
    });
    return locations;
  }

  // Moves the body of `if_op` into `%elected = elect.sync; if %elected`,
  // reading `constants` from new constants inside the elected region.
  void Elect(Op& if_op,
             const std::vector<std::pair<Value*, int64_t>>& constants) {
    Region& then = if_op.region(0);
    std::vector<std::unique_ptr<Op>> body;
    while (!then.empty()) body.push_back(then.Take(0));
    Op* elected = AddElection(then, 0, if_op.loc(), body);
    if_op.set_provenance(elected->provenance());
    OpBuilder b(elected->region(0), 0);
    b.set_loc(if_op.loc());
    b.set_provenance(Inserted());
    absl::flat_hash_map<Value*, Value*> replacement;
    for (const auto& [value, constant] : constants) {
      replacement[value] = b.Constant(constant, value->type().dtype(),
                                      absl::StrCat(value->name(), "_issuer"));
      replaced_conditions_.push_back(value);
      stats_.Add(kConstantsSubstituted);
    }
    Walk(elected->region(0), [&](Op& op) {
      op.ForEachUse([&](Value*& value) {
        auto it = replacement.find(value);
        if (it != replacement.end()) value = it->second;
      });
    });
  }

  // Inserts `%elected = elect.sync; if %elected { body }` at `index` of
  // `region`; returns the new if.
  Op* AddElection(Region& region, int index, const Location& loc,
                  std::vector<std::unique_ptr<Op>>& body) {
    std::vector<Location> because;
    for (const auto& op : body) {
      for (const Location& l : SingleIssueLocationsOf(*op)) {
        because.push_back(l);
      }
    }
    OpBuilder b(region, index);
    b.set_loc(loc);
    b.set_provenance(Inserted(because));
    Value* elected = b.Create(OpKind::kElectSync, {}, {},
                              {Type::Scalar(DType::kI1)}, {"elected"})
                         ->result();
    Op* inner = b.If(elected);
    for (auto& op : body) inner->region(0).Append(std::move(op));
    body.clear();
    return inner;
  }

  std::vector<Location> SingleIssueLocationsOf(const Op& op) const {
    std::vector<Location> locations;
    if (FactsOf(op.kind()).exec == ExecClass::kSingleIssue &&
        op.loc().known()) {
      locations.push_back(op.loc());
    }
    for (int r = 0; r < op.num_regions(); ++r) {
      for (const Location& l : SingleIssueLocations(op.region(r))) {
        locations.push_back(l);
      }
    }
    return locations;
  }

  void WrapRun(const Wrap& wrap) {
    Region& region = *wrap.first->parent_region();
    const int begin = region.IndexOf(wrap.first);
    const int end = region.IndexOf(wrap.last);
    std::vector<std::unique_ptr<Op>> body;
    for (int i = begin; i <= end; ++i) body.push_back(region.Take(begin));
    std::vector<Location> because;
    for (const auto& op : body) {
      for (const Location& l : SingleIssueLocationsOf(*op)) {
        because.push_back(l);
      }
    }
    const Location loc = body.front()->loc();
    if (!wrap.select_warp) {  // one warp runs it: electing a lane suffices
      AddElection(region, begin, loc, body);
      return;
    }
    WarpSplit split;
    split.true_warps = {wrap.warp};
    for (int w = 0; w * kWarpSize < num_threads_; ++w) {
      if (w != wrap.warp) split.false_warps.push_back(w);
    }
    Value* condition = WarpPredicate(split);
    OpBuilder b(region, begin);
    b.set_loc(loc);
    b.set_provenance(Inserted(because));
    Op* warp_if = b.If(condition);
    AddElection(warp_if->region(0), 0, loc, body);
  }

  // Removes the conditions the rewrite left unused, and what only they
  // used.
  void RemoveDeadConditions() {
    absl::flat_hash_map<const Value*, int> uses;
    Walk(kernel_.body(), [&](const Op& op) {
      op.ForEachUse([&](const Value* value) { ++uses[value]; });
    });
    kernel_.ForEachParamUse([&](const Value* value) { ++uses[value]; });
    // The worklist may name a value twice (one guard of two rewritten ifs,
    // an op using a value twice): erased ops stay alive until the end, and
    // a second visit finds them detached.
    std::vector<std::unique_ptr<Op>> erased;
    std::vector<Value*> worklist = replaced_conditions_;
    while (!worklist.empty()) {
      Value* value = worklist.back();
      worklist.pop_back();
      if (value->kind() != Value::Kind::kResult || uses[value] > 0) continue;
      Op* op = value->defining_op();
      if (op->parent_region() == nullptr || op->num_regions() > 0 ||
          FactsOf(op->kind()).has_side_effects) {
        continue;
      }
      bool unused = true;
      for (int i = 0; i < op->num_results(); ++i) {
        unused = unused && uses[op->result(i)] == 0;
      }
      if (!unused) continue;
      op->ForEachUse([&](Value*& used) {
        --uses[used];
        worklist.push_back(used);
      });
      Region& region = *op->parent_region();
      erased.push_back(region.Take(region.IndexOf(op)));
    }
  }

  Kernel& kernel_;
  const bool rewrite_;
  PassContext& context_;
  PassStatistics& stats_;
  const ThreadAnalysis* analysis_ = nullptr;
  int num_threads_ = 0;
  absl::flat_hash_map<const Value*, bool> backend_uniform_;

  // Plans.
  absl::flat_hash_map<Op*, GuardRewrite> guard_rewrites_;
  absl::flat_hash_map<Op*, Election> elections_;
  std::vector<Wrap> wraps_;
  int issues_left_ = 0;
  bool bulk_left_ = false;

  // The preamble.
  Value* warp_uniform_ = nullptr;
  // The block ends in a partial warp: no broadcast, predicates on warp.id.
  bool partial_warp_ = false;
  Value* lane0_ = nullptr;
  int preamble_end_ = 0;
  std::map<int, Value*> warp_constants_;
  std::map<std::string, Value*> predicates_;
  std::vector<Value*> replaced_conditions_;
};

}  // namespace

absl::Status UniformPredicates(Kernel& kernel, const PassOptions& options,
                               PassContext& context) {
  absl::StatusOr<std::string> mode = options.GetString("mode");
  if (!mode.ok()) return mode.status();
  return UniformPredicatesPass(kernel, *mode == "shfl", context).Run();
}

}  // namespace kir
