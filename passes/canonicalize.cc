// Constant folding and integer simplification; see canonicalize.h for the
// rules and the integer semantics they follow.
#include "passes/canonicalize.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "analysis/verifier.h"
#include "ir/builder.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"
#include "passes/integer_folding.h"

namespace kir {
namespace {

// Counter names, all reported (as 0 when nothing happened) so that --stats
// output has a stable shape.
constexpr char kFolded[] = "folded";
constexpr char kIdentities[] = "identities";
constexpr char kReassociated[] = "reassociated";
constexpr char kConstantsDeduplicated[] = "constants-deduplicated";
constexpr char kDeadIfs[] = "dead-ifs";
constexpr char kDeadLoops[] = "dead-loops";
constexpr char kZeroInitSelects[] = "zero-init-selects";
constexpr char kOpsErased[] = "ops-erased";

// A rewrite never converges only through a bug; stop rather than hang.
constexpr int kMaxSweeps = 64;

// Identifies a constant by type and exact attribute bits, so that -0.0 and
// 0.0, or two NaN payloads, stay apart.
std::optional<std::string> ConstantKey(const Op& op) {
  const Attribute* attr = op.has_value() ? &op.value() : nullptr;
  if (op.num_results() != 1 || attr == nullptr ||
      attr->kind != AttrKind::kNumber) {
    return std::nullopt;
  }
  std::string type = op.result()->type().ToString();
  if (attr->is_integral) return absl::StrCat(type, "=i", attr->int_value);
  uint64_t bits = 0;
  std::memcpy(&bits, &attr->float_value, sizeof(bits));
  return absl::StrCat(type, "=f", bits);
}

std::string IntConstantKey(DType dtype, int64_t value) {
  return absl::StrCat(Type::Scalar(dtype).ToString(), "=i", value);
}

// A readable name for a new constant: %c5, %cneg1, %true, %false.
std::string ConstantName(DType dtype, int64_t value) {
  if (dtype == DType::kI1) return value != 0 ? "true" : "false";
  if (value < 0) {
    return absl::StrCat(
        "cneg", static_cast<uint64_t>(0) - static_cast<uint64_t>(value));
  }
  return absl::StrCat("c", value);
}

class Canonicalizer {
 public:
  Canonicalizer(Kernel& kernel, PassStatistics& stats)
      : kernel_(kernel), stats_(stats) {}

  // Returns whether anything changed, or the error of a fold that gives a
  // remote access a rank outside the cluster.
  absl::StatusOr<bool> Run() {
    bool changed_any = false;
    for (const char* counter :
         {kFolded, kIdentities, kReassociated, kConstantsDeduplicated, kDeadIfs,
          kDeadLoops, kZeroInitSelects, kOpsErased}) {
      stats_.Add(counter, 0);
    }
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      changed_ = false;
      uses_.clear();
      Walk(kernel_.body(), [&](Op& op) {
        op.ForEachUse([&](Value*& value) { ++uses_[value]; });
        if (sweep == 0) NoteRemoteRank(op);
      });
      kernel_.ForEachParamUse([&](Value*& value) { ++uses_[value]; });
      SweepRegion(kernel_.body());
      // A token may be used before its definition (`%t@1` in a loop), so
      // resolve every use once more after the sweep.
      Walk(kernel_.body(), [&](Op& op) { ResolveOperands(op); });
      kernel_.ForEachParamUse([&](Value*& value) { value = Resolve(value); });
      RemoveOpsMadeDead();
      changed_any = changed_any || changed_;
      if (!changed_) break;
    }
    if (absl::Status ranks = CheckFoldedRanks(); !ranks.ok()) return ranks;
    return changed_any;
  }

 private:
  Value* Resolve(Value* value) const {
    while (value != nullptr) {
      auto it = replacements_.find(value);
      if (it == replacements_.end()) break;
      value = it->second;
    }
    return value;
  }

  void ResolveOperands(Op& op) {
    op.ForEachUse([&](Value*& value) { value = Resolve(value); });
  }

  void NoteDroppedUse(Value* value) {
    if (value != nullptr && value->kind() == Value::Kind::kResult) {
      maybe_dead_.push_back(value->defining_op());
    }
  }

  // Detaches the op at `index` and everything nested in it; the op is kept
  // alive (not freed) until the pass ends so no address is reused while
  // stale uses may still name its results.
  void Erase(Region& region, int index) {
    std::unique_ptr<Op> op = region.Take(index);
    erased_.insert(op.get());
    op->ForEachUse([&](Value*& value) { NoteDroppedUse(value); });
    for (int r = 0; r < op->num_regions(); ++r) {
      Walk(op->region(r), [&](Op& nested) {
        erased_.insert(&nested);
        nested.ForEachUse([&](Value*& value) { NoteDroppedUse(value); });
      });
    }
    graveyard_.push_back(std::move(op));
    changed_ = true;
  }

  void Replace(Value* from, Value* to) {
    replacements_[from] = to;
    uses_[to] += uses_[from];
    changed_ = true;
  }

  Value* LookupConstant(const std::string& key) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto it = scope->find(key);
      if (it != scope->end()) return it->second;
    }
    return nullptr;
  }

  // An integer constant visible at `index` of `region`, created there if
  // none is in scope. Advances `index` past a created op.
  Value* GetConstant(Region& region, int& index, DType dtype, int64_t value,
                     const Location& loc) {
    const std::string key = IntConstantKey(dtype, value);
    if (Value* existing = LookupConstant(key)) return existing;
    OpBuilder builder(region, index);
    builder.set_loc(loc);
    Value* constant =
        builder.Constant(value, dtype, ConstantName(dtype, value));
    ++index;
    scopes_.back()[key] = constant;
    // Dropped again if the rewrite that wanted it leaves it unused.
    maybe_dead_.push_back(constant->defining_op());
    return constant;
  }

  // Whether a value defined inside `region` is used outside it (a token
  // used after its loop).
  bool HasUsesOutside(const Region& region) const {
    absl::flat_hash_set<const Value*> defined;
    for (int i = 0; i < region.num_arguments(); ++i) {
      defined.insert(region.argument(i));
    }
    Walk(region, [&](const Op& op) {
      for (int i = 0; i < op.num_results(); ++i) defined.insert(op.result(i));
      for (int r = 0; r < op.num_regions(); ++r) {
        for (int a = 0; a < op.region(r).num_arguments(); ++a) {
          defined.insert(op.region(r).argument(a));
        }
      }
    });
    if (defined.empty()) return false;
    bool escapes = false;
    CheckUsesOutside(kernel_.body(), region, defined, escapes);
    return escapes;
  }

  static void CheckUsesOutside(const Region& current, const Region& excluded,
                               const absl::flat_hash_set<const Value*>& defined,
                               bool& escapes) {
    if (&current == &excluded) return;
    for (const auto& op : current.ops()) {
      op->ForEachUse([&](const Value* value) {
        if (defined.contains(value)) escapes = true;
      });
      for (int r = 0; r < op->num_regions(); ++r) {
        CheckUsesOutside(op->region(r), excluded, defined, escapes);
      }
    }
  }

  void SweepRegion(Region& region) {
    scopes_.emplace_back();
    int index = 0;
    while (index < region.size()) index = Visit(region, index);
    scopes_.pop_back();
  }

  // Rewrites the op at `index`; returns the index of the next op to visit.
  int Visit(Region& region, int index) {
    Op& op = region.op(index);
    ResolveOperands(op);
    switch (op.kind()) {
      case OpKind::kConst:
        return VisitConstant(region, index);
      case OpKind::kIf:
        return VisitIf(region, index);
      case OpKind::kFor:
        return VisitFor(region, index);
      default:
        break;
    }
    if (std::optional<Simplification> replacement = Simplify(op)) {
      Value* value = replacement->value;
      int op_index = index;
      if (replacement->constant) {
        value = GetConstant(region, op_index, op.result()->type().dtype(),
                            *replacement->constant, op.loc());
      }
      Replace(op.result(), value);
      Erase(region, op_index);
      stats_.Add(replacement->kind == Simplification::kFolded ? kFolded
                                                              : kIdentities);
      return op_index;
    }
    auto has_one_use = [&](const Value* value) {
      auto it = uses_.find(value);
      return it != uses_.end() && it->second == 1;
    };
    if (auto reassociated = Reassociate(op, has_one_use)) {
      int op_index = index;
      Value* constant =
          GetConstant(region, op_index, op.result()->type().dtype(),
                      reassociated->constant, op.loc());
      NoteDroppedUse(op.operand_value(0));
      NoteDroppedUse(op.operand_value(1));
      --uses_[op.operand_value(0)];
      --uses_[op.operand_value(1)];
      ++uses_[reassociated->base];
      ++uses_[constant];
      op.mutable_operand(0) = Use(reassociated->base);
      op.mutable_operand(1) = Use(constant);
      stats_.Add(kReassociated);
      changed_ = true;
      return op_index + 1;
    }
    for (int r = 0; r < op.num_regions(); ++r) SweepRegion(op.region(r));
    return index + 1;
  }

  int VisitConstant(Region& region, int index) {
    Op& op = region.op(index);
    std::optional<std::string> key = ConstantKey(op);
    if (!key) return index + 1;
    if (Value* earlier = LookupConstant(*key)) {
      Replace(op.result(), earlier);
      Erase(region, index);
      stats_.Add(kConstantsDeduplicated);
      return index;
    }
    scopes_.back()[*key] = op.result();
    return index + 1;
  }

  int VisitIf(Region& region, int index) {
    Op& op = region.op(index);
    std::optional<int64_t> condition = op.num_operands() == 1
                                           ? IntConstant(op.operand_value(0))
                                           : std::nullopt;
    const int taken = condition && *condition != 0 ? 0 : 1;
    const int dropped = 1 - taken;
    // A `return` must stay last in its region: inline one only where the
    // `if` is last.
    const bool moves_return =
        op.num_regions() == 2 && !op.region(taken).empty() &&
        op.region(taken).op(op.region(taken).size() - 1).kind() ==
            OpKind::kReturn &&
        index != region.size() - 1;
    if (!condition && FuseZeroInitSelect(region, index)) return index;
    if (!condition || op.num_regions() != 2 || moves_return ||
        HasUsesOutside(op.region(dropped))) {
      for (int r = 0; r < op.num_regions(); ++r) SweepRegion(op.region(r));
      return index + 1;
    }
    // Move the taken region's ops in place of the `if`, then visit them as
    // ops of this region.
    Region& source = op.region(taken);
    int insert_at = index + 1;
    while (!source.empty()) region.Insert(insert_at++, source.Take(0));
    Erase(region, index);
    stats_.Add(kDeadIfs);
    return index;
  }

  // `if %c { wgmma ... {zero_init} } else { the same wgmma }`, the first
  // k-step of a mainloop, becomes one wgmma whose zero-init operand is %c
  // (`not %c` when the else side zeroes). Two wgmmas on either side of a
  // branch make ptxas re-fence the accumulator registers; one wgmma with a
  // run-time scale-d does not.
  bool FuseZeroInitSelect(Region& region, int index) {
    Op& op = region.op(index);
    if (op.num_regions() != 2 || op.region(0).size() != 1 ||
        op.region(1).size() != 1) {
      return false;
    }
    Op& then_op = op.region(0).op(0);
    Op& else_op = op.region(1).op(0);
    if (then_op.kind() != OpKind::kWgmma || else_op.kind() != OpKind::kWgmma ||
        then_op.num_operands() != 3 || else_op.num_operands() != 3 ||
        then_op.zero_init() == else_op.zero_init()) {
      return false;
    }
    for (absl::string_view name : {"n", "a_major", "b_major"}) {
      if (then_op.GetAttr(name) != else_op.GetAttr(name)) return false;
    }
    for (int i = 0; i < then_op.num_operands(); ++i) {
      const Operand& a = then_op.operand(i);
      const Operand& b = else_op.operand(i);
      if (a.value != b.value || a.indices != b.indices) return false;
    }
    const bool zero_when_true = then_op.zero_init();
    Value* zero = op.operand_value(0);
    int at = index;
    if (!zero_when_true) {
      OpBuilder b(region, at);
      b.set_loc(op.loc());
      b.set_provenance(op.provenance());
      zero = b.Create(OpKind::kNot, {Use(zero)}, {}, {zero->type()},
                      {absl::StrCat(zero->name(), "_zero")})
                 ->result();
      ++uses_[zero];
      ++at;
    }
    std::unique_ptr<Op> fused = op.region(zero_when_true ? 0 : 1).Take(0);
    fused->RemoveAttr("zero_init");
    fused->mutable_operands().push_back(Use(zero));
    ++uses_[zero];
    region.Insert(at + 1, std::move(fused));
    Erase(region, at);
    stats_.Add(kZeroInitSelects);
    return true;
  }

  int VisitFor(Region& region, int index) {
    Op& op = region.op(index);
    std::optional<int64_t> lower = op.num_operands() == 3
                                       ? IntConstant(op.operand_value(0))
                                       : std::nullopt;
    std::optional<int64_t> upper = op.num_operands() == 3
                                       ? IntConstant(op.operand_value(1))
                                       : std::nullopt;
    if (lower && upper && *lower >= *upper && op.num_regions() == 1 &&
        !HasUsesOutside(op.region(0))) {
      Erase(region, index);
      stats_.Add(kDeadLoops);
      return index;
    }
    for (int r = 0; r < op.num_regions(); ++r) SweepRegion(op.region(r));
    return index + 1;
  }

  static bool IsRemovable(const Op& op) {
    return op.num_regions() == 0 && op.num_results() > 0 &&
           op.kind() != OpKind::kPtx && !FactsOf(op.kind()).has_side_effects;
  }

  // Removes the ops that lost their last use to a rewrite above, and those
  // that become unused in turn.
  void RemoveOpsMadeDead() {
    if (maybe_dead_.empty()) return;
    absl::flat_hash_map<const Value*, int> uses;
    Walk(kernel_.body(),
         [&](Op& op) { op.ForEachUse([&](Value*& value) { ++uses[value]; }); });
    // A tensor map keeps the workspace it maps.
    kernel_.ForEachParamUse([&](Value*& value) { ++uses[value]; });
    std::vector<Op*> worklist;
    worklist.swap(maybe_dead_);
    while (!worklist.empty()) {
      Op* op = worklist.back();
      worklist.pop_back();
      if (op == nullptr || erased_.contains(op) || !IsRemovable(*op)) continue;
      bool used = false;
      for (int i = 0; i < op->num_results(); ++i) {
        auto it = uses.find(op->result(i));
        if (it != uses.end() && it->second > 0) used = true;
      }
      if (used) continue;
      op->ForEachUse([&](Value*& value) {
        --uses[value];
        if (value != nullptr && value->kind() == Value::Kind::kResult) {
          worklist.push_back(value->defining_op());
        }
      });
      Region* region = op->parent_region();
      Erase(*region, region->IndexOf(op));
      stats_.Add(kOpsErased);
    }
    // Erase() noted the uses it dropped; they are handled above.
    maybe_dead_.clear();
  }

  // A remote access whose CTA rank is not a constant yet: where the rank
  // comes from, by the access's serial.
  void NoteRemoteRank(const Op& op) {
    const int slot = RemoteRankSlot(op);
    if (slot < 0) return;
    const Value* rank = op.operand_value(slot);
    if (IntConstant(rank)) return;
    rank_sources_.emplace(op.serial(), rank->kind() == Value::Kind::kResult
                                           ? rank->defining_op()->loc()
                                           : op.loc());
  }

  // The verifier checks a constant rank against the cluster (V53): a rank
  // that folding made constant and that names no CTA of the cluster was
  // the input's error, which only now shows. It is reported here, at the
  // access, rather than as a kernel that no longer verifies.
  absl::Status CheckFoldedRanks() const {
    if (rank_sources_.empty()) return absl::OkStatus();
    const Op* outside = FindFirst(kernel_.body(), [&](const Op& op) {
      return rank_sources_.contains(op.serial()) &&
             RemoteRankOutsideCluster(kernel_, op).has_value();
    });
    if (outside == nullptr) return absl::OkStatus();
    const RankOutsideCluster rank =
        *RemoteRankOutsideCluster(kernel_, *outside);
    return (Error(outside->loc())
            << "canonicalize: the CTA rank of this " << outside->mnemonic()
            << " folds to " << rank.rank << ", which is not in its "
            << rank.ctas << "-CTA cluster (0.." << rank.ctas - 1 << ")")
        .Note(rank_sources_.at(outside->serial()), "the rank");
  }

  Kernel& kernel_;
  PassStatistics& stats_;
  bool changed_ = false;
  absl::flat_hash_map<int, Location> rank_sources_;
  // Constants visible at the current point, one map per enclosing region;
  // looked up only, never iterated.
  std::vector<std::map<std::string, Value*>> scopes_;
  absl::flat_hash_map<const Value*, Value*> replacements_;
  // Uses per value, counted before each sweep and kept roughly current; it
  // only decides whether reassociating pays off.
  absl::flat_hash_map<const Value*, int> uses_;
  std::vector<Op*> maybe_dead_;
  absl::flat_hash_set<const Op*> erased_;
  std::vector<std::unique_ptr<Op>> graveyard_;
};

}  // namespace

absl::Status Canonicalize(Kernel& kernel, const PassOptions& options,
                          PassContext& context) {
  absl::StatusOr<bool> changed = Canonicalizer(kernel, context.stats).Run();
  if (!changed.ok()) return changed.status();
  if (!*changed) context.PreserveAll();
  return absl::OkStatus();
}

}  // namespace kir
