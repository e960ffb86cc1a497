// The kir IR: modules of kernels; a kernel is a structured per-thread SIMT
// program (like CUDA C++) made of operations in nested regions.
//
// Values are SSA and immutable; mutable state lives in buffers (global
// tensors, shared and register allocations, workspaces), addressed by a
// logical index tuple, outermost dimension first. Every value has a name that
// is unique in its kernel, so printed output is deterministic and stable.
//
// Operation kinds are listed once, in ir/ops.def; what an operation reads and
// writes and how it completes is in the effects table (ir/effects.h).
#ifndef KIR_IR_IR_H_
#define KIR_IR_IR_H_

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attrs.h"
#include "ir/location.h"
#include "ir/types.h"

namespace kir {

class Op;
class Region;
class Kernel;

enum class OpKind {
#define KIR_OP(name, mnemonic, operands, attrs, results, regions) name,
#include "ir/ops.def"
#undef KIR_OP
};
inline constexpr int kNumOpKinds = 0
#define KIR_OP(name, mnemonic, operands, attrs, results, regions) +1
#include "ir/ops.def"
#undef KIR_OP
    ;

// ---------------------------------------------------------------------------
// Values.

class Value {
 public:
  enum class Kind { kSize, kParam, kResult, kRegionArgument };

  Kind kind() const { return kind_; }
  const Type& type() const { return type_; }
  void set_type(Type type) { type_ = std::move(type); }
  // The name without '%'; unique within the kernel.
  const std::string& name() const { return name_; }
  // Where it is defined: a result's or region argument's is its op's.
  const Location& loc() const;
  // The defining operation of a result, the owner of a region argument.
  Op* defining_op() const;
  Region* owning_region() const {
    return kind_ == Kind::kRegionArgument ? owner_.region : nullptr;
  }
  int index() const { return index_; }  // result or argument position

  // Allocated from a pool of values (see Op::operator new).
  static void* operator new(size_t size);
  static void operator delete(void* value, size_t size);

 private:
  friend class Op;
  friend class Region;
  friend class Kernel;
  Value(Kind kind, Type type, std::string name, Location loc);

  Kind kind_;
  int index_ = 0;  // beside kind_: no padding
  Type type_;
  std::string name_;
  // Sizes' and parameters' own locations; results and region arguments
  // (almost every value) use their op's.
  std::unique_ptr<const Location> own_loc_;
  // A result's op, or a region argument's region (whose op owns it).
  union {
    Op* op;
    Region* region;
  } owner_ = {nullptr};
};

// A buffer reference's index tuple. Up to two indices live inline (the
// same 24 bytes a std::vector takes): no heap allocation for most.
using IndexList = absl::InlinedVector<Value*, 2>;

// One operand slot: a value, and for buffer references (`%buf[%i, %j]`) the
// index tuple, outermost first.
//
// `distance` is for tokens only: a wait may name the instance of a token
// committed `distance` iterations earlier of the innermost loop around the
// commit (`%t@1`); a token used after its loop names the last instance.
struct Operand {
  Value* value = nullptr;
  IndexList indices;
  int distance = 0;
  bool indexed = false;  // last, in the padding after `distance`
};

// An op's operands: two (most ops have at most two) live inside the op, so
// that building, walking and freeing an op touches no separate array.
using OperandList = absl::InlinedVector<Operand, 2>;

// ---------------------------------------------------------------------------
// Attributes.

enum class AttrKind { kInt, kNumber, kFlag, kString, kInts, kEnum };

struct Attribute {
  AttrKind kind = AttrKind::kInt;
  int64_t int_value = 0;      // kInt, kFlag (0/1), kNumber when integral
  double float_value = 0;     // kNumber when !is_integral
  bool is_integral = true;    // kNumber
  std::string string_value;   // kString, kEnum
  std::vector<int64_t> ints;  // kInts

  static Attribute Int(int64_t value);
  static Attribute Integer(int64_t value);  // a kNumber holding an integer
  static Attribute Float(double value);     // a kNumber holding a float
  static Attribute Flag(bool value);
  static Attribute String(std::string value);
  static Attribute Enum(std::string value);
  static Attribute Ints(std::vector<int64_t> values);

  bool operator==(const Attribute& other) const;
  bool operator!=(const Attribute& other) const { return !(*this == other); }
};

struct AttrSpec {
  std::string name;
  AttrKind kind = AttrKind::kInt;
  std::vector<std::string> enum_values;  // kEnum
  std::optional<Attribute> default_value;
  bool optional = false;    // may be absent (no default)
  bool positional = false;  // printed bare after the mnemonic
};

// kOptional: a value that may be left out (last slot only).
enum class OperandSlot { kValue, kRef, kBuffer, kVariadic, kOptional };

// Static facts about an op kind, from ops.def.
struct OpInfo {
  OpKind kind;
  std::string mnemonic;
  std::vector<OperandSlot> operands;
  std::vector<AttrSpec> attrs;
  int num_results = 0;  // -1: any number
  int num_regions = 0;

  const AttrSpec* FindAttr(absl::string_view name) const;
};

const OpInfo& GetOpInfo(OpKind kind);
std::optional<OpKind> FindOpKind(absl::string_view mnemonic);
absl::string_view Mnemonic(OpKind kind);

// Records why a pass inserted an operation: the pass and the source
// locations of the accesses that required it.
struct Provenance {
  std::string pass;
  std::vector<Location> because;
  bool empty() const { return pass.empty(); }
};

// ---------------------------------------------------------------------------
// Operations and regions.

class Op {
 public:
  OpKind kind() const { return kind_; }
  const OpInfo& info() const { return GetOpInfo(kind_); }
  // A number unique among the ops its kernel created, in creation order
  // (never reused): an analysis can keep per-op facts in a vector indexed
  // by it (Kernel::op_serial_bound()) rather than a table keyed by address,
  // which for ops walked in program order reads memory in order.
  int serial() const { return serial_; }
  absl::string_view mnemonic() const { return info().mnemonic; }
  const Location& loc() const { return loc_; }
  void set_loc(Location loc) { loc_ = std::move(loc); }
  const Provenance& provenance() const;
  void set_provenance(Provenance provenance);

  // Operands.
  int num_operands() const { return static_cast<int>(operands_.size()); }
  const Operand& operand(int i) const { return operands_[i]; }
  Operand& mutable_operand(int i) { return operands_[i]; }
  Value* operand_value(int i) const { return operands_[i].value; }
  const OperandList& operands() const { return operands_; }
  OperandList& mutable_operands() { return operands_; }
  // Calls `fn(Value*&)` on every used value: operands and their indices.
  template <typename Fn>
  void ForEachUse(Fn&& fn) {
    for (Operand& operand : operands_) {
      fn(operand.value);
      for (Value*& index : operand.indices) fn(index);
    }
  }
  template <typename Fn>
  void ForEachUse(Fn&& fn) const {
    for (const Operand& operand : operands_) {
      fn(static_cast<const Value*>(operand.value));
      for (const Value* index : operand.indices) fn(index);
    }
  }

  // Results.
  int num_results() const {
    return first_result_ == nullptr
               ? 0
               : 1 + (more_results_ != nullptr
                          ? static_cast<int>(more_results_->size())
                          : 0);
  }
  Value* result(int i = 0) const {
    return i == 0 ? first_result_.get() : (*more_results_)[i - 1].get();
  }

  // Attributes, kept in the order of the op's spec.
  const std::vector<std::pair<std::string, Attribute>>& attrs() const {
    return attrs_;
  }
  const Attribute* FindAttr(absl::string_view name) const;
  // The attribute or its default; checks that one of them exists.
  const Attribute& GetAttr(absl::string_view name) const;
  int64_t GetInt(absl::string_view name) const;
  bool GetFlag(absl::string_view name) const;
  const std::string& GetString(absl::string_view name) const;  // str or enum
  void SetAttr(absl::string_view name, Attribute value);
  void RemoveAttr(absl::string_view name);

  // Typed accessors, one set per attribute of ir/attrs.def (where each
  // name's C++ type is declared):
  //   T name() const         the value, or its default; checks that the
  //                          op's kind has the attribute and one of them
  //   bool has_name() const  whether it is set on this op (any kind)
  //   void set_name(T)       checks that the op's kind has it
  //   void clear_name()      removes it (back to its default)
  // int64_t for ints, std::optional<int64_t> for optional ints (absent:
  // nullopt), bool for flags, absl::string_view for strings, the enum of
  // ir/attrs.h for enums; a constant's `value` is its Attribute.
#define KIR_ATTR_PRESENCE(name)                                  \
  bool has_##name() const { return FindAttr(#name) != nullptr; } \
  void clear_##name() { RemoveAttr(#name); }
#define KIR_INT_ATTR(name)                       \
  KIR_ATTR_PRESENCE(name)                        \
  int64_t name() const { return GetInt(#name); } \
  void set_##name(int64_t attr_value) {          \
    SetAttr(#name, Attribute::Int(attr_value));  \
  }
#define KIR_OPTIONAL_INT_ATTR(name)             \
  KIR_ATTR_PRESENCE(name)                       \
  std::optional<int64_t> name() const {         \
    const Attribute* attr = FindAttr(#name);    \
    if (attr == nullptr) return std::nullopt;   \
    return attr->int_value;                     \
  }                                             \
  void set_##name(int64_t attr_value) {         \
    SetAttr(#name, Attribute::Int(attr_value)); \
  }
#define KIR_FLAG_ATTR(name)                      \
  KIR_ATTR_PRESENCE(name)                        \
  bool name() const { return GetFlag(#name); }   \
  void set_##name(bool attr_value) {             \
    SetAttr(#name, Attribute::Flag(attr_value)); \
  }
#define KIR_STRING_ATTR(name)                                 \
  KIR_ATTR_PRESENCE(name)                                     \
  absl::string_view name() const { return GetString(#name); } \
  void set_##name(std::string attr_value) {                   \
    SetAttr(#name, Attribute::String(std::move(attr_value))); \
  }
#define KIR_NUMBER_ATTR(name) \
  KIR_ATTR_PRESENCE(name)     \
  const Attribute& name() const { return GetAttr(#name); }
#define KIR_ENUM_ATTR(name, Type)                          \
  KIR_ATTR_PRESENCE(name)                                  \
  Type name() const { return GetEnum<Type>(#name); }       \
  void set_##name(Type attr_value) {                       \
    SetAttr(#name, Attribute::Enum(EnumName(attr_value))); \
  }
#include "ir/attrs.def"
#undef KIR_ATTR_PRESENCE

  // Regions.
  int num_regions() const { return static_cast<int>(regions_.size()); }
  Region& region(int i) const { return *regions_[i]; }

  // The region this op is in, and the op owning that region (null at the
  // kernel's top level).
  Region* parent_region() const { return parent_; }
  Op* parent_op() const;
  // Whether this op lies in a region of `ancestor`, at any depth (an op is
  // not inside itself).
  bool IsInside(const Op& ancestor) const;
  // Whether this op is `op` or lies inside it.
  bool IsOrIsInside(const Op& op) const { return this == &op || IsInside(op); }
  // The innermost op of `kind` that this op lies inside (not itself); null
  // when there is none.
  Op* EnclosingOp(OpKind kind) const;
  // This op, or the ancestor of it at the kernel's top level.
  Op* TopLevelAncestor();
  const Op* TopLevelAncestor() const;
  // This op or the ancestor of it that lies directly in `region`; null when
  // `region` does not hold it.
  Op* AncestorIn(const Region& region);
  const Op* AncestorIn(const Region& region) const;
  // Whether this op comes before `other` in program order: a pre-order walk
  // (an op before the ops in its regions, a region's ops in order, an op's
  // regions in order). Takes time in the nesting depth, not the kernel's
  // size. False for the same op, and for ops of two kernels.
  bool IsBefore(const Op& other) const;
  // The op a pre-order walk visits just before this one (the last op inside
  // the op before it, or its parent); null for the kernel's first op.
  // Takes time in the nesting depth below the op before it.
  const Op* PreviousInProgramOrder() const;
  // Whether `value` is defined inside this op, and so may change from one
  // run of the op's regions to the next: a result of an op inside it, or
  // an argument of one of its regions (a for's induction variable) or of a
  // region inside it.
  bool DefinesInside(const Value& value) const;

  // Ops (and values) come from pools of equal cells rather than one heap
  // allocation each: no allocator header or size rounding per op, a freed
  // cell reused by the next op. Sanitizer builds use the heap, so that a
  // use after free is still caught.
  static void* operator new(size_t size);
  static void operator delete(void* op, size_t size);

 private:
  friend class Region;
  friend class Kernel;
  friend class OpBuilder;
  explicit Op(OpKind kind) : kind_(kind) {}

  template <typename E>
  E GetEnum(absl::string_view name) const {
    E value{};
    CheckEnumValue(ParseEnum(GetString(name), &value), name);
    return value;
  }
  void CheckEnumValue(bool known, absl::string_view name) const;

  // What a walk reads of every op (its kind, its place, its regions)
  // first, in the op's first bytes: one cache line of each op it visits.
  OpKind kind_;
  int slot_ = -1;  // where parent_ keeps it (see Region)
  int serial_ = 0;
  Region* parent_ = nullptr;
  // Up to two (if, splitk) inline.
  absl::InlinedVector<std::unique_ptr<Region>, 2> regions_;
  OperandList operands_;
  // The one result most ops have, and the others (rare) behind a pointer:
  // two words in every op.
  std::unique_ptr<Value> first_result_;
  std::unique_ptr<std::vector<std::unique_ptr<Value>>> more_results_;
  std::vector<std::pair<std::string, Attribute>> attrs_;
  Location loc_;
  // Only inserted ops have one; the parsed majority pays a pointer.
  std::unique_ptr<Provenance> provenance_;
};

// An ordered list of operations with optional arguments (a for's induction
// variable). Owned by an op or by the kernel (its body).
//
// The ops sit in a gap buffer: slots before the gap and after it, in order,
// and each op knows its slot. So IndexOf and op(i) take constant time, and
// an insertion or removal moves only the ops between it and the previous
// one: a pass that edits a region front to back (placing barriers, erasing
// ops) moves each op a constant number of times, not once per edit.
class Region {
 public:
  Op* parent_op() const { return parent_op_; }
  Kernel* kernel() const { return kernel_; }

  int num_arguments() const { return static_cast<int>(arguments_.size()); }
  Value* argument(int i) const { return arguments_[i].get(); }

  bool empty() const { return size() == 0; }
  int size() const { return static_cast<int>(slots_.size()) - gap_size_; }
  Op& op(int i) const { return *slots_[SlotOf(i)]; }

  // The ops in order, as `const std::unique_ptr<Op>&`; invalidated by an
  // insertion or removal.
  class OpIterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::unique_ptr<Op>;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::unique_ptr<Op>*;
    using reference = const std::unique_ptr<Op>&;
    reference operator*() const { return *slot_; }
    pointer operator->() const { return slot_; }
    OpIterator& operator++() {
      if (++slot_ == gap_) slot_ += gap_size_;
      return *this;
    }
    bool operator==(const OpIterator& other) const {
      return slot_ == other.slot_;
    }
    bool operator!=(const OpIterator& other) const {
      return slot_ != other.slot_;
    }

   private:
    friend class Region;
    OpIterator(pointer slot, pointer gap, int gap_size)
        : slot_(slot), gap_(gap), gap_size_(gap_size) {}
    pointer slot_;
    pointer gap_;
    int gap_size_;
  };
  struct OpRange {
    OpIterator b, e;
    OpIterator begin() const { return b; }
    OpIterator end() const { return e; }
  };
  OpRange ops() const;

  // Position of `op` in this region; checks that it is here.
  int IndexOf(const Op* op) const;
  // This region's position among its op's regions (an if's then is 0, its
  // else 1); 0 for a kernel body.
  int number_in_parent() const;

  // Whether this region lies inside `op`: is one of its regions or nested
  // in one.
  bool IsInside(const Op& op) const;
  // The innermost op of `kind` this region lies inside (its own op first);
  // null when there is none.
  Op* EnclosingOp(OpKind kind) const;
  // Pooled, as ops are.
  static void* operator new(size_t size);
  static void operator delete(void* region, size_t size);

  // Inserts `op` before position `index` (size() appends); returns it.
  Op* Insert(int index, std::unique_ptr<Op> op);
  Op* Append(std::unique_ptr<Op> op) { return Insert(size(), std::move(op)); }
  // Removes and returns the op at `index`.
  std::unique_ptr<Op> Take(int index);
  // Removes ops for which `pred(op)` is true, keeping order.
  template <typename Pred>
  int EraseIf(Pred&& pred) {
    int erased = 0;
    std::vector<std::unique_ptr<Op>> kept;
    kept.reserve(size());
    for (int i = 0; i < size(); ++i) {
      std::unique_ptr<Op>& op = slots_[SlotOf(i)];
      if (pred(*op)) {
        ++erased;
      } else {
        kept.push_back(std::move(op));
      }
    }
    Reset(std::move(kept));
    return erased;
  }

 private:
  friend class Op;
  friend class Kernel;
  friend class OpBuilder;
  Region(Kernel* kernel, Op* parent) : kernel_(kernel), parent_op_(parent) {}

  int SlotOf(int index) const {
    return index < gap_begin_ ? index : index + gap_size_;
  }
  // Moves the gap to start before position `index`.
  void MoveGap(int index);
  // Replaces the slots with `ops`, the gap at the end.
  void Reset(std::vector<std::unique_ptr<Op>> ops);

  Kernel* kernel_;
  Op* parent_op_;
  std::vector<std::unique_ptr<Value>> arguments_;
  // Ops at [0, gap_begin_) and [gap_begin_ + gap_size_, slots_.size()); the
  // gap's slots are null.
  std::vector<std::unique_ptr<Op>> slots_;
  int gap_begin_ = 0;
  int gap_size_ = 0;
};

// How many times a region moved an op to another slot in this process so
// far: the cost of insertions and removals, a measure that does not depend
// on the machine, for tests that bound what a pass costs.
int64_t RegionOpMoves();

// Calls `fn(Op&)` on every op in `region` and nested regions, in program
// order, parents before their children.
template <typename Fn>
void Walk(Region& region, Fn&& fn) {
  for (int i = 0; i < region.size(); ++i) {
    Op& op = region.op(i);
    fn(op);
    for (int r = 0; r < op.num_regions(); ++r) Walk(op.region(r), fn);
  }
}
template <typename Fn>
void Walk(const Region& region, Fn&& fn) {
  for (int i = 0; i < region.size(); ++i) {
    const Op& op = region.op(i);
    fn(op);
    for (int r = 0; r < op.num_regions(); ++r) Walk(op.region(r), fn);
  }
}

// The first op of `region` and its nested regions, in Walk's order, for
// which `pred(op)` holds, or null. Stops there.
template <typename Pred>
Op* FindFirst(Region& region, Pred&& pred) {
  for (int i = 0; i < region.size(); ++i) {
    Op& op = region.op(i);
    if (pred(op)) return &op;
    for (int r = 0; r < op.num_regions(); ++r) {
      if (Op* found = FindFirst(op.region(r), pred)) return found;
    }
  }
  return nullptr;
}
template <typename Pred>
const Op* FindFirst(const Region& region, Pred&& pred) {
  for (int i = 0; i < region.size(); ++i) {
    const Op& op = region.op(i);
    if (pred(op)) return &op;
    for (int r = 0; r < op.num_regions(); ++r) {
      if (const Op* found = FindFirst(op.region(r), pred)) return found;
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Kernels and modules.

enum class TensorLayout { kRowMajor, kColumnMajor, kStrided };
enum class OobFill { kZero, kNan };

// A kernel parameter: a global tensor, a TMA tensor map over one, or a
// scalar.
struct Param {
  enum class Kind { kTensor, kTensorMap, kScalar };
  Kind kind = Kind::kScalar;
  Value* value = nullptr;  // owned by the kernel
  // kTensor.
  TensorLayout layout = TensorLayout::kRowMajor;
  std::vector<IndexExpr> strides;  // kStrided: elements, outermost first
  int64_t align = 16;              // base alignment in bytes
  // kTensorMap: the tensor it maps; box shape is in the value's type.
  Value* tensor = nullptr;
  int swizzle = 0;  // 0, 32, 64 or 128 bytes
  OobFill oob = OobFill::kZero;
};

// Launch dimensions (x, y, z), named as in CUDA; missing ones are 1.
struct Dim3 {
  IndexExpr x = IndexExpr::Constant(1);
  IndexExpr y = IndexExpr::Constant(1);
  IndexExpr z = IndexExpr::Constant(1);
  // Where the clause (`grid`) and each dimension were written; unknown for
  // missing ones (diagnostics then point at the kernel).
  Location loc;
  Location dim_loc[3];
  // Product when all are constant.
  std::optional<int64_t> StaticVolume() const;
  const IndexExpr& operator[](int i) const {
    return i == 0 ? x : i == 1 ? y : z;
  }
  IndexExpr& operator[](int i) { return i == 0 ? x : i == 1 ? y : z; }
};

class Kernel {
 public:
  explicit Kernel(std::string name, Location loc = {});
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  const std::string& name() const { return name_; }
  const Location& loc() const { return loc_; }
  // One more than the largest Op::serial() of this kernel's ops.
  int op_serial_bound() const { return next_op_serial_; }

  // Symbolic sizes, bound at launch (`sizes(%M, %N)`); type index.
  Value* AddSize(std::string name, Location loc = {});
  const std::vector<std::unique_ptr<Value>>& sizes() const { return sizes_; }

  // Parameters in order. `param.value` is filled in by AddParam.
  Param& AddParam(std::string name, Type type, Param param, Location loc = {});
  const std::vector<Param>& params() const { return params_; }
  std::vector<Param>& mutable_params() { return params_; }
  const Param* FindParam(const Value* value) const;
  // Calls `fn(Value*&)` on every value a parameter uses: the tensor or
  // workspace each tensor map maps. A pass that counts uses to erase what
  // is unused must count these too, or it frees a workspace a map names.
  template <typename Fn>
  void ForEachParamUse(Fn&& fn) {
    for (Param& param : params_) {
      if (param.tensor != nullptr) fn(param.tensor);
    }
  }
  template <typename Fn>
  void ForEachParamUse(Fn&& fn) const {
    for (const Param& param : params_) {
      if (param.tensor != nullptr) fn(static_cast<const Value*>(param.tensor));
    }
  }

  Dim3 grid, block, cluster;

  Region& body() { return *body_; }
  const Region& body() const { return *body_; }

  // Names: every value's name is unique in the kernel. `FreshName("acc")`
  // returns "acc", or "acc_1", "acc_2", ... if taken; deterministic.
  std::string FreshName(absl::string_view hint);
  bool IsNameTaken(absl::string_view name) const;
  // Claims a name (the parser does this for names it reads); false if taken.
  bool ClaimName(const std::string& name);
  // For a builder that guarantees unique names itself (the parser, which
  // keeps its own table of the names it reads): until EndTrustedNames,
  // names are taken as given and not indexed. The index is built from the
  // kernel's values at the next name query, so a kernel that is only
  // parsed and printed never builds it.
  void BeginTrustedNames() { trusted_names_ = true; }
  void EndTrustedNames() {
    trusted_names_ = false;
    names_indexed_ = false;
  }

  // False when no op of `kind` was ever created for this kernel, so none is
  // in it; true does not mean one is (it may have been erased). Every op of
  // a kernel comes from its CreateOp (which numbers it), so a pass can skip
  // a walk that looks only for kinds the kernel cannot hold.
  bool MayHold(OpKind kind) const {
    return created_kinds_.test(static_cast<size_t>(kind));
  }
  // Whether MayHold(kind) for some kind that `pred` accepts.
  template <typename Pred>
  bool MayHoldAny(Pred&& pred) const {
    for (int k = 0; k < kNumOpKinds; ++k) {
      if (created_kinds_.test(k) && pred(static_cast<OpKind>(k))) return true;
    }
    return false;
  }

  // Creates an op of `kind` with no operands or attributes; results get
  // fresh names from `result_hints` (empty hints use "v"). Not yet inserted.
  std::unique_ptr<Op> CreateOp(OpKind kind, Location loc,
                               const std::vector<Type>& result_types,
                               const std::vector<std::string>& result_names);
  // Adds a region to `op`; its arguments get the given types and names.
  Region& AddRegion(Op& op, const std::vector<Type>& argument_types = {},
                    const std::vector<std::string>& argument_names = {});

 private:
  std::string name_;
  Location loc_;
  std::vector<std::unique_ptr<Value>> sizes_;
  std::vector<std::unique_ptr<Value>> param_values_;
  std::vector<Param> params_;
  std::unique_ptr<Region> body_;
  // Indexes every value's name if that was left for later.
  void IndexNames() const;

  // Only looked up, never iterated, so hash order cannot leak into output.
  mutable absl::flat_hash_set<std::string> names_;
  bool trusted_names_ = false;
  mutable bool names_indexed_ = true;
  int next_op_serial_ = 0;
  std::bitset<kNumOpKinds> created_kinds_;
};

struct Module {
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::shared_ptr<const SourceFile> source;  // null when built in C++
  Kernel* FindKernel(absl::string_view name) const;
};

}  // namespace kir

#endif  // KIR_IR_IR_H_
