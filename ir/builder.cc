#include "ir/builder.h"

#include <iterator>

#include "ir/check.h"

namespace kir {

OpBuilder::OpBuilder(Region& region) : region_(&region), index_(region.size()) {}

OpBuilder::OpBuilder(Region& region, int index)
    : region_(&region), index_(index) {
  KIR_CHECK(index >= 0 && index <= region.size());
}

void OpBuilder::SetInsertionPoint(Region& region, int index) {
  KIR_CHECK(index >= 0 && index <= region.size());
  region_ = &region;
  index_ = index;
}

void OpBuilder::SetInsertionPointToEnd(Region& region) {
  SetInsertionPoint(region, region.size());
}

Op* OpBuilder::Insert(std::unique_ptr<Op> op) {
  op->set_provenance(provenance_);
  Op* raw = region_->Insert(index_, std::move(op));
  ++index_;
  return raw;
}

Op* OpBuilder::Create(OpKind kind, std::vector<Operand> operands,
                      AttrList attrs, std::vector<Type> result_types,
                      std::vector<std::string> result_names) {
  const OpInfo& info = GetOpInfo(kind);
  if (info.num_results >= 0) {
    KIR_CHECK(static_cast<int>(result_types.size()) == info.num_results)
        << info.mnemonic << " takes " << info.num_results << " results";
  }
  std::unique_ptr<Op> op =
      kernel().CreateOp(kind, loc_, result_types, result_names);
  op->operands_.assign(std::make_move_iterator(operands.begin()),
                       std::make_move_iterator(operands.end()));
  for (auto& [name, value] : attrs) op->SetAttr(name, std::move(value));
  return Insert(std::move(op));
}

Value* OpBuilder::Constant(int64_t value, DType dtype, std::string name) {
  return Create(OpKind::kConst, {}, {attr::value(Attribute::Integer(value))},
                {Type::Scalar(dtype)}, {name.empty() ? "c" : name})
      ->result();
}

Value* OpBuilder::FloatConstant(double value, DType dtype, std::string name) {
  return Create(OpKind::kConst, {}, {attr::value(Attribute::Float(value))},
                {Type::Scalar(dtype)}, {name.empty() ? "cf" : name})
      ->result();
}

Value* OpBuilder::Binary(OpKind kind, Value* lhs, Value* rhs,
                         std::string name) {
  return Create(kind, {Use(lhs), Use(rhs)}, {}, {lhs->type()}, {name})
      ->result();
}

Value* OpBuilder::Compare(CmpPredicate predicate, Value* lhs, Value* rhs,
                          std::string name) {
  return Create(OpKind::kCmp, {Use(lhs), Use(rhs)}, {attr::pred(predicate)},
                {Type::Scalar(DType::kI1)}, {name.empty() ? "p" : name})
      ->result();
}

Op* OpBuilder::For(Value* lower, Value* upper, Value* step,
                   std::string iv_name, int unroll) {
  AttrList attrs;
  if (unroll != 0) attrs.push_back(attr::unroll(unroll));
  Op* op = Create(OpKind::kFor, {Use(lower), Use(upper), Use(step)},
                  std::move(attrs));
  kernel().AddRegion(*op, {Type::Scalar(DType::kIndex)}, {iv_name});
  return op;
}

Op* OpBuilder::If(Value* condition) {
  Op* op = Create(OpKind::kIf, {Use(condition)});
  kernel().AddRegion(*op);
  kernel().AddRegion(*op);
  return op;
}

Op* OpBuilder::Role(std::string name, int warp_begin, int warp_end) {
  Op* op = Create(OpKind::kRole, {},
                  {attr::name(std::move(name)), attr::warp_begin(warp_begin),
                   attr::warp_end(warp_end)});
  kernel().AddRegion(*op);
  return op;
}

Op* OpBuilder::SplitK(Value* partial, Dim dim, CombineOp reduce) {
  AttrList attrs;
  // Defaults are left out, as the parser leaves them.
  if (dim != Dim::kZ) attrs.push_back(attr::dim(dim));
  if (reduce != CombineOp::kAdd) attrs.push_back(attr::op(reduce));
  Op* op = Create(OpKind::kSplitK, {Use(partial)}, std::move(attrs));
  kernel().AddRegion(*op);
  kernel().AddRegion(*op);
  return op;
}

}  // namespace kir
