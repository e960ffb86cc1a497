// Split-K serialization; see serialize_split_k.h.
//
// One splitk at a time: checks (where it sits, who takes part, what the
// split index reaches, how the partial is used), then the rewrite: the
// workspaces, the body in place, the turn protocol and the epilogue under
// "last split".
#include "passes/serialize_split_k.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/builder.h"
#include "ir/check.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"
#include "passes/barrier_ids.h"

namespace kir {
namespace {

constexpr char kSerializeSplitKPassName[] = "serialize-split-k";
constexpr char kSplitKLowered[] = "splitk-lowered";
constexpr char kPartialElements[] = "partial-elements";
constexpr char kVectorLanes[] = "vector-lanes";
constexpr int kMaxVectorBytes = 16;
// TMA modes: a box dimension holds at most 256 elements; the staged tile
// must fit the block's shared memory (227 KiB) with room to spare.
constexpr int64_t kMaxBoxExtent = 256;
constexpr int64_t kMaxStageBytes = 227 * 1024;
// mode=cluster: a portable cluster's CTAs, and an mbarrier phase's
// transaction count limit.
constexpr int64_t kMaxClusterSplits = 8;
constexpr int64_t kMaxTransactionBytes = (int64_t{1} << 20) - 1;

enum class Mode { kSerial, kTmaSerial, kTmaAtomic, kCluster, kGather };

std::optional<Mode> ModeNamed(absl::string_view name) {
  if (name == "serial") return Mode::kSerial;
  if (name == "tma-serial") return Mode::kTmaSerial;
  if (name == "tma-atomic") return Mode::kTmaAtomic;
  if (name == "cluster") return Mode::kCluster;
  if (name == "gather") return Mode::kGather;
  return std::nullopt;
}

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kSerial:
      return "serial";
    case Mode::kTmaSerial:
      return "tma-serial";
    case Mode::kTmaAtomic:
      return "tma-atomic";
    case Mode::kCluster:
      return "cluster";
    case Mode::kGather:
      return "gather";
  }
  return "?";
}

// The two grid dimensions other than `split_dim`, outermost first.
std::array<int, 2> TileDims(int split_dim) {
  switch (split_dim) {
    case 0:
      return {2, 1};
    case 1:
      return {2, 0};
    default:
      return {1, 0};
  }
}

// Grid dimension `dim` (0: x) as an attribute value.
Dim DimOf(int dim) { return static_cast<Dim>(dim); }

std::optional<DType> WorkType(absl::string_view name) {
  if (name == "f32") return DType::kF32;
  if (name == "bf16") return DType::kBF16;
  if (name == "f16") return DType::kF16;
  return std::nullopt;
}

// Values computed from the split index (block.id along the split
// dimension), through any op and through loop bounds.
class SplitTaint {
 public:
  SplitTaint(const Kernel& kernel, int split_dim) : split_dim_(split_dim) {
    Visit(kernel.body());
  }
  bool Tainted(const Value* value) const { return tainted_.contains(value); }
  // The first operand or index of `op` computed from the split index.
  const Value* TaintedUse(const Op& op) const {
    const Value* found = nullptr;
    op.ForEachUse([&](const Value* value) {
      if (found == nullptr && Tainted(value)) found = value;
    });
    return found;
  }

 private:
  void Visit(const Region& region) {
    for (const auto& op : region.ops()) {
      bool tainted = op->kind() == OpKind::kBlockId &&
                     static_cast<int>(op->dim()) == split_dim_;
      if (TaintedUse(*op) != nullptr) tainted = true;
      if (tainted) {
        for (int i = 0; i < op->num_results(); ++i) {
          tainted_.insert(op->result(i));
        }
        if (op->kind() == OpKind::kFor) {
          tainted_.insert(op->region(0).argument(0));
        }
      }
      for (int r = 0; r < op->num_regions(); ++r) Visit(op->region(r));
    }
  }

  int split_dim_;
  absl::flat_hash_set<const Value*> tainted_;
};

// What the checks found out about one splitk.
struct SplitPlan {
  Op* splitk = nullptr;
  Value* partial = nullptr;
  int split_dim = 2;
  const Op* role = nullptr;    // the role around the splitk, if any
  int64_t threads = 0;         // participating threads, T
  int64_t first_warp = 0;      // of the role
  std::vector<int64_t> shape;  // the partial's
  DType partial_type = DType::kF32;
  DType work_type = DType::kF32;
  int lanes = 1;  // V
  Mode mode = Mode::kSerial;
  int64_t elements = 1;  // of the partial, per thread (E)
  int vote_barrier = 0;  // tma-atomic: the named barrier id of the vote
  // tma-atomic: two work tiles alternating by launch parity, the last
  // arrival adding the others' sum to its own registers (reset=parity), or
  // one tile that the last arrival reads and zeroes (reset=last).
  bool parity_tiles = false;
  int64_t splits = 1;  // mode=cluster: the grid's constant split count
};

class Checker {
 public:
  Checker(const Kernel& kernel, Op& splitk, DType work_type, Mode mode,
          bool parity_tiles)
      : kernel_(kernel),
        splitk_(splitk),
        work_type_(work_type),
        mode_(mode),
        parity_tiles_(parity_tiles) {}

  absl::StatusOr<SplitPlan> Run() {
    SplitPlan plan;
    plan.splitk = &splitk_;
    plan.partial = splitk_.operand_value(0);
    plan.split_dim = static_cast<int>(splitk_.dim());
    plan.work_type = work_type_;
    plan.mode = mode_;
    plan.parity_tiles = parity_tiles_ && mode_ == Mode::kTmaAtomic;
    if (absl::Status s = CheckPlace(plan); !s.ok()) return s;
    if (absl::Status s = CheckPartial(plan); !s.ok()) return s;
    if (absl::Status s = CheckTma(plan); !s.ok()) return s;
    if (absl::Status s = CheckCluster(plan); !s.ok()) return s;
    if (absl::Status s = CheckReturns(); !s.ok()) return s;
    if (absl::Status s = CheckSplitIndex(plan); !s.ok()) return s;
    if (absl::Status s = CheckReadsAfter(plan); !s.ok()) return s;
    if (absl::Status s = AllocateVoteBarrier(plan); !s.ok()) return s;
    return plan;
  }

 private:
  absl::Status CheckPlace(SplitPlan& plan) {
    const Op* parent = splitk_.parent_op();
    if (parent != nullptr &&
        (parent->kind() != OpKind::kRole || parent->parent_op() != nullptr)) {
      return Error(splitk_.loc())
             << "serialize-split-k needs splitk at the kernel's top level or "
                "directly in a role, so that the threads taking turns are "
                "known; it is inside '"
             << parent->mnemonic() << "'";
    }
    const std::optional<int64_t> block = kernel_.block.StaticVolume();
    if (!block.has_value()) {
      return (Error(splitk_.loc())
              << "serialize-split-k needs a constant block shape: the "
                 "semaphore counts the threads of every split")
          .Note(kernel_.block.loc.known() ? kernel_.block.loc : kernel_.loc(),
                "the block is declared here");
    }
    plan.threads = *block;
    if (parent != nullptr) {
      plan.role = parent;
      plan.first_warp = parent->warp_begin();
      plan.threads = (parent->warp_end() - plan.first_warp) * 32;
    }
    return absl::OkStatus();
  }

  absl::Status CheckPartial(SplitPlan& plan) {
    const Type& type = plan.partial->type();
    // V50 makes it a register buffer, whose shape is constant.
    KIR_CHECK(type.is_buffer() && type.space() == MemorySpace::kRegister);
    if (!IsFloat(type.dtype())) {
      return Error(splitk_.loc())
             << "serialize-split-k combines float partials; %"
             << plan.partial->name() << " holds " << type.ToString();
    }
    plan.partial_type = type.dtype();
    for (const IndexExpr& extent : type.shape()) {
      const std::optional<int64_t> value = extent.AsConstant();
      KIR_CHECK(value.has_value());
      plan.shape.push_back(*value);
      plan.elements *= *value;
    }
    const int widest =
        std::max(DTypeBytes(plan.partial_type), DTypeBytes(plan.work_type));
    const int64_t inner = plan.shape.empty() ? 1 : plan.shape.back();
    plan.lanes = 1;
    while (plan.lanes * 2 * widest <= kMaxVectorBytes &&
           inner % (plan.lanes * 2) == 0) {
      plan.lanes *= 2;
    }
    return absl::OkStatus();
  }

  // What the bulk tensor reduction and one TMA box can do: the staged tile
  // is [1, 1, E, T/32, 32] (element e of thread t at [e, t/32, t%32]).
  absl::Status CheckTma(const SplitPlan& plan) {
    if (plan.mode == Mode::kSerial || plan.mode == Mode::kCluster ||
        plan.mode == Mode::kGather) {
      return absl::OkStatus();
    }
    const std::string mode = ModeName(plan.mode);
    const CombineOp op = splitk_.op();
    if (op != CombineOp::kAdd && plan.mode == Mode::kTmaAtomic) {
      return Error(splitk_.loc())
             << "serialize-split-k mode=tma-atomic reduces every split into "
                "a zeroed work tile, and zero is the identity of add only; "
                "this splitk combines with '"
             << EnumName(op) << "' (use mode=serial or mode=tma-serial)";
    }
    if (op != CombineOp::kAdd && plan.work_type == DType::kF32) {
      return Error(splitk_.loc())
             << "serialize-split-k mode=" << mode
             << " combines with the bulk tensor reduction, which has no f32 "
                "'"
             << EnumName(op)
             << "' (cp.reduce.async.bulk.tensor min/max take f16, bf16 and "
                "integers); use work=bf16 or work=f16, or mode=serial";
    }
    if (plan.threads % 32 != 0) {
      return Error(splitk_.loc())
             << "serialize-split-k mode=" << mode << " stages the partials of "
             << plan.threads
             << " threads as whole warps (a TMA box of [E, warps, 32]); the "
                "participating threads must be a multiple of 32";
    }
    if (plan.elements > kMaxBoxExtent) {
      return Error(splitk_.loc())
             << "serialize-split-k mode=" << mode << ": %"
             << plan.partial->name() << " holds " << plan.elements
             << " elements per thread, more than the 256 one TMA box "
                "dimension can carry (use mode=serial)";
    }
    const int64_t bytes =
        plan.elements * plan.threads * DTypeBytes(plan.work_type);
    if (bytes > kMaxStageBytes) {
      return Error(splitk_.loc())
             << "serialize-split-k mode=" << mode << " stages " << bytes
             << " bytes of partials in shared memory, more than a block has "
                "(227 KiB); use a narrower work type or mode=serial";
    }
    return absl::OkStatus();
  }

  // mode=cluster: the splits of a tile are the CTAs of one cluster along
  // the split dimension, and each hands its running sum to the next with
  // st.async (32-bit elements) into a shared buffer that an mbarrier's
  // transaction count (below 2^20 bytes) completes.
  absl::Status CheckCluster(SplitPlan& plan) {
    if (plan.mode != Mode::kCluster) return absl::OkStatus();
    const Dim3& grid = kernel_.grid;
    const std::optional<int64_t> splits = grid[plan.split_dim].AsConstant();
    const Location where = grid.dim_loc[plan.split_dim].known()
                               ? grid.dim_loc[plan.split_dim]
                               : kernel_.loc();
    if (!splits.has_value()) {
      return (Error(splitk_.loc())
              << "serialize-split-k mode=cluster makes the splits of a tile "
                 "one cluster, whose size is a launch constant; the grid's "
                 "split dimension is not constant")
          .Note(where, "the split dimension is declared here");
    }
    if (*splits > kMaxClusterSplits) {
      return (Error(splitk_.loc())
              << "serialize-split-k mode=cluster makes the " << *splits
              << " splits of a tile one cluster, more than the "
              << kMaxClusterSplits
              << " CTAs a portable cluster holds (use mode=serial)")
          .Note(where, "the split count is declared here");
    }
    const std::optional<int64_t> cluster = kernel_.cluster.StaticVolume();
    if (!cluster.has_value() || *cluster != 1) {
      return (Error(splitk_.loc())
              << "serialize-split-k mode=cluster makes the splits of a tile "
                 "one cluster; the kernel already has a cluster")
          .Note(
              kernel_.cluster.loc.known() ? kernel_.cluster.loc : kernel_.loc(),
              "the cluster is declared here");
    }
    if (plan.partial_type != DType::kF32) {
      return Error(splitk_.loc())
             << "serialize-split-k mode=cluster hands partials over with "
                "st.async, which stores 32-bit elements; %"
             << plan.partial->name() << " holds "
             << DTypeName(plan.partial_type) << " (use mode=serial)";
    }
    if (plan.work_type != DType::kF32) {
      return Error(splitk_.loc())
             << "serialize-split-k mode=cluster hands the partial over in "
                "its own type (f32); work="
             << DTypeName(plan.work_type) << " applies to the other modes";
    }
    const int64_t bytes = plan.elements * plan.threads * 4;
    if (bytes > kMaxTransactionBytes || bytes > kMaxStageBytes) {
      return Error(splitk_.loc())
             << "serialize-split-k mode=cluster receives " << bytes
             << " bytes of partials in shared memory, more than one mbarrier "
                "phase counts (2^20 - 1) or a block holds (227 KiB); use "
                "mode=serial";
    }
    plan.splits = *splits;
    return absl::OkStatus();
  }

  // tma-atomic: the participants vote on "my block arrived last" at a
  // named barrier of their own count.
  absl::Status AllocateVoteBarrier(SplitPlan& plan) {
    if (plan.mode != Mode::kTmaAtomic) return absl::OkStatus();
    std::optional<int> id = BarrierIdAllocator(kernel_).Allocate(
        plan.role, static_cast<int>(plan.threads));
    if (!id.has_value()) {
      return Error(splitk_.loc())
             << "serialize-split-k mode=tma-atomic needs a named barrier for "
                "its vote, but all 15 ids are taken";
    }
    plan.vote_barrier = *id;
    return absl::OkStatus();
  }

  // A thread that returns never takes its turn, and the next split waits
  // for it forever.
  absl::Status CheckReturns() {
    const Op* early = FindFirst(kernel_.body(), [&](const Op& op) {
      if (op.kind() != OpKind::kReturn) return false;
      const bool before = !op.IsOrIsInside(splitk_) && !IsAfter(op);
      return before || InBody(op);
    });
    if (early == nullptr) return absl::OkStatus();
    return (Error(early->loc())
            << "a thread that returns here never takes its turn in the "
               "splitk, and the splits after it would wait forever")
        .Note(splitk_.loc(), "the splitk");
  }

  bool InBody(const Op& op) const {
    return op.AncestorIn(splitk_.region(0)) != nullptr;
  }

  // Whether `op`, outside the splitk, comes after it in program order.
  bool IsAfter(const Op& op) const {
    // The first op after the splitk in a pre-order walk is the next
    // sibling of the splitk or of one of its ancestors.
    for (const Op* a = &splitk_; a != nullptr; a = a->parent_op()) {
      const Region* region = a->parent_region();
      for (const Op* b = &op; b != nullptr; b = b->parent_op()) {
        if (b->parent_region() == region) {
          return region->IndexOf(b) > region->IndexOf(a);
        }
      }
    }
    return false;
  }

  absl::Status CheckSplitIndex(const SplitPlan& plan) {
    const SplitTaint taint(kernel_, plan.split_dim);
    absl::Status status = absl::OkStatus();
    const std::string index_name =
        absl::StrCat("block.id ", EnumName(DimOf(plan.split_dim)));
    Walk(splitk_.region(1), [&](const Op& op) {
      if (!status.ok()) return;
      if (const Value* value = taint.TaintedUse(op)) {
        status = (Error(op.loc())
                  << "the splitk epilogue uses %" << value->name()
                  << ", which depends on the split index (" << index_name
                  << "): only the last split runs the epilogue, so the split "
                     "dimension cannot also choose what it computes")
                     .Note(splitk_.loc(), "the splitk");
      }
    });
    if (!status.ok()) return status;
    Walk(kernel_.body(), [&](const Op& op) {
      if (!status.ok()) return;
      for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
        if (!effect.writes() || effect.space != MemorySpace::kGlobal) continue;
        const Value* value = taint.TaintedUse(op);
        if (value == nullptr) continue;
        status = (Error(op.loc())
                  << "this write of global memory depends on the split index ("
                  << index_name << ", through %" << value->name()
                  << "): the split dimension is already used for something "
                     "else than splitting K")
                     .Note(splitk_.loc(), "the splitk");
        return;
      }
    });
    return status;
  }

  absl::Status CheckReadsAfter(const SplitPlan& plan) {
    absl::Status status = absl::OkStatus();
    Walk(kernel_.body(), [&](const Op& op) {
      if (!status.ok() || op.IsOrIsInside(splitk_) || !IsAfter(op)) return;
      bool uses = false;
      op.ForEachUse([&](const Value* value) { uses |= value == plan.partial; });
      if (!uses) return;
      status = (Error(op.loc())
                << "%" << plan.partial->name()
                << " is used after the splitk, where it holds no combined "
                   "value: only the splitk's epilogue sees the sum over the "
                   "splits")
                   .Note(splitk_.loc(), "the splitk");
    });
    return status;
  }

  const Kernel& kernel_;
  Op& splitk_;
  DType work_type_;
  Mode mode_;
  bool parity_tiles_;
};

// Builds the lowered form of one splitk.
class Rewriter {
 public:
  Rewriter(Kernel& kernel, PassContext& context, SplitPlan plan)
      : kernel_(kernel), context_(context), plan_(std::move(plan)) {}

  void Run() {
    if (plan_.mode == Mode::kSerial) {
      RunSerial();
    } else if (plan_.mode == Mode::kGather) {
      RunGather();
    } else if (plan_.mode == Mode::kCluster) {
      RunCluster();
    } else {
      RunTma();
    }
    context_.stats.Add(kSplitKLowered);
    context_.stats.Add(kPartialElements, plan_.elements);
    context_.stats.Add(kVectorLanes, plan_.lanes);
  }

 private:
  enum class Step {
    kStore,
    kAdd,
    kLoadSum,
    kSend,
    kGatherFirst,  // run = slot
    kGatherAdd,    // run = run op slot
    kGatherLast,   // partial = run op partial
  };

  void RunSerial() {
    Op& splitk = *plan_.splitk;
    Region& region = *splitk.parent_region();
    AddWorkspaces();
    Value* split = nullptr;
    Value* splits = nullptr;
    OpBuilder& b = BeginAfterBody(&split, &splits);

    MakeSliceConstants();

    one32_ = b.Constant(1, DType::kI32, "sk_one32");
    Value* turn = Cast(split, DType::kI32, "sk_turn");
    const SplitPosition position = PositionOf(b, split, splits);
    Value* has_prev = position.has_prev;
    Value* is_last = position.is_last;

    // My turn: the same thread of every earlier split has released.
    Op* wait_if = b.If(has_prev);
    {
      OpBuilder inner(wait_if->region(0));
      Inherit(inner);
      inner.Create(OpKind::kSemWait, {SemRef(), Use(turn)});
    }

    Op* last_if = b.If(is_last);
    // Last split: add the sum of the earlier splits, reset.
    {
      OpBuilder last(last_if->region(0));
      Inherit(last);
      Op* prev_if = last.If(has_prev);
      OpBuilder prev(prev_if->region(0));
      Inherit(prev);
      EmitNest(prev, Step::kLoadSum);
      // The tile is done with my semaphore: reset it for the next launch.
      Value* zero32 = prev.Constant(0, DType::kI32, "sk_zero32");
      Reset(prev, SemRef(), zero32, "sk_reset");
      builder_ = &b;
      // The epilogue, formerly the splitk's.
      MoveEpilogue(last_if->region(0));
    }
    // Other splits: store or add the partial, then release my slice.
    {
      OpBuilder other(last_if->region(1));
      Inherit(other);
      Op* add_if = other.If(has_prev);
      OpBuilder add(add_if->region(0));
      Inherit(add);
      EmitNest(add, Step::kAdd);
      OpBuilder store(add_if->region(1));
      Inherit(store);
      EmitNest(store, Step::kStore);
      Release(other, SemRef());
    }
    region.Take(region.IndexOf(&splitk));
  }

  // mode=gather: no turns. Every split z < S-1 stores its partial into its
  // own slot z of the work buffer at once and releases its thread's
  // counter; thread t of split S-1 waits until its counter holds S-1 (every
  // other split's thread t has stored), resets it, and sums the slots in
  // split order, then its own partial: the arithmetic of mode=serial, so
  // deterministic, without its S-1 hops one after the other.
  void RunGather() {
    Op& splitk = *plan_.splitk;
    Region& region = *splitk.parent_region();
    AddWorkspaces(/*slot_per_split=*/true);
    Value* split = nullptr;
    Value* splits = nullptr;
    OpBuilder& b = BeginAfterBody(&split, &splits);
    MakeSliceConstants();

    one32_ = b.Constant(1, DType::kI32, "sk_one32");
    const SplitPosition position = PositionOf(b, split, splits);
    Value* has_prev = position.has_prev;
    Value* last_split = position.last_split;
    Value* is_last = position.is_last;
    Value* others = Cast(last_split, DType::kI32, "sk_others");
    std::vector<IndexExpr> run_shape;
    for (int64_t extent : plan_.shape) {
      run_shape.push_back(IndexExpr::Constant(extent));
    }
    run_ = b.Create(OpKind::kAllocReg, {}, {},
                    {Type::Buffer(MemorySpace::kRegister, plan_.partial_type,
                                  run_shape)},
                    {"sk_run"})
               ->result();

    Op* last_if = b.If(is_last);
    {
      OpBuilder last(last_if->region(0));
      Inherit(last);
      Op* prev_if = last.If(has_prev);
      OpBuilder prev(prev_if->region(0));
      Inherit(prev);
      // Every other split's thread t has stored its slot.
      WaitThenReset(prev, SemRef(), others,
                    prev.Constant(0, DType::kI32, "sk_zero32"));
      // Split by split, the whole partial at a time, so that each pass's
      // loads are independent of each other.
      EmitNest(prev, Step::kGatherFirst, Index(0));
      const std::optional<int64_t> constant_splits =
          kernel_.grid[plan_.split_dim].AsConstant();
      Op* loop =
          prev.For(Index(1), last_split, Index(1), kernel_.FreshName("sk_j"),
                   constant_splits.has_value() && *constant_splits > 2
                       ? static_cast<int>(*constant_splits - 2)
                       : 0);
      OpBuilder each(loop->region(0));
      Inherit(each);
      EmitNest(each, Step::kGatherAdd, loop->region(0).argument(0));
      EmitNest(prev, Step::kGatherLast);
      builder_ = &b;
      MoveEpilogue(last_if->region(0));
    }
    {
      OpBuilder other(last_if->region(1));
      Inherit(other);
      EmitNest(other, Step::kStore, split);
      Release(other, SemRef());
    }
    region.Take(region.IndexOf(&splitk));
  }

  // mode=cluster: the S splits of a tile are one cluster along the split
  // dimension (CTA rank z is split z). Split z > 0 waits for its landing
  // buffer's mbarrier and adds the running sum it holds to its partial
  // (sum op partial, split order: the serial mode's arithmetic); split
  // z < S-1 then stores its partial (now the running sum) into split
  // z+1's landing buffer with store.remote, which completes there on the
  // mbarrier; split S-1 runs the epilogue. The mbarrier is initialized,
  // and (z > 0) expects the buffer's bytes, before a cluster barrier that
  // every thread arrives at before the body and waits for after it, so no
  // peer stores before the init.
  // Nothing global: each launch starts from fresh shared memory.
  void RunCluster() {
    Op& splitk = *plan_.splitk;
    Region& region = *splitk.parent_region();
    kernel_.cluster[plan_.split_dim] = IndexExpr::Constant(plan_.splits);
    if (plan_.splits > 1) AddClusterBuffers();
    Value* split = nullptr;
    Value* splits = nullptr;
    OpBuilder& b = BeginAfterBody(&split, &splits);
    if (plan_.splits == 1) {
      // One split: the body is the whole sum.
      builder_ = &b;
      MoveEpilogueTo(b);
      region.Take(region.IndexOf(&splitk));
      return;
    }
    MakeSliceConstants();
    b.Create(OpKind::kClusterWait, {});
    const SplitPosition position = PositionOf(b, split, splits);
    Value* has_prev = position.has_prev;
    Value* is_last = position.is_last;
    next_rank_ = b.Binary(OpKind::kAdd, split, Index(1), "sk_next");

    Op* receive_if = b.If(has_prev);
    {
      OpBuilder receive(receive_if->region(0));
      Inherit(receive);
      // st.async completes its bytes with release at cluster scope: the
      // wait acquires at cluster scope to see the peer's stores.
      receive.Create(OpKind::kMbarrierWait,
                     {Ref(recv_bar_, {Index(0)}), Use(Index(0))},
                     {attr::scope(MemoryScope::kCluster)});
      EmitNest(receive, Step::kLoadSum);
    }
    Op* last_if = b.If(is_last);
    MoveEpilogue(last_if->region(0));
    {
      OpBuilder send(last_if->region(1));
      Inherit(send);
      EmitNest(send, Step::kSend);
    }
    region.Take(region.IndexOf(&splitk));
  }

  // The epilogue right after the body, for one split.
  void MoveEpilogueTo(OpBuilder& b) {
    Region& epilogue = plan_.splitk->region(1);
    Region& region = b.region();
    int at = b.index();
    while (!epilogue.empty()) region.Insert(at++, epilogue.Take(0));
  }

  // mode=cluster, before the splitk's top-level ancestor: the landing
  // buffer `%sk_recv: shared f32[C, T, V]` (thread t's chunk c at
  // [c, t, :]: consecutive threads, consecutive 16 bytes), its mbarrier,
  // their initialization by thread 0 of the block (with the expected bytes
  // where a split before stores into it) and the arrival at the cluster
  // barrier.
  void AddClusterBuffers() {
    const Op* top = plan_.role != nullptr ? plan_.role : plan_.splitk;
    Region& body = kernel_.body();
    OpBuilder b(body, body.IndexOf(top));
    Inherit(b);
    builder_ = &b;
    recv_ =
        b.Create(
             OpKind::kAllocShared, {}, {attr::align(16)},
             {Type::Buffer(MemorySpace::kShared, DType::kF32,
                           {IndexExpr::Constant(plan_.elements / plan_.lanes),
                            IndexExpr::Constant(plan_.threads),
                            IndexExpr::Constant(plan_.lanes)})},
             {"sk_recv"})
            ->result();
    recv_bar_ = b.Create(OpKind::kAllocShared, {}, {},
                         {Type::Buffer(MemorySpace::kShared, DType::kMbarrier,
                                       {IndexExpr::Constant(1)})},
                         {"sk_recv_bar"})
                    ->result();
    Value* zero = b.Constant(0, DType::kIndex, "sk_init_c0");
    Value* split = Query(OpKind::kBlockId, plan_.split_dim, "sk_init_split");
    Value* receives =
        b.Compare(CmpPredicate::kNe, split, zero, "sk_init_receives");
    // Thread 0 of the block (every block thread runs this code).
    Value* first = nullptr;
    for (int d = 0; d < 3; ++d) {
      const std::optional<int64_t> extent = kernel_.block[d].AsConstant();
      if (d > 0 && extent == 1) continue;
      Value* tid = Query(OpKind::kThreadId, d, "sk_init_tid");
      Value* is_zero =
          b.Compare(CmpPredicate::kEq, tid, zero, "sk_init_thread0");
      first = first == nullptr
                  ? is_zero
                  : b.Binary(OpKind::kAnd, first, is_zero, "sk_init_thread0");
    }
    Op* init_if = b.If(first);
    {
      OpBuilder init(init_if->region(0));
      Inherit(init);
      const Operand bar = Ref(recv_bar_, {zero});
      init.Create(OpKind::kMbarrierInit, {bar}, {attr::count(1)});
      Op* expect_if = init.If(receives);
      OpBuilder expect(expect_if->region(0));
      Inherit(expect);
      expect.Create(OpKind::kMbarrierArriveTx, {bar},
                    {attr::bytes(plan_.elements * plan_.threads * 4)});
      init.Create(OpKind::kFenceMbarrierInit, {});
    }
    // The wait is RunCluster's, after the body: the barrier's latency hides
    // behind the mainloop, and no thread touches a peer before it.
    b.Create(OpKind::kClusterArrive, {});
    builder_ = nullptr;
  }

  // mode=tma-serial and mode=tma-atomic: every participating thread stages
  // its partial in a shared tile [1, 1, E, T/32, 32]; one thread (t == 0,
  // which uniform-predicates turns into an elected lane) moves the tile
  // with one TMA store or reduction into the tile's slot of the work
  // buffer [G1, G2, E, T/32, 32], commits, waits for the writes (not only
  // the reads) and releases. The thread that acquires the finished sum
  // tells the others through a shared hand-over word, whose store and
  // loads insert-syncs orders with a barrier over exactly the
  // participating threads; that barrier hands the acquire over.
  void RunTma() {
    Op& splitk = *plan_.splitk;
    Region& region = *splitk.parent_region();
    AddTmaBuffers();
    Value* split = nullptr;
    Value* splits = nullptr;
    OpBuilder& b = BeginAfterBody(&split, &splits);
    for (int64_t extent : plan_.shape) Index(extent);
    Index(0);
    Index(1);
    Index(32);
    if (plan_.parity_tiles) {
      Index(2);
      tile_rows_ =
          Query(OpKind::kGridDim, TileDims(plan_.split_dim)[0], "sk_tile_rows");
    }
    constants_frozen_ = true;
    warp_ = b.Binary(OpKind::kDiv, thread_, Index(32), "sk_warp");
    lane_ = b.Binary(OpKind::kRem, thread_, Index(32), "sk_lane");

    one32_ = b.Constant(1, DType::kI32, "sk_one32");
    zero32_ = b.Constant(0, DType::kI32, "sk_zero32");
    Value* last_split = b.Binary(OpKind::kSub, splits, Index(1), "sk_last");
    if (plan_.parity_tiles) {
      LowerTmaAtomicParity(b, splits, last_split);
    } else if (plan_.mode == Mode::kTmaAtomic) {
      LowerTmaAtomic(b, last_split);
    } else {
      Value* issuer =
          b.Compare(CmpPredicate::kEq, thread_, Index(0), "sk_issuer");
      LowerTmaSerial(b, split, last_split, issuer);
    }
    region.Take(region.IndexOf(&splitk));
  }

  // tma-atomic: every split reduces into the zeroed tile and arrives; the
  // last arrival's block reads the sum and resets the tile. Only the issuer
  // learns whether its block arrived last; it tells the participants
  // through `barrier.red or`, whose result they all share (so the epilogue,
  // warp-collective ops included, runs under a uniform condition) and which
  // hands the issuer's acquire over as a barrier does. The issuer's vote is
  // in its own register, so it is elected here (the elected lane of the
  // first warp) rather than written `t == 0` for uniform-predicates, which
  // must not move a thread's register write to another lane.
  void LowerTmaAtomic(OpBuilder& b, Value* last_split) {
    // Every split reduces into the zeroed tile and arrives.
    Stage(b);
    Value* last32 = Cast(last_split, DType::kI32, "sk_last32");
    b.Create(OpKind::kStore, {VoteRef(), Use(zero32_)});
    Op* issue_if = ElectInFirstWarp(b);
    {
      OpBuilder issue(issue_if->region(0));
      Inherit(issue);
      issue.Create(OpKind::kTmaReduce, {MapRef(), StageRef()},
                   {attr::op(CombineOp::kAdd)});
      CommitAndWait(issue);
      Value* arrived = issue
                           .Create(OpKind::kAtomic, {SyncRef(), Use(one32_)},
                                   {attr::op(CombineOp::kAdd),
                                    attr::order(MemoryOrder::kAcqRel)},
                                   {Type::Scalar(DType::kI32)}, {"sk_arrived"})
                           ->result();
      Value* all =
          issue.Compare(CmpPredicate::kEq, arrived, last32, "sk_all_arrived");
      Op* reset_if = issue.If(all);
      {
        // Every split has arrived: the counter is free for the next
        // launch.
        OpBuilder reset(reset_if->region(0));
        Inherit(reset);
        Reset(reset, SyncRef(), zero32_, "sk_count_reset");
      }
      Value* flag =
          issue
              .Create(OpKind::kSelect, {Use(all), Use(one32_), Use(zero32_)},
                      {}, {Type::Scalar(DType::kI32)}, {"sk_all32"})
              ->result();
      issue.Create(OpKind::kStore, {VoteRef(), Use(flag)});
    }
    Value* mine = b.Create(OpKind::kLoad, {VoteRef()}, {},
                           {Type::Scalar(DType::kI32)}, {"sk_mine32"})
                      ->result();
    Value* my_vote = b.Compare(CmpPredicate::kNe, mine, zero32_, "sk_my_vote");
    Value* runs =
        b.Create(OpKind::kBarrierRed, {Use(my_vote)},
                 {attr::op(CombineOp::kOr), attr::id(plan_.vote_barrier),
                  attr::threads(plan_.threads)},
                 {Type::Scalar(DType::kI1)}, {"sk_runs_epilogue"})
            ->result();
    Op* last_if = b.If(runs);
    OpBuilder last(last_if->region(0));
    Inherit(last);
    // The sum replaces my partial; the tile goes back to zero.
    Value* zero_work = WorkZero(last);
    ForEachElement(last, [&](OpBuilder& e, const std::vector<Value*>& idx,
                             Value* linear) {
      Value* sum = e.Create(OpKind::kLoad, {WorkRef(linear)}, {},
                            {Type::Scalar(plan_.work_type)}, {"sk_sum_w"})
                       ->result();
      e.Create(
          OpKind::kStore,
          {Ref(plan_.partial, idx),
           Use(Convert(e, sum, Type::Scalar(plan_.partial_type), "sk_sum"))});
      e.Create(OpKind::kStore, {WorkRef(linear), Use(zero_work)});
    });
    MoveEpilogue(last_if->region(0));
  }

  // tma-atomic with reset=parity: launches alternate between two work
  // tiles, by the parity of the arrival count, which cycles through
  // 0 .. 2S-1. A block arrives before its body runs, so it knows whether
  // it is the last before it has a partial: the last does not reduce but
  // waits until the other S-1 have (their `done` count of its parity) and
  // adds their sum to its own registers; the first arrival, after its own
  // release, zeroes the other parity's tile and `done` count, which the
  // next launch uses. Nothing is zeroed after the sum is read.
  void LowerTmaAtomicParity(OpBuilder& b, Value* splits, Value* last_split) {
    Value* issuer =
        b.Compare(CmpPredicate::kEq, thread_, Index(0), "sk_issuer");
    Value* splits32 = Cast(splits, DType::kI32, "sk_splits32");
    Value* last32 = Cast(last_split, DType::kI32, "sk_last32");
    Value* wrap32 = b.Binary(OpKind::kAdd, splits32, last32, "sk_wrap32");
    // With two splits one block writes the tile: a store, which the copy
    // engine does faster than a reduction. The zeroing still runs unless
    // the grid fixes the split count, since the next launch may have more.
    Value* one_writer =
        b.Compare(CmpPredicate::kEq, splits, Index(2), "sk_one_writer");
    for (int64_t slot : {0, 1, 2}) {
      b.Create(OpKind::kStore, {VoteRef(slot), Use(zero32_)});
    }
    Op* arrive_if = ElectInFirstWarp(b);
    {
      OpBuilder arrive(arrive_if->region(0));
      Inherit(arrive);
      Value* ticket =
          arrive
              .Create(OpKind::kAtomic, {CountRef(Index(0)), Use(one32_)},
                      {attr::op(CombineOp::kAdd)}, {Type::Scalar(DType::kI32)},
                      {"sk_ticket"})
              ->result();
      Value* odd =
          arrive.Compare(CmpPredicate::kGe, ticket, splits32, "sk_odd_launch");
      Value* base =
          arrive
              .Create(OpKind::kSelect, {Use(odd), Use(splits32), Use(zero32_)},
                      {}, {Type::Scalar(DType::kI32)}, {"sk_ticket_base"})
              ->result();
      Value* place = arrive.Binary(OpKind::kSub, ticket, base, "sk_place");
      Value* wraps =
          arrive.Compare(CmpPredicate::kEq, ticket, wrap32, "sk_wraps");
      Op* wrap_if = arrive.If(wraps);
      {
        // The 2S-th arrival: the count starts again at zero.
        OpBuilder wrap(wrap_if->region(0));
        Inherit(wrap);
        Reset(wrap, CountRef(Index(0)), zero32_, "sk_count_reset");
      }
      const std::pair<Value*, const char*> votes[] = {
          {arrive.Compare(CmpPredicate::kEq, place, last32, "sk_arrived_last"),
           "sk_last_vote"},
          {odd, "sk_odd_vote"},
          {arrive.Compare(CmpPredicate::kEq, place, zero32_,
                          "sk_arrived_first"),
           "sk_first_vote"}};
      for (int64_t slot : {0, 1, 2}) {
        Value* flag =
            arrive
                .Create(OpKind::kSelect,
                        {Use(votes[slot].first), Use(one32_), Use(zero32_)}, {},
                        {Type::Scalar(DType::kI32)}, {votes[slot].second})
                ->result();
        arrive.Create(OpKind::kStore, {VoteRef(slot), Use(flag)});
      }
    }
    // Every participant learns the issuer's three answers.
    const char* names[] = {"sk_runs_epilogue", "sk_odd", "sk_first"};
    Value* shared[3];
    for (int64_t slot : {0, 1, 2}) {
      Value* mine =
          b.Create(OpKind::kLoad, {VoteRef(slot)}, {},
                   {Type::Scalar(DType::kI32)}, {absl::StrCat("sk_mine", slot)})
              ->result();
      Value* vote = b.Compare(CmpPredicate::kNe, mine, zero32_,
                              absl::StrCat("sk_vote", slot));
      shared[slot] =
          b.Create(OpKind::kBarrierRed, {Use(vote)},
                   {attr::op(CombineOp::kOr), attr::id(plan_.vote_barrier),
                    attr::threads(plan_.threads)},
                   {Type::Scalar(DType::kI1)}, {names[slot]})
              ->result();
    }
    Value* runs = shared[0];
    Value* odd = shared[1];
    Value* first = shared[2];
    // Parity p's tile is row block p of the work buffer, its `done` count
    // slot 1 + p of the tile's counters.
    Value* shift =
        b.Create(OpKind::kSelect, {Use(odd), Use(tile_rows_), Use(Index(0))},
                 {}, {Type::Scalar(DType::kIndex)}, {"sk_parity_rows"})
            ->result();
    Value* other_shift =
        b.Binary(OpKind::kSub, tile_rows_, shift, "sk_other_rows");
    work_row_ = b.Binary(OpKind::kAdd, tile_[0], shift, "sk_work_row");
    Value* other_row =
        b.Binary(OpKind::kAdd, tile_[0], other_shift, "sk_other_row");
    Value* parity =
        b.Create(OpKind::kSelect, {Use(odd), Use(Index(1)), Use(Index(0))}, {},
                 {Type::Scalar(DType::kIndex)}, {"sk_parity"})
            ->result();
    Value* done = b.Binary(OpKind::kAdd, Index(1), parity, "sk_done_slot");
    Value* other_done =
        b.Binary(OpKind::kSub, Index(2), parity, "sk_other_done_slot");
    // All of that depends on nothing the body computes: it goes before the
    // body, so that the arrival's round trip and the votes overlap the
    // mainloop instead of delaying the reduction. The last block to start
    // is the one that waits; every other has started, so it cannot wait
    // for a block that is not running.
    MoveBeforeBody(b);
    Op* last_if = b.If(runs);
    {
      // Every other split has reduced into my parity's tile: mine is added
      // to their sum in registers.
      OpBuilder last(last_if->region(0));
      Inherit(last);
      last.Create(OpKind::kSemWait, {CountRef(done), Use(last32)});
      AddTileToPartial(last);
      MoveEpilogue(last_if->region(0));
    }
    OpBuilder other(last_if->region(1));
    Inherit(other);
    Stage(other);
    Op* issue_if = other.If(issuer);
    {
      OpBuilder issue(issue_if->region(0));
      Inherit(issue);
      StoreOrReduce(issue, one_writer);
      CommitAndWait(issue);
      Release(issue, CountRef(done));
    }
    Op* first_if = other.If(first);
    {
      // The next launch reduces into the other parity's tile. Where the
      // grid fixes two splits no launch ever reduces: the one writer
      // stores the whole tile, and the tiles need no zeroing.
      OpBuilder clear(first_if->region(0));
      Inherit(clear);
      if (kernel_.grid[plan_.split_dim].AsConstant() != 2) {
        Value* zero_work = WorkZero(clear);
        ForEachElement(clear, [&](OpBuilder& e, const std::vector<Value*>&,
                                  Value* linear) {
          e.Create(OpKind::kStore,
                   {Ref(work_, {other_row, tile_[1], linear, warp_, lane_}),
                    Use(zero_work)});
        });
      }
      Op* reset_if = clear.If(issuer);
      OpBuilder reset(reset_if->region(0));
      Inherit(reset);
      Reset(reset, CountRef(other_done), zero32_, "sk_done_reset");
    }
  }

  // `if t / 32 == 0 { if elect.sync {} }`: returns the inner if, whose
  // body the elected lane of the first participating warp runs.
  Op* ElectInFirstWarp(OpBuilder& b) {
    Value* first_warp =
        b.Compare(CmpPredicate::kEq, warp_, Index(0), "sk_issuer_warp");
    Op* warp_if = b.If(first_warp);
    OpBuilder in_warp(warp_if->region(0));
    Inherit(in_warp);
    Value* elected = in_warp
                         .Create(OpKind::kElectSync, {}, {},
                                 {Type::Scalar(DType::kI1)}, {"sk_elected"})
                         ->result();
    return in_warp.If(elected);
  }

  // Every participating thread adds the work tile's sum to its partial
  // (sum op partial, the unlowered reading's order).
  void AddTileToPartial(OpBuilder& b) {
    ForEachElement(b, [&](OpBuilder& e, const std::vector<Value*>& idx,
                          Value* linear) {
      Value* sum =
          Convert(e,
                  e.Create(OpKind::kLoad, {WorkRef(linear)}, {},
                           {Type::Scalar(plan_.work_type)}, {"sk_sum_w"})
                      ->result(),
                  Type::Scalar(plan_.partial_type), "sk_sum");
      Value* part = e.Create(OpKind::kLoad, {Ref(plan_.partial, idx)}, {},
                             {Type::Scalar(plan_.partial_type)}, {"sk_part"})
                        ->result();
      Value* total = e.Binary(CombineKind(), sum, part, "sk_total");
      e.Create(OpKind::kStore, {Ref(plan_.partial, idx), Use(total)});
    });
  }

  // The issuer's TMA store of the staged tile when `alone` (the tile's
  // only or first writer), else its reduction with the splitk's op.
  void StoreOrReduce(OpBuilder& issue, Value* alone) {
    Op* alone_if = issue.If(alone);
    OpBuilder store(alone_if->region(0));
    Inherit(store);
    store.Create(OpKind::kTmaStore, {MapRef(), StageRef()});
    OpBuilder reduce(alone_if->region(1));
    Inherit(reduce);
    reduce.Create(OpKind::kTmaReduce, {MapRef(), StageRef()},
                  {attr::op(plan_.splitk->op())});
  }

  // Moves what `b` made since the body's end to before the body.
  void MoveBeforeBody(OpBuilder& b) {
    Region& region = b.region();
    KIR_CHECK(&region == plan_.splitk->parent_region());
    const int made = b.index() - body_end_;
    for (int i = 0; i < made; ++i) {
      region.Insert(body_begin_ + i, region.Take(body_end_ + i));
    }
    body_end_ += made;
  }

  // tma-serial: the splits take turns on one semaphore per tile.
  void LowerTmaSerial(OpBuilder& b, Value* split, Value* last_split,
                      Value* issuer) {
    Value* turn = Cast(split, DType::kI32, "sk_turn");
    Value* has_prev =
        b.Compare(CmpPredicate::kNe, split, Index(0), "sk_has_prev");
    Value* is_last =
        b.Compare(CmpPredicate::kEq, split, last_split, "sk_is_last");
    Value* is_first =
        b.Compare(CmpPredicate::kEq, split, Index(0), "sk_is_first");
    Op* last_if = b.If(is_last);
    {
      OpBuilder last(last_if->region(0));
      Inherit(last);
      Op* issue_if = last.If(issuer);
      {
        OpBuilder issue(issue_if->region(0));
        Inherit(issue);
        Op* prev_if = issue.If(has_prev);
        OpBuilder prev(prev_if->region(0));
        Inherit(prev);
        // Every earlier split has released: reset for the next launch.
        WaitThenReset(prev, SyncRef(), turn, zero32_);
        // How many splits the work tile holds (0 when I am the only one).
        issue.Create(OpKind::kStore, {HandoffRef(), Use(turn)});
      }
      Value* held = last.Create(OpKind::kLoad, {HandoffRef()}, {},
                                {Type::Scalar(DType::kI32)}, {"sk_held"})
                        ->result();
      Value* has_sum =
          last.Compare(CmpPredicate::kNe, held, zero32_, "sk_has_sum");
      Op* sum_if = last.If(has_sum);
      OpBuilder add(sum_if->region(0));
      Inherit(add);
      AddTileToPartial(add);
      MoveEpilogue(last_if->region(0));
    }
    {
      OpBuilder other(last_if->region(1));
      Inherit(other);
      Stage(other);
      Op* issue_if = other.If(issuer);
      OpBuilder issue(issue_if->region(0));
      Inherit(issue);
      Op* wait_if = issue.If(has_prev);
      {
        OpBuilder wait(wait_if->region(0));
        Inherit(wait);
        wait.Create(OpKind::kSemWait, {SyncRef(), Use(turn)});
      }
      StoreOrReduce(issue, is_first);
      CommitAndWait(issue);
      Release(issue, SyncRef());
    }
  }

  // Moves the splitk's body in its place and returns a builder right after
  // it, having made the split index and count, the tile indices and the
  // thread's index among the participants there.
  OpBuilder& BeginAfterBody(Value** split, Value** splits) {
    Op& splitk = *plan_.splitk;
    Region& region = *splitk.parent_region();
    int at = region.IndexOf(&splitk);
    body_begin_ = at;
    Region& body = splitk.region(0);
    while (!body.empty()) region.Insert(at++, body.Take(0));
    body_end_ = at;
    top_ = std::make_unique<OpBuilder>(region, at);
    Inherit(*top_);
    constants_.clear();
    builder_ = top_.get();
    const std::array<int, 2> tile_dims = TileDims(plan_.split_dim);
    *split = Query(OpKind::kBlockId, plan_.split_dim, "sk_split");
    *splits = Query(OpKind::kGridDim, plan_.split_dim, "sk_splits");
    tile_[0] = Query(OpKind::kBlockId, tile_dims[0], "sk_tile0");
    tile_[1] = Query(OpKind::kBlockId, tile_dims[1], "sk_tile1");
    thread_ = ThreadInRole();
    return *top_;
  }

  // The commit of the issuer's bulk group and the wait for its global
  // writes (no `read`: a release must follow their completion, R5).
  void CommitAndWait(OpBuilder& b) {
    Value* group = b.Create(OpKind::kBulkCommit, {}, {},
                            {Type::Token(TokenKind::kBulk)}, {"sk_group"})
                       ->result();
    b.Create(OpKind::kBulkWait, {Use(group)});
  }

  // Every thread writes its partial, in the work type, into its column of
  // the staged tile.
  void Stage(OpBuilder& b) {
    ForEachElement(b, [&](OpBuilder& e, const std::vector<Value*>& idx,
                          Value* linear) {
      Value* part = e.Create(OpKind::kLoad, {Ref(plan_.partial, idx)}, {},
                             {Type::Scalar(plan_.partial_type)}, {"sk_part"})
                        ->result();
      e.Create(
          OpKind::kStore,
          {Ref(stage_, {Index(0), Index(0), linear, warp_, lane_}),
           Use(Convert(e, part, Type::Scalar(plan_.work_type), "sk_part_w"))});
    });
  }

  // Loops over every element of the partial (fully unrolled: it lives in
  // registers), giving `fn` the element's indices and its linear number.
  template <typename Fn>
  void ForEachElement(OpBuilder& outer, Fn fn) {
    std::vector<Value*> indices;
    std::vector<std::unique_ptr<OpBuilder>> builders;
    OpBuilder* b = &outer;
    Value* linear = nullptr;
    for (size_t d = 0; d < plan_.shape.size(); ++d) {
      const int64_t extent = plan_.shape[d];
      if (extent == 1) {
        indices.push_back(Index(0));
        continue;
      }
      Op* loop = b->For(Index(0), Index(extent), Index(1),
                        kernel_.FreshName(absl::StrCat("sk_e", d)),
                        static_cast<int>(extent));
      builders.push_back(std::make_unique<OpBuilder>(loop->region(0)));
      b = builders.back().get();
      Inherit(*b);
      Value* iv = loop->region(0).argument(0);
      indices.push_back(iv);
      linear = linear == nullptr ? iv
                                 : b->Binary(OpKind::kAdd,
                                             b->Binary(OpKind::kMul, linear,
                                                       Index(extent), "sk_row"),
                                             iv, "sk_elem");
    }
    fn(*b, indices, linear != nullptr ? linear : Index(0));
  }

  Value* WorkZero(OpBuilder& b) {
    return b.FloatConstant(0.0, plan_.work_type, "sk_work_zero");
  }

  // The epilogue, formerly the splitk's, at the end of `region`.
  // Where split `split` of `splits` stands: after split 0, the last one.
  struct SplitPosition {
    Value* has_prev;    // split != 0
    Value* last_split;  // splits - 1
    Value* is_last;     // split == splits - 1
  };
  SplitPosition PositionOf(OpBuilder& b, Value* split, Value* splits) {
    SplitPosition position;
    position.has_prev =
        b.Compare(CmpPredicate::kNe, split, Index(0), "sk_has_prev");
    position.last_split = b.Binary(OpKind::kSub, splits, Index(1), "sk_last");
    position.is_last =
        b.Compare(CmpPredicate::kEq, split, position.last_split, "sk_is_last");
    return position;
  }

  // Waits until `sem` holds `value` (acquire), then sets it back to zero
  // for the next launch: nobody else changes it until then.
  void WaitThenReset(OpBuilder& b, const Operand& sem, Value* value,
                     Value* zero32) {
    b.Create(OpKind::kSemWait, {sem, Use(value)});
    Reset(b, sem, zero32, "sk_reset");
  }

  // `atomic exch` of zero into a semaphore or counter (its old value, named
  // `name`, is unused), for the next launch.
  void Reset(OpBuilder& b, const Operand& sem, Value* zero32,
             const std::string& name) {
    b.Create(OpKind::kAtomic, {sem, Use(zero32)}, {attr::op(CombineOp::kExch)},
             {Type::Scalar(DType::kI32)}, {name});
  }

  // `red add 1 {order = release}`: publishes the thread's writes before it.
  void Release(OpBuilder& b, const Operand& sem) {
    b.Create(OpKind::kReduce, {sem, Use(one32_)},
             {attr::op(CombineOp::kAdd), attr::order(MemoryOrder::kRelease)});
  }

  void MoveEpilogue(Region& region) {
    Region& epilogue = plan_.splitk->region(1);
    while (!epilogue.empty()) region.Append(epilogue.Take(0));
  }

  Operand StageRef() const {
    return Ref(stage_, {constants_.at(0), constants_.at(0), constants_.at(0),
                        constants_.at(0), constants_.at(0)});
  }
  // The tile's row of the work buffer: its block row, plus G1 in an odd
  // launch with reset=parity.
  Value* WorkRow() const { return work_row_ != nullptr ? work_row_ : tile_[0]; }
  Operand MapRef() const {
    return Ref(map_, {WorkRow(), tile_[1], constants_.at(0), constants_.at(0),
                      constants_.at(0)});
  }
  Operand WorkRef(Value* linear) const {
    return Ref(work_, {WorkRow(), tile_[1], linear, warp_, lane_});
  }
  // reset=parity: counter `slot` of the tile (0 arrivals, 1 + p the
  // reductions done in a launch of parity p).
  Operand CountRef(Value* slot) const {
    return Ref(sem_, {tile_[0], tile_[1], slot});
  }
  Operand CountRef(int64_t slot) const { return CountRef(constants_.at(slot)); }
  Operand SyncRef() const { return Ref(sem_, {tile_[0], tile_[1]}); }
  Operand HandoffRef() const { return Ref(handoff_, {constants_.at(0)}); }
  Operand VoteRef(int64_t slot = 0) const {
    return Ref(vote_, {constants_.at(slot)});
  }

  // TMA modes: the per-tile semaphore or arrival counter and the work
  // buffer (workspaces, with a tensor map over the work buffer), the staged
  // tile and the hand-over word (shared), before the splitk's top-level
  // ancestor.
  void AddTmaBuffers() {
    const Op* top = plan_.role != nullptr ? plan_.role : plan_.splitk;
    Region& body = kernel_.body();
    OpBuilder b(body, body.IndexOf(top));
    Inherit(b);
    const std::array<int, 2> tile_dims = TileDims(plan_.split_dim);
    const std::vector<IndexExpr> tiles = {kernel_.grid[tile_dims[0]],
                                          kernel_.grid[tile_dims[1]]};
    const bool atomic = plan_.mode == Mode::kTmaAtomic;
    std::vector<IndexExpr> counters = tiles;
    if (plan_.parity_tiles) counters.push_back(IndexExpr::Constant(3));
    sem_ = b.Create(OpKind::kAllocWorkspace, {}, {},
                    {Type::Buffer(MemorySpace::kGlobal, DType::kI32, counters)},
                    {atomic ? "sk_count" : "sk_sem"})
               ->result();
    const int64_t warps = plan_.threads / 32;
    std::vector<IndexExpr> shape = tiles;
    if (plan_.parity_tiles) {
      // Two tiles per tile position: the second parity's rows follow.
      shape[0] = IndexExpr::Binary(IndexExpr::Kind::kMul,
                                   IndexExpr::Constant(2), tiles[0]);
    }
    for (int64_t extent : {plan_.elements, warps, int64_t{32}}) {
      shape.push_back(IndexExpr::Constant(extent));
    }
    work_ =
        b.Create(OpKind::kAllocWorkspace, {}, {},
                 {Type::Buffer(MemorySpace::kGlobal, plan_.work_type, shape)},
                 {"sk_work"})
            ->result();
    std::vector<IndexExpr> tile;
    for (int64_t extent :
         {int64_t{1}, int64_t{1}, plan_.elements, warps, int64_t{32}}) {
      tile.push_back(IndexExpr::Constant(extent));
    }
    stage_ =
        b.Create(OpKind::kAllocShared, {}, {attr::align(128)},
                 {Type::Buffer(MemorySpace::kShared, plan_.work_type, tile)},
                 {"sk_stage"})
            ->result();
    if (atomic) {
      vote_ = b.Create(OpKind::kAllocReg, {}, {},
                       {Type::Buffer(
                           MemorySpace::kRegister, DType::kI32,
                           {IndexExpr::Constant(plan_.parity_tiles ? 3 : 1)})},
                       {"sk_vote"})
                  ->result();
    } else {
      handoff_ = b.Create(OpKind::kAllocShared, {}, {},
                          {Type::Buffer(MemorySpace::kShared, DType::kI32,
                                        {IndexExpr::Constant(1)})},
                          {"sk_handoff"})
                     ->result();
    }
    Param map;
    map.kind = Param::Kind::kTensorMap;
    map.tensor = work_;
    map_ = kernel_
               .AddParam(kernel_.FreshName("sk_work_map"),
                         Type::TensorMap(plan_.work_type,
                                         {1, 1, plan_.elements, warps, 32}),
                         std::move(map), plan_.splitk->loc())
               .value;
  }

  void Inherit(OpBuilder& builder) const {
    builder.set_loc(plan_.splitk->loc());
    builder.set_provenance(Provenance{kSerializeSplitKPassName, {}});
  }

  // The workspaces go right before the splitk's top-level ancestor, where
  // allocations may sit and every use can see them.
  void AddWorkspaces(bool slot_per_split = false) {
    const Op* top = plan_.role != nullptr ? plan_.role : plan_.splitk;
    Region& body = kernel_.body();
    OpBuilder b(body, body.IndexOf(top));
    Inherit(b);
    const std::array<int, 2> tile_dims = TileDims(plan_.split_dim);
    std::vector<IndexExpr> tiles = {kernel_.grid[tile_dims[0]],
                                    kernel_.grid[tile_dims[1]]};
    std::vector<IndexExpr> sems = tiles;
    sems.push_back(IndexExpr::Constant(plan_.threads));
    sem_ = b.Create(OpKind::kAllocWorkspace, {}, {},
                    {Type::Buffer(MemorySpace::kGlobal, DType::kI32, sems)},
                    {"sk_sem"})
               ->result();
    int64_t elements = 1;
    for (int64_t extent : plan_.shape) elements *= extent;
    std::vector<IndexExpr> shape = tiles;
    if (slot_per_split) shape.push_back(kernel_.grid[plan_.split_dim]);
    shape.push_back(IndexExpr::Constant(elements / plan_.lanes));
    shape.push_back(IndexExpr::Constant(plan_.threads));
    shape.push_back(IndexExpr::Constant(plan_.lanes));
    work_ =
        b.Create(OpKind::kAllocWorkspace, {}, {},
                 {Type::Buffer(MemorySpace::kGlobal, plan_.work_type, shape)},
                 {"sk_work"})
            ->result();
  }

  Value* Query(OpKind kind, int dim, const char* name) {
    return builder_
        ->Create(kind, {}, {attr::dim(DimOf(dim))},
                 {Type::Scalar(DType::kIndex)}, {name})
        ->result();
  }

  // The thread's linear index among the participating threads.
  Value* ThreadInRole() {
    OpBuilder& b = *builder_;
    Value* linear = Query(OpKind::kThreadId, 0, "sk_tid");
    const std::optional<int64_t> bx = kernel_.block.x.AsConstant();
    const std::optional<int64_t> by = kernel_.block.y.AsConstant();
    const std::optional<int64_t> bz = kernel_.block.z.AsConstant();
    KIR_CHECK(bx && by && bz);
    if (*by > 1) {
      Value* ty = Query(OpKind::kThreadId, 1, "sk_tid_y");
      Value* rows = b.Binary(OpKind::kMul, ty, Index(*bx), "sk_tid_rows");
      linear = b.Binary(OpKind::kAdd, linear, rows, "sk_tid_xy");
    }
    if (*bz > 1) {
      Value* tz = Query(OpKind::kThreadId, 2, "sk_tid_z");
      Value* planes =
          b.Binary(OpKind::kMul, tz, Index(*bx * *by), "sk_tid_planes");
      linear = b.Binary(OpKind::kAdd, linear, planes, "sk_tid_xyz");
    }
    if (plan_.first_warp > 0) {
      linear = b.Binary(OpKind::kSub, linear, Index(plan_.first_warp * 32),
                        "sk_tid_in_role");
    }
    return linear;
  }

  // Every index constant the per-thread slice loops use (serial, gather,
  // cluster), before the first branch; none is made after.
  void MakeSliceConstants() {
    for (int64_t extent : plan_.shape) {
      Index(extent);
      Index(extent / plan_.lanes);
    }
    Index(0);
    Index(1);
    Index(plan_.lanes);
    constants_frozen_ = true;
  }

  // An index constant, made once at the start of the lowered code (before
  // any branch, so visible in all of it).
  Value* Index(int64_t value) {
    auto it = constants_.find(value);
    if (it != constants_.end()) return it->second;
    KIR_CHECK(!constants_frozen_)
        << "index constant " << value << " made after the first branch";
    Value* constant =
        builder_->Constant(value, DType::kIndex, absl::StrCat("sk_c", value));
    constants_[value] = constant;
    return constant;
  }

  Value* Cast(Value* value, DType dtype, const std::string& name) {
    return builder_
        ->Create(OpKind::kCast, {Use(value)}, {}, {Type::Scalar(dtype)}, {name})
        ->result();
  }

  Operand SemRef() const { return Ref(sem_, {tile_[0], tile_[1], thread_}); }

  // Loops over the partial, V elements at a time, doing `step` on each
  // chunk: store it into the thread's slice, add it to the slice, or add
  // the slice to it; send it to the next split's landing buffer
  // (mode=cluster); or a step of mode=gather's sum. With `slot_split` the
  // slice is that split's slot of the work buffer (mode=gather).
  void EmitNest(OpBuilder& outer, Step step, Value* slot_split = nullptr) {
    const int rank = static_cast<int>(plan_.shape.size());
    std::vector<Value*> indices;
    OpBuilder* b = &outer;
    std::vector<std::unique_ptr<OpBuilder>> builders;
    Value* chunk = nullptr;
    for (int d = 0; d < rank; ++d) {
      const bool innermost = d == rank - 1;
      const int64_t step_size = innermost ? plan_.lanes : 1;
      const int64_t trips = plan_.shape[d] / step_size;
      // chunk = chunk * trips + iv / step_size; a dimension of one trip
      // needs no loop.
      if (trips == 1) {
        indices.push_back(Index(0));
        continue;
      }
      Op* loop = b->For(Index(0), Index(plan_.shape[d]), Index(step_size),
                        kernel_.FreshName(absl::StrCat("sk_e", d)),
                        static_cast<int>(trips));
      builders.push_back(std::make_unique<OpBuilder>(loop->region(0)));
      b = builders.back().get();
      Inherit(*b);
      Value* iv = loop->region(0).argument(0);
      indices.push_back(iv);
      Value* position = iv;
      if (step_size > 1) {
        position = b->Binary(OpKind::kDiv, iv, Index(step_size), "sk_pos");
      }
      if (chunk == nullptr) {
        chunk = position;
      } else {
        Value* scaled =
            b->Binary(OpKind::kMul, chunk, Index(trips), "sk_chunk_row");
        chunk = b->Binary(OpKind::kAdd, scaled, position, "sk_chunk");
      }
    }
    if (chunk == nullptr) chunk = Index(0);  // the whole partial is one chunk
    const Type partial_type = Lanes(plan_.partial_type);
    const Type work_type = Lanes(plan_.work_type);
    auto slot_of = [&](Value* split) {
      return Ref(work_, {tile_[0], tile_[1], split, chunk, thread_, Index(0)});
    };
    const Operand slot =
        recv_ != nullptr ? Ref(recv_, {chunk, thread_, Index(0)})
        : slot_split != nullptr
            ? slot_of(slot_split)
            : Ref(work_, {tile_[0], tile_[1], chunk, thread_, Index(0)});
    const Operand mine = Ref(plan_.partial, indices);
    if (step == Step::kGatherFirst || step == Step::kGatherAdd ||
        step == Step::kGatherLast) {
      EmitGatherStep(*b, step, slot, Ref(run_, indices), mine);
      return;
    }
    Value* part =
        b->Create(OpKind::kLoad, {mine}, {}, {partial_type}, {"sk_part"})
            ->result();
    if (step == Step::kSend) {
      b->Create(OpKind::kStoreRemote,
                {slot, Use(part), Ref(recv_bar_, {Index(0)}), Use(next_rank_)});
      return;
    }
    if (step == Step::kStore) {
      b->Create(OpKind::kStore,
                {slot, Use(Convert(*b, part, work_type, "sk_part_w"))});
      return;
    }
    // The sum so far, in the partial's type, then mine added to it: into
    // the slice (a middle split) or into my registers (the last).
    Value* sum =
        Convert(*b,
                b->Create(OpKind::kLoad, {slot}, {}, {work_type}, {"sk_sum_w"})
                    ->result(),
                partial_type, "sk_sum");
    Value* total = b->Binary(CombineKind(), sum, part, "sk_total");
    if (step == Step::kAdd) {
      b->Create(OpKind::kStore,
                {slot, Use(Convert(*b, total, work_type, "sk_total_w"))});
    } else {
      b->Create(OpKind::kStore, {mine, Use(total)});
    }
  }

  // One chunk of mode=gather's sum, in the partial's type: run = slot,
  // run = run op slot, or partial = run op partial.
  void EmitGatherStep(OpBuilder& b, Step step, const Operand& slot,
                      const Operand& run, const Operand& mine) {
    const Type partial_type = Lanes(plan_.partial_type);
    const Type work_type = Lanes(plan_.work_type);
    if (step == Step::kGatherLast) {
      Value* sum =
          b.Create(OpKind::kLoad, {run}, {}, {partial_type}, {"sk_sum"})
              ->result();
      Value* part =
          b.Create(OpKind::kLoad, {mine}, {}, {partial_type}, {"sk_part"})
              ->result();
      b.Create(OpKind::kStore,
               {mine, Use(b.Binary(CombineKind(), sum, part, "sk_total"))});
      return;
    }
    Value* stored =
        Convert(b,
                b.Create(OpKind::kLoad, {slot}, {}, {work_type}, {"sk_slot_w"})
                    ->result(),
                partial_type, "sk_slot");
    if (step == Step::kGatherAdd) {
      Value* so_far =
          b.Create(OpKind::kLoad, {run}, {}, {partial_type}, {"sk_so_far"})
              ->result();
      stored = b.Binary(CombineKind(), so_far, stored, "sk_next_sum");
    }
    b.Create(OpKind::kStore, {run, Use(stored)});
  }

  Type Lanes(DType dtype) const {
    return plan_.lanes > 1 ? Type::Vector(dtype, plan_.lanes)
                           : Type::Scalar(dtype);
  }

  Value* Convert(OpBuilder& b, Value* value, const Type& type,
                 const std::string& name) {
    if (value->type() == type) return value;
    return b.Create(OpKind::kCast, {Use(value)}, {}, {type}, {name})->result();
  }

  OpKind CombineKind() const {
    const CombineOp op = plan_.splitk->op();
    return op == CombineOp::kMin   ? OpKind::kMin
           : op == CombineOp::kMax ? OpKind::kMax
                                   : OpKind::kAdd;
  }

  Kernel& kernel_;
  PassContext& context_;
  SplitPlan plan_;
  OpBuilder* builder_ = nullptr;
  std::unique_ptr<OpBuilder> top_;  // after the body, at the splitk's level
  std::map<int64_t, Value*> constants_;
  bool constants_frozen_ = false;
  Value* sem_ = nullptr;
  Value* work_ = nullptr;
  Value* tile_[2] = {nullptr, nullptr};
  Value* thread_ = nullptr;
  Value* one32_ = nullptr;
  // TMA modes.
  Value* zero32_ = nullptr;
  Value* warp_ = nullptr;
  Value* lane_ = nullptr;
  Value* stage_ = nullptr;
  Value* handoff_ = nullptr;  // tma-serial
  Value* vote_ = nullptr;     // tma-atomic: the issuer's "last" as 0 / 1
  Value* map_ = nullptr;
  // mode=gather.
  Value* run_ = nullptr;  // the running sum, the partial's shape
  // mode=cluster.
  Value* recv_ = nullptr;      // the landing buffer
  Value* recv_bar_ = nullptr;  // its mbarrier
  Value* next_rank_ = nullptr;
  // tma-atomic with reset=parity.
  Value* tile_rows_ = nullptr;  // G1
  Value* work_row_ = nullptr;   // the tile's row in this launch's parity
  // Where the splitk's body sits in its parent region after it moved there.
  int body_begin_ = 0;
  int body_end_ = 0;
};

}  // namespace

absl::Status SerializeSplitK(Kernel& kernel, const PassOptions& options,
                             PassContext& context) {
  for (const char* counter : {kSplitKLowered, kPartialElements, kVectorLanes}) {
    context.stats.Add(counter, 0);
  }
  absl::StatusOr<std::string> mode = options.GetString("mode");
  if (!mode.ok()) return mode.status();
  absl::StatusOr<std::string> work_name = options.GetString("work");
  if (!work_name.ok()) return work_name.status();
  const std::optional<DType> work_type = WorkType(*work_name);
  KIR_CHECK(work_type.has_value()) << "undeclared work type " << *work_name;
  absl::StatusOr<std::string> reset = options.GetString("reset");
  if (!reset.ok()) return reset.status();
  const std::optional<Mode> parsed_mode = ModeNamed(*mode);
  KIR_CHECK(parsed_mode.has_value()) << "undeclared mode " << *mode;
  for (bool first = true;;) {
    Op* splitk = kernel.MayHold(OpKind::kSplitK)
                     ? FindFirst(kernel.body(),
                                 [](const Op& op) {
                                   return op.kind() == OpKind::kSplitK;
                                 })
                     : nullptr;
    if (splitk == nullptr) {
      if (first) context.PreserveAll();  // no splitk: nothing changed
      break;
    }
    first = false;
    absl::StatusOr<SplitPlan> plan =
        Checker(kernel, *splitk, *work_type, *parsed_mode, *reset == "parity")
            .Run();
    if (!plan.ok()) return plan.status();
    Rewriter(kernel, context, *std::move(plan)).Run();
  }
  return absl::OkStatus();
}

}  // namespace kir
