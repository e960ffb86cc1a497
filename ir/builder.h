// Builds operations at an insertion point. Used by passes, tests and the
// parser alike, so every op is made the same way.
//
//   OpBuilder b(kernel.body());
//   Value* c0 = b.Constant(0, DType::kIndex);
//   Value* tx = b.Create(OpKind::kThreadId, {}, {attr::dim(Dim::kX)},
//                        {Type::Scalar(DType::kIndex)}, {"tx"})->result();
#ifndef KIR_IR_BUILDER_H_
#define KIR_IR_BUILDER_H_

#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace kir {

// A buffer reference operand: `%buf[%i, %j]`.
inline Operand Ref(Value* buffer, IndexList indices) {
  return Operand{buffer, std::move(indices), 0, true};
}
// The same from any other range of indices (a std::vector).
template <typename Indices,
          typename = decltype(std::begin(std::declval<const Indices&>()))>
Operand Ref(Value* buffer, const Indices& indices) {
  return Ref(buffer, IndexList(std::begin(indices), std::end(indices)));
}
// A plain value operand.
inline Operand Use(Value* value) { return Operand{value, {}, 0, false}; }

using NamedAttr = std::pair<std::string, Attribute>;
using AttrList = std::vector<NamedAttr>;

// One function per attribute of ir/attrs.def, typed like its accessor, to
// fill an AttrList; a misspelt name does not compile:
//   b.Create(OpKind::kFenceProxyAsync, {}, {attr::space(FenceSpace::kGlobal)});
namespace attr {
#define KIR_INT_ATTR(name)                 \
  inline NamedAttr name(int64_t value) {   \
    return {#name, Attribute::Int(value)}; \
  }
#define KIR_OPTIONAL_INT_ATTR(name) KIR_INT_ATTR(name)
#define KIR_FLAG_ATTR(name) \
  inline NamedAttr name(bool value) { return {#name, Attribute::Flag(value)}; }
#define KIR_STRING_ATTR(name)                            \
  inline NamedAttr name(std::string value) {             \
    return {#name, Attribute::String(std::move(value))}; \
  }
#define KIR_NUMBER_ATTR(name) \
  inline NamedAttr name(Attribute value) { return {#name, std::move(value)}; }
#define KIR_ENUM_ATTR(name, Type)                     \
  inline NamedAttr name(Type value) {                 \
    return {#name, Attribute::Enum(EnumName(value))}; \
  }
#include "ir/attrs.def"
}  // namespace attr

class OpBuilder {
 public:
  // Inserts at the end of `region`.
  explicit OpBuilder(Region& region);
  // Inserts before position `index` of `region`.
  OpBuilder(Region& region, int index);

  Region& region() const { return *region_; }
  int index() const { return index_; }
  void SetInsertionPoint(Region& region, int index);
  void SetInsertionPointToEnd(Region& region);
  // New ops get this location and provenance.
  void set_loc(Location loc) { loc_ = std::move(loc); }
  void set_provenance(Provenance provenance) {
    provenance_ = std::move(provenance);
  }

  // Creates and inserts an op; advances the insertion point past it. Checks
  // the operand slots and attribute names against the op's spec (not types:
  // that is the verifier's job).
  Op* Create(OpKind kind, std::vector<Operand> operands, AttrList attrs = {},
             std::vector<Type> result_types = {},
             std::vector<std::string> result_names = {});

  // Conveniences for the most common ops.
  Value* Constant(int64_t value, DType dtype, std::string name = "");
  Value* FloatConstant(double value, DType dtype, std::string name = "");
  Value* Binary(OpKind kind, Value* lhs, Value* rhs, std::string name = "");
  Value* Compare(CmpPredicate predicate, Value* lhs, Value* rhs,
                 std::string name = "");

  // Structured ops. Each returns the op; fill its regions with a builder
  // made on `op->region(i)`.
  Op* For(Value* lower, Value* upper, Value* step, std::string iv_name = "i",
          int unroll = 0);
  Op* If(Value* condition);  // both regions exist; else may stay empty
  Op* Role(std::string name, int warp_begin, int warp_end);
  Op* SplitK(Value* partial, Dim dim = Dim::kZ,
             CombineOp reduce = CombineOp::kAdd);

 private:
  Kernel& kernel() const { return *region_->kernel(); }
  Op* Insert(std::unique_ptr<Op> op);

  Region* region_;
  int index_;
  Location loc_;
  Provenance provenance_;
};

}  // namespace kir

#endif  // KIR_IR_BUILDER_H_
