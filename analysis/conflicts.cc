// Conflicts between a block's memory accesses; see conflicts.h.
#include "analysis/conflicts.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/static_values.h"
#include "ir/check.h"
#include "ir/diagnostics.h"

namespace kir {

// ---------------------------------------------------------------------------
// Index decomposition.

namespace {

using Vec = std::vector<int64_t>;

constexpr int kMaxDepth = 16;
// Above this many candidate iteration distances, or candidate offsets per
// dimension, the comparison gives up and answers "overlap".
constexpr int64_t kMaxDistances = 512;
constexpr size_t kMaxCandidates = 64;

struct Interval {
  int64_t lo = 0;
  int64_t hi = 0;  // inclusive
};

// part[t] + sum(coefficient * atom) + constant; `varying` when some term is
// a per-thread value the analysis cannot follow.
struct Affine {
  std::shared_ptr<const Vec> part;  // null: 0
  std::map<const Value*, int64_t> atoms;
  int64_t constant = 0;
  bool varying = false;
};

// Keep every intermediate far from the int64 limits, so that sums and
// products of a few of them cannot wrap; the analysis gives up beyond.
constexpr int64_t kLimit = int64_t{1} << 40;

bool Overflows(int64_t value) { return value > kLimit || value < -kLimit; }

// a + b and a * b, or nullopt when the result leaves [-kLimit, kLimit].
std::optional<int64_t> Add(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum) || Overflows(sum)) return std::nullopt;
  return sum;
}

// a - b, or nullopt likewise (never `Add(a, -b)`: -b overflows for the
// minimum).
std::optional<int64_t> Subtract(int64_t a, int64_t b) {
  int64_t difference = 0;
  if (__builtin_sub_overflow(a, b, &difference) || Overflows(difference)) {
    return std::nullopt;
  }
  return difference;
}

std::optional<int64_t> Multiply(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || Overflows(product)) {
    return std::nullopt;
  }
  return product;
}

// Floor division and modulo by a positive divisor.
int64_t FloorDiv(int64_t a, int64_t m) {
  const int64_t q = a / m;
  return (a % m != 0 && a < 0) ? q - 1 : q;
}

int64_t FloorMod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

std::shared_ptr<const Vec> Combine(const std::shared_ptr<const Vec>& a,
                                   const std::shared_ptr<const Vec>& b,
                                   int64_t b_scale, bool* ok) {
  if (b == nullptr) return a;
  Vec out(b->size());
  for (size_t t = 0; t < b->size(); ++t) {
    std::optional<int64_t> scaled = Multiply(b_scale, (*b)[t]);
    std::optional<int64_t> sum =
        scaled ? Add(a ? (*a)[t] : 0, *scaled) : std::nullopt;
    if (!sum) {
      *ok = false;
      return nullptr;
    }
    out[t] = *sum;
  }
  return std::make_shared<const Vec>(std::move(out));
}

std::shared_ptr<const Vec> Scale(const std::shared_ptr<const Vec>& a,
                                 int64_t factor, bool* ok) {
  if (a == nullptr) return nullptr;
  return Combine(nullptr, a, factor, ok);
}

// The for op whose induction variable `value` is, or null.
const Op* InductionLoop(const Value* value) {
  if (value->kind() != Value::Kind::kRegionArgument) return nullptr;
  const Region* region = value->owning_region();
  const Op* owner = region ? region->parent_op() : nullptr;
  return owner != nullptr && owner->kind() == OpKind::kFor ? owner : nullptr;
}

const Value* InductionVariable(const Op& loop) {
  return loop.num_regions() > 0 && loop.region(0).num_arguments() > 0
             ? loop.region(0).argument(0)
             : nullptr;
}

bool IsSharedAllocation(const Value* value) {
  return value != nullptr && value->kind() == Value::Kind::kResult &&
         value->defining_op()->kind() == OpKind::kAllocShared;
}

// A tensor parameter or a workspace: distinct ones never alias
// (ir/language.md, "Memory and aliasing").
bool IsGlobalBuffer(const Value* value) {
  return value != nullptr && value->type().is_buffer() &&
         value->type().space() == MemorySpace::kGlobal;
}

// The op defining `value` when it is of `kind` with two operands.
const Op* BinaryOf(const Value* value, OpKind kind) {
  if (value == nullptr || value->kind() != Value::Kind::kResult) return nullptr;
  const Op* op = value->defining_op();
  return op->kind() == kind && op->num_operands() == 2 ? op : nullptr;
}

// `rem(x * iv + sum(c * invariant) + offset, modulus)` with a non-negative
// dividend: two remainders of one form differ by a known amount at every
// iteration distance, whatever the invariant values are.
struct RemainderForm {
  int64_t modulus = 0;
  int64_t iv_coefficient = 0;  // of the stepping loop's induction variable
  std::map<const Value*, int64_t> invariant;
  int64_t offset = 0;
  bool SameForm(const RemainderForm& other) const {
    return modulus == other.modulus && iv_coefficient == other.iv_coefficient &&
           invariant == other.invariant;
  }
};

// A value that may differ between the two runs of a carried pair, in every
// dimension it appears with the same coefficient on both sides.
struct Candidate {
  const Value* atom = nullptr;
  int64_t coefficient = 0;
  std::optional<Interval> range;
};

// One dimension of a comparison: the later box's origin minus the earlier's
// is part_b[t2] - part_a[t1] + one of `offsets(k)`.
struct DimensionDifference {
  bool known = true;
  const Vec* part_a = nullptr;
  const Vec* part_b = nullptr;
  int64_t base = 0;
  int64_t per_step = 0;  // times k, the iteration distance
  // Remainder terms: coefficient * ((step * k + offset) mod m, or that
  // minus m).
  struct ModTerm {
    int64_t coefficient, step, offset, modulus;
  };
  std::vector<ModTerm> mods;
  // Uniform terms that do not cancel, bounded by their ranges, other than
  // the candidates.
  int64_t residual_lo = 0, residual_hi = 0;
  std::vector<Candidate> candidates;
  // The residual without the candidates, for the injectivity argument.
  bool rest_known = false;
  int64_t rest_lo = 0, rest_hi = 0;
  int64_t extent_a = 1, extent_b = 1;
};

// MayOverlap runs once per pair an ordering walk meets: its per-dimension
// scratch lives inline for the ranks and term counts kernels have, so that
// a comparison outside a carried loop allocates nothing.
using Offsets = absl::InlinedVector<int64_t, 4>;
using Dimensions = absl::InlinedVector<DimensionDifference, 4>;
// An index form's atoms and coefficients, sorted by atom (a copy of
// Affine::atoms that PairRemainders consumes).
using AtomTerms = absl::InlinedVector<std::pair<const Value*, int64_t>, 4>;

// The offsets `dim` may add at iteration distance k.
Offsets OffsetsAt(const DimensionDifference& dim, int64_t k) {
  std::optional<int64_t> first = Multiply(dim.per_step, k);
  if (first) first = Add(dim.base, *first);
  if (!first) return {};
  Offsets out = {*first};
  for (const DimensionDifference::ModTerm& mod : dim.mods) {
    std::optional<int64_t> shift = Multiply(mod.step, k);
    if (shift) shift = Add(*shift, mod.offset);
    if (!shift) return {};
    const int64_t r = FloorMod(*shift, mod.modulus);
    absl::InlinedVector<int64_t, 2> choices = {r};
    if (r != 0) choices.push_back(r - mod.modulus);
    Offsets next;
    for (int64_t o : out) {
      for (int64_t c : choices) {
        std::optional<int64_t> term = Multiply(mod.coefficient, c);
        if (term) term = Add(o, *term);
        if (!term) return {};
        next.push_back(*term);
      }
    }
    out = std::move(next);
    if (out.size() > kMaxCandidates) return {};
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

struct ConflictAnalysis::Impl {
  Impl(const Kernel& kernel, const ThreadAnalysis& threads)
      : kernel(kernel), threads(threads) {
    num_threads = threads.num_threads().value_or(1024);
    for (int t = 0; t < num_threads; ++t) universe.set(t);
  }

  const Affine& Decompose(const Value* value, int depth = 0) const;
  Affine DecomposeUncached(const Value* value, int depth) const;
  // The values `value` takes, in the threads of `among` (all threads when
  // null) for per-thread values.
  std::optional<Interval> Range(const Value* value,
                                const ThreadBits* among = nullptr,
                                int depth = 0) const;
  std::optional<Interval> PartRange(const Vec* part,
                                    const ThreadBits* among) const;
  std::optional<int64_t> Constant(const Value* value) const;
  // The thread analysis's per-thread values of `value`, when every one is
  // within kLimit; else null (the value is then an unknown).
  const Vec* BoundedValues(const Value* value) const;
  std::optional<int64_t> TripCount(const Op& loop) const;
  int ElectedWarp(const Op& op) const;
  std::optional<RemainderForm> FormOf(const Value* atom,
                                      const Op* stepping) const;
  void PairRemainders(AtomTerms& atoms_a, AtomTerms& atoms_b,
                      const Op* stepping, std::optional<int64_t> step,
                      DimensionDifference& dim) const;
  bool ForcesSameIteration(std::set<const Value*> equal,
                           const Op& stepping) const;
  // For a carried pair: the values of the iteration that an overlap forces
  // to be equal in both runs (one per dimension at most), or nullopt when
  // some dimension can never overlap.
  std::optional<std::set<const Value*>> ForcedEqual(
      absl::Span<const DimensionDifference> dims, const ThreadBits& ta,
      const ThreadBits& tb) const;

  bool MayOverlap(const Op& a, const MemoryEffect& ea, const ThreadBits& ta,
                  const Op& b, const MemoryEffect& eb, const ThreadBits& tb,
                  absl::Span<const CarriedLoop> carried,
                  ThreadPairs pairs) const;

  // The threads of one side of a pair grouped by their per-thread parts in
  // the compared dimensions (`parts`, one per dimension, null for 0):
  // MayOverlap compares groups, not threads. The grouping of one access's
  // threads recurs across its pairs, so it is kept.
  struct ThreadGroup {
    int first = -1;
    int count = 0;
  };
  struct ThreadGroups {
    // Sorted by the parts' values.
    std::vector<std::pair<std::vector<int64_t>, ThreadGroup>> groups;
    // The dimension (index into the parts) whose values tell the groups
    // apart best, and the groups in the order of their value there.
    int window = 0;
    std::vector<int> by_window;
  };
  const ThreadGroups& GroupsOf(absl::Span<const Vec* const> parts,
                               const ThreadBits& among) const;

  const Kernel& kernel;
  const ThreadAnalysis& threads;
  int num_threads = 1024;
  ThreadBits universe;
  // Node-based: Decompose hands out references that must survive inserts.
  mutable std::unordered_map<const Value*, Affine> affine_cache;
  mutable Counters counters;
  struct GroupsKey {
    std::vector<const Vec*> parts;  // owned by affine_cache, never erased
    ThreadBits among;
  };
  // What GroupsOf looks up by, so that a hit copies nothing.
  struct GroupsKeyView {
    absl::Span<const Vec* const> parts;
    const ThreadBits* among;
  };
  static GroupsKeyView ViewOf(const GroupsKey& key) {
    return {key.parts, &key.among};
  }
  static GroupsKeyView ViewOf(const GroupsKeyView& key) { return key; }
  struct GroupsHash {
    using is_transparent = void;
    template <typename K>
    size_t operator()(const K& key) const {
      const GroupsKeyView view = ViewOf(key);
      return absl::Hash<std::pair<absl::Span<const Vec* const>, size_t>>()(
          {view.parts, std::hash<ThreadBits>()(*view.among)});
    }
  };
  struct GroupsEq {
    using is_transparent = void;
    template <typename K1, typename K2>
    bool operator()(const K1& a, const K2& b) const {
      const GroupsKeyView x = ViewOf(a), y = ViewOf(b);
      return x.parts == y.parts && *x.among == *y.among;
    }
  };
  // ElectedWarp of each access asked about (the passes that keep this
  // analysis add only synchronization, which accesses nothing), by
  // Op::serial(); kUnknownWarp where not asked yet. A table by serial
  // rather than by address: a kernel's ops were numbered as they were
  // created, so the lookups of a walk stay near each other in memory.
  static constexpr int8_t kUnknownWarp = -2;
  mutable std::vector<int8_t> elected_warps;
  // Node-based: GroupsOf hands out references that must survive inserts.
  mutable absl::node_hash_map<GroupsKey, ThreadGroups, GroupsHash, GroupsEq>
      groups_cache;
};

const ConflictAnalysis::Impl::ThreadGroups& ConflictAnalysis::Impl::GroupsOf(
    absl::Span<const Vec* const> parts, const ThreadBits& among) const {
  auto it = groups_cache.find(GroupsKeyView{parts, &among});
  if (it != groups_cache.end()) return it->second;
  GroupsKey key{std::vector<const Vec*>(parts.begin(), parts.end()), among};
  std::map<std::vector<int64_t>, ThreadGroup> groups;
  std::vector<int64_t> values(parts.size());
  for (int t = 0; t < num_threads; ++t) {
    if (!among[t]) continue;
    for (size_t i = 0; i < parts.size(); ++i) {
      const Vec* part = parts[i];
      values[i] = part && t < static_cast<int>(part->size()) ? (*part)[t] : 0;
    }
    ThreadGroup& group = groups[values];
    if (group.first < 0) group.first = t;
    ++group.count;
  }
  ThreadGroups out;
  out.groups.assign(groups.begin(), groups.end());
  size_t most_distinct = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::set<int64_t> distinct;
    for (const auto& group : out.groups) distinct.insert(group.first[i]);
    if (distinct.size() > most_distinct) {
      most_distinct = distinct.size();
      out.window = static_cast<int>(i);
    }
  }
  out.by_window.resize(out.groups.size());
  std::iota(out.by_window.begin(), out.by_window.end(), 0);
  if (!parts.empty()) {
    std::stable_sort(out.by_window.begin(), out.by_window.end(),
                     [&](int x, int y) {
                       return out.groups[x].first[out.window] <
                              out.groups[y].first[out.window];
                     });
  }
  return groups_cache.emplace(std::move(key), std::move(out)).first->second;
}

const Vec* ConflictAnalysis::Impl::BoundedValues(const Value* value) const {
  const Vec* values = threads.PerThreadValues(value);
  if (values == nullptr) return nullptr;
  for (int64_t v : *values) {
    if (Overflows(v)) return nullptr;
  }
  return values;
}

std::optional<int64_t> ConflictAnalysis::Impl::Constant(
    const Value* value) const {
  if (value == nullptr) return std::nullopt;
  if (value->kind() == Value::Kind::kResult &&
      value->defining_op()->kind() == OpKind::kConst) {
    const Op& constant = *value->defining_op();
    const Attribute* attr = constant.has_value() ? &constant.value() : nullptr;
    // A constant past kLimit is left unknown: the analysis's arithmetic
    // assumes its operands within it.
    if (attr != nullptr && attr->is_integral && value->type().is_scalar() &&
        IsInteger(value->type().dtype()) && !Overflows(attr->int_value)) {
      return attr->int_value;
    }
    return std::nullopt;
  }
  const Vec* values = BoundedValues(value);
  if (values == nullptr || values->empty()) return std::nullopt;
  for (int64_t v : *values) {
    if (v != values->front()) return std::nullopt;
  }
  return values->front();
}

const Affine& ConflictAnalysis::Impl::Decompose(const Value* value,
                                                int depth) const {
  auto it = affine_cache.find(value);
  if (it != affine_cache.end()) return it->second;
  Affine affine = DecomposeUncached(value, depth);
  return affine_cache.emplace(value, std::move(affine)).first->second;
}

Affine ConflictAnalysis::Impl::DecomposeUncached(const Value* value,
                                                 int depth) const {
  Affine out;
  if (value == nullptr) {
    out.varying = true;
    return out;
  }
  if (std::optional<int64_t> constant = Constant(value)) {
    out.constant = *constant;
    return out;
  }
  if (const Vec* part = BoundedValues(value)) {
    // Not owned: the thread analysis outlives this one.
    out.part = std::shared_ptr<const Vec>(std::shared_ptr<const Vec>(), part);
    return out;
  }
  const bool integer = value->type().is_scalar() &&
                       IsInteger(value->type().dtype()) &&
                       !value->type().is_scalar(DType::kI1);
  if (integer && depth < kMaxDepth && value->kind() == Value::Kind::kResult) {
    const Op& op = *value->defining_op();
    const OpKind kind = op.kind();
    if ((kind == OpKind::kAdd || kind == OpKind::kSub) &&
        op.num_operands() == 2) {
      const Affine& lhs = Decompose(op.operand_value(0), depth + 1);
      const Affine& rhs = Decompose(op.operand_value(1), depth + 1);
      const bool add = kind == OpKind::kAdd;
      // lhs + rhs or lhs - rhs, checked (never a negated operand, which
      // overflows for the minimum).
      auto combine = [add](int64_t a, int64_t b) {
        return add ? Add(a, b) : Subtract(a, b);
      };
      bool ok = true;
      out.part = Combine(lhs.part, rhs.part, add ? 1 : -1, &ok);
      out.atoms = lhs.atoms;
      for (const auto& [atom, coefficient] : rhs.atoms) {
        std::optional<int64_t> sum = combine(out.atoms[atom], coefficient);
        if (!sum) ok = false;
        out.atoms[atom] = sum.value_or(0);
        if (out.atoms[atom] == 0) out.atoms.erase(atom);
      }
      std::optional<int64_t> constant = combine(lhs.constant, rhs.constant);
      out.constant = constant.value_or(0);
      out.varying = lhs.varying || rhs.varying;
      if (ok && constant) return out;
      out = Affine();
    } else if (kind == OpKind::kMul && op.num_operands() == 2) {
      std::optional<int64_t> factor = Constant(op.operand_value(1));
      const Value* other = op.operand_value(0);
      if (!factor) {
        factor = Constant(op.operand_value(0));
        other = op.operand_value(1);
      }
      if (factor) {
        const Affine& inner = Decompose(other, depth + 1);
        bool ok = true;
        out.part = Scale(inner.part, *factor, &ok);
        for (const auto& [atom, coefficient] : inner.atoms) {
          std::optional<int64_t> scaled = Multiply(coefficient, *factor);
          if (!scaled) ok = false;
          if (*factor != 0 && scaled) out.atoms[atom] = *scaled;
        }
        std::optional<int64_t> constant = Multiply(inner.constant, *factor);
        out.constant = constant.value_or(0);
        out.varying = inner.varying;
        if (ok && constant) return out;
        out = Affine();
      }
    } else if ((kind == OpKind::kDiv || kind == OpKind::kRem) &&
               op.num_operands() == 2) {
      // x = m * Q + R, Q the atoms (each coefficient a multiple of m) and R
      // the per-thread part and the constant. For x >= 0 the truncating
      // division is floor division, so x div m = Q + floor(R / m) and
      // x rem m = R mod m: a flattened cooperative index (r * 128 + tid)
      // splits into its row and column exactly.
      std::optional<int64_t> divisor = Constant(op.operand_value(1));
      const Affine& inner = Decompose(op.operand_value(0), depth + 1);
      bool exact = divisor && *divisor > 0 && !inner.varying &&
                   (inner.part != nullptr || !inner.atoms.empty());
      for (const auto& [atom, coefficient] : inner.atoms) {
        exact = exact && coefficient % *divisor == 0;
      }
      if (exact) {
        std::optional<Interval> range =
            Range(op.operand_value(0), nullptr, depth + 1);
        exact = range && range->lo >= 0;
      }
      if (exact) {
        const int64_t m = *divisor;
        const bool div = kind == OpKind::kDiv;
        if (div) {
          for (const auto& [atom, coefficient] : inner.atoms) {
            out.atoms[atom] = coefficient / m;
          }
        }
        bool ok = true;
        if (inner.part != nullptr) {
          Vec values(inner.part->size());
          for (size_t t = 0; t < values.size() && ok; ++t) {
            const std::optional<int64_t> r =
                Add((*inner.part)[t], inner.constant);
            ok = r.has_value();
            if (ok) values[t] = div ? FloorDiv(*r, m) : FloorMod(*r, m);
          }
          out.part = std::make_shared<const Vec>(std::move(values));
        } else {
          out.constant =
              div ? FloorDiv(inner.constant, m) : FloorMod(inner.constant, m);
        }
        if (ok) return out;
        out = Affine();
      }
    }
  }
  // A value the same for every thread that computes it (in the role, when
  // it is defined inside one) is one unknown; both sides of a pair that use
  // it see the same value in the same iteration.
  if (threads.UniformScope(value) >= Scope::kRole) {
    out.atoms[value] = 1;
  } else {
    out.varying = true;
  }
  return out;
}

std::optional<Interval> ConflictAnalysis::Impl::PartRange(
    const Vec* part, const ThreadBits* among) const {
  if (part == nullptr) return Interval{0, 0};
  std::optional<Interval> out;
  for (size_t t = 0; t < part->size(); ++t) {
    if (among != nullptr && (t >= 1024 || !(*among)[t])) continue;
    const int64_t v = (*part)[t];
    if (!out) {
      out = Interval{v, v};
    } else {
      out->lo = std::min(out->lo, v);
      out->hi = std::max(out->hi, v);
    }
  }
  // No thread of `among`: the bounds over all threads still hold.
  if (!out && among != nullptr) return PartRange(part, nullptr);
  return out;
}

std::optional<Interval> ConflictAnalysis::Impl::Range(const Value* value,
                                                      const ThreadBits* among,
                                                      int depth) const {
  if (value == nullptr || depth > kMaxDepth) return std::nullopt;
  if (std::optional<int64_t> constant = Constant(value)) {
    return Interval{*constant, *constant};
  }
  if (const Vec* part = BoundedValues(value)) {
    return PartRange(part, among);
  }
  if (const Op* loop = InductionLoop(value)) {
    if (loop->num_operands() < 3) return std::nullopt;
    std::optional<Interval> lower =
        Range(loop->operand_value(0), among, depth + 1);
    std::optional<Interval> upper =
        Range(loop->operand_value(1), among, depth + 1);
    std::optional<Interval> step =
        Range(loop->operand_value(2), among, depth + 1);
    if (!lower || !upper || !step || step->lo <= 0) return std::nullopt;
    // The body never runs when no value is below the upper bound.
    return Interval{lower->lo, std::max(lower->lo, upper->hi - 1)};
  }
  if (value->kind() != Value::Kind::kResult) return std::nullopt;
  const Op& op = *value->defining_op();
  if (op.num_operands() != 2 ||
      !(value->type().is_scalar() && IsInteger(value->type().dtype()))) {
    return std::nullopt;
  }
  std::optional<Interval> a = Range(op.operand_value(0), among, depth + 1);
  std::optional<Interval> b = Range(op.operand_value(1), among, depth + 1);
  if (!a || !b) {
    // rem by a positive constant is bounded whatever the dividend.
    if (op.kind() == OpKind::kRem && b && b->lo > 0) {
      return Interval{-(b->hi - 1), b->hi - 1};
    }
    return std::nullopt;
  }
  std::optional<int64_t> lo, hi;
  switch (op.kind()) {
    case OpKind::kAdd:
      lo = Add(a->lo, b->lo);
      hi = Add(a->hi, b->hi);
      break;
    case OpKind::kSub:
      lo = Subtract(a->lo, b->hi);
      hi = Subtract(a->hi, b->lo);
      break;
    case OpKind::kMul: {
      const std::optional<int64_t> products[] = {
          Multiply(a->lo, b->lo), Multiply(a->lo, b->hi),
          Multiply(a->hi, b->lo), Multiply(a->hi, b->hi)};
      for (const std::optional<int64_t>& p : products) {
        if (!p) return std::nullopt;
        lo = lo ? std::min(*lo, *p) : *p;
        hi = hi ? std::max(*hi, *p) : *p;
      }
      break;
    }
    case OpKind::kMin:
      lo = std::min(a->lo, b->lo);
      hi = std::min(a->hi, b->hi);
      break;
    case OpKind::kMax:
      lo = std::max(a->lo, b->lo);
      hi = std::max(a->hi, b->hi);
      break;
    case OpKind::kDiv:
      if (a->lo < 0 || b->lo <= 0) return std::nullopt;
      lo = a->lo / b->hi;
      hi = a->hi / b->lo;
      break;
    case OpKind::kRem:
      if (b->lo <= 0) return std::nullopt;
      if (a->lo >= 0) {
        lo = 0;
        hi = std::min(a->hi, b->hi - 1);
      } else {
        lo = -(b->hi - 1);
        hi = b->hi - 1;
      }
      break;
    default:
      return std::nullopt;
  }
  if (!lo || !hi || Overflows(*lo) || Overflows(*hi)) return std::nullopt;
  return Interval{*lo, *hi};
}

std::optional<int64_t> ConflictAnalysis::Impl::TripCount(const Op& loop) const {
  if (loop.num_operands() < 3) return std::nullopt;
  std::optional<int64_t> lower = Constant(loop.operand_value(0));
  std::optional<int64_t> upper = Constant(loop.operand_value(1));
  std::optional<int64_t> step = Constant(loop.operand_value(2));
  if (!lower || !upper || !step) return std::nullopt;
  return kir::TripCount(*lower, *upper, *step);
}

int ConflictAnalysis::Impl::ElectedWarp(const Op& op) const {
  if (op.serial() >= static_cast<int>(elected_warps.size())) {
    elected_warps.resize(std::max(kernel.op_serial_bound(), op.serial() + 1),
                         kUnknownWarp);
  }
  int8_t& known = elected_warps[op.serial()];
  if (known != kUnknownWarp) return known;
  known = -1;
  if (!threads.IsSingleThread(op)) return -1;
  const ThreadSet& set = threads.ExecutingThreads(op);
  if (!set.known() || set.Count() <= 1) return -1;
  std::vector<int> warps = set.Warps();
  static_assert(ThreadBits().size() / 32 <= 127, "a warp fits an int8_t");
  known = static_cast<int8_t>(warps.size() == 1 ? warps[0] : -1);
  return known;
}

std::optional<RemainderForm> ConflictAnalysis::Impl::FormOf(
    const Value* atom, const Op* stepping) const {
  const Op* rem = BinaryOf(atom, OpKind::kRem);
  if (rem == nullptr) return std::nullopt;
  std::optional<int64_t> modulus = Constant(rem->operand_value(1));
  if (!modulus || *modulus <= 0) return std::nullopt;
  const Affine& dividend = Decompose(rem->operand_value(0));
  if (dividend.varying || dividend.part != nullptr) return std::nullopt;
  std::optional<Interval> range = Range(rem->operand_value(0));
  if (!range || range->lo < 0) return std::nullopt;
  RemainderForm form;
  form.modulus = *modulus;
  form.offset = dividend.constant;
  const Value* iv =
      stepping != nullptr ? InductionVariable(*stepping) : nullptr;
  for (const auto& [value, coefficient] : dividend.atoms) {
    if (value == iv) {
      form.iv_coefficient = coefficient;
    } else if (stepping != nullptr && stepping->DefinesInside(*value)) {
      return std::nullopt;  // differs between the runs in an unknown way
    } else {
      form.invariant[value] = coefficient;
    }
  }
  return form;
}

// Pairs remainders of one form with equal coefficients on the two sides
// (`(i + 2) % 3` against `i % 3`, or `i % 3` in two iterations): each pair
// becomes a term of the difference and leaves the atom lists.
void ConflictAnalysis::Impl::PairRemainders(AtomTerms& atoms_a,
                                            AtomTerms& atoms_b,
                                            const Op* stepping,
                                            std::optional<int64_t> step,
                                            DimensionDifference& dim) const {
  for (auto a = atoms_a.begin(); a != atoms_a.end();) {
    std::optional<RemainderForm> form_a = FormOf(a->first, stepping);
    bool paired = false;
    for (auto b = atoms_b.begin(); form_a && b != atoms_b.end(); ++b) {
      if (b->second != a->second) continue;
      std::optional<RemainderForm> form_b = FormOf(b->first, stepping);
      if (!form_b || !form_a->SameForm(*form_b)) continue;
      std::optional<int64_t> per_step = int64_t{0};
      if (form_a->iv_coefficient != 0) {
        per_step =
            step ? Multiply(form_a->iv_coefficient, *step) : std::nullopt;
      }
      std::optional<int64_t> offset = Subtract(form_b->offset, form_a->offset);
      if (!per_step || !offset) continue;
      dim.mods.push_back({a->second, *per_step, *offset, form_a->modulus});
      atoms_b.erase(b);
      paired = true;
      break;
    }
    a = paired ? atoms_a.erase(a) : std::next(a);
  }
}

// Whether values equal in two runs of `stepping`'s body make the runs the
// same iteration: the induction variable itself, a value that is it plus
// or minus a value the same in both runs, times a nonzero constant, or
// both the quotient and the remainder of it by one divisor.
bool ConflictAnalysis::Impl::ForcesSameIteration(std::set<const Value*> equal,
                                                 const Op& stepping) const {
  const Value* iv = InductionVariable(stepping);
  auto invariant = [&](const Value* v) {
    return v != nullptr && !stepping.DefinesInside(*v);
  };
  for (bool grew = true; grew;) {
    grew = false;
    if (equal.count(iv)) return true;
    std::vector<const Value*> found;
    for (const Value* value : equal) {
      if (const Op* op = BinaryOf(value, OpKind::kAdd)) {
        if (invariant(op->operand_value(1)))
          found.push_back(op->operand_value(0));
        if (invariant(op->operand_value(0)))
          found.push_back(op->operand_value(1));
      } else if (const Op* op = BinaryOf(value, OpKind::kSub)) {
        if (invariant(op->operand_value(1)))
          found.push_back(op->operand_value(0));
        if (invariant(op->operand_value(0)))
          found.push_back(op->operand_value(1));
      } else if (const Op* op = BinaryOf(value, OpKind::kMul)) {
        std::optional<int64_t> rhs = Constant(op->operand_value(1));
        std::optional<int64_t> lhs = Constant(op->operand_value(0));
        if (rhs && *rhs != 0) found.push_back(op->operand_value(0));
        if (lhs && *lhs != 0) found.push_back(op->operand_value(1));
      } else if (const Op* div = BinaryOf(value, OpKind::kDiv)) {
        // y = (y div m) * m + y rem m for any nonzero m.
        for (const Value* other : equal) {
          const Op* rem = BinaryOf(other, OpKind::kRem);
          if (rem == nullptr ||
              rem->operand_value(0) != div->operand_value(0)) {
            continue;
          }
          const Value* m_div = div->operand_value(1);
          const Value* m_rem = rem->operand_value(1);
          std::optional<int64_t> c_div = Constant(m_div);
          std::optional<int64_t> c_rem = Constant(m_rem);
          if (m_div == m_rem || (c_div && c_rem && *c_div == *c_rem)) {
            found.push_back(div->operand_value(0));
          }
        }
      }
    }
    for (const Value* value : found) {
      if (value != nullptr && stepping.DefinesInside(*value) &&
          equal.insert(value).second) {
        grew = true;
      }
    }
  }
  return false;
}

std::optional<std::set<const Value*>> ConflictAnalysis::Impl::ForcedEqual(
    absl::Span<const DimensionDifference> dims, const ThreadBits& ta,
    const ThreadBits& tb) const {
  std::set<const Value*> equal;
  for (const DimensionDifference& dim : dims) {
    if (!dim.rest_known || dim.candidates.empty() || dim.per_step != 0) {
      continue;
    }
    // The candidate with the largest coefficient; the others add their
    // ranges to the rest of the difference, [lo, hi].
    const Candidate* pick = &dim.candidates.front();
    for (const Candidate& c : dim.candidates) {
      if (std::abs(c.coefficient) > std::abs(pick->coefficient)) pick = &c;
    }
    std::optional<int64_t> lo = Add(dim.base, dim.rest_lo);
    std::optional<int64_t> hi = Add(dim.base, dim.rest_hi);
    auto widen = [&](std::optional<int64_t> spread) {
      if (!spread || !lo || !hi) {
        lo.reset();
        return;
      }
      lo = Subtract(*lo, *spread);
      hi = Add(*hi, *spread);
    };
    for (const Candidate& c : dim.candidates) {
      if (&c == pick) continue;
      std::optional<int64_t> low =
          c.range ? Multiply(c.coefficient, c.range->lo) : std::nullopt;
      std::optional<int64_t> high =
          c.range ? Multiply(c.coefficient, c.range->hi) : std::nullopt;
      widen(low && high ? std::optional<int64_t>(std::max(*low, *high) -
                                                 std::min(*low, *high))
                        : std::nullopt);
    }
    for (const DimensionDifference::ModTerm& mod : dim.mods) {
      widen(Multiply(std::abs(mod.coefficient), mod.modulus - 1));
    }
    std::optional<Interval> part_a = PartRange(dim.part_a, &ta);
    std::optional<Interval> part_b = PartRange(dim.part_b, &tb);
    if (!part_a || !part_b || !lo || !hi) continue;
    lo = Add(*lo, part_b->lo - part_a->hi);
    hi = Add(*hi, part_b->hi - part_a->lo);
    if (!lo || !hi) continue;
    // Overlap in this dimension needs coefficient * (X_b - X_a) + rest in
    // (-extent_b, extent_a); when 0 is the only multiple of the
    // coefficient that can do it, X is the same in both runs.
    const int64_t c = std::abs(pick->coefficient);
    const int64_t need_lo = -(dim.extent_b - 1) - *hi;
    const int64_t need_hi = (dim.extent_a - 1) - *lo;
    const int64_t first = -FloorDiv(-need_lo, c);  // ceil(need_lo / c)
    const int64_t last = FloorDiv(need_hi, c);
    if (first > last) return std::nullopt;  // this dimension never overlaps
    if (first == 0 && last == 0) equal.insert(pick->atom);
  }
  return equal;
}

bool ConflictAnalysis::Impl::MayOverlap(const Op& a, const MemoryEffect& ea,
                                        const ThreadBits& ta, const Op& b,
                                        const MemoryEffect& eb,
                                        const ThreadBits& tb,
                                        absl::Span<const CarriedLoop> carried,
                                        ThreadPairs pairs) const {
  if (ta.none() || tb.none()) return false;
  if (pairs == ThreadPairs::kSame && (ta & tb).none()) return false;
  const bool distinct = pairs == ThreadPairs::kDistinct;
  // The elected lane of one warp is the same thread each time.
  const int warp_a = ElectedWarp(a);
  if (distinct && warp_a >= 0 && warp_a == ElectedWarp(b)) return false;
  auto any_pair = [&] {
    return pairs == ThreadPairs::kDistinct
               ? !(ta.count() == 1 && tb.count() == 1 && ta == tb)
               : true;
  };
  auto unknown = [&] {
    ++counters.unknown;
    return any_pair();
  };

  if (ea.buffer != eb.buffer) {
    // Distinct tensor parameters and workspaces never alias.
    if (IsGlobalBuffer(ea.buffer) && IsGlobalBuffer(eb.buffer)) {
      ++counters.different_buffers;
      return false;
    }
    if (!IsSharedAllocation(ea.buffer) || !IsSharedAllocation(eb.buffer)) {
      return unknown();
    }
    ++counters.different_buffers;
    const Op& alloc_a = *ea.buffer->defining_op();
    const Op& alloc_b = *eb.buffer->defining_op();
    const std::optional<int64_t> offset_a = alloc_a.offset();
    const std::optional<int64_t> offset_b = alloc_b.offset();
    if (!offset_a || !offset_b) return false;
    std::optional<int64_t> count_a = ea.buffer->type().StaticElementCount();
    std::optional<int64_t> count_b = eb.buffer->type().StaticElementCount();
    if (!count_a || !count_b) return any_pair();
    // `pad` widens the innermost dimension of every row.
    auto bytes = [](const Value* buffer, const Op& alloc, int64_t count) {
      const Type& type = buffer->type();
      const int64_t pad = alloc.pad();
      int64_t elements = count;
      if (pad > 0 && type.rank() > 0) {
        std::optional<int64_t> inner = type.shape().back().AsConstant();
        if (inner && *inner > 0) elements = count / *inner * (*inner + pad);
      }
      return elements * DTypeBytes(type.dtype());
    };
    const int64_t begin_a = *offset_a;
    const int64_t end_a = begin_a + bytes(ea.buffer, alloc_a, *count_a);
    const int64_t begin_b = *offset_b;
    const int64_t end_b = begin_b + bytes(eb.buffer, alloc_b, *count_b);
    if (end_a <= begin_b || end_b <= begin_a) return false;
    return any_pair();
  }

  // The same buffer: compare the boxes dimension by dimension, which the
  // language's bounds rule makes exact (an index lies inside its
  // dimension, so boxes overlap only where every dimension overlaps).
  const Type& type = ea.buffer->type();
  const int rank = type.is_buffer() ? type.rank() : 0;
  if (ea.whole_buffer || eb.whole_buffer || rank == 0 ||
      static_cast<int>(ea.origin.size()) != rank ||
      static_cast<int>(eb.origin.size()) != rank ||
      static_cast<int>(ea.extent.size()) != rank ||
      static_cast<int>(eb.extent.size()) != rank) {
    return unknown();
  }

  // The loop whose induction variable relates the two sides: the outermost
  // carried one (inner carried loops ran in another execution, so their
  // values are unrelated).
  const Op* stepping = nullptr;
  int64_t min_distance = 0;
  for (const CarriedLoop& loop : carried) {
    bool outermost = true;
    for (const CarriedLoop& other : carried) {
      if (other.loop != loop.loop && loop.loop->IsInside(*other.loop)) {
        outermost = false;
      }
    }
    if (outermost) {
      stepping = loop.loop;
      min_distance = loop.distance;
    }
  }
  std::optional<int64_t> step;
  if (stepping != nullptr && stepping->num_operands() >= 3) {
    step = Constant(stepping->operand_value(2));
  }

  // The dimensions' differences, with the values in `same` known to be
  // equal in both runs.
  auto describe = [&](const std::set<const Value*>& same) {
    auto renamed = [&](const Value* atom) {
      return stepping != nullptr && stepping->DefinesInside(*atom) &&
             !same.count(atom);
    };
    Dimensions dims(rank);
    for (int d = 0; d < rank; ++d) {
      DimensionDifference& dim = dims[d];
      dim.extent_a = std::max<int64_t>(1, ea.extent[d]);
      dim.extent_b = std::max<int64_t>(1, eb.extent[d]);
      const Affine& fa = Decompose(ea.origin[d]);
      const Affine& fb = Decompose(eb.origin[d]);
      dim.part_a = fa.part.get();
      dim.part_b = fb.part.get();
      std::optional<int64_t> base = Subtract(fb.constant, fa.constant);
      dim.base = base.value_or(0);
      dim.known = !fa.varying && !fb.varying && base.has_value();
      if (!dim.known) continue;
      AtomTerms atoms_a(fa.atoms.begin(), fa.atoms.end());
      AtomTerms atoms_b(fb.atoms.begin(), fb.atoms.end());
      PairRemainders(atoms_a, atoms_b, stepping, step, dim);
      // Both sides' atoms, in address order (the maps' order).
      absl::InlinedVector<const Value*, 8> atoms;
      for (const auto& entry : atoms_a) atoms.push_back(entry.first);
      for (const auto& entry : atoms_b) atoms.push_back(entry.first);
      std::sort(atoms.begin(), atoms.end());
      atoms.erase(std::unique(atoms.begin(), atoms.end()), atoms.end());
      // A term that does not cancel adds its range: coefficient * value for
      // one shared value, or the two sides' values independently.
      auto add_residual = [&](const Value* atom, int64_t coefficient_b,
                              int64_t coefficient_a, bool shared) {
        std::optional<Interval> range = Range(atom);
        if (!range) {
          dim.known = false;
          return;
        }
        auto scaled = [&](int64_t c) -> std::optional<Interval> {
          std::optional<int64_t> lo = Multiply(c, range->lo);
          std::optional<int64_t> hi = Multiply(c, range->hi);
          if (!lo || !hi) return std::nullopt;
          return c >= 0 ? Interval{*lo, *hi} : Interval{*hi, *lo};
        };
        std::optional<Interval> add;
        if (shared) {
          add = scaled(coefficient_b - coefficient_a);
        } else {
          std::optional<Interval> sb = scaled(coefficient_b);
          std::optional<Interval> sa = scaled(coefficient_a);
          if (sb && sa) add = Interval{sb->lo - sa->hi, sb->hi - sa->lo};
        }
        std::optional<int64_t> lo =
            add ? Add(dim.residual_lo, add->lo) : std::nullopt;
        std::optional<int64_t> hi =
            add ? Add(dim.residual_hi, add->hi) : std::nullopt;
        if (!lo || !hi) {
          dim.known = false;
          return;
        }
        dim.residual_lo = *lo;
        dim.residual_hi = *hi;
      };
      std::vector<Candidate> candidates;
      for (const Value* atom : atoms) {
        auto find = [](const AtomTerms& f, const Value* v) -> int64_t {
          auto it = std::lower_bound(
              f.begin(), f.end(), v,
              [](const auto& term, const Value* x) { return term.first < x; });
          return it == f.end() || it->first != v ? 0 : it->second;
        };
        const int64_t ca = find(atoms_a, atom);
        const int64_t cb = find(atoms_b, atom);
        if (!renamed(atom)) {
          if (ca != cb) add_residual(atom, cb, ca, /*shared=*/true);
          continue;
        }
        // Defined inside the stepping loop: the induction variable is
        // followed across iterations; other values of the iteration are
        // candidates for the injectivity argument, and their ranges bound
        // them otherwise.
        if (ca != cb) {
          add_residual(atom, cb, ca, /*shared=*/false);
          continue;
        }
        if (InductionLoop(atom) == stepping) {
          if (!step || *step <= 0) {
            add_residual(atom, cb, ca, /*shared=*/false);
            continue;
          }
          // iv_a = iv_b - k * step.
          std::optional<int64_t> per_step = Multiply(ca, *step);
          if (per_step) per_step = Add(dim.per_step, *per_step);
          if (!per_step) {
            dim.known = false;
            continue;
          }
          dim.per_step = *per_step;
          continue;
        }
        candidates.push_back(Candidate{atom, ca, Range(atom)});
      }
      dim.candidates = std::move(candidates);
      dim.rest_known = dim.known;
      dim.rest_lo = dim.residual_lo;
      dim.rest_hi = dim.residual_hi;
      for (const Candidate& c : dim.candidates) {
        add_residual(c.atom, c.coefficient, c.coefficient, /*shared=*/false);
      }
    }
    return dims;
  };
  Dimensions dims = describe({});
  if (stepping != nullptr) {
    // Values of the iteration that an overlap forces to be equal in both
    // runs: the runs are then one iteration (no overlap), or the rest is
    // compared with those values equal.
    std::optional<std::set<const Value*>> equal = ForcedEqual(dims, ta, tb);
    if (!equal) return false;
    if (!equal->empty()) {
      if (ForcesSameIteration(*equal, *stepping)) return false;
      dims = describe(*equal);
    }
  }

  // Which iteration distances to try.
  bool k_dependent = false;
  int64_t period = 1;
  bool unbounded_linear = false;
  for (const DimensionDifference& dim : dims) {
    if (!dim.known) continue;
    if (dim.per_step != 0) k_dependent = true;
    for (const auto& mod : dim.mods) {
      if (mod.step == 0) continue;
      k_dependent = true;
      period = std::lcm(period, mod.modulus);
      if (period > kMaxDistances) period = kMaxDistances + 1;
    }
  }
  absl::InlinedVector<int64_t, 4> distances = {0};
  if (stepping != nullptr) {
    std::optional<int64_t> trips = TripCount(*stepping);
    const int64_t first = std::max<int64_t>(1, min_distance);
    if (trips && *trips - 1 < first) return false;  // no such pair of runs
    if (k_dependent && min_distance < CarriedLoop::kMaxDistance) {
      distances = {first};  // an exact distance
    } else if (k_dependent) {
      int64_t last = 0;
      if (trips && *trips - 1 - first < kMaxDistances) {
        last = *trips - 1;
      } else {
        unbounded_linear = true;
        last = first + std::min(period, kMaxDistances) - 1;
      }
      distances.clear();
      for (int64_t k = first; k <= last; ++k) distances.push_back(k);
    } else {
      distances = {first};
    }
  }
  if (unbounded_linear) {
    // Linear terms in k over an unknown range: those dimensions are unknown;
    // remainder terms are periodic, so one period of k covers them.
    for (DimensionDifference& dim : dims) {
      if (dim.per_step != 0) dim.known = false;
    }
    if (period > kMaxDistances) {
      for (DimensionDifference& dim : dims) {
        if (!dim.mods.empty()) dim.known = false;
      }
    }
  }

  absl::InlinedVector<int, 4> known;
  for (int d = 0; d < rank; ++d) {
    if (dims[d].known) known.push_back(d);
  }
  ++counters.per_dimension;
  auto key_of = [&](int t, bool side_a) {
    std::vector<int64_t> key;
    for (int d : known) {
      const Vec* part = side_a ? dims[d].part_a : dims[d].part_b;
      key.push_back(part && t < static_cast<int>(part->size()) ? (*part)[t]
                                                               : 0);
    }
    return key;
  };
  // Threads grouped by their per-thread parts in the known dimensions.
  absl::InlinedVector<const Vec*, 4> parts_a, parts_b;
  for (int d : known) {
    parts_a.push_back(dims[d].part_a);
    parts_b.push_back(dims[d].part_b);
  }
  const ThreadGroups& groups_a = GroupsOf(parts_a, ta);
  const ThreadGroups& groups_b = GroupsOf(parts_b, tb);

  // Candidate offsets for each known dimension, per distance. A distance
  // whose offsets are unknown ends the comparison: unknown, unless an
  // earlier distance overlaps.
  // Per distance, per known dimension.
  using DistanceOffsets = absl::InlinedVector<Offsets, 4>;
  absl::InlinedVector<DistanceOffsets, 2> offsets_by_distance;
  bool unknown_offsets = false;
  for (int64_t k : distances) {
    DistanceOffsets offsets;
    for (int d : known) {
      Offsets o = OffsetsAt(dims[d], k);
      if (o.empty()) {
        unknown_offsets = true;
        break;
      }
      offsets.push_back(std::move(o));
    }
    if (unknown_offsets) break;
    offsets_by_distance.push_back(std::move(offsets));
  }
  auto overlaps = [&](const DistanceOffsets& offsets,
                      const std::vector<int64_t>& key_a,
                      const std::vector<int64_t>& key_b) {
    for (size_t i = 0; i < known.size(); ++i) {
      const DimensionDifference& dim = dims[known[i]];
      const int64_t difference = key_b[i] - key_a[i];
      bool any = false;
      for (int64_t o : offsets[i]) {
        const int64_t lo = difference + o + dim.residual_lo;
        const int64_t hi = difference + o + dim.residual_hi;
        if (hi > -dim.extent_b && lo < dim.extent_a) {
          any = true;
          break;
        }
      }
      if (!any) return false;
    }
    return true;
  };
  auto check =
      [&](const DistanceOffsets& offsets, const std::vector<int64_t>& key_a,
          const ThreadGroup& group_a, const std::vector<int64_t>& key_b,
          const ThreadGroup& group_b) {
        if (distinct && group_a.count == 1 && group_b.count == 1 &&
            group_a.first == group_b.first) {
          return false;
        }
        return overlaps(offsets, key_a, key_b);
      };
  if (pairs == ThreadPairs::kSame) {
    for (const auto& offsets : offsets_by_distance) {
      for (int t = 0; t < num_threads; ++t) {
        if (ta[t] && tb[t] &&
            overlaps(offsets, key_of(t, true), key_of(t, false))) {
          return true;
        }
      }
    }
  } else if (known.empty()) {
    for (const auto& offsets : offsets_by_distance) {
      for (const auto& [key_a, group_a] : groups_a.groups) {
        for (const auto& [key_b, group_b] : groups_b.groups) {
          if (check(offsets, key_a, group_a, key_b, group_b)) return true;
        }
      }
    }
  } else {
    // The groups of `b` are ordered by the known dimension that tells
    // them apart best: for each group of `a`, only those whose part there
    // falls in the window that dimension allows can overlap (linear in the
    // groups, not quadratic, for one-element accesses by every thread,
    // whichever dimension the threads' parts are in). The window is looked
    // up once per offset in that dimension, for every distance with it
    // (the distances often differ in the other dimensions only).
    const int w = groups_b.window;
    const DimensionDifference& window_dim = dims[known[w]];
    // (offset, distance) pairs, sorted: the distances of one offset are a
    // run.
    absl::InlinedVector<std::pair<int64_t, int>, 8> distances_by_offset;
    for (size_t j = 0; j < offsets_by_distance.size(); ++j) {
      for (int64_t o : offsets_by_distance[j][w]) {
        distances_by_offset.emplace_back(o, static_cast<int>(j));
      }
    }
    std::sort(distances_by_offset.begin(), distances_by_offset.end());
    auto value_at = [&](int index) { return groups_b.groups[index].first[w]; };
    for (const auto& [key_a, group_a] : groups_a.groups) {
      for (auto run = distances_by_offset.begin(), run_end = run;
           run != distances_by_offset.end(); run = run_end) {
        const int64_t o = run->first;
        while (run_end != distances_by_offset.end() && run_end->first == o) {
          ++run_end;
        }
        // key_b - key_a + o + residual in (-extent_b, extent_a).
        const int64_t lo =
            key_a[w] - o - window_dim.residual_hi - window_dim.extent_b + 1;
        const int64_t hi =
            key_a[w] - o - window_dim.residual_lo + window_dim.extent_a - 1;
        auto it = std::lower_bound(
            groups_b.by_window.begin(), groups_b.by_window.end(), lo,
            [&](int index, int64_t value) { return value_at(index) < value; });
        for (; it != groups_b.by_window.end() && value_at(*it) <= hi; ++it) {
          const auto& [key_b, group_b] = groups_b.groups[*it];
          for (auto with_o = run; with_o != run_end; ++with_o) {
            if (check(offsets_by_distance[with_o->second], key_a, group_a,
                      key_b, group_b)) {
              return true;
            }
          }
        }
      }
    }
  }
  if (unknown_offsets) return unknown();
  return false;
}
// ---------------------------------------------------------------------------
// ConflictAnalysis.

ConflictAnalysis::ConflictAnalysis(const Kernel& kernel,
                                   const ThreadAnalysis& threads)
    : impl_(std::make_unique<Impl>(kernel, threads)) {}

ConflictAnalysis::ConflictAnalysis(const Kernel& kernel,
                                   AnalysisManager& analyses)
    : ConflictAnalysis(kernel, analyses.Get<ThreadAnalysis>()) {}

ConflictAnalysis::~ConflictAnalysis() = default;

std::string ConflictAnalysis::Difference(const ConflictAnalysis& fresh) const {
  if (num_threads() != fresh.num_threads()) return "the number of threads";
  // Only values of the kernel as it is now are looked up: the cache may
  // still hold values a pass erased.
  std::string difference;
  auto compare = [&](const Value* value) {
    if (!difference.empty()) return;
    auto it = impl_->affine_cache.find(value);
    if (it == impl_->affine_cache.end()) return;
    const Affine& cached = it->second;
    const Affine& rebuilt = fresh.impl_->Decompose(value);
    const bool same_part =
        (cached.part == nullptr) == (rebuilt.part == nullptr) &&
        (cached.part == nullptr || *cached.part == *rebuilt.part);
    if (!same_part || cached.atoms != rebuilt.atoms ||
        cached.constant != rebuilt.constant ||
        cached.varying != rebuilt.varying) {
      difference = absl::StrCat("the index form of %", value->name());
    }
  };
  for (const auto& size : impl_->kernel.sizes()) compare(size.get());
  for (const Param& param : impl_->kernel.params()) compare(param.value);
  Walk(impl_->kernel.body(), [&](const Op& op) {
    for (int i = 0; i < op.num_results(); ++i) compare(op.result(i));
    for (int r = 0; r < op.num_regions(); ++r) {
      for (int i = 0; i < op.region(r).num_arguments(); ++i) {
        compare(op.region(r).argument(i));
      }
    }
  });
  return difference;
}

int ConflictAnalysis::num_threads() const { return impl_->num_threads; }

ThreadBits ConflictAnalysis::Executing(const Op& op) const {
  const ThreadBits* bits = impl_->threads.ExecutingBits(op);
  return bits != nullptr ? *bits : impl_->universe;
}

bool ConflictAnalysis::MayOverlap(const Op& a, const MemoryEffect& ea,
                                  const ThreadBits& threads_a, const Op& b,
                                  const MemoryEffect& eb,
                                  const ThreadBits& threads_b,
                                  absl::Span<const CarriedLoop> carried,
                                  ThreadPairs pairs) const {
  return impl_->MayOverlap(a, ea, threads_a, b, eb, threads_b, carried, pairs);
}

const ConflictAnalysis::Counters& ConflictAnalysis::counters() const {
  return impl_->counters;
}

namespace {

bool OfMbarrier(const MemoryEffect& effect) {
  return effect.buffer != nullptr && effect.buffer->type().is_buffer() &&
         effect.buffer->type().dtype() == DType::kMbarrier;
}

// A ring of circular-buffer's, whose phases its own protocol orders.
bool OfRing(const MemoryEffect& effect) {
  const Value* buffer = effect.buffer;
  return buffer != nullptr && buffer->kind() == Value::Kind::kResult &&
         buffer->defining_op()->kind() == OpKind::kAllocShared &&
         buffer->defining_op()->ring();
}

}  // namespace

bool NeedsOrdering(const MemoryEffect& earlier, const MemoryEffect& later) {
  // A wait for an mbarrier's phase, then an arrival by another thread that
  // can complete the next phase: unless the waiter observed its phase
  // first, it may find the barrier two phases on, with its parity
  // incomplete again, and wait for the wrong phase (or forever). Waits and
  // arrivals of a circular-buffer ring are ordered by its own protocol.
  if (OfMbarrier(earlier) && OfMbarrier(later) &&
      earlier.order == MemoryOrder::kAcquire && !earlier.writes() &&
      later.order == MemoryOrder::kRelease && later.writes() &&
      later.completion == Completion::kImmediate && !OfRing(earlier)) {
    return true;
  }
  if (!earlier.writes() && !later.writes()) return false;
  // Atomic accesses (mbarrier arrivals and waits, atomics) are ordered
  // among themselves by the hardware.
  return earlier.order == MemoryOrder::kWeak ||
         later.order == MemoryOrder::kWeak;
}

}  // namespace kir
