// Commits, waits and register fences for async ops; see insert_async_waits.h.
//
// Three steps, each over the whole kernel:
//  1. Commits: a run of same-kind issuers in one region (pure ops and
//     issuer-only `if`/`for` ops may sit in between) gets one commit after
//     its last issuer, unless one is already there.
//  2. Register fences: a forward may-analysis of "registers a wgmma reads or
//     writes were touched by another op since the last fence" over the
//     structured program (loops to a fixed point); a fence goes before the
//     wgmma (or the `if` holding it) where the set is non-empty, ahead of
//     the pure ops right before it.
//  3. Waits: for each commit, the ops after it (in the same iteration, in
//     later iterations of the loops around it, after those loops, and the
//     block's exit) that need its group complete. For each one not already
//     preceded by a retiring wait, a wait goes at the latest point before it
//     that runs in the committing threads: right before it when the guards
//     match, else inside re-created guards, else (or for an access in a
//     later iteration, when the guards do not change in the loop) at the
//     end of the commit's own guarded region.
#include "passes/insert_async_waits.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/async_groups.h"
#include "analysis/static_values.h"
#include "analysis/thread_analysis.h"
#include "ir/builder.h"
#include "ir/check.h"
#include "ir/checked_math.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"

namespace kir {
namespace {

constexpr char kInsertAsyncWaitsPassName[] = "insert-async-waits";
constexpr char kCommitsInserted[] = "commits-inserted";
constexpr char kWaitsInserted[] = "waits-inserted";
constexpr char kWaitsInFlight[] = "waits-leaving-groups-in-flight";
constexpr char kFencesInserted[] = "fences-inserted";
constexpr char kGuardsRecreated[] = "guards-recreated";

// Iteration distances searched for the first overlap in a loop; an access
// that may overlap only further back waits at this distance (sound: a wait
// retires every older group too).
constexpr int kMaxDistance = 8;
constexpr int kMaxCloneDepth = 6;

// AsyncWaitLookBackSteps(), per thread like the ordering dataflow's work.
thread_local int64_t look_back_steps = 0;

constexpr TokenKind kGroupKinds[] = {TokenKind::kBulk, TokenKind::kWgmma,
                                     TokenKind::kCpAsync};

// The op kind with the given synchronization for `group` (commit or wait),
// or the register fence, looked up in the effects table.
std::optional<OpKind> FindKind(SyncKind sync,
                               std::optional<TokenKind> group = std::nullopt) {
  for (int i = 0; i < kNumOpKinds; ++i) {
    const OpKind kind = static_cast<OpKind>(i);
    const OpFacts& facts = FactsOf(kind);
    if (facts.sync == sync && (!group || facts.group == group)) return kind;
  }
  return std::nullopt;
}

const char* TokenNameHint(TokenKind kind) {
  switch (kind) {
    case TokenKind::kBulk:
      return "t";
    case TokenKind::kWgmma:
      return "wt";
    case TokenKind::kCpAsync:
      return "ct";
  }
  return "t";
}

bool IsIssuerOf(const Op& op, TokenKind kind) {
  return op.num_regions() == 0 &&
         FactsOf(op.kind()).completion == GroupCompletion(kind);
}

bool IsCommit(const Op& op) {
  return FactsOf(op.kind()).sync == SyncKind::kGroupCommit;
}

// Neither touches memory nor has other effects: may sit inside a run of
// issuers without splitting it.
bool IsTransparent(const Op& op) {
  return op.num_regions() == 0 && !FactsOf(op.kind()).has_side_effects &&
         MemoryEffectsOf(op).empty();
}

// Pure ops and register fences: they neither end a run of issuers nor
// belong to one.
bool IsRunNeutral(const Op& op) {
  return IsTransparent(op) ||
         FactsOf(op.kind()).sync == SyncKind::kRegisterFence;
}

// An op whose effects go through registers completed by its group (wgmma's
// accumulator and A fragment): needs the register fence.
bool NeedsRegisterFence(const Op& op) {
  if (op.num_regions() != 0 ||
      FactsOf(op.kind()).completion == Completion::kImmediate) {
    return false;
  }
  for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
    if (effect.space == MemorySpace::kRegister &&
        effect.completion != Completion::kImmediate) {
      return true;
    }
  }
  return false;
}

bool IsRelease(const Op& op) {
  const OpFacts& facts = FactsOf(op.kind());
  if (facts.completion != Completion::kImmediate) return false;
  switch (facts.sync) {
    case SyncKind::kMbarrierArrive:
    case SyncKind::kSemRelease:
    case SyncKind::kNamedBarrierArrive:
    case SyncKind::kClusterArrive:
      return true;
    default:
      break;
  }
  for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
    if (effect.order == MemoryOrder::kRelease ||
        effect.order == MemoryOrder::kAcqRel) {
      return true;
    }
  }
  return false;
}

// Whether `to` can run after `from` without going around a loop: in the
// innermost region holding both, `to`'s branch comes later (or `to` is in a
// later region of a splitk, whose body runs before its epilogue).
bool ReachableAfter(const Op& from, const Op& to) {
  const Op* child = nullptr;  // from's ancestor inside `a`
  for (const Op* a = &from; a != nullptr; child = a, a = a->parent_op()) {
    const Region* region = a->parent_region();
    const Op* b = to.AncestorIn(*region);
    if (b == nullptr) continue;
    if (b != a) return region->IndexOf(b) > region->IndexOf(a);
    if (child == nullptr || a->kind() != OpKind::kSplitK) return false;
    int to_region = -1;
    for (int r = 0; r < a->num_regions(); ++r) {
      if (to.AncestorIn(a->region(r)) != nullptr) to_region = r;
    }
    return to_region > child->parent_region()->number_in_parent();
  }
  return false;
}

// Ops that can be recomputed elsewhere with the same result: no memory,
// no synchronization, one result (arithmetic, index queries, elect.sync and
// shfl.sync under the same guards).
bool IsCloneable(const Op& op) {
  const OpFacts& facts = FactsOf(op.kind());
  return op.num_regions() == 0 && op.num_results() == 1 &&
         facts.sync == SyncKind::kNone && !facts.group &&
         facts.completion == Completion::kImmediate &&
         (facts.exec == ExecClass::kPerThread ||
          facts.exec == ExecClass::kWarpCollective) &&
         MemoryEffectsOf(op).empty();
}

// Whether `value` is the same in every iteration of `loop`: defined outside
// it, or recomputed in it by cloneable ops from such values.
bool IsLoopInvariant(const Value* value, const Op& loop, int depth) {
  if (!loop.DefinesInside(*value)) return true;
  if (depth > kMaxCloneDepth || value->kind() != Value::Kind::kResult ||
      !IsCloneable(*value->defining_op())) {
    return false;
  }
  for (const Operand& operand : value->defining_op()->operands()) {
    if (!IsLoopInvariant(operand.value, loop, depth + 1)) return false;
    for (const Value* index : operand.indices) {
      if (!IsLoopInvariant(index, loop, depth + 1)) return false;
    }
  }
  return true;
}

// Same value, or the same cloneable computation of equivalent operands.
bool Equivalent(const Value* a, const Value* b, int depth = 0) {
  if (a == b) return true;
  if (a == nullptr || b == nullptr || depth > kMaxCloneDepth ||
      a->kind() != Value::Kind::kResult || b->kind() != Value::Kind::kResult) {
    return false;
  }
  const Op& x = *a->defining_op();
  const Op& y = *b->defining_op();
  if (x.kind() != y.kind() || !IsCloneable(x) || x.attrs() != y.attrs() ||
      x.num_operands() != y.num_operands() || !(a->type() == b->type())) {
    return false;
  }
  for (int i = 0; i < x.num_operands(); ++i) {
    const Operand& p = x.operand(i);
    const Operand& q = y.operand(i);
    if (p.indices.size() != q.indices.size() || p.distance != q.distance ||
        !Equivalent(p.value, q.value, depth + 1)) {
      return false;
    }
    for (size_t j = 0; j < p.indices.size(); ++j) {
      if (!Equivalent(p.indices[j], q.indices[j], depth + 1)) return false;
    }
  }
  return true;
}

// An `if` or `role` around an op, with the region taken.
struct Guard {
  const Op* op = nullptr;
  int region = 0;
};

bool SameGuard(const Guard& a, const Guard& b) {
  if (a.op == b.op) return a.region == b.region;
  return a.op->kind() == OpKind::kIf && b.op->kind() == OpKind::kIf &&
         a.region == b.region &&
         Equivalent(a.op->operand_value(0), b.op->operand_value(0));
}

bool SameGuards(const std::vector<Guard>& a, const std::vector<Guard>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameGuard(a[i], b[i])) return false;
  }
  return true;
}

// The guards of ops in `region`, outermost first.
std::vector<Guard> GuardsOf(const Region* region) {
  std::vector<Guard> guards;
  for (const Op* parent = region->parent_op(); parent != nullptr;
       region = parent->parent_region(), parent = region->parent_op()) {
    if (parent->kind() == OpKind::kIf || parent->kind() == OpKind::kRole) {
      guards.push_back(Guard{parent, region->number_in_parent()});
    }
  }
  std::reverse(guards.begin(), guards.end());
  return guards;
}

// A point in a region: before op `index` (`index == size()`: the end).
struct RegionPoint {
  Region* region = nullptr;
  int index = 0;
};

RegionPoint Before(const Op& op) {
  Region* region = op.parent_region();
  return RegionPoint{region, region->IndexOf(&op)};
}

// Whether `value` can be used at `pos`.
bool IsVisibleAt(const Value* value, RegionPoint pos) {
  switch (value->kind()) {
    case Value::Kind::kSize:
    case Value::Kind::kParam:
      return true;
    case Value::Kind::kRegionArgument:
      for (const Region* region = pos.region; region != nullptr;) {
        if (region == value->owning_region()) return true;
        const Op* parent = region->parent_op();
        region = parent != nullptr ? parent->parent_region() : nullptr;
      }
      return false;
    case Value::Kind::kResult:
      break;
  }
  const Op* def = value->defining_op();
  const Region* region = pos.region;
  int index = pos.index;
  while (region != nullptr) {
    if (def->parent_region() == region) return region->IndexOf(def) < index;
    const Op* parent = region->parent_op();
    if (parent == nullptr) return false;
    region = parent->parent_region();
    index = region->IndexOf(parent);
  }
  return false;
}

// ---------------------------------------------------------------------------
// Index arithmetic for overlap tests: an index is an affine form over
// symbols, or such a form `rem` a positive constant, or unknown.

struct IndexForm {
  enum class Kind { kUnknown, kAffine, kResidue };
  Kind kind = Kind::kUnknown;
  int64_t constant = 0;
  std::map<const Value*, int64_t> terms;  // only compared, never printed
  int64_t modulus = 0;                    // kResidue

  static IndexForm Constant(int64_t value) {
    IndexForm form;
    form.kind = Kind::kAffine;
    form.constant = value;
    return form;
  }
  static IndexForm Symbol(const Value* value) {
    IndexForm form;
    form.kind = Kind::kAffine;
    form.terms[value] = 1;
    return form;
  }
};

// `a + sign * b`; unknown when it does not fit 64 bits (never wrapped).
IndexForm Combine(const IndexForm& a, const IndexForm& b, int64_t sign) {
  if (a.kind != IndexForm::Kind::kAffine ||
      b.kind != IndexForm::Kind::kAffine) {
    return IndexForm();
  }
  IndexForm out = a;
  auto add = [&](int64_t& into, int64_t term) {
    std::optional<int64_t> scaled = CheckedMul(sign, term);
    std::optional<int64_t> sum =
        scaled ? CheckedAdd(into, *scaled) : std::nullopt;
    if (sum) into = *sum;
    return sum.has_value();
  };
  if (!add(out.constant, b.constant)) return IndexForm();
  for (const auto& [symbol, coefficient] : b.terms) {
    if (!add(out.terms[symbol], coefficient)) return IndexForm();
    if (out.terms[symbol] == 0) out.terms.erase(symbol);
  }
  return out;
}

// `a * factor`; unknown when it does not fit 64 bits.
IndexForm Scale(const IndexForm& a, int64_t factor) {
  if (a.kind != IndexForm::Kind::kAffine) return IndexForm();
  IndexForm out;
  out.kind = IndexForm::Kind::kAffine;
  if (factor == 0) return out;
  std::optional<int64_t> constant = CheckedMul(a.constant, factor);
  if (!constant) return IndexForm();
  out.constant = *constant;
  for (const auto& [symbol, coefficient] : a.terms) {
    std::optional<int64_t> scaled = CheckedMul(coefficient, factor);
    if (!scaled) return IndexForm();
    out.terms[symbol] = *scaled;
  }
  return out;
}

// How one side of a pair of accesses sees the program: `shifted` runs
// `shift` iterations later than the group's instance; values inside a
// `varying` loop are unrelated between the sides.
struct Instance {
  const Op* shifted = nullptr;
  int shift = 0;
  std::vector<const Op*> varying;
  MemorySpace space = MemorySpace::kShared;
};

class IndexDecomposer {
 public:
  IndexDecomposer(const ThreadAnalysis& analysis, const Instance& instance)
      : analysis_(analysis), instance_(instance) {}

  IndexForm Of(const Value* value, int depth = 0) const {
    if (value == nullptr || depth > 16) return IndexForm();
    for (const Op* loop : instance_.varying) {
      if (loop->DefinesInside(*value) || IsInductionOf(value, *loop)) {
        return IndexForm();
      }
    }
    const Op* shifted = instance_.shifted;
    if (shifted != nullptr && IsInductionOf(value, *shifted)) {
      if (!Shareable(value)) return IndexForm();
      IndexForm form = IndexForm::Symbol(value);
      if (instance_.shift != 0) {
        std::optional<int64_t> step =
            IntegerConstant(shifted->operand_value(2));
        std::optional<int64_t> offset =
            step ? CheckedMul(*step, instance_.shift) : std::nullopt;
        if (!offset) return IndexForm();
        form.constant = *offset;
      }
      return form;
    }
    if (std::optional<int64_t> constant = IntegerConstant(value)) {
      return IndexForm::Constant(*constant);
    }
    if (value->kind() == Value::Kind::kResult) {
      const Op& op = *value->defining_op();
      switch (op.kind()) {
        case OpKind::kAdd:
        case OpKind::kSub:
          return Combine(Of(op.operand_value(0), depth + 1),
                         Of(op.operand_value(1), depth + 1),
                         op.kind() == OpKind::kAdd ? 1 : -1);
        case OpKind::kMul: {
          std::optional<int64_t> lhs = IntegerConstant(op.operand_value(0));
          std::optional<int64_t> rhs = IntegerConstant(op.operand_value(1));
          if (rhs) return Scale(Of(op.operand_value(0), depth + 1), *rhs);
          if (lhs) return Scale(Of(op.operand_value(1), depth + 1), *lhs);
          break;
        }
        case OpKind::kRem: {
          std::optional<int64_t> modulus = IntegerConstant(op.operand_value(1));
          IndexForm inner = Of(op.operand_value(0), depth + 1);
          if (modulus && *modulus > 0 &&
              inner.kind == IndexForm::Kind::kAffine) {
            inner.kind = IndexForm::Kind::kResidue;
            inner.modulus = *modulus;
            return inner;
          }
          break;
        }
        default:
          break;
      }
    }
    // A leaf: the same symbol on both sides only when both see one value.
    if (shifted != nullptr && instance_.shift != 0 &&
        shifted->DefinesInside(*value)) {
      return IndexForm();
    }
    return Shareable(value) ? IndexForm::Symbol(value) : IndexForm();
  }

 private:
  static bool IsInductionOf(const Value* value, const Op& loop) {
    return value->kind() == Value::Kind::kRegionArgument &&
           value->owning_region() == &loop.region(0);
  }
  // Registers are private, so both sides are the same thread; shared and
  // global memory may be accessed by another thread on the other side.
  bool Shareable(const Value* value) const {
    return instance_.space == MemorySpace::kRegister ||
           analysis_.IsUniform(value, Scope::kBlock);
  }

  const ThreadAnalysis& analysis_;
  const Instance& instance_;
};

// Whether one dimension's ranges are provably apart.
bool DimensionDisjoint(const IndexForm& a, int64_t a_extent, const IndexForm& b,
                       int64_t b_extent) {
  if (a.kind == IndexForm::Kind::kAffine &&
      b.kind == IndexForm::Kind::kAffine) {
    IndexForm diff = Combine(b, a, -1);
    if (!diff.terms.empty()) return false;
    return diff.kind == IndexForm::Kind::kAffine &&
           (diff.constant >= a_extent || diff.constant <= -b_extent);
  }
  if (a.kind == IndexForm::Kind::kResidue &&
      b.kind == IndexForm::Kind::kResidue && a.modulus == b.modulus &&
      a_extent == 1 && b_extent == 1) {
    IndexForm inner_a = a, inner_b = b;
    inner_a.kind = inner_b.kind = IndexForm::Kind::kAffine;
    IndexForm diff = Combine(inner_b, inner_a, -1);
    // x rem m == y rem m implies x == y (mod m), whatever the signs.
    return diff.kind == IndexForm::Kind::kAffine && diff.terms.empty() &&
           diff.constant % a.modulus != 0;
  }
  return false;
}

bool HasExplicitOffset(const Value* buffer) {
  return buffer->kind() == Value::Kind::kResult &&
         buffer->defining_op()->has_offset();
}

// ---------------------------------------------------------------------------
// The pass.

struct GroupEffect {
  MemoryEffect effect;
  const Op* issuer = nullptr;
};

struct CommitInfo {
  Op* commit = nullptr;
  TokenKind kind = TokenKind::kBulk;
  OpKind wait_kind = OpKind::kBulkWait;
  std::vector<GroupEffect> effects;
  std::vector<const Op*> issuers;
  std::vector<Guard> guards;
  std::vector<const Op*> loops;  // innermost first
  const Op* role = nullptr;
  // The guards between the innermost loop and the commit do not change
  // between iterations, so the thread that committed in one iteration
  // commits in every one.
  bool guards_invariant = true;
  bool touches_shared = false;

  const Op* inner_loop() const { return loops.empty() ? nullptr : loops[0]; }
};

// What one op needs from a group.
struct Hazard {
  bool needed = false;
  const GroupEffect* global_write = nullptr;  // an error unless retired
};

class AsyncWaitInserter {
 public:
  AsyncWaitInserter(Kernel& kernel, PassContext& context, int64_t max_pending)
      : kernel_(kernel),
        context_(context),
        max_pending_(max_pending),
        analysis_(context.Get<ThreadAnalysis>(kernel)) {}

  absl::Status Run() {
    for (const char* counter :
         {kCommitsInserted, kWaitsInserted, kWaitsInFlight, kFencesInserted,
          kGuardsRecreated}) {
      context_.stats.Add(counter, 0);
    }
    // The pass changes the kernel only by creating ops (commits, fences,
    // waits, recreated guards): if it created none, nothing changed.
    const int serials_before = kernel_.op_serial_bound();
    InsertCommits(kernel_.body());
    InsertRegisterFences();
    std::vector<Op*> commits;
    if (kernel_.MayHoldAny([](OpKind kind) {
          return FactsOf(kind).sync == SyncKind::kGroupCommit;
        })) {
      Walk(kernel_.body(), [&](Op& op) {
        if (IsCommit(op)) commits.push_back(&op);
      });
    }
    for (Op* commit : commits) InsertWaits(*commit);
    if (kernel_.op_serial_bound() == serials_before) context_.PreserveAll();
    return JoinStatuses(errors_);
  }

 private:
  // ---- Step 1: commits --------------------------------------------------

  // Whether `a` and `b` run in the same threads. An elected lane is one
  // thread that the thread sets do not show, hence the first test.
  bool SameThreads(const Op& a, const Op& b) const {
    if (analysis_.IsSingleThread(a) != analysis_.IsSingleThread(b)) {
      return false;
    }
    const ThreadSet& ta = analysis_.ExecutingThreads(a);
    const ThreadSet& tb = analysis_.ExecutingThreads(b);
    if (ta.known() && tb.known()) return ta == tb;
    return SameGuards(GuardsOf(a.parent_region()), GuardsOf(b.parent_region()));
  }

  // Whether `op` is an `if` or `for` holding only issuers of `kind`, pure
  // ops and such ops, all issued by the threads that run `op`; collects the
  // issuers.
  bool IsIssuerUnit(const Op& op, TokenKind kind,
                    std::vector<const Op*>& issuers) const {
    if (op.kind() != OpKind::kIf && op.kind() != OpKind::kFor) return false;
    // Under a condition that may differ between lanes, the threads that
    // skip the branch would commit groups they did not issue.
    if (op.kind() == OpKind::kIf &&
        !analysis_.IsUniform(op.operand_value(0), Scope::kWarp)) {
      return false;
    }
    const size_t first = issuers.size();
    for (int r = 0; r < op.num_regions(); ++r) {
      for (const auto& inner : op.region(r).ops()) {
        if (IsIssuerOf(*inner, kind)) {
          issuers.push_back(inner.get());
        } else if (!IsRunNeutral(*inner) &&
                   !IsIssuerUnit(*inner, kind, issuers)) {
          return false;
        }
      }
    }
    if (issuers.size() == first) return false;
    for (size_t i = first; i < issuers.size(); ++i) {
      if (!SameThreads(*issuers[i], op)) return false;
    }
    return true;
  }

  bool JoinsRun(const Op& op, TokenKind kind,
                std::vector<const Op*>& issuers) const {
    if (IsIssuerOf(op, kind)) {
      issuers.push_back(&op);
      return true;
    }
    return IsIssuerUnit(op, kind, issuers);
  }

  void InsertCommits(Region& region) {
    // A run of a kind starts at an issuer of it or at an `if` or `for`
    // (which may be an issuer unit); the region's other ops start none, so
    // a region without such an op is not scanned again for that kind.
    bool may_start_run[std::size(kGroupKinds)] = {};
    for (int i = 0; i < region.size(); ++i) {
      Op& op = region.op(i);
      if (op.num_regions() == 0) {
        for (size_t k = 0; k < std::size(kGroupKinds); ++k) {
          may_start_run[k] = may_start_run[k] || IsIssuerOf(op, kGroupKinds[k]);
        }
        continue;
      }
      std::fill(std::begin(may_start_run), std::end(may_start_run), true);
      bool unit = false;
      for (TokenKind kind : kGroupKinds) {
        std::vector<const Op*> unused;
        unit = unit || IsIssuerUnit(op, kind, unused);
      }
      if (unit) continue;  // committed as a whole, here
      for (int r = 0; r < op.num_regions(); ++r) InsertCommits(op.region(r));
    }
    for (size_t k = 0; k < std::size(kGroupKinds); ++k) {
      if (may_start_run[k]) CommitRuns(region, kGroupKinds[k]);
    }
  }

  void CommitRuns(Region& region, TokenKind kind) {
    std::optional<OpKind> commit_kind = FindKind(SyncKind::kGroupCommit, kind);
    KIR_CHECK(commit_kind.has_value()) << "no commit op for a group kind";
    for (int i = 0; i < region.size(); ++i) {
      std::vector<const Op*> issuers;
      if (!JoinsRun(region.op(i), kind, issuers)) continue;
      const Op& first = region.op(i);
      int last = i;
      int next = i + 1;
      for (; next < region.size(); ++next) {
        const Op& op = region.op(next);
        std::vector<const Op*> more;
        if (JoinsRun(op, kind, more) && SameThreads(op, first)) {
          issuers.insert(issuers.end(), more.begin(), more.end());
          last = next;
        } else if (!IsRunNeutral(op)) {
          break;
        }
      }
      int after = last + 1;
      while (after < region.size() && IsRunNeutral(region.op(after))) ++after;
      if (after < region.size() && region.op(after).kind() == *commit_kind) {
        i = after;
        continue;  // already committed
      }
      OpBuilder builder(region, last + 1);
      builder.set_loc(region.op(last).loc());
      Provenance provenance{kInsertAsyncWaitsPassName, {}};
      for (const Op* issuer : issuers) {
        provenance.because.push_back(issuer->loc());
      }
      builder.set_provenance(std::move(provenance));
      builder.Create(*commit_kind, {}, {}, {Type::Token(kind)},
                     {TokenNameHint(kind)});
      context_.stats.Add(kCommitsInserted);
      i = last + 1;
    }
  }

  // ---- Step 2: register fences ------------------------------------------

  using RegisterSet = std::set<const Value*>;  // membership only

  struct FenceFlow {
    RegisterSet dirty;    // registers that may be touched since a fence
    bool fenced = false;  // a fence was (or would be) needed
  };

  static void RegistersOf(const Op& op, RegisterSet& out) {
    for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
      if (effect.space == MemorySpace::kRegister &&
          effect.completion != Completion::kImmediate) {
        out.insert(effect.buffer);
      }
    }
  }

  // Registers read or written by fenced issuers inside `op` (or `op`).
  static RegisterSet FencedRegistersIn(const Op& op) {
    RegisterSet registers;
    if (NeedsRegisterFence(op)) RegistersOf(op, registers);
    for (int r = 0; r < op.num_regions(); ++r) {
      Walk(op.region(r), [&](const Op& inner) {
        if (NeedsRegisterFence(inner)) RegistersOf(inner, registers);
      });
    }
    return registers;
  }

  static bool Intersects(const RegisterSet& a, const RegisterSet& b) {
    for (const Value* value : a) {
      if (b.count(value) > 0) return true;
    }
    return false;
  }

  void InsertRegisterFences() {
    fence_kind_ = FindKind(SyncKind::kRegisterFence);
    if (!fence_kind_) return;
    // Only an op that completes later can need a fence.
    if (!kernel_.MayHoldAny([](OpKind kind) {
          return FactsOf(kind).completion != Completion::kImmediate;
        })) {
      return;
    }
    Walk(kernel_.body(), [&](const Op& op) {
      if (NeedsRegisterFence(op)) RegistersOf(op, tracked_);
    });
    if (tracked_.empty()) return;
    // Before the first wgmma, every register counts as touched.
    Flow(kernel_.body(), tracked_, /*insert=*/true);
  }

  // Inserts a fence before op `index`, ahead of the pure ops right before
  // it (where the hand-written kernels put it).
  void InsertFence(Region& region, int index, const Op& because) {
    while (index > 0 && IsTransparent(region.op(index - 1))) --index;
    OpBuilder builder(region, index);
    builder.set_loc(because.loc());
    builder.set_provenance(
        Provenance{kInsertAsyncWaitsPassName, {because.loc()}});
    builder.Create(*fence_kind_, {});
    context_.stats.Add(kFencesInserted);
  }

  FenceFlow Flow(Region& region, RegisterSet dirty, bool insert) {
    FenceFlow flow;
    for (int i = 0; i < region.size(); ++i) {
      Op& op = region.op(i);
      if (FactsOf(op.kind()).sync == SyncKind::kRegisterFence) {
        dirty.clear();
        continue;
      }
      if (op.kind() == OpKind::kFor) {
        RegisterSet entry = dirty;
        for (;;) {  // the sets only grow, and are small
          FenceFlow body = Flow(op.region(0), entry, false);
          RegisterSet next = entry;
          next.insert(body.dirty.begin(), body.dirty.end());
          if (next == entry) break;
          entry = std::move(next);
        }
        // The fence stays in the body even when the body itself touches no
        // wgmma register: ptxas re-inserts one per iteration otherwise
        // (C7519, "warpgroup.arrive is injected").
        FenceFlow body = Flow(op.region(0), entry, insert);
        flow.fenced |= body.fenced;
        dirty.insert(body.dirty.begin(), body.dirty.end());
        continue;
      }
      if (op.kind() == OpKind::kIf) {
        if (Intersects(dirty, FencedRegistersIn(op))) {
          if (insert) InsertFence(region, i++, op);
          flow.fenced = true;
          dirty.clear();
        }
        RegisterSet out;
        for (int r = 0; r < op.num_regions(); ++r) {
          FenceFlow branch = Flow(op.region(r), dirty, insert);
          flow.fenced |= branch.fenced;
          out.insert(branch.dirty.begin(), branch.dirty.end());
        }
        dirty = std::move(out);
        continue;
      }
      if (op.num_regions() > 0) {  // role, splitk: regions run in order
        for (int r = 0; r < op.num_regions(); ++r) {
          FenceFlow inner = Flow(op.region(r), dirty, insert);
          flow.fenced |= inner.fenced;
          dirty = std::move(inner.dirty);
        }
        continue;
      }
      if (NeedsRegisterFence(op)) {
        RegisterSet registers;
        RegistersOf(op, registers);
        if (Intersects(dirty, registers)) {
          if (insert) InsertFence(region, i++, op);
          flow.fenced = true;
          dirty.clear();
        }
        continue;
      }
      for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
        if (effect.space == MemorySpace::kRegister &&
            tracked_.count(effect.buffer) > 0) {
          dirty.insert(effect.buffer);
        }
      }
    }
    flow.dirty = std::move(dirty);
    return flow;
  }

  // ---- Step 3: waits ----------------------------------------------------

  CommitInfo Describe(Op& commit) {
    CommitInfo info;
    info.commit = &commit;
    info.kind = *FactsOf(commit.kind()).group;
    std::optional<OpKind> wait_kind = FindKind(SyncKind::kGroupWait, info.kind);
    KIR_CHECK(wait_kind.has_value()) << "no wait op for a group kind";
    info.wait_kind = *wait_kind;
    // The group: ops of its completion since the previous commit of its
    // kind, in program order (as the verifier counts them).
    const Completion completion = GroupCompletion(info.kind);
    for (const Op* op = commit.PreviousInProgramOrder(); op != nullptr;
         op = op->PreviousInProgramOrder()) {
      if (op->kind() == commit.kind()) break;
      if (FactsOf(op->kind()).completion != completion) continue;
      info.issuers.push_back(op);
      for (const MemoryEffect& effect : MemoryEffectsOf(*op)) {
        if (effect.completion != completion) continue;
        info.effects.push_back(GroupEffect{effect, op});
        if (effect.space == MemorySpace::kShared) info.touches_shared = true;
      }
    }
    std::reverse(info.issuers.begin(), info.issuers.end());
    info.guards = GuardsOf(commit.parent_region());
    for (const Op* parent = commit.parent_op(); parent != nullptr;
         parent = parent->parent_op()) {
      if (parent->kind() == OpKind::kFor) info.loops.push_back(parent);
    }
    info.role = commit.EnclosingOp(OpKind::kRole);
    if (const Op* loop = info.inner_loop()) {
      for (const Guard& guard : info.guards) {
        if (guard.op->kind() == OpKind::kIf && guard.op->IsInside(*loop) &&
            !IsLoopInvariant(guard.op->operand_value(0), *loop, 0)) {
          info.guards_invariant = false;
        }
      }
    }
    return info;
  }

  bool Overlap(const MemoryEffect& group, const MemoryEffect& access,
               Instance instance) const {
    if (group.buffer != access.buffer) {
      // Distinct allocations are apart unless both were placed by hand.
      return group.buffer != nullptr && access.buffer != nullptr &&
             group.space == MemorySpace::kShared &&
             access.space == MemorySpace::kShared &&
             HasExplicitOffset(group.buffer) &&
             HasExplicitOffset(access.buffer);
    }
    if (group.whole_buffer || access.whole_buffer ||
        group.origin.size() != group.extent.size() ||
        access.origin.size() != access.extent.size() ||
        group.origin.size() != access.origin.size()) {
      return true;
    }
    instance.space = group.space;
    Instance group_side = instance;
    group_side.shift = 0;
    IndexDecomposer group_forms(analysis_, group_side);
    IndexDecomposer access_forms(analysis_, instance);
    for (size_t d = 0; d < group.origin.size(); ++d) {
      if (DimensionDisjoint(group_forms.Of(group.origin[d]), group.extent[d],
                            access_forms.Of(access.origin[d]),
                            access.extent[d])) {
        return false;
      }
    }
    return true;
  }

  // What `op` needs from the group of `info` when it runs as `instance`
  // says relative to the group's instance.
  Hazard Check(const CommitInfo& info, const Op& op,
               const Instance& instance) const {
    Hazard hazard;
    const Op* role = op.EnclosingOp(OpKind::kRole);
    // Roles run concurrently: only their own mbarriers order them.
    if (role != nullptr && info.role != nullptr && role != info.role) {
      return hazard;
    }
    if (op.kind() == OpKind::kReturn || IsRelease(op)) {
      hazard.needed = info.touches_shared;
      return hazard;
    }
    for (const MemoryEffect& access : MemoryEffectsOf(op)) {
      for (const GroupEffect& entry : info.effects) {
        const MemoryEffect& group = entry.effect;
        if (!group.writes() && !access.writes()) continue;
        // wgmmas of one accumulator are ordered among themselves; two bulk
        // groups writing global memory are the author's to keep apart.
        if (access.completion == group.completion &&
            (group.space == MemorySpace::kRegister ||
             (group.space == MemorySpace::kGlobal &&
              access.proxy == Proxy::kAsync && group.writes() &&
              access.writes()))) {
          continue;
        }
        if (!Overlap(group, access, instance)) continue;
        hazard.needed = true;
        if (group.space == MemorySpace::kGlobal &&
            group.proxy == Proxy::kAsync && group.writes()) {
          hazard.global_write = &entry;
        }
      }
    }
    return hazard;
  }

  // Whether `op` is a wait (or a guard wrapper holding one) that retires
  // the group of `info` named at most `limit` iterations back.
  bool Retires(const CommitInfo& info, const Op& op, int limit,
               bool need_full) const {
    if (op.kind() == info.wait_kind) {
      if (need_full && op.has_read() && op.read()) {
        return false;
      }
      if (op.num_operands() == 0) return true;  // waits for every group
      for (const Operand& token : op.operands()) {
        if (token.value == info.commit->result() && token.distance >= 0 &&
            token.distance <= limit) {
          return true;
        }
      }
      return false;
    }
    if (op.kind() != OpKind::kIf) return false;
    for (const Guard& guard : info.guards) {
      if (guard.op->kind() != OpKind::kIf) continue;
      if (!Equivalent(guard.op->operand_value(0), op.operand_value(0)))
        continue;
      for (const auto& inner : op.region(guard.region).ops()) {
        if (Retires(info, *inner, limit, need_full)) return true;
      }
    }
    return false;
  }

  // Whether, inside `container` (which holds the commit or is it), a wait
  // after the commit retires the group: at every level from the commit up.
  bool RetiredAfterCommit(const CommitInfo& info, const Op& container,
                          int limit, bool need_full) const {
    if (&container == info.commit) return false;
    if (limit > 0 && !info.guards_invariant &&
        container.kind() == OpKind::kIf) {
      return false;
    }
    for (int r = 0; r < container.num_regions(); ++r) {
      const Region& region = container.region(r);
      const Op* ancestor = info.commit->AncestorIn(region);
      if (ancestor == nullptr) continue;
      for (int i = region.IndexOf(ancestor) + 1; i < region.size(); ++i) {
        if (Retires(info, region.op(i), limit, need_full)) return true;
      }
      return RetiredAfterCommit(info, *ancestor, limit, need_full);
    }
    return false;
  }

  // Whether the group instance `distance` iterations of the inner loop
  // before `pos` (or, outside that loop, the last one) is retired there.
  bool Covered(const CommitInfo& info, RegionPoint pos, int distance,
               bool need_full) const {
    const Op* loop = info.inner_loop();
    const bool in_loop = loop != nullptr && pos.region->IsInside(*loop);
    bool wrapped = false;
    int limit = distance;
    Region* region = pos.region;
    int index = pos.index;
    // Outside the inner loop the answer at a position follows from the
    // ops before it alone, and a later access's walk back passes an
    // earlier one's position: kept (until a wait goes in), they make the
    // walks of a commit's accesses in straight-line code one walk.
    std::vector<CoveredKey> walked;
    auto answer = [&](bool covered) {
      for (const CoveredKey& key : walked) covered_at_.emplace(key, covered);
      return covered;
    };
    for (;;) {
      for (int i = index - 1; i >= 0; --i) {
        if (!in_loop) {
          const CoveredKey key{region, i + 1, limit, need_full};
          if (auto known = covered_at_.find(key); known != covered_at_.end()) {
            return answer(known->second);
          }
          walked.push_back(key);
        }
        ++look_back_steps;
        const Op& op = region->op(i);
        if (info.commit->IsOrIsInside(op)) {
          if (RetiredAfterCommit(info, op, limit, need_full)) {
            return answer(true);
          }
          if (op.kind() == OpKind::kFor) return answer(false);  // ran it
          if (distance == 0 && !wrapped) return answer(false);
          continue;
        }
        if (Retires(info, op, limit, need_full)) return answer(true);
      }
      Op* parent = region->parent_op();
      if (parent == nullptr) return answer(false);
      if (parent == loop && in_loop) {
        // The previous iteration, from its end.
        if (wrapped || distance == 0) return false;
        wrapped = true;
        limit = distance - 1;
        index = region->size();
        continue;
      }
      region = parent->parent_region();
      index = region->IndexOf(parent);
    }
  }

  // Moves `pos` out of regions the committing threads do not run as a
  // whole and out of loops that do not commit.
  RegionPoint Climb(const CommitInfo& info, RegionPoint pos) const {
    for (;;) {
      Op* parent = pos.region->parent_op();
      if (parent == nullptr ||
          info.commit->AncestorIn(*pos.region) != nullptr) {
        return pos;
      }
      if (parent->kind() != OpKind::kFor &&
          SameGuards(GuardsOf(pos.region), info.guards)) {
        return pos;
      }
      pos = Before(*parent);
    }
  }

  bool CanMaterialize(const Value* value, RegionPoint pos, int depth) const {
    if (IsVisibleAt(value, pos)) return true;
    if (depth > kMaxCloneDepth || value->kind() != Value::Kind::kResult ||
        !IsCloneable(*value->defining_op())) {
      return false;
    }
    const Op& op = *value->defining_op();
    for (const Operand& operand : op.operands()) {
      if (!CanMaterialize(operand.value, pos, depth + 1)) return false;
      for (const Value* index : operand.indices) {
        if (!CanMaterialize(index, pos, depth + 1)) return false;
      }
    }
    return true;
  }

  // A value equal to `value` at the builder's point (visible from `pos`),
  // cloning its computation there when needed.
  Value* Materialize(Value* value, RegionPoint pos, OpBuilder& builder,
                     absl::flat_hash_map<const Value*, Value*>& clones) {
    if (IsVisibleAt(value, pos)) return value;
    auto it = clones.find(value);
    if (it != clones.end()) return it->second;
    const Op& op = *value->defining_op();
    std::vector<Operand> operands;
    for (const Operand& operand : op.operands()) {
      Operand copy = operand;
      copy.value = Materialize(operand.value, pos, builder, clones);
      for (Value*& index : copy.indices) {
        index = Materialize(index, pos, builder, clones);
      }
      operands.push_back(std::move(copy));
    }
    AttrList attrs(op.attrs().begin(), op.attrs().end());
    Op* clone = builder.Create(op.kind(), std::move(operands), std::move(attrs),
                               {value->type()}, {value->name()});
    clones[value] = clone->result();
    return clone->result();
  }

  void CreateWait(const CommitInfo& info, OpBuilder& builder, int distance) {
    AttrList attrs;
    if (GetOpInfo(info.wait_kind).FindAttr("read") != nullptr) {
      attrs.push_back(attr::read(true));
    }
    Operand token{info.commit->result(), {}, distance, false};
    Op* wait = builder.Create(info.wait_kind, {token}, std::move(attrs));
    context_.stats.Add(kWaitsInserted);
    std::optional<int> pending = PendingGroupsAfterWait(*wait);
    if (pending && *pending > 0) context_.stats.Add(kWaitsInFlight);
  }

  OpBuilder BuilderAt(RegionPoint pos, const CommitInfo& info,
                      const Op& because) const {
    OpBuilder builder(*pos.region, pos.index);
    builder.set_loc(because.loc());
    Provenance provenance{kInsertAsyncWaitsPassName, {}};
    for (const Op* issuer : info.issuers) {
      provenance.because.push_back(issuer->loc());
    }
    if (&because != info.commit) provenance.because.push_back(because.loc());
    builder.set_provenance(std::move(provenance));
    return builder;
  }

  // The end of the commit's innermost guarded region (before a trailing
  // return).
  RegionPoint SinkPosition(const CommitInfo& info) const {
    const Guard& guard = info.guards.back();
    Region* region = &guard.op->region(guard.region);
    return RegionPoint{region, EndBeforeReturn(*region)};
  }

  static int EndBeforeReturn(const Region& region) {
    int index = region.size();
    if (index > 0 && region.op(index - 1).kind() == OpKind::kReturn) --index;
    return index;
  }

  // Whether the guards `missing` (outermost first) are nested as the last
  // ops of each other's regions, the outermost right before `pos`.
  static bool EndsRightBefore(const std::vector<Guard>& missing,
                              RegionPoint pos) {
    if (pos.index == 0 || &pos.region->op(pos.index - 1) != missing[0].op) {
      return false;
    }
    for (size_t j = 0; j + 1 < missing.size(); ++j) {
      const Region& region = missing[j].op->region(missing[j].region);
      if (region.empty() ||
          &region.op(region.size() - 1) != missing[j + 1].op) {
        return false;
      }
    }
    return true;
  }

  // Puts a wait for the instance `distance` iterations back (0 outside the
  // inner loop: the last) before `pos`, run by the committing threads.
  void Place(const CommitInfo& info, RegionPoint pos, int distance,
             const Op& because) {
    covered_at_.clear();  // a wait goes in
    pos = Climb(info, pos);
    const std::vector<Guard> here = GuardsOf(pos.region);
    if (SameGuards(here, info.guards)) {
      OpBuilder builder = BuilderAt(pos, info, because);
      CreateWait(info, builder, distance);
      return;
    }
    // `pos` is in a region around the commit: its guards are a prefix.
    bool prefix = here.size() < info.guards.size();
    for (size_t j = 0; prefix && j < here.size(); ++j) {
      prefix = SameGuard(here[j], info.guards[j]);
    }
    if (!prefix) {
      OpBuilder builder = BuilderAt(SinkPosition(info), info, because);
      CreateWait(info, builder, 0);
      return;
    }
    std::vector<Guard> missing(info.guards.begin() + here.size(),
                               info.guards.end());
    const Op* loop = info.inner_loop();
    const bool carried =
        loop != nullptr && distance >= 1 && pos.region->IsInside(*loop);
    if (carried && info.guards_invariant) {
      // Right after this iteration's commit, for the instance one
      // iteration younger than the access would name.
      OpBuilder builder = BuilderAt(SinkPosition(info), info, because);
      CreateWait(info, builder, distance - 1);
      return;
    }
    // Roles cannot be re-created: their threads wait at the end of the
    // role's body, where the rest of the guards may be re-created.
    size_t roles_end = 0;
    for (size_t j = 0; j < missing.size(); ++j) {
      if (missing[j].op->kind() == OpKind::kRole) roles_end = j + 1;
    }
    if (roles_end > 0) {
      if (loop != nullptr && pos.region->IsInside(*loop)) {
        OpBuilder builder = BuilderAt(SinkPosition(info), info, because);
        CreateWait(info, builder, 0);
        return;
      }
      Region* body = &missing[roles_end - 1].op->region(0);
      pos = RegionPoint{body, EndBeforeReturn(*body)};
      missing.erase(missing.begin(), missing.begin() + roles_end);
      distance = 0;
    }
    if (!missing.empty() && EndsRightBefore(missing, pos)) {
      // Nothing runs between the end of the commit's region and `pos`.
      OpBuilder builder = BuilderAt(SinkPosition(info), info, because);
      CreateWait(info, builder, 0);
      return;
    }
    bool recreatable = true;
    for (const Guard& guard : missing) {
      recreatable = recreatable && guard.op->kind() == OpKind::kIf &&
                    CanMaterialize(guard.op->operand_value(0), pos, 0);
    }
    if (!recreatable) {
      // Right after the commit, in its own region: always possible.
      OpBuilder builder = BuilderAt(SinkPosition(info), info, because);
      CreateWait(info, builder, 0);
      return;
    }
    OpBuilder builder = BuilderAt(pos, info, because);
    absl::flat_hash_map<const Value*, Value*> clones;
    std::vector<Op*> predicated;
    for (const Guard& guard : missing) {
      // An equivalent guard right before the point (left by an earlier run
      // or by hand) is entered rather than repeated.
      const int at = builder.index();
      if (at > 0) {
        Op& previous = builder.region().op(at - 1);
        if (previous.kind() == OpKind::kIf &&
            Equivalent(previous.operand_value(0), guard.op->operand_value(0))) {
          Region& inner = previous.region(guard.region);
          builder.SetInsertionPoint(inner, EndBeforeReturn(inner));
          continue;
        }
      }
      Value* condition =
          Materialize(guard.op->operand_value(0), pos, builder, clones);
      Op* wrapper = builder.If(condition);
      context_.stats.Add(kGuardsRecreated);
      builder.SetInsertionPointToEnd(wrapper->region(guard.region));
      if (guard.op->predicated()) predicated.push_back(wrapper);
    }
    CreateWait(info, builder, distance);
    // A recreated elected guard issues its wait as the original did.
    for (Op* wrapper : predicated) {
      if (CanIssuePredicated(*wrapper)) {
        wrapper->set_predicated(true);
      }
    }
  }

  void Require(const CommitInfo& info, RegionPoint pos, const Op& because,
               const Hazard& hazard, int distance) {
    if (hazard.global_write != nullptr) {
      if (!Covered(info, pos, distance, /*need_full=*/true)) {
        const Op& issuer = *hazard.global_write->issuer;
        InFlightDiagnostic diagnostic = Error(because.loc());
        diagnostic << because.mnemonic() << " accesses %"
                   << hazard.global_write->effect.buffer->name()
                   << ", which the " << issuer.mnemonic()
                   << " before it writes asynchronously; ordering the two "
                      "needs a wait for the writes (not only the reads), a "
                      "barrier and a proxy fence, which "
                   << kInsertAsyncWaitsPassName << " does not insert";
        diagnostic.Note(issuer.loc(), "the asynchronous write");
        errors_.push_back(diagnostic);
      }
      return;
    }
    if (Covered(info, pos, distance, /*need_full=*/false)) return;
    Place(info, pos, distance, because);
  }

  // The smallest iteration distance >= `first` at which `op` needs the
  // group, or nullopt when it never does.
  std::optional<int> FirstConflict(const CommitInfo& info, const Op& op,
                                   int first, Hazard& hazard) const {
    const Op* loop = info.inner_loop();
    Instance unrelated;
    unrelated.varying = {loop};
    Hazard any = Check(info, op, unrelated);
    if (!any.needed) return std::nullopt;
    std::optional<int64_t> trips = TripCount(*loop);
    for (int d = first; d <= kMaxDistance; ++d) {
      if (trips && d >= *trips) return std::nullopt;
      Instance instance;
      instance.shifted = loop;
      instance.shift = d;
      hazard = Check(info, op, instance);
      if (hazard.needed) return d;
    }
    hazard = any;
    return kMaxDistance;
  }

  void InsertWaits(Op& commit) {
    const CommitInfo info = Describe(commit);
    if (info.effects.empty()) return;  // an empty group needs no wait
    covered_at_.clear();               // another group
    // The ops that were there before this commit's waits went in (serials
    // grow with creation).
    const int existing = kernel_.op_serial_bound();
    auto leaf_ops = [existing](const Region& region) {
      std::vector<const Op*> ops;
      Walk(region, [&](const Op& op) {
        if (op.num_regions() == 0 && op.serial() < existing) {
          ops.push_back(&op);
        }
      });
      return ops;
    };

    // In the commit's iteration of its inner loop, and in later ones.
    const Op* loop = info.inner_loop();
    const Region& scope = loop != nullptr ? loop->region(0) : kernel_.body();
    // In the order the group sees them: the rest of its iteration, then
    // the next iterations up to the commit.
    std::vector<const Op*> candidates = leaf_ops(scope);
    std::stable_partition(
        candidates.begin(), candidates.end(),
        [&](const Op* op) { return ReachableAfter(commit, *op); });
    for (const Op* op : candidates) {
      const bool after = ReachableAfter(commit, *op);
      if (op == &commit || (loop == nullptr && !after)) continue;
      Hazard hazard;
      int distance = 0;
      if (loop == nullptr) {
        hazard = Check(info, *op, Instance());
        if (!hazard.needed) continue;
      } else {
        const int first = after ? 0 : 1;
        std::optional<int> found = FirstConflict(info, *op, first, hazard);
        if (!found) continue;
        distance = *found;
        if (max_pending_ >= 0) {
          distance = static_cast<int>(
              std::min<int64_t>(distance, first + max_pending_));
        }
      }
      Require(info, Before(*op), *op, hazard, distance);
    }

    // After each loop around the commit; around the next loop out.
    std::vector<const Op*> varying;
    for (size_t k = 0; k < info.loops.size(); ++k) {
      const Op* inner = info.loops[k];
      varying.push_back(inner);
      Instance instance;
      instance.varying = varying;
      const Op* outer = k + 1 < info.loops.size() ? info.loops[k + 1] : nullptr;
      const Region& rest = outer != nullptr ? outer->region(0) : kernel_.body();
      for (const Op* op : leaf_ops(rest)) {
        if (!ReachableAfter(*inner, *op)) continue;
        Hazard hazard = Check(info, *op, instance);
        if (hazard.needed) Require(info, Before(*op), *op, hazard, 0);
      }
      if (outer == nullptr) continue;
      // The next iteration of `outer` may reuse what this one's groups use.
      Instance next;
      next.varying = varying;
      next.varying.push_back(outer);
      for (const Op* op : leaf_ops(outer->region(0))) {
        if (!Check(info, *op, next).needed) continue;
        Region& body = outer->region(0);
        Require(info, RegionPoint{&body, body.size()}, *outer, Hazard{true}, 0);
        break;
      }
    }

    // The block's exit, unless a return ends the kernel body.
    Region& body = kernel_.body();
    if (info.touches_shared &&
        (body.empty() || body.op(body.size() - 1).kind() != OpKind::kReturn)) {
      Require(info, RegionPoint{&body, body.size()}, commit, Hazard{true}, 0);
    }
  }

  Kernel& kernel_;
  PassContext& context_;
  const int64_t max_pending_;
  // The kernel as the pass found it; the pass reads it before it inserts.
  const ThreadAnalysis& analysis_;
  std::optional<OpKind> fence_kind_;
  RegisterSet tracked_;
  std::vector<absl::Status> errors_;
  // Covered's answers outside the inner loop for the group being placed,
  // by position (region, index), limit and need_full.
  using CoveredKey = std::tuple<const Region*, int, int, bool>;
  mutable absl::flat_hash_map<CoveredKey, bool> covered_at_;
};

}  // namespace

int64_t AsyncWaitLookBackSteps() { return look_back_steps; }

absl::Status InsertAsyncWaits(Kernel& kernel, const PassOptions& options,
                              PassContext& context) {
  // -1: as many as reuse allows (passes.def gives the range).
  absl::StatusOr<int64_t> max_pending = options.GetInt("max-pending");
  if (!max_pending.ok()) return max_pending.status();
  return AsyncWaitInserter(kernel, context, *max_pending).Run();
}

}  // namespace kir
