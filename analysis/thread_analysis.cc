// Thread analysis: executing thread sets and value uniformity.
//
// Every value is abstracted as `part[t] + u`: `part` is an exact vector of
// per-thread values over the block's linear thread ids (absent means 0) and
// `u` is an unknown value uniform over `offset` (absent means u = 0, so the
// value is exactly `part`). Constants, thread/lane/warp ids and the block
// shape give exact vectors; sizes, params, block ids and the like are pure
// unknowns; add/sub keep the form, and everything else that is not exact
// falls back to the scope lattice (part absent, offset = the scope).
//
// When the block shape is not constant, thread ids are unknown, but lane and
// warp ids are still exact functions of the linear id: they are evaluated on
// a virtual block of 1024 threads (the hardware maximum), whose answers hold
// for every prefix of it. Executing sets are then kept internally but
// reported as unknown.
#include "analysis/thread_analysis.h"

#include <algorithm>
#include <bitset>
#include <deque>
#include <functional>
#include <limits>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/effects.h"

namespace kir {

const char* ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kThread:
      return "thread";
    case Scope::kWarp:
      return "warp";
    case Scope::kWarpgroup:
      return "warpgroup";
    case Scope::kRole:
      return "role";
    case Scope::kBlock:
      return "block";
    case Scope::kCluster:
      return "cluster";
    case Scope::kGrid:
      return "grid";
  }
  KIR_UNREACHABLE();
  return "";
}

// ---------------------------------------------------------------------------
// ThreadSet.

ThreadSet ThreadSet::Unknown() { return ThreadSet(); }

ThreadSet ThreadSet::All(int num_threads) {
  ThreadSet set;
  set.known_ = true;
  set.bits_.assign(num_threads, true);
  return set;
}

ThreadSet ThreadSet::None(int num_threads) {
  ThreadSet set;
  set.known_ = true;
  set.bits_.assign(num_threads, false);
  return set;
}

int ThreadSet::Count() const {
  KIR_CHECK(known_) << "Count() of an unknown thread set";
  return static_cast<int>(std::count(bits_.begin(), bits_.end(), true));
}

bool ThreadSet::IsWarpAligned() const {
  if (!known_) return false;
  for (int start = 0; start < num_threads(); start += 32) {
    int end = std::min(num_threads(), start + 32);
    for (int t = start + 1; t < end; ++t) {
      if (bits_[t] != bits_[start]) return false;
    }
  }
  return true;
}

std::vector<int> ThreadSet::Warps() const {
  KIR_CHECK(known_) << "Warps() of an unknown thread set";
  std::vector<int> warps;
  for (int t = 0; t < num_threads(); ++t) {
    if (bits_[t] && (warps.empty() || warps.back() != t / 32)) {
      warps.push_back(t / 32);
    }
  }
  return warps;
}

bool ThreadSet::operator==(const ThreadSet& other) const {
  return known_ == other.known_ && bits_ == other.bits_;
}

// ---------------------------------------------------------------------------
// The analysis.

namespace {

constexpr int kWarpSize = 32;
constexpr int kWarpgroupSize = 128;
constexpr int kMaxThreads = 1024;
// How deep ScopeOver re-derives a value's scope from its operands for a
// narrower thread set.
constexpr int kDefinitionDepth = 3;
constexpr int kQueryDepth = 6;

using Bits = std::bitset<kMaxThreads>;
using Vec = std::vector<int64_t>;

Scope Min(Scope a, Scope b) { return a < b ? a : b; }
Scope Max(Scope a, Scope b) { return a < b ? b : a; }

struct ValueState {
  std::shared_ptr<const Vec> part;  // null: 0
  std::optional<Scope> offset;      // nullopt: exact
  Scope scope = Scope::kThread;     // over the threads executing the def
  // For i1 values: truth sets bounding the true one (null: none / all).
  std::shared_ptr<const Bits> must, may;
  // An elect.sync result, or an `and` with one: true in at most one lane
  // of each warp.
  bool implies_elect = false;

  bool exact() const { return part != nullptr && !offset.has_value(); }
};

// A set of executing threads, kept once however many regions share it.
// Every op of a region runs in the threads that reach the region, so the
// analysis keeps a set per region, not per op: per op, 1024 bits and a
// ThreadSet (or even a table entry) would be most of its memory and time.
struct ExecSet {
  Bits bits;
  ThreadSet set;  // bits as reported (unknown when the shape is)
  // Whether at most one thread is in it, or all of them are in one warp.
  bool at_most_one = false;
  bool one_warp = false;
};

// Ops whose result is a pure per-thread function of their operands, so that
// uniformity of the operands over a set of threads carries over (sources
// such as `const` and index queries have no operands and are handled apart).
bool IsPureForward(const Op& op) {
  return FactsOf(op.kind()).computes && op.num_operands() > 0;
}

bool FitsType(int64_t value, const Type& type) {
  switch (type.dtype()) {
    case DType::kI1:
      return value == 0 || value == 1;
    case DType::kI32:
      return value >= std::numeric_limits<int32_t>::min() &&
             value <= std::numeric_limits<int32_t>::max();
    default:
      return true;
  }
}

// One integer operation on exact operands; nullopt where the result would
// depend on semantics we do not pin down here (division or shifts of
// negative values, division by zero, overflow).
std::optional<int64_t> EvalScalar(const Op& op, const std::vector<int64_t>& a) {
  int64_t r = 0;
  switch (op.kind()) {
    case OpKind::kAdd:
      if (__builtin_add_overflow(a[0], a[1], &r)) return std::nullopt;
      return r;
    case OpKind::kSub:
      if (__builtin_sub_overflow(a[0], a[1], &r)) return std::nullopt;
      return r;
    case OpKind::kMul:
      if (__builtin_mul_overflow(a[0], a[1], &r)) return std::nullopt;
      return r;
    case OpKind::kDiv:
      if (a[0] < 0 || a[1] <= 0) return std::nullopt;
      return a[0] / a[1];
    case OpKind::kRem:
      if (a[0] < 0 || a[1] <= 0) return std::nullopt;
      return a[0] % a[1];
    case OpKind::kMin:
      return std::min(a[0], a[1]);
    case OpKind::kMax:
      return std::max(a[0], a[1]);
    case OpKind::kAnd:
      return a[0] & a[1];
    case OpKind::kOr:
      return a[0] | a[1];
    case OpKind::kXor:
      return a[0] ^ a[1];
    case OpKind::kShl:
      if (a[0] < 0 || a[1] < 0 || a[1] >= 62 || (a[0] >> (62 - a[1])) != 0) {
        return std::nullopt;
      }
      return a[0] << a[1];
    case OpKind::kShr:
      if (a[0] < 0 || a[1] < 0 || a[1] >= 63) return std::nullopt;
      return a[0] >> a[1];
    case OpKind::kNot:
      if (op.result()->type().is_scalar(DType::kI1)) return 1 - a[0];
      return ~a[0];
    case OpKind::kNeg:
      if (a[0] == std::numeric_limits<int64_t>::min()) return std::nullopt;
      return -a[0];
    case OpKind::kAbs:
      if (a[0] == std::numeric_limits<int64_t>::min()) return std::nullopt;
      return a[0] < 0 ? -a[0] : a[0];
    case OpKind::kFma: {
      int64_t product = 0;
      if (__builtin_mul_overflow(a[0], a[1], &product) ||
          __builtin_add_overflow(product, a[2], &r)) {
        return std::nullopt;
      }
      return r;
    }
    case OpKind::kCmp: {
      // The verifier may not have run: pred may be missing.
      if (!op.has_pred()) return std::nullopt;
      switch (op.pred()) {
        case CmpPredicate::kEq:
          return a[0] == a[1];
        case CmpPredicate::kNe:
          return a[0] != a[1];
        case CmpPredicate::kLt:
          return a[0] < a[1];
        case CmpPredicate::kLe:
          return a[0] <= a[1];
        case CmpPredicate::kGt:
          return a[0] > a[1];
        case CmpPredicate::kGe:
          return a[0] >= a[1];
      }
      return std::nullopt;
    }
    case OpKind::kSelect:
      if (a[0] != 0 && a[0] != 1) return std::nullopt;
      return a[0] ? a[1] : a[2];
    case OpKind::kCast:
      // Integer to integer only; i1 targets (truncation vs. test for
      // non-zero) are left unknown.
      if (op.result()->type().is_scalar(DType::kI1)) return std::nullopt;
      return a[0];
    default:
      return std::nullopt;
  }
}

}  // namespace

struct ThreadAnalysis::Impl {
  explicit Impl(const Kernel& kernel);

  // Setup and the walk.
  void Visit(const Region& region, const Bits& exec);
  void VisitOp(const Op& op, const Bits& exec);
  // The id of `bits` in exec_sets, added if new.
  int InternExec(const Bits& bits);
  void ComputeResult(const Op& op, const Bits& exec);
  void ComputeInductionVariable(const Op& op, const Bits& exec);

  // Queries.
  const ValueState* Find(const Value* value) const;
  Scope ExactScope(const Vec* part, const Bits& set) const;
  bool ConstantOn(const Vec& values, const Bits& set, int chunk) const;
  Scope ScopeOver(const Value* value, const Bits& set, int depth) const;
  Bits Must(const Value* value) const;
  Bits May(const Value* value) const;
  Bits RoleBits(const Op& role) const;
  // The threads that may run `op`: its region's set; null when the region
  // is not one the analysis knows.
  const ExecSet* ExecSetOf(const Op& op) const;
  const Bits& ExecOf(const Op& op) const;
  // The threads that reach the start of `region`.
  Bits RegionExec(const Region& region) const;
  bool GuardUniform(const Op& guard, Scope scope, const Bits& restrict) const;
  bool GuardsOnly(const Op& op, Scope scope, const Bits& restrict,
                  const Op** culprit) const;

  ValueState Exact(Vec values) const {
    ValueState state;
    state.part = std::make_shared<const Vec>(std::move(values));
    return state;
  }
  ValueState Unknown(Scope scope) const {
    ValueState state;
    state.offset = scope;
    state.scope = scope;
    return state;
  }
  Vec Filled(int64_t value) const { return Vec(universe_size, value); }

  const Kernel& kernel;
  bool shape_known = false;
  int universe_size = kMaxThreads;  // threads per block, or the virtual 1024
  int64_t block_x = 0, block_y = 0, block_z = 0;
  Bits universe;
  absl::flat_hash_map<const Value*, ValueState> values;
  // Per region, its ops' executing set (into exec_sets).
  absl::flat_hash_map<const Region*, int> region_exec;
  // Stable addresses: ExecutingThreads and ExecutingBits hand them out.
  std::deque<ExecSet> exec_sets;
  absl::flat_hash_map<Bits, int, std::hash<Bits>> exec_ids;
  std::vector<const Op*> returns;  // in program order
};

ThreadAnalysis::Impl::Impl(const Kernel& kernel) : kernel(kernel) {
  std::optional<int64_t> x = kernel.block.x.AsConstant();
  std::optional<int64_t> y = kernel.block.y.AsConstant();
  std::optional<int64_t> z = kernel.block.z.AsConstant();
  if (x && y && z && *x > 0 && *y > 0 && *z > 0 &&
      *x * *y * *z <= kMaxThreads) {
    shape_known = true;
    block_x = *x;
    block_y = *y;
    block_z = *z;
    universe_size = static_cast<int>(*x * *y * *z);
  }
  for (int t = 0; t < universe_size; ++t) universe.set(t);

  for (const auto& size : kernel.sizes()) {
    values[size.get()] = Unknown(Scope::kGrid);
  }
  for (const Param& param : kernel.params()) {
    values[param.value] = Unknown(Scope::kGrid);
  }
  Visit(kernel.body(), universe);
}

int ThreadAnalysis::Impl::InternExec(const Bits& bits) {
  auto [it, inserted] =
      exec_ids.try_emplace(bits, static_cast<int>(exec_sets.size()));
  if (!inserted) return it->second;
  ExecSet& exec = exec_sets.emplace_back();
  exec.bits = bits;
  if (shape_known) {
    exec.set = ThreadSet::None(universe_size);
    for (int t = 0; t < universe_size; ++t) {
      exec.set.mutable_bits()[t] = bits[t];
    }
  }
  exec.at_most_one = bits.count() <= 1;
  int first_warp = -1;
  exec.one_warp = true;
  for (int t = 0; t < universe_size && exec.one_warp; ++t) {
    if (!bits[t]) continue;
    exec.one_warp = first_warp < 0 || t / kWarpSize == first_warp;
    first_warp = t / kWarpSize;
  }
  return it->second;
}

void ThreadAnalysis::Impl::Visit(const Region& region, const Bits& exec) {
  region_exec[&region] = InternExec(exec);
  for (int i = 0; i < region.size(); ++i) VisitOp(region.op(i), exec);
}

void ThreadAnalysis::Impl::VisitOp(const Op& op, const Bits& exec) {
  if (op.kind() == OpKind::kReturn) returns.push_back(&op);
  if (op.num_results() > 0) ComputeResult(op, exec);

  switch (op.kind()) {
    case OpKind::kIf: {
      const Value* condition =
          op.num_operands() > 0 ? op.operand_value(0) : nullptr;
      Bits then_exec = exec & May(condition);
      Bits else_exec = exec & ~Must(condition);
      if (op.num_regions() > 0) Visit(op.region(0), then_exec);
      if (op.num_regions() > 1) Visit(op.region(1), else_exec);
      return;
    }
    case OpKind::kFor:
      ComputeInductionVariable(op, exec);
      break;
    case OpKind::kRole:
      if (op.num_regions() > 0) Visit(op.region(0), exec & RoleBits(op));
      return;
    default:
      break;
  }
  for (int r = 0; r < op.num_regions(); ++r) Visit(op.region(r), exec);
}

void ThreadAnalysis::Impl::ComputeInductionVariable(const Op& op,
                                                    const Bits& exec) {
  if (op.num_regions() == 0 || op.region(0).num_arguments() == 0) return;
  const Value* iv = op.region(0).argument(0);
  if (op.num_operands() < 3) {
    values[iv] = Unknown(Scope::kThread);
    return;
  }
  // iv = lower + k * step in iteration k: the lower bound's per-thread part
  // plus a part as uniform as the bounds and the step.
  const ValueState* lower = Find(op.operand_value(0));
  Scope bounds = Min(ScopeOver(op.operand_value(1), exec, kDefinitionDepth),
                     ScopeOver(op.operand_value(2), exec, kDefinitionDepth));
  ValueState state;
  if (lower != nullptr && lower->part != nullptr) {
    state.part = lower->part;
    state.offset = Min(bounds, lower->offset.value_or(Scope::kGrid));
  } else {
    state.offset =
        Min(bounds, ScopeOver(op.operand_value(0), exec, kDefinitionDepth));
  }
  values[iv] = state;
  values[iv].scope = ScopeOver(iv, exec, 0);
}

void ThreadAnalysis::Impl::ComputeResult(const Op& op, const Bits& exec) {
  const Value* result = op.result(0);
  const Type& type = result->type();
  auto operand = [&](int i) -> const Value* {
    return i < op.num_operands() ? op.operand_value(i) : nullptr;
  };
  auto operand_scope = [&](int i) {
    const Value* value = operand(i);
    return value ? ScopeOver(value, exec, kDefinitionDepth) : Scope::kThread;
  };
  ValueState state = Unknown(Scope::kThread);

  switch (op.kind()) {
    case OpKind::kConst: {
      const Attribute* value = op.has_value() ? &op.value() : nullptr;
      if (value != nullptr && type.is_integer_scalar() && value->is_integral &&
          FitsType(value->int_value, type)) {
        state = Exact(Filled(value->int_value));
      } else {
        state = Unknown(Scope::kGrid);
      }
      break;
    }
    case OpKind::kThreadId: {
      if (!shape_known || !op.has_dim()) break;
      const Dim dim = op.dim();
      Vec ids(universe_size);
      for (int t = 0; t < universe_size; ++t) {
        ids[t] = dim == Dim::kX   ? t % block_x
                 : dim == Dim::kY ? (t / block_x) % block_y
                                  : t / (block_x * block_y);
      }
      state = Exact(std::move(ids));
      break;
    }
    case OpKind::kLaneId:
    case OpKind::kWarpId: {
      Vec ids(universe_size);
      for (int t = 0; t < universe_size; ++t) {
        ids[t] = op.kind() == OpKind::kLaneId ? t % kWarpSize : t / kWarpSize;
      }
      state = Exact(std::move(ids));
      break;
    }
    case OpKind::kBlockDim: {
      if (!shape_known || !op.has_dim()) {
        state = Unknown(Scope::kGrid);
        break;
      }
      const Dim dim = op.dim();
      state = Exact(Filled(dim == Dim::kX   ? block_x
                           : dim == Dim::kY ? block_y
                                            : block_z));
      break;
    }
    case OpKind::kGridDim:
      state = Unknown(Scope::kGrid);
      break;
    case OpKind::kBlockId:
    case OpKind::kClusterCtaId:
    case OpKind::kClusterCtaRank:
    case OpKind::kAllocShared:
      state = Unknown(Scope::kBlock);
      break;
    case OpKind::kAllocWorkspace:
      state = Unknown(Scope::kGrid);
      break;
    case OpKind::kElectSync:
      state.implies_elect = true;
      break;
    case OpKind::kBarrierRed: {
      // Every participant of one generation receives the same result. When
      // exactly `threads` threads may reach the op, each generation takes
      // all of them, so they agree; otherwise whole warps arrive together
      // (the op is `.aligned`), which still makes the result warp-uniform.
      const bool all_participate =
          shape_known && op.has_threads() &&
          static_cast<int64_t>(exec.count()) == op.threads();
      state = Unknown(all_participate ? Scope::kBlock : Scope::kWarp);
      break;
    }
    case OpKind::kShflSync: {
      // Every lane receives some lane's value, so a value uniform over the
      // warp or coarser stays so; an `idx` shuffle from a warp-uniform lane
      // broadcasts, which makes any value warp-uniform.
      const bool idx = op.has_mode() && op.mode() == ShuffleMode::kIdx;
      Scope value_scope = operand_scope(0);
      Scope result_scope = value_scope >= Scope::kWarp ? value_scope
                           : idx && operand_scope(1) >= Scope::kWarp
                               ? Scope::kWarp
                               : Scope::kThread;
      state = Unknown(result_scope);
      const ValueState* value = Find(operand(0));
      const ValueState* lane = Find(operand(1));
      if (idx && shape_known && value && value->exact() && lane &&
          lane->exact()) {
        Vec out(universe_size);
        bool ok = true;
        for (int t = 0; t < universe_size && ok; ++t) {
          if (!exec[t]) continue;
          int64_t source = (t & ~(kWarpSize - 1)) + ((*lane->part)[t] & 31);
          ok = source < universe_size && exec[source];
          if (ok) out[t] = (*value->part)[source];
        }
        if (ok) state = Exact(std::move(out));
      }
      break;
    }
    default:
      if (!IsPureForward(op)) break;  // loads, atomics, ...
      {
        // Exact when every operand is.
        std::vector<const ValueState*> args;
        bool all_exact = type.is_integer_scalar();
        for (int i = 0; i < op.num_operands(); ++i) {
          const ValueState* arg = Find(op.operand_value(i));
          args.push_back(arg);
          all_exact = all_exact && arg != nullptr && arg->exact() &&
                      op.operand_value(i)->type().is_integer_scalar();
        }
        if (all_exact && !args.empty()) {
          // Threads that never run the definition never use the value
          // (SSA: every use is inside the definition's region), so their
          // entries are placeholders; evaluating them could only fail where
          // the executing threads do not (`div` of `tid - 128` outside a
          // role of the threads from 128 on).
          Vec out(universe_size, 0);
          std::vector<int64_t> scalars(args.size());
          bool ok = true;
          for (int t = 0; t < universe_size && ok; ++t) {
            if (!exec[t]) continue;
            for (size_t i = 0; i < args.size(); ++i) {
              scalars[i] = (*args[i]->part)[t];
            }
            std::optional<int64_t> value = EvalScalar(op, scalars);
            ok = value.has_value() && FitsType(*value, type);
            if (ok) out[t] = *value;
          }
          if (ok) {
            state = Exact(std::move(out));
            break;
          }
        }
        // add/sub/neg keep the per-thread part + uniform part form.
        const OpKind kind = op.kind();
        if ((kind == OpKind::kAdd || kind == OpKind::kSub) &&
            args.size() == 2 && args[0] && args[1] &&
            (args[0]->part || args[1]->part) && type.is_integer_scalar()) {
          const Vec* a = args[0]->part.get();
          const Vec* b = args[1]->part.get();
          Vec sum(universe_size, 0);
          bool ok = true;
          for (int t = 0; t < universe_size && ok; ++t) {
            int64_t x = a ? (*a)[t] : 0;
            int64_t y = b ? (*b)[t] : 0;
            ok = kind == OpKind::kAdd ? !__builtin_add_overflow(x, y, &sum[t])
                                      : !__builtin_sub_overflow(x, y, &sum[t]);
          }
          if (ok) {
            state.part = std::make_shared<const Vec>(std::move(sum));
            state.offset = Min(args[0]->offset.value_or(Scope::kGrid),
                               args[1]->offset.value_or(Scope::kGrid));
            break;
          }
        }
        Scope scope = Scope::kGrid;
        for (int i = 0; i < op.num_operands(); ++i) {
          scope = Min(scope, operand_scope(i));
        }
        state = Unknown(scope);
      }
      break;
  }

  // Truth bounds and elect implications of predicates.
  if (type.is_scalar(DType::kI1)) {
    if (state.exact()) {
      Bits truth;
      for (int t = 0; t < universe_size; ++t) truth[t] = (*state.part)[t] != 0;
      state.must = state.may = std::make_shared<const Bits>(truth);
    } else if (op.kind() == OpKind::kAnd || op.kind() == OpKind::kOr) {
      if (op.num_operands() == 2) {
        Bits a_must = Must(operand(0)), b_must = Must(operand(1));
        Bits a_may = May(operand(0)), b_may = May(operand(1));
        const bool is_and = op.kind() == OpKind::kAnd;
        state.must = std::make_shared<const Bits>(is_and ? a_must & b_must
                                                         : a_must | b_must);
        state.may = std::make_shared<const Bits>(is_and ? a_may & b_may
                                                        : a_may | b_may);
        if (is_and) {
          const ValueState* a = Find(operand(0));
          const ValueState* b = Find(operand(1));
          state.implies_elect =
              (a && a->implies_elect) || (b && b->implies_elect);
        }
      }
    } else if (op.kind() == OpKind::kNot && op.num_operands() == 1) {
      state.must = std::make_shared<const Bits>(universe & ~May(operand(0)));
      state.may = std::make_shared<const Bits>(universe & ~Must(operand(0)));
    }
  }

  // A value only known to vary per thread reads the same absent (Find:
  // null) as stored, unless ScopeOver would re-derive it from its operands
  // (pure per-thread functions): most loads, atomics and the like are left
  // out, so that the table holds what the analysis knows.
  const bool rederived = IsPureForward(op);
  if (!rederived && state.part == nullptr && state.offset == Scope::kThread &&
      state.scope == Scope::kThread && state.must == nullptr &&
      state.may == nullptr && !state.implies_elect) {
    return;  // and the other results (Unknown(kThread)) likewise
  }
  values[result] = state;
  ValueState& stored = values[result];
  stored.scope = Scope::kThread;  // ScopeOver reads the stored state
  stored.scope = ScopeOver(result, exec, kDefinitionDepth);
  for (int i = 1; i < op.num_results() && rederived; ++i) {
    values[op.result(i)] = Unknown(Scope::kThread);
  }
}

const ValueState* ThreadAnalysis::Impl::Find(const Value* value) const {
  if (value == nullptr) return nullptr;
  auto it = values.find(value);
  return it == values.end() ? nullptr : &it->second;
}

bool ThreadAnalysis::Impl::ConstantOn(const Vec& part, const Bits& set,
                                      int chunk) const {
  for (int start = 0; start < universe_size; start += chunk) {
    int end = std::min(universe_size, start + chunk);
    bool seen = false;
    int64_t first = 0;
    for (int t = start; t < end; ++t) {
      if (!set[t]) continue;
      if (!seen) {
        seen = true;
        first = part[t];
      } else if (part[t] != first) {
        return false;
      }
    }
  }
  return true;
}

Scope ThreadAnalysis::Impl::ExactScope(const Vec* part, const Bits& set) const {
  if (part == nullptr || ConstantOn(*part, set, kMaxThreads)) {
    return Scope::kGrid;
  }
  if (ConstantOn(*part, set, kWarpgroupSize)) return Scope::kWarpgroup;
  if (ConstantOn(*part, set, kWarpSize)) return Scope::kWarp;
  return Scope::kThread;
}

Scope ThreadAnalysis::Impl::ScopeOver(const Value* value, const Bits& set,
                                      int depth) const {
  const ValueState* state = Find(value);
  if (state == nullptr) return Scope::kThread;
  Scope scope = Max(state->scope, Min(ExactScope(state->part.get(), set),
                                      state->offset.value_or(Scope::kGrid)));
  if (depth <= 0 || state->exact() || scope == Scope::kGrid ||
      value->kind() != Value::Kind::kResult) {
    return scope;
  }
  // Re-derive from the operands over this (possibly narrower) set.
  const Op& op = *value->defining_op();
  if (!IsPureForward(op)) return scope;
  Scope from_operands = Scope::kGrid;
  for (int i = 0; i < op.num_operands(); ++i) {
    from_operands =
        Min(from_operands, ScopeOver(op.operand_value(i), set, depth - 1));
  }
  if (op.kind() == OpKind::kCmp && op.num_operands() == 2) {
    // a < b  <=>  (part_a - part_b) < (u_b - u_a): uniform where the
    // per-thread difference is and the unknowns are.
    const ValueState* a = Find(op.operand_value(0));
    const ValueState* b = Find(op.operand_value(1));
    if (a && b && (a->part || b->part)) {
      Vec difference(universe_size, 0);
      bool ok = true;
      for (int t = 0; t < universe_size && ok; ++t) {
        int64_t x = a->part ? (*a->part)[t] : 0;
        int64_t y = b->part ? (*b->part)[t] : 0;
        ok = !__builtin_sub_overflow(x, y, &difference[t]);
      }
      if (ok) {
        Scope compared = Min(ExactScope(&difference, set),
                             Min(a->offset.value_or(Scope::kGrid),
                                 b->offset.value_or(Scope::kGrid)));
        from_operands = Max(from_operands, compared);
      }
    }
  }
  return Max(scope, from_operands);
}

Bits ThreadAnalysis::Impl::Must(const Value* value) const {
  const ValueState* state = Find(value);
  return state && state->must ? *state->must : Bits();
}

Bits ThreadAnalysis::Impl::May(const Value* value) const {
  const ValueState* state = Find(value);
  return state && state->may ? *state->may : universe;
}

Bits ThreadAnalysis::Impl::RoleBits(const Op& role) const {
  // A role without its range (not verified yet) may be any warps.
  // The verifier may not have run: the bounds may be missing.
  const int64_t begin = role.has_warp_begin() ? role.warp_begin() : 0;
  const int64_t end = role.has_warp_end() ? role.warp_end() : kMaxThreads;
  Bits bits;
  for (int t = 0; t < universe_size; ++t) {
    bits[t] = t / kWarpSize >= begin && t / kWarpSize < end;
  }
  return bits;
}

const ExecSet* ThreadAnalysis::Impl::ExecSetOf(const Op& op) const {
  if (op.parent_region() == nullptr) return nullptr;
  auto it = region_exec.find(op.parent_region());
  return it == region_exec.end() ? nullptr : &exec_sets[it->second];
}

const Bits& ThreadAnalysis::Impl::ExecOf(const Op& op) const {
  const ExecSet* exec = ExecSetOf(op);
  return exec == nullptr ? universe : exec->bits;
}

bool ThreadAnalysis::Impl::GuardUniform(const Op& guard, Scope scope,
                                        const Bits& restrict) const {
  const Bits set = ExecOf(guard)& restrict;
  switch (guard.kind()) {
    case OpKind::kIf:
      return guard.num_operands() > 0 &&
             ScopeOver(guard.operand_value(0), set, kQueryDepth) >= scope;
    case OpKind::kFor:
      for (int i = 0; i < std::min(3, guard.num_operands()); ++i) {
        if (ScopeOver(guard.operand_value(i), set, kQueryDepth) < scope) {
          return false;
        }
      }
      return guard.num_operands() >= 3;
    case OpKind::kRole: {
      // Membership in the role's warps, as a per-thread predicate.
      Bits members = RoleBits(guard);
      Vec membership(universe_size);
      for (int t = 0; t < universe_size; ++t) membership[t] = members[t];
      return ExactScope(&membership, set) >= scope;
    }
    default:
      return true;
  }
}

bool ThreadAnalysis::Impl::GuardsOnly(const Op& op, Scope scope,
                                      const Bits& restrict,
                                      const Op** culprit) const {
  std::vector<const Op*> chain;
  for (const Op* parent = op.parent_op(); parent != nullptr;
       parent = parent->parent_op()) {
    chain.push_back(parent);
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!GuardUniform(**it, scope, restrict)) {
      if (culprit) *culprit = *it;
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// Public interface.

ThreadAnalysis::ThreadAnalysis(const Kernel& kernel)
    : impl_(std::make_unique<Impl>(kernel)) {}

ThreadAnalysis::~ThreadAnalysis() = default;

std::optional<int> ThreadAnalysis::num_threads() const {
  if (!impl_->shape_known) return std::nullopt;
  return impl_->universe_size;
}

Scope ThreadAnalysis::UniformScope(const Value* value) const {
  const ValueState* state = impl_->Find(value);
  return state ? state->scope : Scope::kThread;
}

const std::vector<int64_t>* ThreadAnalysis::PerThreadValues(
    const Value* value) const {
  const ValueState* state = impl_->Find(value);
  if (!impl_->shape_known || state == nullptr || !state->exact()) {
    return nullptr;
  }
  return state->part.get();
}

const ThreadSet& ThreadAnalysis::ExecutingThreads(const Op& op) const {
  static const ThreadSet* unknown = new ThreadSet(ThreadSet::Unknown());
  const ExecSet* exec = impl_->ExecSetOf(op);
  if (exec == nullptr || !impl_->shape_known) return *unknown;
  return exec->set;
}

const std::bitset<1024>* ThreadAnalysis::ExecutingBits(const Op& op) const {
  const ExecSet* exec = impl_->ExecSetOf(op);
  if (exec == nullptr || !impl_->shape_known) return nullptr;
  return &exec->bits;
}

bool ThreadAnalysis::IsSingleThread(const Op& op) const {
  const ExecSet* exec = impl_->ExecSetOf(op);
  if (exec == nullptr) return false;
  if (exec->at_most_one) return true;
  // Under `if %e` (then side) with %e implying an elect.sync result, each
  // warp contributes at most one thread; so one warp gives one thread.
  return exec->one_warp && IsElectedPerWarp(op);
}

bool ThreadAnalysis::IsElectedPerWarp(const Op& op) const {
  const Op* child = &op;
  for (const Op* parent = op.parent_op(); parent != nullptr;
       child = parent, parent = parent->parent_op()) {
    if (parent->kind() != OpKind::kIf || parent->num_operands() == 0) continue;
    if (child->parent_region() != &parent->region(0)) continue;
    const ValueState* condition = impl_->Find(parent->operand_value(0));
    if (condition && condition->implies_elect) return true;
  }
  return false;
}

bool ThreadAnalysis::GuardsUniformOver(const Op& op, Scope scope,
                                       const Op** culprit) const {
  const Op* role = EnclosingRole(op);
  const Bits restrict = scope == Scope::kRole && role != nullptr
                            ? impl_->RoleBits(*role)
                            : impl_->universe;
  if (!impl_->GuardsOnly(op, scope, restrict, culprit)) return false;

  // A `return` that some threads of a group take and others do not leaves
  // the rest to run `op` alone: its guards count as `op`'s when it may run
  // before `op` (earlier in program order, or in a loop around both).
  for (const Op* ret : impl_->returns) {
    bool may_precede = ret->IsBefore(op);
    for (const Op* loop = ret->parent_op(); loop && !may_precede;
         loop = loop->parent_op()) {
      if (loop->kind() != OpKind::kFor) continue;
      for (const Op* p = op.parent_op(); p; p = p->parent_op()) {
        if (p == loop) may_precede = true;
      }
    }
    if (may_precede && !impl_->GuardsOnly(*ret, scope, restrict, culprit)) {
      return false;
    }
  }
  return true;
}

const Op* ThreadAnalysis::EnclosingRole(const Op& op) const {
  return op.EnclosingOp(OpKind::kRole);
}

Bits ThreadAnalysis::Impl::RegionExec(const Region& region) const {
  const Op* parent = region.parent_op();
  if (parent == nullptr) return universe;
  const Bits& exec = ExecOf(*parent);
  switch (parent->kind()) {
    case OpKind::kIf: {
      const Value* condition =
          parent->num_operands() > 0 ? parent->operand_value(0) : nullptr;
      if (parent->num_regions() > 0 && &parent->region(0) == &region) {
        return exec & May(condition);
      }
      return exec & ~Must(condition);
    }
    case OpKind::kRole:
      return exec & RoleBits(*parent);
    default:
      return exec;
  }
}

void ThreadAnalysis::AddOp(const Op& op) {
  KIR_CHECK(op.num_results() == 0 && op.num_regions() == 0)
      << "ThreadAnalysis::AddOp takes ops without results or regions, not "
      << op.mnemonic();
  KIR_CHECK(op.kind() != OpKind::kReturn) << "a return changes the guards";
  KIR_CHECK(op.parent_region() != nullptr) << "AddOp before the op is placed";
  // Its region's set is the op's: only a region new since the analysis was
  // built needs one.
  const Region& region = *op.parent_region();
  if (!impl_->region_exec.contains(&region)) {
    impl_->region_exec[&region] = impl_->InternExec(impl_->RegionExec(region));
  }
}

void ThreadAnalysis::RemoveOp(const Op& op) {
  // Nothing is kept per op; `op` (without results or regions) leaves the
  // rest as it was.
  KIR_CHECK(op.num_results() == 0 && op.num_regions() == 0)
      << "ThreadAnalysis::RemoveOp takes ops without results or regions, not "
      << op.mnemonic();
}

namespace {

std::string DescribeOp(const Op& op) {
  return absl::StrCat(op.mnemonic(), " at ", op.loc().LineColumn());
}

std::string DescribeValue(const Value* value) {
  return absl::StrCat("%", value->name());
}

}  // namespace

std::string ThreadAnalysis::Difference(const ThreadAnalysis& fresh) const {
  if (num_threads() != fresh.num_threads()) return "the number of threads";
  std::string difference;
  auto compare_value = [&](const Value* value) {
    if (!difference.empty()) return;
    if (UniformScope(value) != fresh.UniformScope(value)) {
      difference =
          absl::StrCat("the uniform scope of ", DescribeValue(value), ": ",
                       ScopeName(UniformScope(value)), " cached, ",
                       ScopeName(fresh.UniformScope(value)), " fresh");
      return;
    }
    const std::vector<int64_t>* a = PerThreadValues(value);
    const std::vector<int64_t>* b = fresh.PerThreadValues(value);
    if ((a == nullptr) != (b == nullptr) || (a != nullptr && *a != *b)) {
      difference =
          absl::StrCat("the per-thread values of ", DescribeValue(value));
    }
  };
  for (const auto& size : impl_->kernel.sizes()) compare_value(size.get());
  for (const Param& param : impl_->kernel.params()) compare_value(param.value);
  Walk(impl_->kernel.body(), [&](const Op& op) {
    if (!difference.empty()) return;
    for (int i = 0; i < op.num_results(); ++i) compare_value(op.result(i));
    for (int r = 0; r < op.num_regions(); ++r) {
      for (int i = 0; i < op.region(r).num_arguments(); ++i) {
        compare_value(op.region(r).argument(i));
      }
    }
    if (!difference.empty()) return;
    if (!(ExecutingThreads(op) == fresh.ExecutingThreads(op))) {
      difference = absl::StrCat("the threads executing ", DescribeOp(op));
    } else if (IsSingleThread(op) != fresh.IsSingleThread(op)) {
      difference = absl::StrCat("whether one thread runs ", DescribeOp(op));
    } else if (IsElectedPerWarp(op) != fresh.IsElectedPerWarp(op)) {
      difference =
          absl::StrCat("whether an elected lane runs ", DescribeOp(op));
    } else if (EnclosingRole(op) != fresh.EnclosingRole(op)) {
      difference = absl::StrCat("the role around ", DescribeOp(op));
    }
    for (Scope scope :
         {Scope::kWarp, Scope::kWarpgroup, Scope::kRole, Scope::kBlock}) {
      if (!difference.empty()) return;
      const Op* culprit = nullptr;
      const Op* fresh_culprit = nullptr;
      const bool uniform = GuardsUniformOver(op, scope, &culprit);
      if (uniform != fresh.GuardsUniformOver(op, scope, &fresh_culprit) ||
          culprit != fresh_culprit) {
        difference = absl::StrCat("whether the guards of ", DescribeOp(op),
                                  " are ", ScopeName(scope), "-uniform");
      }
    }
  });
  return difference;
}

}  // namespace kir
