// Structural equality of modules, for round-trip tests and pass tests.
//
// Two kernels are walked in lockstep. Every value defined in `a` (size,
// parameter, result, region argument) is paired with the value at the same
// position in `b`; operands then compare through that pairing. Uses before
// the definition (tokens named with `@N`) are checked at the end of the
// kernel. Attributes compare by their effective value, so an attribute
// written at its default equals one left out.
#include "ir/equal.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kir {
namespace {

std::string DescribeAttr(const Attribute* attr) {
  if (attr == nullptr) return "(absent)";
  switch (attr->kind) {
    case AttrKind::kInt:
      return absl::StrCat(attr->int_value);
    case AttrKind::kFlag:
      return attr->int_value ? "set" : "unset";
    case AttrKind::kNumber:
      return attr->is_integral ? absl::StrCat(attr->int_value)
                               : absl::StrCat(attr->float_value, " (float)");
    case AttrKind::kString:
      return absl::StrCat("\"", attr->string_value, "\"");
    case AttrKind::kEnum:
      return attr->string_value;
    case AttrKind::kInts:
      return absl::StrCat("[", absl::StrJoin(attr->ints, ", "), "]");
  }
  return "?";
}

std::string DescribeValue(const Value* value) {
  return value == nullptr ? "(null)" : absl::StrCat("%", value->name());
}

const Attribute* EffectiveAttr(const Op& op, const AttrSpec& spec) {
  if (const Attribute* attr = op.FindAttr(spec.name)) return attr;
  return spec.default_value.has_value() ? &*spec.default_value : nullptr;
}

class Comparer {
 public:
  explicit Comparer(std::string* why) : why_(why) {}

  bool Modules(const Module& a, const Module& b);

 private:
  // One step of the path to the current op, for messages.
  struct Frame {
    const Op* op;
    int region;
    int index;
  };
  struct DeferredUse {
    const Value* a;
    const Value* b;
    std::string where;
  };

  bool Fail(absl::string_view message);
  std::string Where() const;

  bool Kernels(const Kernel& a, const Kernel& b);
  bool Params(const Param& a, const Param& b, int index);
  bool Launch(absl::string_view name, const Dim3& a, const Dim3& b);
  bool Regions(const Region& a, const Region& b, int region_index);
  bool Ops(const Op& a, const Op& b);
  bool Operands(const Operand& a, const Operand& b, int index);
  bool Define(const Value* a, const Value* b, absl::string_view what);
  bool SameUse(const Value* a, const Value* b, absl::string_view what);
  bool SameIndexExpr(const IndexExpr& a, const IndexExpr& b) const;
  bool SameType(const Type& a, const Type& b) const;

  std::string* why_;
  const Kernel* kernel_ = nullptr;
  std::vector<Frame> path_;
  absl::flat_hash_map<const Value*, const Value*> pairs_;
  std::vector<DeferredUse> deferred_;
};

bool Comparer::Fail(absl::string_view message) {
  if (why_ != nullptr) {
    *why_ = Where();
    if (!why_->empty()) *why_ += ": ";
    *why_ += std::string(message);
  }
  return false;
}

// "kernel @k, body[3] (for) region 0[1] (add)".
std::string Comparer::Where() const {
  if (kernel_ == nullptr) return "";
  std::string where = absl::StrCat("kernel @", kernel_->name());
  for (size_t i = 0; i < path_.size(); ++i) {
    const Frame& frame = path_[i];
    if (i == 0) {
      absl::StrAppend(&where, ", body[", frame.index, "]");
    } else {
      absl::StrAppend(&where, " region ", frame.region, "[", frame.index, "]");
    }
    absl::StrAppend(&where, " (", frame.op->mnemonic(), ")");
  }
  return where;
}

bool Comparer::Define(const Value* a, const Value* b, absl::string_view what) {
  if (a->name() != b->name()) {
    return Fail(absl::StrCat(what, " name: %", a->name(), " vs %", b->name()));
  }
  if (!SameType(a->type(), b->type())) {
    return Fail(absl::StrCat(what, " %", a->name(),
                             " type: ", a->type().ToString(), " vs ",
                             b->type().ToString()));
  }
  pairs_[a] = b;
  return true;
}

bool Comparer::SameUse(const Value* a, const Value* b, absl::string_view what) {
  if (a == nullptr || b == nullptr) {
    if (a == b) return true;
    return Fail(
        absl::StrCat(what, ": ", DescribeValue(a), " vs ", DescribeValue(b)));
  }
  auto it = pairs_.find(a);
  if (it == pairs_.end()) {
    // Defined later (a token of an earlier iteration) or not at all.
    deferred_.push_back({a, b, absl::StrCat(Where(), ": ", what)});
    return true;
  }
  if (it->second != b) {
    return Fail(absl::StrCat(what, ": ", DescribeValue(a), " vs ",
                             DescribeValue(b), " (different definitions)"));
  }
  return true;
}

bool Comparer::SameIndexExpr(const IndexExpr& a, const IndexExpr& b) const {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case IndexExpr::Kind::kConstant:
      return a.constant() == b.constant();
    case IndexExpr::Kind::kSize: {
      auto it = pairs_.find(a.size());
      return it != pairs_.end() && it->second == b.size();
    }
    default:
      return SameIndexExpr(a.lhs(), b.lhs()) && SameIndexExpr(a.rhs(), b.rhs());
  }
}

bool Comparer::SameType(const Type& a, const Type& b) const {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Type::Kind::kScalar:
      return a.dtype() == b.dtype();
    case Type::Kind::kVector:
      return a.dtype() == b.dtype() && a.lanes() == b.lanes();
    case Type::Kind::kBuffer:
      if (a.space() != b.space() || a.dtype() != b.dtype() ||
          a.rank() != b.rank()) {
        return false;
      }
      for (int i = 0; i < a.rank(); ++i) {
        if (!SameIndexExpr(a.shape()[i], b.shape()[i])) return false;
      }
      return true;
    case Type::Kind::kTensorMap:
      return a.dtype() == b.dtype() && a.box() == b.box();
    case Type::Kind::kToken:
      return a.token_kind() == b.token_kind();
  }
  return false;
}

bool Comparer::Modules(const Module& a, const Module& b) {
  if (a.kernels.size() != b.kernels.size()) {
    return Fail(absl::StrCat("number of kernels: ", a.kernels.size(), " vs ",
                             b.kernels.size()));
  }
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    if (!Kernels(*a.kernels[i], *b.kernels[i])) return false;
  }
  return true;
}

bool Comparer::Params(const Param& a, const Param& b, int index) {
  std::string what = absl::StrCat("parameter #", index + 1);
  if (a.kind != b.kind) return Fail(absl::StrCat(what, " kind differs"));
  if (!Define(a.value, b.value, what)) return false;
  if (a.layout != b.layout) return Fail(absl::StrCat(what, " layout differs"));
  if (a.strides.size() != b.strides.size()) {
    return Fail(absl::StrCat(what, " number of strides differs"));
  }
  for (size_t i = 0; i < a.strides.size(); ++i) {
    if (!SameIndexExpr(a.strides[i], b.strides[i])) {
      return Fail(absl::StrCat(what, " stride ", i, ": ",
                               a.strides[i].ToString(), " vs ",
                               b.strides[i].ToString()));
    }
  }
  if (a.align != b.align) {
    return Fail(absl::StrCat(what, " align: ", a.align, " vs ", b.align));
  }
  if ((a.tensor == nullptr) != (b.tensor == nullptr)) {
    return Fail(absl::StrCat(what, " mapped tensor differs"));
  }
  if (a.tensor != nullptr &&
      !SameUse(a.tensor, b.tensor, absl::StrCat(what, " mapped tensor"))) {
    return false;
  }
  if (a.swizzle != b.swizzle) {
    return Fail(absl::StrCat(what, " swizzle: ", a.swizzle, " vs ", b.swizzle));
  }
  if (a.oob != b.oob) return Fail(absl::StrCat(what, " oob fill differs"));
  return true;
}

bool Comparer::Launch(absl::string_view name, const Dim3& a, const Dim3& b) {
  for (int i = 0; i < 3; ++i) {
    if (!SameIndexExpr(a[i], b[i])) {
      return Fail(absl::StrCat(name, " dimension ",
                               absl::string_view("xyz" + i, 1), ": ",
                               a[i].ToString(), " vs ", b[i].ToString()));
    }
  }
  return true;
}

bool Comparer::Kernels(const Kernel& a, const Kernel& b) {
  kernel_ = &a;
  path_.clear();
  pairs_.clear();
  deferred_.clear();
  if (a.name() != b.name()) {
    return Fail(absl::StrCat("kernel name: @", a.name(), " vs @", b.name()));
  }
  if (a.sizes().size() != b.sizes().size()) {
    return Fail(absl::StrCat("number of sizes: ", a.sizes().size(), " vs ",
                             b.sizes().size()));
  }
  for (size_t i = 0; i < a.sizes().size(); ++i) {
    if (!Define(a.sizes()[i].get(), b.sizes()[i].get(),
                absl::StrCat("size #", i + 1))) {
      return false;
    }
  }
  if (a.params().size() != b.params().size()) {
    return Fail(absl::StrCat("number of parameters: ", a.params().size(),
                             " vs ", b.params().size()));
  }
  for (size_t i = 0; i < a.params().size(); ++i) {
    if (!Params(a.params()[i], b.params()[i], static_cast<int>(i))) {
      return false;
    }
  }
  if (!Launch("grid", a.grid, b.grid) || !Launch("block", a.block, b.block) ||
      !Launch("cluster", a.cluster, b.cluster)) {
    return false;
  }
  if (!Regions(a.body(), b.body(), 0)) return false;
  path_.clear();
  for (const DeferredUse& use : deferred_) {
    auto it = pairs_.find(use.a);
    if (it == pairs_.end() || it->second != use.b) {
      if (why_ != nullptr) {
        *why_ = absl::StrCat(use.where, ": ", DescribeValue(use.a), " vs ",
                             DescribeValue(use.b),
                             it == pairs_.end() ? " (not defined in the kernel)"
                                                : " (different definitions)");
      }
      return false;
    }
  }
  kernel_ = nullptr;
  return true;
}

bool Comparer::Regions(const Region& a, const Region& b, int region_index) {
  if (a.num_arguments() != b.num_arguments()) {
    return Fail(absl::StrCat("number of region arguments: ", a.num_arguments(),
                             " vs ", b.num_arguments()));
  }
  for (int i = 0; i < a.num_arguments(); ++i) {
    if (!Define(a.argument(i), b.argument(i),
                absl::StrCat("region argument #", i + 1))) {
      return false;
    }
  }
  const int common = std::min(a.size(), b.size());
  for (int i = 0; i < common; ++i) {
    path_.push_back(Frame{&a.op(i), region_index, i});
    if (!Ops(a.op(i), b.op(i))) return false;
    path_.pop_back();
  }
  if (a.size() != b.size()) {
    const Op& extra = a.size() > b.size() ? a.op(common) : b.op(common);
    return Fail(absl::StrCat(
        "number of ops in region: ", a.size(), " vs ", b.size(),
        "; first unmatched op is '", extra.mnemonic(), "' in ",
        a.size() > b.size() ? "the first" : "the second", " module"));
  }
  return true;
}

bool Comparer::Operands(const Operand& a, const Operand& b, int index) {
  std::string what = absl::StrCat("operand #", index + 1);
  if (!SameUse(a.value, b.value, what)) return false;
  if (a.indexed != b.indexed) {
    return Fail(absl::StrCat(what, ": buffer reference vs plain value"));
  }
  if (a.indices.size() != b.indices.size()) {
    return Fail(absl::StrCat(what, " number of indices: ", a.indices.size(),
                             " vs ", b.indices.size()));
  }
  for (size_t i = 0; i < a.indices.size(); ++i) {
    if (!SameUse(a.indices[i], b.indices[i],
                 absl::StrCat(what, " index #", i + 1))) {
      return false;
    }
  }
  if (a.distance != b.distance) {
    return Fail(
        absl::StrCat(what, " distance: @", a.distance, " vs @", b.distance));
  }
  return true;
}

bool Comparer::Ops(const Op& a, const Op& b) {
  if (a.kind() != b.kind()) {
    return Fail(
        absl::StrCat("op kind: '", a.mnemonic(), "' vs '", b.mnemonic(), "'"));
  }
  if (a.num_operands() != b.num_operands()) {
    return Fail(absl::StrCat("number of operands: ", a.num_operands(), " vs ",
                             b.num_operands()));
  }
  for (int i = 0; i < a.num_operands(); ++i) {
    if (!Operands(a.operand(i), b.operand(i), i)) return false;
  }
  for (const AttrSpec& spec : a.info().attrs) {
    const Attribute* attr_a = EffectiveAttr(a, spec);
    const Attribute* attr_b = EffectiveAttr(b, spec);
    const bool same = attr_a == nullptr || attr_b == nullptr
                          ? attr_a == attr_b
                          : *attr_a == *attr_b;
    if (!same) {
      return Fail(absl::StrCat("attribute '", spec.name,
                               "': ", DescribeAttr(attr_a), " vs ",
                               DescribeAttr(attr_b)));
    }
  }
  if (a.provenance().pass != b.provenance().pass) {
    return Fail(absl::StrCat("inserted by: \"", a.provenance().pass, "\" vs \"",
                             b.provenance().pass, "\""));
  }
  if (a.num_results() != b.num_results()) {
    return Fail(absl::StrCat("number of results: ", a.num_results(), " vs ",
                             b.num_results()));
  }
  for (int i = 0; i < a.num_results(); ++i) {
    if (!Define(a.result(i), b.result(i), absl::StrCat("result #", i + 1))) {
      return false;
    }
  }
  if (a.num_regions() != b.num_regions()) {
    return Fail(absl::StrCat("number of regions: ", a.num_regions(), " vs ",
                             b.num_regions()));
  }
  for (int i = 0; i < a.num_regions(); ++i) {
    if (!Regions(a.region(i), b.region(i), i)) return false;
  }
  return true;
}

}  // namespace

bool StructurallyEqual(const Module& a, const Module& b, std::string* why) {
  Comparer comparer(why);
  return comparer.Modules(a, b);
}

}  // namespace kir
