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
#include "absl/strings/str_cat.h"
#include "ir/builder.h"
#include "ir/effects.h"

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
constexpr char kOpsErased[] = "ops-erased";

// A rewrite never converges only through a bug; stop rather than hang.
constexpr int kMaxSweeps = 64;

bool IsIntegerScalar(const Type& type) {
  return type.is_scalar() && IsInteger(type.dtype());
}

int BitWidth(DType dtype) {
  switch (dtype) {
    case DType::kI1:
      return 1;
    case DType::kI32:
      return 32;
    default:
      return 64;
  }
}

// `value` modulo 2^width, sign-extended to 64 bits; i1 is 0 or 1.
int64_t Wrap(uint64_t value, DType dtype) {
  switch (dtype) {
    case DType::kI1:
      return static_cast<int64_t>(value & 1);
    case DType::kI32:
      return static_cast<int64_t>(
          static_cast<int32_t>(static_cast<uint32_t>(value)));
    default:
      return static_cast<int64_t>(value);
  }
}

int64_t MinValue(DType dtype) {
  return dtype == DType::kI32 ? INT32_MIN : INT64_MIN;
}

// The value of an integer constant, wrapped to its type.
std::optional<int64_t> IntConstant(const Value* value) {
  if (value == nullptr || value->kind() != Value::Kind::kResult ||
      !IsIntegerScalar(value->type())) {
    return std::nullopt;
  }
  const Op* def = value->defining_op();
  if (def == nullptr || def->kind() != OpKind::kConst) return std::nullopt;
  const Attribute* attr = def->FindAttr("value");
  if (attr == nullptr || attr->kind != AttrKind::kNumber ||
      !attr->is_integral) {
    return std::nullopt;
  }
  return Wrap(static_cast<uint64_t>(attr->int_value), value->type().dtype());
}

std::optional<int64_t> FoldBinary(OpKind kind, DType dtype, int64_t a,
                                  int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a);
  const uint64_t ub = static_cast<uint64_t>(b);
  if (dtype == DType::kI1) {
    switch (kind) {
      case OpKind::kAnd: return a & b;
      case OpKind::kOr: return a | b;
      case OpKind::kXor: return a ^ b;
      default: return std::nullopt;
    }
  }
  const int width = BitWidth(dtype);
  switch (kind) {
    case OpKind::kAdd: return Wrap(ua + ub, dtype);
    case OpKind::kSub: return Wrap(ua - ub, dtype);
    case OpKind::kMul: return Wrap(ua * ub, dtype);
    case OpKind::kDiv:
    case OpKind::kRem:
      if (b == 0 || (a == MinValue(dtype) && b == -1)) return std::nullopt;
      // C++ division truncates toward zero, as PTX div.s32/rem.s32 do.
      return kind == OpKind::kDiv ? a / b : a % b;
    case OpKind::kMin: return std::min(a, b);
    case OpKind::kMax: return std::max(a, b);
    case OpKind::kAnd: return Wrap(ua & ub, dtype);
    case OpKind::kOr: return Wrap(ua | ub, dtype);
    case OpKind::kXor: return Wrap(ua ^ ub, dtype);
    case OpKind::kShl:
      if (b < 0 || b >= width) return std::nullopt;
      return Wrap(ua << b, dtype);
    case OpKind::kShr:
      if (b < 0 || b >= width || a < 0) return std::nullopt;
      return a >> b;
    default: return std::nullopt;
  }
}

std::optional<int64_t> FoldUnary(OpKind kind, DType dtype, int64_t a) {
  const uint64_t ua = static_cast<uint64_t>(a);
  if (dtype == DType::kI1) {
    if (kind == OpKind::kNot) return 1 - a;
    return std::nullopt;
  }
  switch (kind) {
    case OpKind::kNot: return Wrap(~ua, dtype);
    case OpKind::kNeg: return Wrap(0 - ua, dtype);
    case OpKind::kAbs: return a < 0 ? Wrap(0 - ua, dtype) : a;
    default: return std::nullopt;
  }
}

std::optional<bool> FoldCompare(absl::string_view pred, DType dtype,
                                int64_t a, int64_t b) {
  if (pred == "eq") return a == b;
  if (pred == "ne") return a != b;
  if (dtype == DType::kI1) return std::nullopt;
  if (pred == "lt") return a < b;
  if (pred == "le") return a <= b;
  if (pred == "gt") return a > b;
  if (pred == "ge") return a >= b;
  return std::nullopt;
}

// What `cmp pred x, x` is for integers.
std::optional<bool> CompareWithItself(absl::string_view pred) {
  if (pred == "eq" || pred == "le" || pred == "ge") return true;
  if (pred == "ne" || pred == "lt" || pred == "gt") return false;
  return std::nullopt;
}

// Identifies a constant by type and exact attribute bits, so that -0.0 and
// 0.0, or two NaN payloads, stay apart.
std::optional<std::string> ConstantKey(const Op& op) {
  const Attribute* attr = op.FindAttr("value");
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
    return absl::StrCat("cneg", static_cast<uint64_t>(0) -
                                    static_cast<uint64_t>(value));
  }
  return absl::StrCat("c", value);
}

// What an op simplifies to: an existing value, or a constant to create.
struct Replacement {
  Value* value = nullptr;
  std::optional<int64_t> constant;
  const char* counter = kFolded;
};

Replacement Existing(Value* value) { return {value, std::nullopt, kIdentities}; }
Replacement NewConstant(int64_t value, const char* counter) {
  return {nullptr, value, counter};
}

// The identities of canonicalize.h for a binary integer op `x op y` where
// at most one side is constant.
std::optional<Replacement> BinaryIdentity(OpKind kind, DType dtype, Value* x,
                                          Value* y) {
  const std::optional<int64_t> cx = IntConstant(x);
  const std::optional<int64_t> cy = IntConstant(y);
  const int64_t all_ones = Wrap(~uint64_t{0}, dtype);
  const bool same = x == y;
  const bool i1 = dtype == DType::kI1;
  switch (kind) {
    case OpKind::kAdd:
      if (i1) break;
      if (cy == 0) return Existing(x);
      if (cx == 0) return Existing(y);
      break;
    case OpKind::kSub:
      if (i1) break;
      if (cy == 0) return Existing(x);
      if (same) return NewConstant(0, kIdentities);
      break;
    case OpKind::kMul:
      if (i1) break;
      if (cy == 1) return Existing(x);
      if (cx == 1) return Existing(y);
      if (cx == 0 || cy == 0) return NewConstant(0, kIdentities);
      break;
    case OpKind::kDiv:
      if (!i1 && cy == 1) return Existing(x);
      break;
    case OpKind::kRem:
      if (!i1 && (cy == 1 || cy == -1)) return NewConstant(0, kIdentities);
      break;
    case OpKind::kMin:
    case OpKind::kMax:
      if (!i1 && same) return Existing(x);
      break;
    case OpKind::kAnd:
      if (same || cy == all_ones) return Existing(x);
      if (cx == all_ones) return Existing(y);
      if (cx == 0 || cy == 0) return NewConstant(0, kIdentities);
      break;
    case OpKind::kOr:
      if (same || cy == 0) return Existing(x);
      if (cx == 0) return Existing(y);
      if (cx == all_ones || cy == all_ones) {
        return NewConstant(all_ones, kIdentities);
      }
      break;
    case OpKind::kXor:
      if (same) return NewConstant(0, kIdentities);
      if (cy == 0) return Existing(x);
      if (cx == 0) return Existing(y);
      break;
    case OpKind::kShl:
    case OpKind::kShr:
      if (!i1 && cy == 0) return Existing(x);
      break;
    default:
      break;
  }
  return std::nullopt;
}

// Folds or simplifies one op with a single integer (or select) result.
std::optional<Replacement> Simplify(const Op& op) {
  if (op.num_results() != 1) return std::nullopt;
  const Type& type = op.result()->type();
  const OpKind kind = op.kind();
  if (kind == OpKind::kSelect && op.num_operands() == 3) {
    Value* a = op.operand_value(1);
    Value* b = op.operand_value(2);
    if (std::optional<int64_t> cond = IntConstant(op.operand_value(0))) {
      return Existing(*cond != 0 ? a : b);
    }
    if (a == b) return Existing(a);
    return std::nullopt;
  }
  if (kind == OpKind::kCast && op.num_operands() == 1) {
    Value* source = op.operand_value(0);
    if (source->type() == type) return Existing(source);
    std::optional<int64_t> value = IntConstant(source);
    if (value && IsIntegerScalar(type) && type.dtype() != DType::kI1) {
      return NewConstant(Wrap(static_cast<uint64_t>(*value), type.dtype()),
                         kFolded);
    }
    return std::nullopt;
  }
  if (kind == OpKind::kCmp && op.num_operands() == 2) {
    Value* x = op.operand_value(0);
    Value* y = op.operand_value(1);
    if (!IsIntegerScalar(x->type()) || x->type() != y->type()) {
      return std::nullopt;
    }
    const std::string& pred = op.GetString("pred");
    std::optional<int64_t> cx = IntConstant(x);
    std::optional<int64_t> cy = IntConstant(y);
    if (cx && cy) {
      if (auto result = FoldCompare(pred, x->type().dtype(), *cx, *cy)) {
        return NewConstant(*result ? 1 : 0, kFolded);
      }
    } else if (x == y && x->type().dtype() != DType::kI1) {
      if (auto result = CompareWithItself(pred)) {
        return NewConstant(*result ? 1 : 0, kIdentities);
      }
    }
    return std::nullopt;
  }
  if (!IsIntegerScalar(type)) return std::nullopt;
  for (const Operand& operand : op.operands()) {
    if (operand.indexed || operand.value == nullptr ||
        operand.value->type() != type) {
      return std::nullopt;
    }
  }
  const DType dtype = type.dtype();
  if (op.num_operands() == 1) {
    std::optional<int64_t> a = IntConstant(op.operand_value(0));
    if (!a) return std::nullopt;
    if (auto result = FoldUnary(kind, dtype, *a)) {
      return NewConstant(*result, kFolded);
    }
    return std::nullopt;
  }
  if (op.num_operands() != 2) return std::nullopt;
  Value* x = op.operand_value(0);
  Value* y = op.operand_value(1);
  std::optional<int64_t> cx = IntConstant(x);
  std::optional<int64_t> cy = IntConstant(y);
  if (cx && cy) {
    if (auto result = FoldBinary(kind, dtype, *cx, *cy)) {
      return NewConstant(*result, kFolded);
    }
    return std::nullopt;
  }
  return BinaryIdentity(kind, dtype, x, y);
}

// `value` as `base + sign * constant` when defined by add/sub/mul with one
// constant operand.
struct ConstantTerm {
  Value* base = nullptr;
  int64_t constant = 0;
  int64_t sign = 1;  // -1 for `base - constant`
};

std::optional<ConstantTerm> MatchConstantTerm(Value* value, OpKind want) {
  if (value->kind() != Value::Kind::kResult) return std::nullopt;
  const Op* def = value->defining_op();
  if (def == nullptr || def->num_operands() != 2) return std::nullopt;
  Value* lhs = def->operand_value(0);
  Value* rhs = def->operand_value(1);
  std::optional<int64_t> clhs = IntConstant(lhs);
  std::optional<int64_t> crhs = IntConstant(rhs);
  if (clhs.has_value() == crhs.has_value()) return std::nullopt;
  if (def->kind() == want && crhs) return ConstantTerm{lhs, *crhs, 1};
  if (def->kind() == want && clhs) return ConstantTerm{rhs, *clhs, 1};
  if (want == OpKind::kAdd && def->kind() == OpKind::kSub && crhs) {
    return ConstantTerm{lhs, *crhs, -1};
  }
  return std::nullopt;
}

// `(x ± c1) ± c2` -> `x ± c` and `(x * c1) * c2` -> `x * c`: the new
// operands of `op` (keeping its kind), or nullopt. Only when `op` is the
// inner op's one use (`single_use`): otherwise both ops stay and the
// rewrite would only add a constant.
template <typename SingleUse>
std::optional<std::pair<Value*, int64_t>> Reassociate(const Op& op,
                                                      SingleUse single_use) {
  if (op.num_results() != 1 || op.num_operands() != 2) return std::nullopt;
  const Type& type = op.result()->type();
  if (!IsIntegerScalar(type) || type.dtype() == DType::kI1) {
    return std::nullopt;
  }
  const DType dtype = type.dtype();
  Value* lhs = op.operand_value(0);
  Value* rhs = op.operand_value(1);
  std::optional<int64_t> clhs = IntConstant(lhs);
  std::optional<int64_t> crhs = IntConstant(rhs);
  if (clhs.has_value() == crhs.has_value()) return std::nullopt;
  const bool commutative =
      op.kind() == OpKind::kAdd || op.kind() == OpKind::kMul;
  if (!crhs && !commutative) return std::nullopt;
  Value* inner = crhs ? lhs : rhs;
  if (!single_use(inner)) return std::nullopt;
  const uint64_t c2 = static_cast<uint64_t>(crhs ? *crhs : *clhs);
  const OpKind chain = op.kind() == OpKind::kMul ? OpKind::kMul : OpKind::kAdd;
  if (op.kind() != OpKind::kAdd && op.kind() != OpKind::kSub &&
      op.kind() != OpKind::kMul) {
    return std::nullopt;
  }
  std::optional<ConstantTerm> term = MatchConstantTerm(inner, chain);
  if (!term || term->base->type() != type) return std::nullopt;
  const uint64_t c1 = static_cast<uint64_t>(term->constant);
  const uint64_t signed_c1 = term->sign < 0 ? 0 - c1 : c1;
  switch (op.kind()) {
    case OpKind::kMul:
      return std::make_pair(term->base, Wrap(c1 * c2, dtype));
    case OpKind::kAdd:  // x + s*c1 + c2
      return std::make_pair(term->base, Wrap(signed_c1 + c2, dtype));
    default:  // x + s*c1 - c2 == x - (c2 - s*c1)
      return std::make_pair(term->base, Wrap(c2 - signed_c1, dtype));
  }
}

class Canonicalizer {
 public:
  Canonicalizer(Kernel& kernel, PassStatistics& stats)
      : kernel_(kernel), stats_(stats) {}

  void Run() {
    for (const char* counter :
         {kFolded, kIdentities, kReassociated, kConstantsDeduplicated,
          kDeadIfs, kDeadLoops, kOpsErased}) {
      stats_.Add(counter, 0);
    }
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      changed_ = false;
      uses_.clear();
      Walk(kernel_.body(), [&](Op& op) {
        op.ForEachUse([&](Value*& value) { ++uses_[value]; });
      });
      SweepRegion(kernel_.body());
      // A token may be used before its definition (`%t@1` in a loop), so
      // resolve every use once more after the sweep.
      Walk(kernel_.body(), [&](Op& op) { ResolveOperands(op); });
      RemoveOpsMadeDead();
      if (!changed_) break;
    }
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

  static void CheckUsesOutside(
      const Region& current, const Region& excluded,
      const absl::flat_hash_set<const Value*>& defined, bool& escapes) {
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
    if (std::optional<Replacement> replacement = Simplify(op)) {
      Value* value = replacement->value;
      int op_index = index;
      if (replacement->constant) {
        value = GetConstant(region, op_index, op.result()->type().dtype(),
                            *replacement->constant, op.loc());
      }
      Replace(op.result(), value);
      Erase(region, op_index);
      stats_.Add(replacement->counter);
      return op_index;
    }
    auto single_use = [&](Value* value) {
      auto it = uses_.find(value);
      return it != uses_.end() && it->second == 1;
    };
    if (auto reassociated = Reassociate(op, single_use)) {
      int op_index = index;
      Value* constant =
          GetConstant(region, op_index, op.result()->type().dtype(),
                      reassociated->second, op.loc());
      NoteDroppedUse(op.operand_value(0));
      NoteDroppedUse(op.operand_value(1));
      --uses_[op.operand_value(0)];
      --uses_[op.operand_value(1)];
      ++uses_[reassociated->first];
      ++uses_[constant];
      op.mutable_operand(0) = Use(reassociated->first);
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
    std::optional<int64_t> condition =
        op.num_operands() == 1 ? IntConstant(op.operand_value(0))
                               : std::nullopt;
    const int taken = condition && *condition != 0 ? 0 : 1;
    const int dropped = 1 - taken;
    if (!condition || op.num_regions() != 2 ||
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

  int VisitFor(Region& region, int index) {
    Op& op = region.op(index);
    std::optional<int64_t> lower =
        op.num_operands() == 3 ? IntConstant(op.operand_value(0))
                               : std::nullopt;
    std::optional<int64_t> upper =
        op.num_operands() == 3 ? IntConstant(op.operand_value(1))
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
    Walk(kernel_.body(), [&](Op& op) {
      op.ForEachUse([&](Value*& value) { ++uses[value]; });
    });
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

  Kernel& kernel_;
  PassStatistics& stats_;
  bool changed_ = false;
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
  Canonicalizer(kernel, context.stats).Run();
  return absl::OkStatus();
}

}  // namespace kir
