#include "tools/kir-check/program.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/diagnostics.h"
#include "tools/kir-check/values.h"

namespace kir::check {

bool IsArithmetic(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kRem:
    case OpKind::kMin:
    case OpKind::kMax:
    case OpKind::kAnd:
    case OpKind::kOr:
    case OpKind::kXor:
    case OpKind::kShl:
    case OpKind::kShr:
    case OpKind::kNot:
    case OpKind::kNeg:
    case OpKind::kAbs:
    case OpKind::kExp:
    case OpKind::kSqrt:
    case OpKind::kFma:
      return true;
    default:
      return false;
  }
}

std::optional<Exec> ExecOf(OpKind kind) {
  if (IsArithmetic(kind)) return Exec::kThread;
  switch (kind) {
    case OpKind::kConst:
    case OpKind::kCmp:
    case OpKind::kSelect:
    case OpKind::kCast:
    case OpKind::kVecFrom:
    case OpKind::kVecExtract:
    case OpKind::kThreadId:
    case OpKind::kBlockId:
    case OpKind::kBlockDim:
    case OpKind::kGridDim:
    case OpKind::kClusterCtaId:
    case OpKind::kClusterCtaRank:
    case OpKind::kLaneId:
    case OpKind::kWarpId:
    case OpKind::kAllocShared:
    case OpKind::kAllocReg:
    case OpKind::kAllocWorkspace:
    case OpKind::kLoad:
    case OpKind::kStore:
    case OpKind::kStoreRemote:
    // cp.async and its groups: per thread (cp.async.commit_group and
    // wait_group are not `.aligned`).
    case OpKind::kCpAsync:
    case OpKind::kCpAsyncCommit:
    case OpKind::kCpAsyncWait:
    // Bulk groups are per thread (PTX: "per-thread bulk async-group").
    case OpKind::kBulkCommit:
    case OpKind::kBulkWait:
    case OpKind::kTmaPrefetch:
    case OpKind::kFenceProxyAsync:
    case OpKind::kFenceAcqRel:
    case OpKind::kFenceMbarrierInit:
    case OpKind::kMbarrierArrive:
    case OpKind::kMbarrierArriveRemote:
    case OpKind::kMbarrierWait:
    case OpKind::kSemWait:
    case OpKind::kAtomic:
    case OpKind::kReduce:
      return Exec::kThread;
    // Per-thread instructions whose every execution issues a copy, an
    // arrival or a store: one instance is meant to run in one thread.
    case OpKind::kTmaLoad:
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce:
    case OpKind::kBulkLoad:
    case OpKind::kBulkStore:
    case OpKind::kMbarrierInit:
    case OpKind::kMbarrierInval:
    case OpKind::kMbarrierArriveTx:
    case OpKind::kSemRelease:
      return Exec::kSingle;
    case OpKind::kLdmatrix:
    case OpKind::kStmatrix:
    case OpKind::kElectSync:
    case OpKind::kShflSync:
      return Exec::kWarp;
    case OpKind::kWgmmaFence:
    case OpKind::kWgmma:
    case OpKind::kWgmmaCommit:
    case OpKind::kWgmmaWait:
    case OpKind::kSetMaxNReg:
      return Exec::kWarpgroup;
    case OpKind::kBarrierBlock:
    case OpKind::kBarrierNamed:
    case OpKind::kBarrierArrive:
    case OpKind::kBarrierRed:
    case OpKind::kClusterArrive:
    case OpKind::kClusterWait:
      return Exec::kBarrier;
    case OpKind::kFor:
    case OpKind::kIf:
    case OpKind::kRole:
    case OpKind::kSplitK:
    case OpKind::kReturn:
      return Exec::kControl;
    case OpKind::kPtx:
      // Raw PTX text has no meaning the interpreter could execute.
      return std::nullopt;
    default:  // the arithmetic kinds, returned above
      break;
  }
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<Program>> Program::Create(const Kernel& kernel) {
  std::unique_ptr<Program> program(new Program());
  if (absl::Status s = program->Prepare(kernel); !s.ok()) return s;
  return program;
}

const ValueSlot* Program::SlotOf(const Value* value) const {
  auto found = slots_.find(value);
  return found == slots_.end() ? nullptr : &found->second;
}

int Program::BufferOf(const Value* value) const {
  auto found = buffer_ids_.find(value);
  return found == buffer_ids_.end() ? -1 : found->second;
}

const OpRec* Program::RecordOf(const Op* op) const {
  auto found = records_.find(op);
  return found == records_.end() ? nullptr : found->second;
}

void Program::AddValue(const Value* value) {
  if (slots_.count(value)) return;
  const Type& type = value->type();
  ValueSlot slot;
  slot.offset = lane_count_;
  slot.lanes = type.is_vector() ? type.lanes() : 1;
  slot.dtype = type.dtype();
  if (type.is_token()) slot.dtype = DType::kI64;
  lane_count_ += slot.lanes;
  slots_.emplace(value, slot);
  if (type.is_buffer() && value->kind() == Value::Kind::kResult) {
    BufferRec buffer;
    buffer.value = value;
    buffer.id = static_cast<int>(buffers_.size());
    buffer.space = type.space();
    buffer.dtype = type.dtype();
    buffer.alloc = value->defining_op();
    buffer.is_workspace = buffer.alloc->kind() == OpKind::kAllocWorkspace;
    if (buffer.space != MemorySpace::kGlobal) {
      for (const IndexExpr& extent : type.shape())
        buffer.static_shape.push_back(extent.AsConstant().value_or(-1));
    }
    buffer_ids_.emplace(value, buffer.id);
    buffers_.push_back(std::move(buffer));
  }
}

absl::Status Program::Prepare(const Kernel& kernel) {
  kernel_ = &kernel;
  for (const auto& size : kernel.sizes()) AddValue(size.get());
  for (const Param& param : kernel.params()) {
    if (param.kind == Param::Kind::kTensor) {
      AddValue(param.value);
      BufferRec buffer;
      buffer.value = param.value;
      buffer.id = static_cast<int>(buffers_.size());
      buffer.space = MemorySpace::kGlobal;
      buffer.dtype = param.value->type().dtype();
      buffer.is_param = true;
      buffer_ids_.emplace(param.value, buffer.id);
      buffers_.push_back(std::move(buffer));
    } else if (param.kind == Param::Kind::kScalar) {
      AddValue(param.value);
    }
  }
  for (const Param& param : kernel.params()) {
    if (param.kind != Param::Kind::kTensorMap) continue;
    TensorMapRec map;
    map.param = &param;
    map.id = static_cast<int>(maps_.size());
    // A map over a workspace: the allocation's buffer, made here before
    // the body's values.
    if (param.tensor != nullptr &&
        param.tensor->kind() == Value::Kind::kResult &&
        param.tensor->defining_op()->kind() == OpKind::kAllocWorkspace) {
      AddValue(param.tensor);
    }
    const int tensor = BufferOf(param.tensor);
    if (tensor < 0) {
      return Error(param.value->loc())
             << "tensor map %" << param.value->name()
             << " does not map a tensor parameter or a workspace";
    }
    map.tensor = tensor;
    map.dtype = param.value->type().dtype();
    map.box = param.value->type().box();
    map.swizzle = param.swizzle;
    map.oob_nan = param.oob == OobFill::kNan;
    map_ids_.emplace(param.value, map.id);
    maps_.push_back(std::move(map));
  }
  // Every value a slot first, so that a token used before its commit (the
  // `%t@1` of a loop) resolves.
  Walk(kernel.body(), [&](const Op& op) {
    for (int r = 0; r < op.num_regions(); ++r) {
      const Region& region = op.region(r);
      for (int a = 0; a < region.num_arguments(); ++a)
        AddValue(region.argument(a));
    }
    for (int i = 0; i < op.num_results(); ++i) AddValue(op.result(i));
  });
  body_ = std::make_unique<RegionRec>();
  if (absl::Status s = AddRegion(kernel.body(), nullptr, 0, 0, *body_); !s.ok())
    return s;
  return PlanShared();
}

absl::Status Program::AddRegion(const Region& region, const OpRec* owner,
                                int index, int loop_depth, RegionRec& out) {
  out.region = &region;
  out.owner = owner;
  out.index_in_owner = index;
  if (region.num_arguments() > 0)
    out.argument = SlotOf(region.argument(0))->offset;
  for (int i = 0; i < region.size(); ++i) {
    auto record = std::make_unique<OpRec>();
    if (absl::Status s = AddOp(region.op(i), loop_depth, *record); !s.ok())
      return s;
    out.ops.push_back(std::move(record));
  }
  return absl::OkStatus();
}

absl::Status Program::AddOp(const Op& op, int loop_depth, OpRec& out) {
  out.op = &op;
  out.kind = op.kind();
  out.id = static_cast<int>(ops_.size());
  out.loop_depth = loop_depth;
  ops_.push_back(&out);
  records_.emplace(&op, &out);
  std::optional<Exec> exec = ExecOf(op.kind());
  if (!exec.has_value()) {
    return Error(op.loc()) << "kir-check does not model `" << op.mnemonic()
                           << "`"
                           << (op.kind() == OpKind::kPtx
                                   ? " (raw PTX has no meaning it could "
                                     "execute)"
                                   : "");
  }
  out.exec = *exec;
  for (int i = 0; i < op.num_operands(); ++i) {
    const Operand& operand = op.operand(i);
    const Value* value = operand.value;
    int resolved = -1;
    bool is_map = false;
    if (value == nullptr) {
      return Error(op.loc())
             << "operand " << i << " of `" << op.mnemonic() << "` is missing";
    }
    if (value->type().is_tensor_map()) {
      auto found = map_ids_.find(value);
      if (found == map_ids_.end()) {
        return Error(op.loc())
               << "%" << value->name() << " is not a tensor map parameter";
      }
      resolved = found->second;
      is_map = true;
    } else if (value->type().is_buffer()) {
      resolved = BufferOf(value);
      if (resolved < 0) {
        return Error(op.loc()) << "%" << value->name()
                               << " is not a buffer the interpreter knows";
      }
    } else {
      const ValueSlot* slot = SlotOf(value);
      if (slot == nullptr) {
        return Error(op.loc()) << "%" << value->name() << " has no definition";
      }
      resolved = slot->offset;
    }
    out.operand_dtype.push_back(value->type().dtype());
    out.operand_lanes.push_back(
        value->type().is_vector() ? value->type().lanes() : 1);
    out.operand.push_back(resolved);
    out.is_map.push_back(is_map);
    std::vector<int> indices;
    for (const Value* index : operand.indices) {
      const ValueSlot* slot = SlotOf(index);
      if (slot == nullptr) {
        return Error(op.loc())
               << "index %" << index->name() << " has no definition";
      }
      indices.push_back(slot->offset);
    }
    out.indices.push_back(std::move(indices));
    out.distance.push_back(operand.distance);
    max_token_distance_ = std::max(max_token_distance_, operand.distance);
  }
  for (int i = 0; i < op.num_results(); ++i)
    out.result.push_back(SlotOf(op.result(i))->offset);
  if (op.num_results() > 0) {
    const Type& type = op.result(0)->type();
    out.result_dtype = type.is_token() ? DType::kI64 : type.dtype();
    out.result_lanes = type.is_vector() ? type.lanes() : 1;
  }
  if (op.kind() == OpKind::kConst && op.num_results() == 1) {
    const Attribute& value = op.value();
    const DType dtype = op.result(0)->type().dtype();
    if (IsFloat(dtype)) {
      const double number = value.is_integral
                                ? static_cast<double>(value.int_value)
                                : value.float_value;
      out.constant = ConstantLane(dtype, number);
    } else {
      if (!value.is_integral) {
        return Error(op.loc()) << "an integer constant needs an integer value";
      }
      out.constant = IntToLane(dtype, value.int_value);
    }
  }

  // Attributes the interpreter reads on every execution.
  switch (op.kind()) {
    case OpKind::kCmp:
      out.str_attr = EnumName(op.pred());
      break;
    case OpKind::kVecExtract:
      out.int_attr = op.lane();
      break;
    case OpKind::kThreadId:
    case OpKind::kBlockId:
    case OpKind::kBlockDim:
    case OpKind::kGridDim:
    case OpKind::kClusterCtaId:
      out.int_attr = static_cast<int>(op.dim());
      break;
    case OpKind::kCpAsync:
      out.int_attr = op.bytes();
      break;
    case OpKind::kLdmatrix:
    case OpKind::kStmatrix:
      out.int_attr = op.count();
      out.flag = op.trans();
      break;
    case OpKind::kTmaLoad:
      out.int_attr = op.multicast().value_or(0);
      break;
    case OpKind::kTmaReduce:
      out.str_attr = EnumName(op.op());
      break;
    case OpKind::kBulkLoad:
    case OpKind::kBulkStore:
      out.int_attr = op.bytes();
      break;
    case OpKind::kBulkWait:
      out.flag = op.read();
      break;
    case OpKind::kWgmma:
      out.int_attr = op.n();
      out.flag = op.zero_init();
      out.str_attr =
          absl::StrCat(EnumName(op.a_major()), EnumName(op.b_major()));
      break;
    case OpKind::kBarrierNamed:
    case OpKind::kBarrierArrive:
      out.int_attr = op.id();
      out.int_attr2 = op.threads();
      break;
    case OpKind::kBarrierRed:
      out.int_attr = op.id();
      out.int_attr2 = op.threads();
      out.str_attr = EnumName(op.op());
      break;
    case OpKind::kClusterArrive:
      out.flag = op.relaxed();
      break;
    case OpKind::kFenceProxyAsync:
      out.str_attr = EnumName(op.space());
      break;
    case OpKind::kFenceAcqRel:
      out.str_attr = EnumName(op.scope());
      break;
    case OpKind::kMbarrierInit:
      out.int_attr = op.count();
      break;
    case OpKind::kMbarrierArriveTx:
      out.int_attr = op.bytes();
      break;
    case OpKind::kShflSync:
      out.str_attr = EnumName(op.mode());
      break;
    case OpKind::kSetMaxNReg:
      out.int_attr = op.regs();
      out.str_attr = EnumName(op.action());
      break;
    case OpKind::kAtomic:
      out.str_attr = EnumName(op.op());
      out.int_attr = op.order() == MemoryOrder::kAcquire   ? 1
                     : op.order() == MemoryOrder::kRelease ? 2
                     : op.order() == MemoryOrder::kAcqRel  ? 3
                                                           : 0;
      break;
    case OpKind::kReduce:
      out.str_attr = EnumName(op.op());
      out.int_attr = op.order() == MemoryOrder::kRelease ? 2 : 0;
      break;
    case OpKind::kRole:
      out.int_attr = op.warp_begin();
      out.int_attr2 = op.warp_end();
      break;
    case OpKind::kSplitK:
      out.int_attr = static_cast<int>(op.dim());
      out.str_attr = EnumName(op.op());
      break;
    default:
      break;
  }

  for (int r = 0; r < op.num_regions(); ++r) {
    auto region = std::make_unique<RegionRec>();
    const int depth = loop_depth + (op.kind() == OpKind::kFor ? 1 : 0);
    if (absl::Status s = AddRegion(op.region(r), &out, r, depth, *region);
        !s.ok())
      return s;
    out.regions.push_back(std::move(region));
  }
  return absl::OkStatus();
}

absl::Status Program::PlanShared() {
  // In program order: an explicit offset is kept, the rest follow one
  // another at their alignment. Allocations in different roles get
  // distinct memory, like in the emitter's layout of dynamic shared memory.
  int64_t cursor = 0;
  for (BufferRec& buffer : buffers_) {
    if (buffer.space != MemorySpace::kShared) continue;
    const Op& alloc = *buffer.alloc;
    SharedLayout& layout = buffer.shared;
    layout.shape = buffer.static_shape;
    for (int64_t extent : layout.shape) {
      if (extent <= 0) {
        return Error(alloc.loc())
               << "shared allocation %" << buffer.value->name()
               << " needs a constant positive shape";
      }
    }
    layout.pad = alloc.pad();
    layout.swizzle = static_cast<int>(alloc.swizzle());
    layout.element_bytes = DTypeBytes(buffer.dtype);
    const int64_t align = std::max<int64_t>(alloc.align(), 1);
    if (const std::optional<int64_t> offset = alloc.offset()) {
      layout.base = *offset;
    } else {
      layout.base = (cursor + align - 1) / align * align;
    }
    cursor = std::max(cursor, layout.base + layout.Bytes());
    shared_granule_ = std::min(shared_granule_, layout.element_bytes);
  }
  shared_bytes_ = cursor;
  constexpr int64_t kMaxShared = 232448;
  if (shared_bytes_ > kMaxShared) {
    return Error(kernel_->loc())
           << "shared allocations need " << shared_bytes_
           << " bytes, more than the " << kMaxShared << " a block can have";
  }
  return absl::OkStatus();
}

}  // namespace kir::check
