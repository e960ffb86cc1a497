#include "ir/ir.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/check.h"
#include "ir/checked_math.h"

namespace kir {

// ---------------------------------------------------------------------------
// The op table, built once from ops.def.

namespace {

std::vector<OperandSlot> ParseOperandSpec(absl::string_view spec) {
  std::vector<OperandSlot> slots;
  if (spec.empty()) return slots;
  for (absl::string_view item : absl::StrSplit(spec, ',')) {
    if (item == "v") {
      slots.push_back(OperandSlot::kValue);
    } else if (item == "r") {
      slots.push_back(OperandSlot::kRef);
    } else if (item == "b") {
      slots.push_back(OperandSlot::kBuffer);
    } else if (item == "v*") {
      slots.push_back(OperandSlot::kVariadic);
    } else if (item == "v?") {
      slots.push_back(OperandSlot::kOptional);
    } else {
      KIR_CHECK(false) << "bad operand spec '" << item << "'";
    }
  }
  return slots;
}

Attribute ParseDefault(const AttrSpec& spec, absl::string_view text) {
  switch (spec.kind) {
    case AttrKind::kInt: {
      int64_t value = 0;
      KIR_CHECK(absl::SimpleAtoi(text, &value)) << text;
      return Attribute::Int(value);
    }
    case AttrKind::kEnum:
      return Attribute::Enum(std::string(text));
    case AttrKind::kString:
      return Attribute::String(std::string(text));
    default:
      KIR_CHECK(false) << "no default for attribute " << spec.name;
  }
  return {};
}

// Splits on commas that are not inside parentheses.
std::vector<absl::string_view> SplitTopLevel(absl::string_view spec) {
  std::vector<absl::string_view> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == '(') ++depth;
    if (spec[i] == ')') --depth;
    if (spec[i] == ',' && depth == 0) {
      items.push_back(spec.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < spec.size()) items.push_back(spec.substr(start));
  return items;
}

std::vector<AttrSpec> ParseAttrSpec(absl::string_view spec) {
  std::vector<AttrSpec> attrs;
  for (absl::string_view item : SplitTopLevel(spec)) {
    AttrSpec attr;
    if (!item.empty() && item.front() == '^') {
      attr.positional = true;
      item.remove_prefix(1);
    }
    if (!item.empty() && item.back() == '?') {
      attr.optional = true;
      item.remove_suffix(1);
    }
    size_t colon = item.find(':');
    KIR_CHECK(colon != absl::string_view::npos) << item;
    attr.name = std::string(item.substr(0, colon));
    absl::string_view rest = item.substr(colon + 1);
    absl::string_view default_text;
    size_t equals = rest.find('=');
    bool has_default = equals != absl::string_view::npos;
    if (has_default) {
      default_text = rest.substr(equals + 1);
      rest = rest.substr(0, equals);
    }
    if (rest == "int") {
      attr.kind = AttrKind::kInt;
    } else if (rest == "number") {
      attr.kind = AttrKind::kNumber;
    } else if (rest == "flag") {
      attr.kind = AttrKind::kFlag;
      attr.default_value = Attribute::Flag(false);
    } else if (rest == "str") {
      attr.kind = AttrKind::kString;
    } else if (rest == "ints") {
      attr.kind = AttrKind::kInts;
    } else if (absl::StartsWith(rest, "enum(")) {
      attr.kind = AttrKind::kEnum;
      absl::string_view values = rest.substr(5, rest.size() - 6);
      for (absl::string_view v : absl::StrSplit(values, '|')) {
        attr.enum_values.emplace_back(v);
      }
    } else {
      KIR_CHECK(false) << "bad attribute kind '" << rest << "'";
    }
    if (has_default) attr.default_value = ParseDefault(attr, default_text);
    attrs.push_back(std::move(attr));
  }
  return attrs;
}

// An attribute name as ir/attrs.def declares it.
struct DeclaredAttr {
  absl::string_view name;
  AttrKind kind;
  bool optional;
  // For an enum: whether its C++ enum has an enumerator of this spelling.
  bool (*has_enumerator)(absl::string_view spelling);
};

template <typename E>
bool HasEnumerator(absl::string_view spelling) {
  E value{};
  return ParseEnum(spelling, &value);
}

constexpr DeclaredAttr kDeclaredAttrs[] = {
#define KIR_INT_ATTR(name) {#name, AttrKind::kInt, false, nullptr},
#define KIR_OPTIONAL_INT_ATTR(name) {#name, AttrKind::kInt, true, nullptr},
#define KIR_FLAG_ATTR(name) {#name, AttrKind::kFlag, false, nullptr},
#define KIR_STRING_ATTR(name) {#name, AttrKind::kString, false, nullptr},
#define KIR_NUMBER_ATTR(name) {#name, AttrKind::kNumber, false, nullptr},
#define KIR_ENUM_ATTR(name, Type) \
  {#name, AttrKind::kEnum, false, &HasEnumerator<Type>},
#include "ir/attrs.def"
};

// Checks ops.def against ir/attrs.def, so that every typed accessor means
// what the op table says: same kind, an optional int exactly where ops.def
// has `int?`, an enumerator for every enum value, no unused declaration.
void CheckDeclaredAttrs(const std::vector<OpInfo>& table) {
  std::vector<bool> used(std::size(kDeclaredAttrs), false);
  for (const OpInfo& info : table) {
    for (const AttrSpec& spec : info.attrs) {
      const DeclaredAttr* declared = nullptr;
      for (size_t i = 0; i < std::size(kDeclaredAttrs); ++i) {
        if (kDeclaredAttrs[i].name == spec.name) {
          declared = &kDeclaredAttrs[i];
          used[i] = true;
        }
      }
      KIR_CHECK(declared != nullptr)
          << "attribute '" << spec.name << "' of " << info.mnemonic
          << " is not declared in ir/attrs.def";
      KIR_CHECK(declared->kind == spec.kind)
          << "attribute '" << spec.name << "' of " << info.mnemonic
          << " has another kind in ir/attrs.def";
      const bool optional_int = spec.kind == AttrKind::kInt && spec.optional;
      KIR_CHECK(declared->optional == optional_int)
          << "attribute '" << spec.name << "' of " << info.mnemonic
          << (optional_int ? " is" : " is not")
          << " an optional int (int?), unlike in ir/attrs.def";
      for (const std::string& value : spec.enum_values) {
        KIR_CHECK(declared->has_enumerator(value))
            << "value '" << value << "' of attribute '" << spec.name << "' of "
            << info.mnemonic << " has no enumerator in ir/attrs.def";
      }
    }
  }
  for (size_t i = 0; i < used.size(); ++i) {
    KIR_CHECK(used[i]) << "attribute '" << kDeclaredAttrs[i].name
                       << "' in ir/attrs.def is used by no op in ops.def";
  }
}

std::vector<OpInfo> BuildOpTable() {
  std::vector<OpInfo> table;
#define KIR_OP(name, mnemonic, operands, attrs, results, regions)            \
  table.push_back(OpInfo{OpKind::name, mnemonic, ParseOperandSpec(operands), \
                         ParseAttrSpec(attrs), results, regions});
#include "ir/ops.def"
#undef KIR_OP
  CheckDeclaredAttrs(table);
  return table;
}

const std::vector<OpInfo>& OpTable() {
  static const std::vector<OpInfo>* table =
      new std::vector<OpInfo>(BuildOpTable());
  return *table;
}

}  // namespace

const AttrSpec* OpInfo::FindAttr(absl::string_view name) const {
  for (const AttrSpec& attr : attrs) {
    if (attr.name == name) return &attr;
  }
  return nullptr;
}

const OpInfo& GetOpInfo(OpKind kind) {
  return OpTable()[static_cast<int>(kind)];
}

std::optional<OpKind> FindOpKind(absl::string_view mnemonic) {
  for (const OpInfo& info : OpTable()) {
    if (info.mnemonic == mnemonic) return info.kind;
  }
  return std::nullopt;
}

absl::string_view Mnemonic(OpKind kind) { return GetOpInfo(kind).mnemonic; }

// ---------------------------------------------------------------------------
// Attribute.

Attribute Attribute::Int(int64_t value) {
  Attribute attr;
  attr.kind = AttrKind::kInt;
  attr.int_value = value;
  return attr;
}

Attribute Attribute::Integer(int64_t value) {
  Attribute attr;
  attr.kind = AttrKind::kNumber;
  attr.int_value = value;
  attr.float_value = static_cast<double>(value);
  return attr;
}

Attribute Attribute::Float(double value) {
  Attribute attr;
  attr.kind = AttrKind::kNumber;
  attr.is_integral = false;
  attr.float_value = value;
  return attr;
}

Attribute Attribute::Flag(bool value) {
  Attribute attr;
  attr.kind = AttrKind::kFlag;
  attr.int_value = value ? 1 : 0;
  return attr;
}

Attribute Attribute::String(std::string value) {
  Attribute attr;
  attr.kind = AttrKind::kString;
  attr.string_value = std::move(value);
  return attr;
}

Attribute Attribute::Enum(std::string value) {
  Attribute attr;
  attr.kind = AttrKind::kEnum;
  attr.string_value = std::move(value);
  return attr;
}

Attribute Attribute::Ints(std::vector<int64_t> values) {
  Attribute attr;
  attr.kind = AttrKind::kInts;
  attr.ints = std::move(values);
  return attr;
}

bool Attribute::operator==(const Attribute& other) const {
  if (kind != other.kind) return false;
  switch (kind) {
    case AttrKind::kInt:
    case AttrKind::kFlag:
      return int_value == other.int_value;
    case AttrKind::kNumber:
      if (is_integral != other.is_integral) return false;
      if (is_integral) return int_value == other.int_value;
      // Bitwise, so that NaN equals itself and -0 differs from 0.
      return std::memcmp(&float_value, &other.float_value, sizeof(double)) == 0;
    case AttrKind::kString:
    case AttrKind::kEnum:
      return string_value == other.string_value;
    case AttrKind::kInts:
      return ints == other.ints;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Pools for ops, values and regions.

namespace {

// Cells of one size carved from large blocks, which live as long as the
// process; a freed cell goes on a free list and is handed out next.
class CellPool {
 public:
  explicit CellPool(size_t cell_size)
      : cell_size_((std::max(cell_size, sizeof(void*)) + kAlign - 1) / kAlign *
                   kAlign) {}

  void* Allocate() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_ != nullptr) {
      void* cell = free_;
      free_ = *static_cast<void**>(cell);
      return cell;
    }
    if (next_ == end_) {
      next_ = static_cast<char*>(::operator new(kBlockBytes));
      end_ = next_ + kBlockBytes / cell_size_ * cell_size_;
    }
    void* cell = next_;
    next_ += cell_size_;
    return cell;
  }

  void Free(void* cell) {
    std::lock_guard<std::mutex> lock(mutex_);
    *static_cast<void**>(cell) = free_;
    free_ = cell;
  }

 private:
  static constexpr size_t kAlign = 8;  // enough for Op and Value
  static constexpr size_t kBlockBytes = size_t{1} << 18;
  const size_t cell_size_;
  std::mutex mutex_;
  void* free_ = nullptr;
  char* next_ = nullptr;
  char* end_ = nullptr;
};

template <typename T>
CellPool& PoolOf() {
  static_assert(alignof(T) <= 8, "pool cells are 8-byte aligned");
  static CellPool* const pool = new CellPool(sizeof(T));
  return *pool;
}

#ifdef KIR_SANITIZE
constexpr bool kPooled = false;
#else
constexpr bool kPooled = true;
#endif

template <typename T>
void* PooledNew(size_t size) {
  KIR_CHECK(size == sizeof(T)) << "pooled classes have no subclasses";
  return kPooled ? PoolOf<T>().Allocate() : ::operator new(size);
}

template <typename T>
void PooledDelete(void* object, size_t size) {
  if (object == nullptr) return;
  if (kPooled) {
    PoolOf<T>().Free(object);
  } else {
    ::operator delete(object);
  }
}

}  // namespace

void* Op::operator new(size_t size) { return PooledNew<Op>(size); }
void Op::operator delete(void* op, size_t size) { PooledDelete<Op>(op, size); }
void* Region::operator new(size_t size) { return PooledNew<Region>(size); }
void Region::operator delete(void* region, size_t size) {
  PooledDelete<Region>(region, size);
}
void* Value::operator new(size_t size) { return PooledNew<Value>(size); }
void Value::operator delete(void* value, size_t size) {
  PooledDelete<Value>(value, size);
}

// ---------------------------------------------------------------------------
// Op.

Op* Op::parent_op() const { return parent_ ? parent_->parent_op() : nullptr; }

bool Op::IsInside(const Op& ancestor) const {
  for (const Op* parent = parent_op(); parent != nullptr;
       parent = parent->parent_op()) {
    if (parent == &ancestor) return true;
  }
  return false;
}

Op* Op::EnclosingOp(OpKind kind) const {
  return parent_ != nullptr ? parent_->EnclosingOp(kind) : nullptr;
}

Op* Op::TopLevelAncestor() {
  Op* op = this;
  while (op->parent_op() != nullptr) op = op->parent_op();
  return op;
}

const Op* Op::TopLevelAncestor() const {
  return const_cast<Op*>(this)->TopLevelAncestor();
}

Op* Op::AncestorIn(const Region& region) {
  for (Op* current = this; current != nullptr; current = current->parent_op()) {
    if (current->parent_region() == &region) return current;
  }
  return nullptr;
}

const Op* Op::AncestorIn(const Region& region) const {
  return const_cast<Op*>(this)->AncestorIn(region);
}

bool Op::IsBefore(const Op& other) const {
  // Lift the deeper op to the other's depth (an ancestor comes before what
  // it holds), then both to the op or region they share.
  auto depth = [](const Op* op) {
    int d = 0;
    for (op = op->parent_op(); op != nullptr; op = op->parent_op()) ++d;
    return d;
  };
  if (this == &other) return false;
  const Op* x = this;
  const Op* y = &other;
  int dx = depth(x), dy = depth(y);
  for (; dx > dy; --dx) {
    x = x->parent_op();
    if (x == &other) return false;
  }
  for (; dy > dx; --dy) {
    y = y->parent_op();
    if (y == this) return true;
  }
  while (x->parent_op() != y->parent_op()) {
    x = x->parent_op();
    y = y->parent_op();
  }
  const Region* rx = x->parent_region();
  const Region* ry = y->parent_region();
  if (rx == nullptr || ry == nullptr) return false;
  if (rx != ry) {
    // Two regions of one op: in region order (or two kernels' bodies).
    return x->parent_op() != nullptr &&
           rx->number_in_parent() < ry->number_in_parent();
  }
  return rx->IndexOf(x) < rx->IndexOf(y);
}

const Op* Op::PreviousInProgramOrder() const {
  const Region* region = parent_;
  const Op* parent = region->parent_op();
  const int index = region->IndexOf(this);
  const Op* previous = nullptr;
  if (index > 0) {
    previous = &region->op(index - 1);
  } else {
    // The last op of an earlier region of the parent, else the parent.
    for (int r = region->number_in_parent() - 1; r >= 0 && previous == nullptr;
         --r) {
      const Region& earlier = parent->region(r);
      if (!earlier.empty()) previous = &earlier.op(earlier.size() - 1);
    }
    if (previous == nullptr) return parent;
  }
  // The walk visits the ops inside `previous` after it.
  for (;;) {
    const Op* last = nullptr;
    for (int r = previous->num_regions() - 1; r >= 0 && last == nullptr; --r) {
      const Region& inner = previous->region(r);
      if (!inner.empty()) last = &inner.op(inner.size() - 1);
    }
    if (last == nullptr) return previous;
    previous = last;
  }
}

bool Op::DefinesInside(const Value& value) const {
  switch (value.kind()) {
    case Value::Kind::kResult:
      return value.defining_op()->IsInside(*this);
    case Value::Kind::kRegionArgument: {
      const Op* owner = value.owning_region()->parent_op();
      return owner != nullptr && (owner == this || owner->IsInside(*this));
    }
    case Value::Kind::kSize:
    case Value::Kind::kParam:
      return false;
  }
  return false;
}

const Provenance& Op::provenance() const {
  static const Provenance* const kNone = new Provenance();
  return provenance_ ? *provenance_ : *kNone;
}

void Op::set_provenance(Provenance provenance) {
  if (provenance.empty() && provenance.because.empty()) {
    provenance_.reset();
  } else {
    provenance_ = std::make_unique<Provenance>(std::move(provenance));
  }
}

const Attribute* Op::FindAttr(absl::string_view name) const {
  for (const auto& [attr_name, value] : attrs_) {
    if (attr_name == name) return &value;
  }
  return nullptr;
}

const Attribute& Op::GetAttr(absl::string_view name) const {
  if (const Attribute* attr = FindAttr(name)) return *attr;
  const AttrSpec* spec = info().FindAttr(name);
  KIR_CHECK(spec != nullptr) << mnemonic() << " has no attribute " << name;
  KIR_CHECK(spec->default_value.has_value())
      << mnemonic() << " is missing attribute " << name;
  return *spec->default_value;
}

int64_t Op::GetInt(absl::string_view name) const {
  return GetAttr(name).int_value;
}

bool Op::GetFlag(absl::string_view name) const {
  return GetAttr(name).int_value != 0;
}

const std::string& Op::GetString(absl::string_view name) const {
  return GetAttr(name).string_value;
}

void Op::SetAttr(absl::string_view name, Attribute value) {
  const OpInfo& op_info = info();
  const AttrSpec* spec = op_info.FindAttr(name);
  KIR_CHECK(spec != nullptr) << mnemonic() << " has no attribute " << name;
  for (auto& [attr_name, attr] : attrs_) {
    if (attr_name == name) {
      attr = std::move(value);
      return;
    }
  }
  // Keep spec order so printing and comparison are canonical.
  size_t position = 0;
  for (const AttrSpec& candidate : op_info.attrs) {
    if (candidate.name == name) break;
    if (position < attrs_.size() && attrs_[position].first == candidate.name) {
      ++position;
    }
  }
  attrs_.insert(attrs_.begin() + position,
                {std::string(name), std::move(value)});
}

void Op::CheckEnumValue(bool known, absl::string_view name) const {
  KIR_CHECK(known) << mnemonic() << " attribute " << name << " = '"
                   << GetString(name) << "' is no enumerator of ir/attrs.def";
}

void Op::RemoveAttr(absl::string_view name) {
  for (auto it = attrs_.begin(); it != attrs_.end(); ++it) {
    if (it->first == name) {
      attrs_.erase(it);
      return;
    }
  }
}

// ---------------------------------------------------------------------------
// Region.

bool Region::IsInside(const Op& op) const {
  return parent_op_ != nullptr && parent_op_->IsOrIsInside(op);
}

Op* Region::EnclosingOp(OpKind kind) const {
  for (Op* op = parent_op_; op != nullptr; op = op->parent_op()) {
    if (op->kind() == kind) return op;
  }
  return nullptr;
}

Region::OpRange Region::ops() const {
  const std::unique_ptr<Op>* first = slots_.data();
  const std::unique_ptr<Op>* gap = first + gap_begin_;
  const std::unique_ptr<Op>* last = first + slots_.size();
  // An empty prefix starts after the gap; leaving the last op before the
  // gap steps over it, to the end when the gap is last.
  const std::unique_ptr<Op>* begin = gap_begin_ == 0 ? gap + gap_size_ : first;
  return OpRange{OpIterator(begin, gap, gap_size_),
                 OpIterator(last, gap, gap_size_)};
}

int Region::IndexOf(const Op* op) const {
  KIR_CHECK(op->parent_ == this && op->slot_ >= 0 &&
            op->slot_ < static_cast<int>(slots_.size()) &&
            slots_[op->slot_].get() == op)
      << "op is not in this region";
  return op->slot_ < gap_begin_ ? op->slot_ : op->slot_ - gap_size_;
}

int Region::number_in_parent() const {
  if (parent_op_ == nullptr) return 0;
  for (int r = 0; r < parent_op_->num_regions(); ++r) {
    if (&parent_op_->region(r) == this) return r;
  }
  KIR_UNREACHABLE() << "region not owned by its parent op";
  return 0;
}

namespace {
std::atomic<int64_t> region_op_moves{0};
}  // namespace

int64_t RegionOpMoves() { return region_op_moves.load(); }

void Region::MoveGap(int index) {
  if (index != gap_begin_) {
    region_op_moves.fetch_add(
        index > gap_begin_ ? index - gap_begin_ : gap_begin_ - index,
        std::memory_order_relaxed);
  }
  while (gap_begin_ > index) {
    --gap_begin_;
    const int to = gap_begin_ + gap_size_;
    slots_[to] = std::move(slots_[gap_begin_]);
    slots_[to]->slot_ = to;
  }
  while (gap_begin_ < index) {
    const int from = gap_begin_ + gap_size_;
    slots_[gap_begin_] = std::move(slots_[from]);
    slots_[gap_begin_]->slot_ = gap_begin_;
    ++gap_begin_;
  }
}

void Region::Reset(std::vector<std::unique_ptr<Op>> ops) {
  slots_ = std::move(ops);
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
    slots_[i]->slot_ = i;
  }
  gap_begin_ = static_cast<int>(slots_.size());
  gap_size_ = 0;
}

Op* Region::Insert(int index, std::unique_ptr<Op> op) {
  KIR_CHECK(index >= 0 && index <= size());
  if (gap_size_ == 0) {
    // Grow as a vector does, the new room becoming the gap at `index`; at
    // least four slots, so that a small region (an if's body) is one
    // allocation rather than one per doubling.
    const int size = this->size();
    const int room = std::max(4, size);
    gap_begin_ = size;  // no gap, so no op moves
    slots_.resize(size + room);
    gap_size_ = room;
  }
  MoveGap(index);
  op->parent_ = this;
  op->slot_ = gap_begin_;
  Op* raw = op.get();
  slots_[gap_begin_] = std::move(op);
  ++gap_begin_;
  --gap_size_;
  return raw;
}

std::unique_ptr<Op> Region::Take(int index) {
  KIR_CHECK(index >= 0 && index < size());
  MoveGap(index + 1);
  --gap_begin_;
  ++gap_size_;
  std::unique_ptr<Op> op = std::move(slots_[gap_begin_]);
  op->parent_ = nullptr;
  op->slot_ = -1;
  return op;
}

// ---------------------------------------------------------------------------
// Kernel and module.

std::optional<int64_t> Dim3::StaticVolume() const {
  std::vector<int64_t> extents;
  for (int i = 0; i < 3; ++i) {
    std::optional<int64_t> d = (*this)[i].AsConstant();
    if (!d) return std::nullopt;
    extents.push_back(*d);
  }
  return CheckedProduct(extents);
}

Value::Value(Kind kind, Type type, std::string name, Location loc)
    : kind_(kind), type_(std::move(type)), name_(std::move(name)) {
  if (kind == Kind::kSize || kind == Kind::kParam) {
    own_loc_ = std::make_unique<const Location>(std::move(loc));
  }
}

Op* Value::defining_op() const {
  switch (kind_) {
    case Kind::kResult:
      return owner_.op;
    case Kind::kRegionArgument:
      return owner_.region->parent_op();
    case Kind::kSize:
    case Kind::kParam:
      return nullptr;
  }
  return nullptr;
}

const Location& Value::loc() const {
  if (Op* op = defining_op()) return op->loc();
  static const Location* const kUnknown = new Location();
  return own_loc_ != nullptr ? *own_loc_ : *kUnknown;
}

Kernel::Kernel(std::string name, Location loc)
    : name_(std::move(name)),
      loc_(std::move(loc)),
      body_(new Region(this, nullptr)) {}

Value* Kernel::AddSize(std::string name, Location loc) {
  KIR_CHECK(ClaimName(name)) << "name %" << name << " is taken";
  sizes_.push_back(std::unique_ptr<Value>(
      new Value(Value::Kind::kSize, Type::Scalar(DType::kIndex),
                std::move(name), std::move(loc))));
  sizes_.back()->index_ = static_cast<int>(sizes_.size()) - 1;
  return sizes_.back().get();
}

Param& Kernel::AddParam(std::string name, Type type, Param param,
                        Location loc) {
  KIR_CHECK(ClaimName(name)) << "name %" << name << " is taken";
  param_values_.push_back(std::unique_ptr<Value>(new Value(
      Value::Kind::kParam, std::move(type), std::move(name), std::move(loc))));
  param_values_.back()->index_ = static_cast<int>(params_.size());
  param.value = param_values_.back().get();
  params_.push_back(std::move(param));
  return params_.back();
}

const Param* Kernel::FindParam(const Value* value) const {
  for (const Param& param : params_) {
    if (param.value == value) return &param;
  }
  return nullptr;
}

std::string Kernel::FreshName(absl::string_view hint) {
  std::string base = hint.empty() ? "v" : std::string(hint);
  if (!IsNameTaken(base)) return base;
  for (int suffix = 1;; ++suffix) {
    std::string candidate = absl::StrCat(base, "_", suffix);
    if (!IsNameTaken(candidate)) return candidate;
  }
}

bool Kernel::IsNameTaken(absl::string_view name) const {
  IndexNames();
  return names_.find(name) != names_.end();
}

bool Kernel::ClaimName(const std::string& name) {
  if (trusted_names_ && !name.empty()) return true;
  IndexNames();
  return names_.insert(name).second;
}

void Kernel::IndexNames() const {
  if (names_indexed_) return;
  names_indexed_ = true;
  for (const auto& size : sizes_) names_.insert(size->name());
  for (const auto& param : param_values_) names_.insert(param->name());
  std::vector<const Region*> pending = {body_.get()};
  while (!pending.empty()) {
    const Region* region = pending.back();
    pending.pop_back();
    for (int a = 0; a < region->num_arguments(); ++a) {
      names_.insert(region->argument(a)->name());
    }
    for (const auto& op : region->ops()) {
      for (int r = 0; r < op->num_results(); ++r) {
        names_.insert(op->result(r)->name());
      }
      for (int r = 0; r < op->num_regions(); ++r) {
        pending.push_back(&op->region(r));
      }
    }
  }
}

std::unique_ptr<Op> Kernel::CreateOp(
    OpKind kind, Location loc, const std::vector<Type>& result_types,
    const std::vector<std::string>& result_names) {
  std::unique_ptr<Op> op(new Op(kind));
  op->serial_ = next_op_serial_++;
  created_kinds_.set(static_cast<size_t>(kind));
  op->loc_ = std::move(loc);
  for (size_t i = 0; i < result_types.size(); ++i) {
    std::string name = i < result_names.size() ? result_names[i] : "";
    // A free hint is claimed in one lookup (the parser's case: every name
    // is free); otherwise pick a fresh variant of it.
    if (name.empty() || !ClaimName(name)) {
      name = FreshName(name);
      ClaimName(name);
    }
    std::unique_ptr<Value> result(new Value(
        Value::Kind::kResult, result_types[i], std::move(name), op->loc_));
    result->owner_.op = op.get();
    result->index_ = static_cast<int>(i);
    if (i == 0) {
      op->first_result_ = std::move(result);
    } else {
      if (op->more_results_ == nullptr) {
        op->more_results_ =
            std::make_unique<std::vector<std::unique_ptr<Value>>>();
      }
      op->more_results_->push_back(std::move(result));
    }
  }
  return op;
}

Region& Kernel::AddRegion(Op& op, const std::vector<Type>& argument_types,
                          const std::vector<std::string>& argument_names) {
  op.regions_.push_back(std::unique_ptr<Region>(new Region(this, &op)));
  Region& region = *op.regions_.back();
  for (size_t i = 0; i < argument_types.size(); ++i) {
    std::string name = i < argument_names.size() ? argument_names[i] : "";
    // A free hint is claimed in one lookup (the parser's case: every name
    // is free); otherwise pick a fresh variant of it.
    if (name.empty() || !ClaimName(name)) {
      name = FreshName(name);
      ClaimName(name);
    }
    region.arguments_.push_back(std::unique_ptr<Value>(
        new Value(Value::Kind::kRegionArgument, argument_types[i],
                  std::move(name), op.loc())));
    region.arguments_.back()->owner_.region = &region;
    region.arguments_.back()->index_ = static_cast<int>(i);
  }
  return region;
}

Kernel* Module::FindKernel(absl::string_view name) const {
  for (const auto& kernel : kernels) {
    if (kernel->name() == name) return kernel.get();
  }
  return nullptr;
}

}  // namespace kir
