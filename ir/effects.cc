// The effects table and the per-op memory accesses it describes.
#include "ir/effects.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "ir/check.h"

// Every op kind must have an entry in FactsFor's switch: a missing one is a
// build error, not a silent default.
#pragma GCC diagnostic error "-Wswitch"

namespace kir {

// The ordering dataflow keeps a copy of every effect it visits (one per
// access of a kernel of a million ops): keep the facts packed.
static_assert(sizeof(MemoryEffect) <= 112, "MemoryEffect grew");

const char* ProxyName(Proxy proxy) { return EnumName(proxy); }

const char* CompletionName(Completion completion) {
  switch (completion) {
    case Completion::kImmediate:
      return "immediate";
    case Completion::kMbarrier:
      return "mbarrier";
    case Completion::kBulkGroup:
      return "bulk-group";
    case Completion::kWgmmaGroup:
      return "wgmma-group";
    case Completion::kCpAsyncGroup:
      return "cp-async-group";
  }
  KIR_UNREACHABLE();
  return "";
}

const char* AccessModeName(AccessMode mode) {
  switch (mode) {
    case AccessMode::kRead:
      return "read";
    case AccessMode::kWrite:
      return "write";
    case AccessMode::kReadWrite:
      return "read-write";
  }
  KIR_UNREACHABLE();
  return "";
}

const char* ExecClassName(ExecClass exec) {
  switch (exec) {
    case ExecClass::kPerThread:
      return "per-thread";
    case ExecClass::kWarpCollective:
      return "warp-collective";
    case ExecClass::kWarpgroupCollective:
      return "warpgroup-collective";
    case ExecClass::kParticipants:
      return "participants";
    case ExecClass::kSingleIssue:
      return "single-issue";
  }
  KIR_UNREACHABLE();
  return "";
}

const char* SyncKindName(SyncKind sync) {
  switch (sync) {
    case SyncKind::kNone:
      return "none";
    case SyncKind::kBlockBarrier:
      return "block-barrier";
    case SyncKind::kNamedBarrier:
      return "named-barrier";
    case SyncKind::kNamedBarrierArrive:
      return "named-barrier-arrive";
    case SyncKind::kClusterArrive:
      return "cluster-arrive";
    case SyncKind::kClusterWait:
      return "cluster-wait";
    case SyncKind::kProxyFence:
      return "proxy-fence";
    case SyncKind::kAcqRelFence:
      return "acq-rel-fence";
    case SyncKind::kMbarrierInitFence:
      return "mbarrier-init-fence";
    case SyncKind::kMbarrierInit:
      return "mbarrier-init";
    case SyncKind::kMbarrierInval:
      return "mbarrier-inval";
    case SyncKind::kMbarrierArrive:
      return "mbarrier-arrive";
    case SyncKind::kMbarrierWait:
      return "mbarrier-wait";
    case SyncKind::kSemWait:
      return "sem-wait";
    case SyncKind::kSemRelease:
      return "sem-release";
    case SyncKind::kGroupCommit:
      return "group-commit";
    case SyncKind::kGroupWait:
      return "group-wait";
    case SyncKind::kRegisterFence:
      return "register-fence";
  }
  KIR_UNREACHABLE();
  return "";
}

const char* MemoryOrderName(MemoryOrder order) { return EnumName(order); }

const char* MemoryScopeName(MemoryScope scope) { return EnumName(scope); }

const char* DistributionName(Distribution distribution) {
  switch (distribution) {
    case Distribution::kPerThread:
      return "per-thread";
    case Distribution::kIssuer:
      return "issuer";
    case Distribution::kFragment:
      return "fragment";
  }
  KIR_UNREACHABLE();
  return "";
}

// ---------------------------------------------------------------------------
// The per-kind table.

namespace {

OpFacts Pure() { return OpFacts{}; }

OpFacts Computation() {
  OpFacts facts;
  facts.computes = true;
  return facts;
}

OpFacts Effectful(ExecClass exec = ExecClass::kPerThread,
                  SyncKind sync = SyncKind::kNone) {
  OpFacts facts;
  facts.exec = exec;
  facts.sync = sync;
  facts.has_side_effects = true;
  return facts;
}

OpFacts Async(ExecClass exec, Completion completion,
              std::optional<TokenKind> group = std::nullopt) {
  OpFacts facts = Effectful(exec);
  facts.completion = completion;
  facts.group = group;
  return facts;
}

OpFacts GroupOp(ExecClass exec, SyncKind sync, TokenKind group) {
  OpFacts facts = Effectful(exec, sync);
  facts.group = group;
  return facts;
}

OpFacts FactsFor(OpKind kind) {
  switch (kind) {
    // Pure per-thread computation.
    case OpKind::kConst:
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
      return Computation();
    case OpKind::kAllocShared:
    case OpKind::kAllocReg:
    case OpKind::kAllocWorkspace:
      return Pure();

    // Memory.
    case OpKind::kLoad:
      return Pure();  // reads, but removable when unused
    case OpKind::kStore:
      return Effectful();
    case OpKind::kStoreRemote:
      return Async(ExecClass::kPerThread, Completion::kMbarrier);
    case OpKind::kCpAsync:
      return Async(ExecClass::kPerThread, Completion::kCpAsyncGroup,
                   TokenKind::kCpAsync);
    case OpKind::kCpAsyncCommit:
      return GroupOp(ExecClass::kPerThread, SyncKind::kGroupCommit,
                     TokenKind::kCpAsync);
    case OpKind::kCpAsyncWait:
      return GroupOp(ExecClass::kPerThread, SyncKind::kGroupWait,
                     TokenKind::kCpAsync);
    case OpKind::kLdmatrix:
    case OpKind::kStmatrix:
      return Effectful(ExecClass::kWarpCollective);
    case OpKind::kTmaLoad:
      return Async(ExecClass::kSingleIssue, Completion::kMbarrier);
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce:
      return Async(ExecClass::kSingleIssue, Completion::kBulkGroup,
                   TokenKind::kBulk);
    case OpKind::kTmaPrefetch:
      return Effectful(ExecClass::kSingleIssue);
    case OpKind::kBulkLoad:
      return Async(ExecClass::kSingleIssue, Completion::kMbarrier);
    case OpKind::kBulkStore:
      return Async(ExecClass::kSingleIssue, Completion::kBulkGroup,
                   TokenKind::kBulk);
    case OpKind::kBulkCommit:
      return GroupOp(ExecClass::kSingleIssue, SyncKind::kGroupCommit,
                     TokenKind::kBulk);
    case OpKind::kBulkWait:
      return GroupOp(ExecClass::kSingleIssue, SyncKind::kGroupWait,
                     TokenKind::kBulk);

    // Warpgroup matrix multiply-accumulate.
    case OpKind::kWgmmaFence:
      return Effectful(ExecClass::kWarpgroupCollective,
                       SyncKind::kRegisterFence);
    case OpKind::kWgmma:
      return Async(ExecClass::kWarpgroupCollective, Completion::kWgmmaGroup,
                   TokenKind::kWgmma);
    case OpKind::kWgmmaCommit:
      return GroupOp(ExecClass::kWarpgroupCollective, SyncKind::kGroupCommit,
                     TokenKind::kWgmma);
    case OpKind::kWgmmaWait:
      return GroupOp(ExecClass::kWarpgroupCollective, SyncKind::kGroupWait,
                     TokenKind::kWgmma);

    // Synchronization.
    case OpKind::kBarrierBlock:
      return Effectful(ExecClass::kParticipants, SyncKind::kBlockBarrier);
    case OpKind::kBarrierNamed:
      return Effectful(ExecClass::kParticipants, SyncKind::kNamedBarrier);
    case OpKind::kBarrierArrive:
      return Effectful(ExecClass::kParticipants, SyncKind::kNamedBarrierArrive);
    case OpKind::kBarrierRed:
      // A named barrier (bar.red waits like bar.sync) that also combines
      // one predicate of each participant.
      return Effectful(ExecClass::kParticipants, SyncKind::kNamedBarrier);
    case OpKind::kClusterArrive:
      return Effectful(ExecClass::kParticipants, SyncKind::kClusterArrive);
    case OpKind::kClusterWait:
      return Effectful(ExecClass::kParticipants, SyncKind::kClusterWait);
    case OpKind::kFenceProxyAsync:
      return Effectful(ExecClass::kPerThread, SyncKind::kProxyFence);
    case OpKind::kFenceAcqRel:
      return Effectful(ExecClass::kPerThread, SyncKind::kAcqRelFence);
    case OpKind::kFenceMbarrierInit:
      return Effectful(ExecClass::kPerThread, SyncKind::kMbarrierInitFence);
    case OpKind::kMbarrierInit:
      return Effectful(ExecClass::kSingleIssue, SyncKind::kMbarrierInit);
    case OpKind::kMbarrierArrive:
      return Effectful(ExecClass::kPerThread, SyncKind::kMbarrierArrive);
    case OpKind::kMbarrierArriveTx:
      return Effectful(ExecClass::kSingleIssue, SyncKind::kMbarrierArrive);
    case OpKind::kMbarrierArriveRemote:
      return Effectful(ExecClass::kPerThread, SyncKind::kMbarrierArrive);
    case OpKind::kMbarrierWait:
      return Effectful(ExecClass::kPerThread, SyncKind::kMbarrierWait);
    case OpKind::kMbarrierInval:
      return Effectful(ExecClass::kSingleIssue, SyncKind::kMbarrierInval);
    case OpKind::kElectSync:
    case OpKind::kShflSync:
      return Effectful(ExecClass::kWarpCollective);
    case OpKind::kSetMaxNReg:
      return Effectful(ExecClass::kWarpgroupCollective);
    case OpKind::kSemWait:
      return Effectful(ExecClass::kPerThread, SyncKind::kSemWait);
    case OpKind::kSemRelease:
      return Effectful(ExecClass::kSingleIssue, SyncKind::kSemRelease);
    case OpKind::kAtomic:
    case OpKind::kReduce:
      return Effectful();

    // Raw PTX may do anything its text says.
    case OpKind::kPtx:
      return Effectful();

    // Control flow: kept; a pass may still drop one whose regions are empty.
    case OpKind::kFor:
    case OpKind::kIf:
    case OpKind::kRole:
    case OpKind::kReturn:
      return Effectful();
    case OpKind::kSplitK:
      return Effectful(ExecClass::kParticipants);
  }
  KIR_UNREACHABLE() << "no effects entry for op kind "
                    << static_cast<int>(kind);
  return {};
}

// Ops issued as one instruction (or one runtime call with an `_if` form)
// that a thread predicate can guard without a branch.
bool Predicable(OpKind kind) {
  switch (kind) {
    case OpKind::kTmaLoad:
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce:
    case OpKind::kTmaPrefetch:
    case OpKind::kBulkLoad:
    case OpKind::kBulkStore:
    case OpKind::kBulkCommit:
    case OpKind::kBulkWait:
    case OpKind::kMbarrierInit:
    case OpKind::kMbarrierInval:
    case OpKind::kMbarrierArrive:
    case OpKind::kMbarrierArriveTx:
    case OpKind::kMbarrierArriveRemote:
    case OpKind::kMbarrierWait:
    case OpKind::kSemWait:
    case OpKind::kSemRelease:
    case OpKind::kFenceProxyAsync:
    case OpKind::kFenceAcqRel:
    case OpKind::kFenceMbarrierInit:
    case OpKind::kCpAsync:
    case OpKind::kCpAsyncCommit:
    case OpKind::kCpAsyncWait:
    case OpKind::kReduce:
      return true;
    default:
      return false;
  }
}

std::vector<OpFacts> BuildFactsTable() {
  std::vector<OpFacts> table;
  table.reserve(kNumOpKinds);
  for (int i = 0; i < kNumOpKinds; ++i) {
    table.push_back(FactsFor(static_cast<OpKind>(i)));
    table.back().predicable = Predicable(static_cast<OpKind>(i));
  }
  return table;
}

}  // namespace

const OpFacts& FactsOf(OpKind kind) {
  static const std::vector<OpFacts>* table =
      new std::vector<OpFacts>(BuildFactsTable());
  int index = static_cast<int>(kind);
  KIR_CHECK(index >= 0 && index < kNumOpKinds) << "bad op kind " << index;
  return (*table)[index];
}

// ---------------------------------------------------------------------------
// Memory effects of one op.

namespace {

const Kernel* KernelOf(const Op& op) {
  return op.parent_region() ? op.parent_region()->kernel() : nullptr;
}

int RankOf(const Value* buffer) {
  return buffer->type().is_buffer() ? buffer->type().rank() : 0;
}

int ElementBytes(const Value* buffer) {
  const Type& type = buffer->type();
  if (type.is_buffer() || type.is_tensor_map()) return DTypeBytes(type.dtype());
  return 1;
}

// Fits `box` (innermost last) to a buffer of `rank` dimensions into
// `fitted`: pads with leading 1s, or folds extra leading dimensions into the
// outermost kept one. Without a heap allocation up to rank 4 (the passes
// ask for every op's effects several times).
void FitBox(absl::Span<const int64_t> box, int rank,
            absl::InlinedVector<int64_t, 4>& fitted) {
  fitted.clear();
  if (rank <= 0) return;
  const int size = static_cast<int>(box.size());
  if (size <= rank) {
    fitted.assign(rank - size, 1);
    fitted.insert(fitted.end(), box.begin(), box.end());
    return;
  }
  fitted.assign(box.end() - rank, box.end());
  for (int i = 0; i < size - rank; ++i) fitted[0] *= box[i];
}

int64_t CeilDiv(int64_t a, int64_t b) { return b <= 0 ? a : (a + b - 1) / b; }

// Builds effects for one op, skipping operands that are not what the op's
// spec needs (so that unverified IR never crashes the table).
class EffectBuilder {
 public:
  explicit EffectBuilder(const Op& op) : op_(op) {}

  // An access of the buffer in `slot` (a buffer or tensor-map operand).
  // Returns null if the slot does not hold one.
  MemoryEffect* Access(int slot, AccessMode mode, Proxy proxy,
                       Completion completion, Distribution distribution) {
    if (slot >= op_.num_operands()) return nullptr;
    const Operand& operand = op_.operand(slot);
    if (operand.value == nullptr) return nullptr;
    const Type& type = operand.value->type();
    if (!type.is_buffer() && !type.is_tensor_map()) return nullptr;
    MemoryEffect effect;
    effect.operand = slot;
    effect.buffer = operand.value;
    effect.mode = mode;
    effect.proxy = proxy;
    effect.completion = completion;
    effect.distribution = distribution;
    if (type.is_buffer()) {
      effect.space = type.space();
    } else {
      // A tensor map addresses its global tensor.
      effect.space = MemorySpace::kGlobal;
      effect.tensor_map = operand.value;
      if (const Kernel* kernel = KernelOf(op_)) {
        const Param* param = kernel->FindParam(operand.value);
        if (param != nullptr && param->tensor != nullptr) {
          effect.buffer = param->tensor;
        }
      }
    }
    if (operand.indexed) {
      effect.origin.assign(operand.indices.begin(), operand.indices.end());
    } else {
      effect.whole_buffer = true;
    }
    effects_.push_back(std::move(effect));
    return &effects_.back();
  }

  // Like Access, with a box; whole-buffer accesses keep no box.
  MemoryEffect* Box(int slot, AccessMode mode, Proxy proxy,
                    Completion completion, Distribution distribution,
                    absl::Span<const int64_t> box) {
    MemoryEffect* effect = Access(slot, mode, proxy, completion, distribution);
    if (effect != nullptr && !effect->whole_buffer) {
      int rank = effect->tensor_map != nullptr
                     ? static_cast<int>(effect->origin.size())
                     : RankOf(effect->buffer);
      FitBox(box, rank, effect->extent);
    }
    return effect;
  }

  const Value* BufferAt(int slot) const {
    if (slot >= op_.num_operands()) return nullptr;
    return op_.operand(slot).value;
  }

  MemoryEffects Take() { return std::move(effects_); }

 private:
  const Op& op_;
  MemoryEffects effects_;
};

void SetOrder(MemoryEffect* effect, MemoryOrder order, MemoryScope scope) {
  if (effect == nullptr) return;
  effect->order = order;
  effect->scope = scope;
}

// The TMA box of the map operand in `slot` (the type's own), or empty.
absl::Span<const int64_t> MapBox(const Op& op, int slot) {
  if (slot >= op.num_operands() || op.operand(slot).value == nullptr) return {};
  const Type& type = op.operand(slot).value->type();
  if (!type.is_tensor_map()) return {};
  return type.box();
}

std::array<int64_t, 2> MatrixBox(const Op& op) {
  int64_t count = op.count();
  std::array<int64_t, 2> box = count == 1   ? std::array<int64_t, 2>{8, 8}
                               : count == 2 ? std::array<int64_t, 2>{16, 8}
                                            : std::array<int64_t, 2>{16, 16};
  if (op.trans()) std::swap(box[0], box[1]);
  return box;
}

void AddWgmmaEffects(const Op& op, EffectBuilder& builder) {
  // Unverified ops may lack the required n.
  const int64_t n = op.has_n() ? op.n() : 0;
  const Value* b = builder.BufferAt(2);
  const Value* a = builder.BufferAt(1);
  const Value* typed = b != nullptr ? b : a;
  const int64_t k =
      typed != nullptr ? 32 / std::max(1, ElementBytes(typed)) : 16;
  AccessMode acc_mode =
      op.zero_init() ? AccessMode::kWrite : AccessMode::kReadWrite;
  builder.Box(0, acc_mode, Proxy::kGeneric, Completion::kWgmmaGroup,
              Distribution::kPerThread, {n / 2});
  if (a != nullptr && a->type().is_buffer() &&
      a->type().space() == MemorySpace::kRegister) {
    builder.Box(1, AccessMode::kRead, Proxy::kGeneric, Completion::kWgmmaGroup,
                Distribution::kPerThread, {k / 2});
  } else {
    std::vector<int64_t> box = op.a_major() == Major::kM
                                   ? std::vector<int64_t>{k, 64}
                                   : std::vector<int64_t>{64, k};
    builder.Box(1, AccessMode::kRead, Proxy::kAsync, Completion::kWgmmaGroup,
                Distribution::kFragment, box);
  }
  std::vector<int64_t> b_box = op.b_major() == Major::kN
                                   ? std::vector<int64_t>{k, n}
                                   : std::vector<int64_t>{n, k};
  builder.Box(2, AccessMode::kRead, Proxy::kAsync, Completion::kWgmmaGroup,
              Distribution::kFragment, b_box);
}

}  // namespace

namespace {
EffectsFault effects_fault = EffectsFault::kNone;
}  // namespace

void SetEffectsFaultForTesting(EffectsFault fault) { effects_fault = fault; }

MemoryEffects MemoryEffectsOf(const Op& op) {
  EffectBuilder builder(op);
  using M = AccessMode;
  using D = Distribution;
  const Proxy generic = Proxy::kGeneric;
  const Proxy async = Proxy::kAsync;
  const Completion now = Completion::kImmediate;
  switch (op.kind()) {
    case OpKind::kLoad: {
      int lanes = op.num_results() > 0 ? op.result()->type().lanes() : 1;
      builder.Box(0, M::kRead, generic, now, D::kPerThread, {lanes});
      break;
    }
    case OpKind::kStore: {
      const Value* value = builder.BufferAt(1);
      int lanes = value != nullptr ? value->type().lanes() : 1;
      builder.Box(0, M::kWrite, generic, now, D::kPerThread, {lanes});
      break;
    }
    case OpKind::kStoreRemote: {
      // st.async into the peer's copy; its complete-tx on the peer's
      // mbarrier releases at cluster scope.
      const Value* value = builder.BufferAt(1);
      int lanes = value != nullptr ? value->type().lanes() : 1;
      MemoryEffect* dst = builder.Box(
          0, M::kWrite, generic, Completion::kMbarrier, D::kPerThread, {lanes});
      if (dst != nullptr) dst->remote = true;
      MemoryEffect* bar = builder.Box(
          2, M::kReadWrite, generic, Completion::kMbarrier, D::kPerThread, {1});
      SetOrder(bar, MemoryOrder::kRelease, MemoryScope::kCluster);
      if (bar != nullptr) bar->remote = true;
      break;
    }
    case OpKind::kCpAsync: {
      const int64_t bytes = op.bytes();
      for (int slot = 0; slot < 2; ++slot) {
        const Value* buffer = builder.BufferAt(slot);
        if (buffer == nullptr) continue;
        builder.Box(slot, slot == 0 ? M::kWrite : M::kRead, generic,
                    Completion::kCpAsyncGroup, D::kPerThread,
                    {CeilDiv(bytes, ElementBytes(buffer))});
      }
      break;
    }
    case OpKind::kLdmatrix:
      builder.Box(0, M::kRead, generic, now, D::kFragment, MatrixBox(op));
      break;
    case OpKind::kStmatrix:
      builder.Box(0, M::kWrite, generic, now, D::kFragment, MatrixBox(op));
      break;
    case OpKind::kTmaLoad: {
      const bool multicast = op.multicast().has_value();
      const absl::Span<const int64_t> box = MapBox(op, 1);
      MemoryEffect* smem = builder.Box(0, M::kWrite, async,
                                       Completion::kMbarrier, D::kIssuer, box);
      if (smem != nullptr) smem->multicast = multicast;
      builder.Box(1, M::kRead, async, Completion::kMbarrier, D::kIssuer, box);
      // The complete-tx on the mbarrier goes through the generic proxy and
      // releases at cluster scope.
      MemoryEffect* bar = builder.Box(2, M::kReadWrite, generic,
                                      Completion::kMbarrier, D::kIssuer, {1});
      SetOrder(bar, MemoryOrder::kRelease, MemoryScope::kCluster);
      if (bar != nullptr) bar->multicast = multicast;
      break;
    }
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce: {
      const absl::Span<const int64_t> box = MapBox(op, 0);
      // A reduction reads the global values it combines with.
      builder.Box(0,
                  op.kind() == OpKind::kTmaReduce ? M::kReadWrite : M::kWrite,
                  async, Completion::kBulkGroup, D::kIssuer, box);
      if (op.kind() != OpKind::kTmaStore ||
          effects_fault != EffectsFault::kTmaStoreReadsNoSharedMemory) {
        builder.Box(1, M::kRead, async, Completion::kBulkGroup, D::kIssuer,
                    box);
      }
      break;
    }
    case OpKind::kTmaPrefetch:
      break;  // a hint: touches no memory the program can observe
    case OpKind::kBulkLoad:
    case OpKind::kBulkStore: {
      const bool load = op.kind() == OpKind::kBulkLoad;
      const Completion completion =
          load ? Completion::kMbarrier : Completion::kBulkGroup;
      // Unverified ops may lack the required bytes.
      const int64_t bytes = op.has_bytes() ? op.bytes() : 0;
      for (int slot = 0; slot < 2; ++slot) {
        const Value* buffer = builder.BufferAt(slot);
        if (buffer == nullptr) continue;
        builder.Box(slot, slot == 0 ? M::kWrite : M::kRead, async, completion,
                    D::kIssuer, {CeilDiv(bytes, ElementBytes(buffer))});
      }
      if (load) {
        MemoryEffect* bar = builder.Box(2, M::kReadWrite, generic,
                                        Completion::kMbarrier, D::kIssuer, {1});
        SetOrder(bar, MemoryOrder::kRelease, MemoryScope::kCluster);
      }
      break;
    }
    case OpKind::kWgmma:
      AddWgmmaEffects(op, builder);
      break;
    case OpKind::kMbarrierInit:
      builder.Box(0, M::kWrite, generic, now, D::kIssuer, {1});
      break;
    case OpKind::kMbarrierInval:
      builder.Box(0, M::kWrite, generic, now, D::kIssuer, {1});
      break;
    case OpKind::kMbarrierArrive:
      SetOrder(builder.Box(0, M::kReadWrite, generic, now, D::kPerThread, {1}),
               MemoryOrder::kRelease, MemoryScope::kCta);
      break;
    case OpKind::kMbarrierArriveTx:
      SetOrder(builder.Box(0, M::kReadWrite, generic, now, D::kIssuer, {1}),
               MemoryOrder::kRelease, MemoryScope::kCta);
      break;
    case OpKind::kMbarrierArriveRemote: {
      // mbarrier.arrive{.release.cluster}.shared::cluster on the peer's
      // copy: release at the scope it names.
      MemoryEffect* bar =
          builder.Box(0, M::kReadWrite, generic, now, D::kPerThread, {1});
      SetOrder(bar, MemoryOrder::kRelease, op.scope());
      if (bar != nullptr) bar->remote = true;
      break;
    }
    case OpKind::kMbarrierWait:
      SetOrder(builder.Box(0, M::kRead, generic, now, D::kPerThread, {1}),
               MemoryOrder::kAcquire, op.scope());
      break;
    case OpKind::kSemWait:
    case OpKind::kSemRelease: {
      const bool wait = op.kind() == OpKind::kSemWait;
      MemoryEffect* effect =
          builder.Box(0, wait ? M::kRead : M::kWrite, generic, now,
                      wait ? D::kPerThread : D::kIssuer, {1});
      SetOrder(effect, wait ? MemoryOrder::kAcquire : MemoryOrder::kRelease,
               op.scope());
      break;
    }
    case OpKind::kAtomic:
    case OpKind::kReduce: {
      MemoryEffect* effect =
          builder.Box(0, M::kReadWrite, generic, now, D::kPerThread, {1});
      SetOrder(effect, op.order(), op.scope());
      break;
    }
    case OpKind::kPtx: {
      const Proxy proxy = op.proxy();
      const int reads = static_cast<int>(op.reads());
      const int writes = static_cast<int>(op.writes());
      const int first = op.num_operands() - reads - writes;
      if (first < 0 || reads < 0 || writes < 0) break;
      for (int i = 0; i < reads + writes; ++i) {
        builder.Access(first + i, i < reads ? M::kRead : M::kWrite, proxy, now,
                       D::kPerThread);
      }
      break;
    }
    case OpKind::kSplitK:
      // The cross-block reduction combines every block's partial.
      builder.Access(0, M::kReadWrite, generic, now, D::kPerThread);
      break;
    default:
      break;  // no memory effects
  }
  return builder.Take();
}

bool CanIssuePredicated(const Op& if_op, std::string* why) {
  auto fail = [&](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return false;
  };
  if (if_op.kind() != OpKind::kIf) return fail("not an if");
  const Op* condition = if_op.operand_value(0)->defining_op();
  if (condition == nullptr || condition->kind() != OpKind::kElectSync) {
    return fail("its condition is not an elect.sync result");
  }
  if (if_op.num_regions() > 1 && !if_op.region(1).empty()) {
    return fail("it has an else region");
  }
  for (const auto& inner : if_op.region(0).ops()) {
    const OpFacts& facts = FactsOf(inner->kind());
    if (!facts.computes && !facts.predicable) {
      return fail(absl::StrCat("its body holds '", inner->mnemonic(),
                               "', which has no predicated form"));
    }
  }
  return true;
}

bool IsPlainComputation(const Op& op) {
  return !FactsOf(op.kind()).has_side_effects && op.num_regions() == 0 &&
         MemoryEffectsOf(op).empty();
}

bool HoldsSingleIssue(const Region& region) {
  for (const auto& op : region.ops()) {
    if (FactsOf(op->kind()).exec == ExecClass::kSingleIssue) return true;
  }
  return false;
}

bool ProxyFenceOrders(const Op& op, MemorySpace space) {
  if (FactsOf(op.kind()).sync != SyncKind::kProxyFence) return false;
  const FenceSpace fenced = op.space();
  switch (space) {
    case MemorySpace::kShared:
      return fenced == FenceSpace::kAll || fenced == FenceSpace::kSharedCta ||
             fenced == FenceSpace::kSharedCluster;
    case MemorySpace::kGlobal:
      return fenced == FenceSpace::kAll || fenced == FenceSpace::kGlobal;
    case MemorySpace::kRegister:
      return false;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Description.

namespace {

std::string Ref(const Value* value) {
  return value != nullptr ? absl::StrCat("%", value->name()) : "%?";
}

std::string DescribeAccess(const MemoryEffect& effect) {
  std::string line =
      absl::StrCat(AccessModeName(effect.mode), " ", Ref(effect.buffer));
  if (effect.whole_buffer) {
    absl::StrAppend(&line, " whole");
  } else {
    absl::StrAppend(&line, "[",
                    absl::StrJoin(effect.origin, ", ",
                                  [](std::string* out, const Value* index) {
                                    out->append(Ref(index));
                                  }),
                    "]");
  }
  if (effect.tensor_map != nullptr) {
    absl::StrAppend(&line, " via ", Ref(effect.tensor_map));
  }
  if (!effect.whole_buffer) {
    absl::StrAppend(&line, " box [", absl::StrJoin(effect.extent, ", "), "]");
  }
  absl::StrAppend(&line, " ", MemorySpaceName(effect.space), " ",
                  ProxyName(effect.proxy), " ",
                  CompletionName(effect.completion), " ",
                  DistributionName(effect.distribution));
  if (effect.order != MemoryOrder::kWeak) {
    absl::StrAppend(&line, " ", MemoryOrderName(effect.order), ".",
                    MemoryScopeName(effect.scope));
  }
  if (effect.multicast) absl::StrAppend(&line, " multicast");
  if (effect.remote) absl::StrAppend(&line, " remote");
  return line;
}

}  // namespace

std::string DescribeEffects(const Op& op) {
  std::string text;
  for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
    absl::StrAppend(&text, DescribeAccess(effect), "\n");
  }
  const OpFacts& facts = FactsOf(op.kind());
  absl::StrAppend(&text, "exec ", ExecClassName(facts.exec));
  if (facts.sync != SyncKind::kNone) {
    absl::StrAppend(&text, ", sync ", SyncKindName(facts.sync));
    if (facts.group.has_value() && (facts.sync == SyncKind::kGroupCommit ||
                                    facts.sync == SyncKind::kGroupWait)) {
      absl::StrAppend(&text, "(", TokenKindName(*facts.group), ")");
    }
  }
  if (facts.has_side_effects) absl::StrAppend(&text, ", side-effects");
  return text;
}

Completion GroupCompletion(TokenKind kind) {
  switch (kind) {
    case TokenKind::kBulk:
      return Completion::kBulkGroup;
    case TokenKind::kWgmma:
      return Completion::kWgmmaGroup;
    case TokenKind::kCpAsync:
      return Completion::kCpAsyncGroup;
  }
  KIR_CHECK(false) << "unknown token kind";
  return Completion::kImmediate;
}

}  // namespace kir
