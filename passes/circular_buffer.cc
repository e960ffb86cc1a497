// Circular buffering of TMA loads; see circular_buffer.h.
//
// One marked loop at a time: an analysis (LoopPlan) that checks the input
// and finds the stage loads, the staged buffers, the author's barrier
// protocol and the computations the loads' addresses need (the slice);
// then the rewrite, common to both modes (rings, inits, stage indices, the
// consumers' waits and releases) with the load issue placed per mode: a
// prologue and a refill at the start of each iteration (pipelined), or a
// producer role running its own copy of the nest, or one loop merged from
// it (warp_specialized).
#include "passes/circular_buffer.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/static_values.h"
#include "analysis/thread_analysis.h"
#include "ir/builder.h"
#include "ir/check.h"
#include "ir/checked_math.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"
#include "ir/shared_memory.h"
#include "ir/shared_memory_plan.h"

namespace kir {
namespace {

constexpr char kCircularBufferPassName[] = "circular-buffer";
constexpr int64_t kRegisterFileSize = 65536;
constexpr int64_t kMaxBlockThreads = 1024;
constexpr int kWarpgroupThreads = 128;
constexpr int kDefaultProducerRegs = 40;

constexpr char kLoopsPipelined[] = "loops-pipelined";
constexpr char kLoopsWarpSpecialized[] = "loops-warp-specialized";
constexpr char kBuffersStaged[] = "buffers-staged";
constexpr char kLoadsPipelined[] = "loads-pipelined";
constexpr char kLoopsPingPong[] = "loops-pingpong";
constexpr char kLoadsMulticast[] = "loads-multicast";

enum class Mode { kPipelined, kWarpSpecialized };

// The options given to the pass; they override every marker.
struct Overrides {
  std::optional<Mode> mode;
  int64_t stages = 0;     // 0: the marker's
  int64_t prefetch = -1;  // -1: the marker's
  std::optional<bool> producer_warp;
  bool merged_producer = false;
  std::optional<bool> pingpong;
  bool multicast = true;  // false: cluster_shared loads stay per-CTA loads
};

// What one marked loop asks for, after the overrides.
struct Config {
  Mode mode = Mode::kPipelined;
  int stages = 2;
  int prefetch = 1;              // pipelined: iterations issued ahead
  bool producer_warp = false;    // warp_specialized: one warp, no setmaxnreg
  bool merged_producer = false;  // one loop over the nest's iterations
  bool pingpong = false;         // two consumer warpgroups, alternate tiles
  std::optional<int> producer_regs;
  std::optional<int> consumer_regs;
  bool multicast = true;  // honour cluster_shared loads
};

bool IsMarked(const Op& op) {
  return op.kind() == OpKind::kFor &&
         op.circular_buffer() != CircularBufferMode::kNone;
}

bool IsStageLoadKind(OpKind kind) {
  return kind == OpKind::kTmaLoad || kind == OpKind::kBulkLoad;
}

// thread.id, warp.id, lane.id and block.dim: values that change meaning
// when the block grows by a producer warpgroup.
bool IsPositionOp(const Op& op) {
  switch (op.kind()) {
    case OpKind::kThreadId:
    case OpKind::kWarpId:
    case OpKind::kLaneId:
    case OpKind::kBlockDim:
      return true;
    default:
      return false;
  }
}

// The alloc.shared at the kernel's top level that defines `buffer`, or null.
const Op* TopLevelSharedAlloc(const Kernel& kernel, const Value* buffer) {
  if (buffer->kind() != Value::Kind::kResult) return nullptr;
  const Op* alloc = buffer->defining_op();
  return alloc->kind() == OpKind::kAllocShared &&
                 alloc->parent_region() == &kernel.body()
             ? alloc
             : nullptr;
}

std::string Name(const Value* value) {
  return absl::StrCat("%", value->name());
}

// Whether `op` or an op nested in it satisfies `pred`.
template <typename Pred>
bool AnyNested(const Op& op, Pred&& pred) {
  if (pred(op)) return true;
  for (int r = 0; r < op.num_regions(); ++r) {
    for (const auto& inner : op.region(r).ops()) {
      if (AnyNested(*inner, pred)) return true;
    }
  }
  return false;
}

// Whether `value` is provably >= 0: sizes, non-negative constants, index
// queries, and +, *, /, rem, min, max of such values.
bool NonNegative(const Value* value, int depth = 0) {
  if (depth > 12) return false;
  if (value->kind() == Value::Kind::kSize) return true;
  if (value->kind() != Value::Kind::kResult) return false;
  if (std::optional<int64_t> constant = IntegerConstant(value)) {
    return *constant >= 0;
  }
  const Op& op = *value->defining_op();
  // The index queries (thread and block indices, dimensions) are the
  // computations without operands other than constants.
  if (op.num_operands() == 0 && FactsOf(op.kind()).computes) return true;
  switch (op.kind()) {
    case OpKind::kAdd:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kRem:
    case OpKind::kMin:
      return NonNegative(op.operand_value(0), depth + 1) &&
             NonNegative(op.operand_value(1), depth + 1);
    case OpKind::kMax:
      return NonNegative(op.operand_value(0), depth + 1) ||
             NonNegative(op.operand_value(1), depth + 1);
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------
// Index arithmetic that folds what it can, so that the output needs no
// canonicalize run after it (the pass runs after canonicalize).

class ConstantPool {
 public:
  // New constants go right after the leading run of top-level constants.
  explicit ConstantPool(Kernel& kernel) : kernel_(kernel) {
    for (const auto& op : kernel.body().ops()) {
      if (op->kind() != OpKind::kConst) break;
      Remember(op->result());
    }
  }

  // An index constant visible everywhere in the kernel. A new one is
  // inserted at the top level: `*inserted_at` (if not null) is its index
  // there, or -1 when it existed.
  Value* Get(int64_t value, int* inserted_at = nullptr) {
    if (inserted_at != nullptr) *inserted_at = -1;
    auto it = values_.find(value);
    if (it != values_.end()) return it->second;
    Region& body = kernel_.body();
    int index = 0;
    while (index < body.size() && body.op(index).kind() == OpKind::kConst) {
      ++index;
    }
    if (inserted_at != nullptr) *inserted_at = index;
    OpBuilder builder(body, index);
    builder.set_provenance(Provenance{kCircularBufferPassName, {}});
    // The magnitude in unsigned arithmetic: -INT64_MIN overflows.
    const uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value)
                                         : static_cast<uint64_t>(value);
    Value* constant =
        builder.Constant(value, DType::kIndex,
                         absl::StrCat("c", value < 0 ? "m" : "", magnitude));
    values_[value] = constant;
    return constant;
  }

 private:
  void Remember(Value* value) {
    if (!value->type().is_index()) return;
    std::optional<int64_t> constant = IntegerConstant(value);
    if (constant && values_.count(*constant) == 0) values_[*constant] = value;
  }

  Kernel& kernel_;
  std::map<int64_t, Value*> values_;
};

class IndexMath {
 public:
  IndexMath(OpBuilder& builder, ConstantPool& constants)
      : builder_(builder), constants_(constants) {}

  // A new constant goes in at the kernel's top level: when that is before
  // this builder's insertion point, the point moves with the ops after it
  // (else the next op would go before the ones built so far).
  Value* Const(int64_t value) {
    int inserted_at = -1;
    Value* constant = constants_.Get(value, &inserted_at);
    Region& body = constant->defining_op()->parent_region()->kernel()->body();
    if (inserted_at >= 0 && &builder_.region() == &body &&
        inserted_at <= builder_.index()) {
      builder_.SetInsertionPoint(body, builder_.index() + 1);
    }
    return constant;
  }

  Value* Add(Value* a, Value* b, const std::string& name) {
    std::optional<int64_t> x = IntegerConstant(a), y = IntegerConstant(b);
    if (x && y && CheckedAdd(*x, *y)) return Const(*x + *y);
    if (y && *y == 0) return a;
    if (x && *x == 0) return b;
    return builder_.Binary(OpKind::kAdd, a, b, name);
  }
  Value* Sub(Value* a, Value* b, const std::string& name) {
    std::optional<int64_t> x = IntegerConstant(a), y = IntegerConstant(b);
    if (x && y && CheckedSub(*x, *y)) return Const(*x - *y);
    if (y && *y == 0) return a;
    return builder_.Binary(OpKind::kSub, a, b, name);
  }
  Value* Mul(Value* a, Value* b, const std::string& name) {
    std::optional<int64_t> x = IntegerConstant(a), y = IntegerConstant(b);
    if (x && y && CheckedMul(*x, *y)) return Const(*x * *y);
    if ((x && *x == 0) || (y && *y == 0)) return Const(0);
    if (y && *y == 1) return a;
    if (x && *x == 1) return b;
    return builder_.Binary(OpKind::kMul, a, b, name);
  }
  Value* Div(Value* a, Value* b, const std::string& name) {
    std::optional<int64_t> x = IntegerConstant(a), y = IntegerConstant(b);
    if (x && y && *y != 0 &&
        !(*y == -1 && *x == std::numeric_limits<int64_t>::min())) {
      return Const(*x / *y);
    }
    if (y && *y == 1) return a;
    return builder_.Binary(OpKind::kDiv, a, b, name);
  }
  Value* Rem(Value* a, Value* b, const std::string& name) {
    std::optional<int64_t> x = IntegerConstant(a), y = IntegerConstant(b);
    if (x && y && *y != 0 &&
        !(*y == -1 && *x == std::numeric_limits<int64_t>::min())) {
      return Const(*x % *y);
    }
    if (y && *y == 1) return Const(0);
    return builder_.Binary(OpKind::kRem, a, b, name);
  }
  Value* Min(Value* a, Value* b, const std::string& name) {
    std::optional<int64_t> x = IntegerConstant(a), y = IntegerConstant(b);
    if (x && y) return Const(std::min(*x, *y));
    return builder_.Binary(OpKind::kMin, a, b, name);
  }
  Value* Max(Value* a, Value* b, const std::string& name) {
    std::optional<int64_t> x = IntegerConstant(a), y = IntegerConstant(b);
    if (x && y) return Const(std::max(*x, *y));
    return builder_.Binary(OpKind::kMax, a, b, name);
  }

 private:
  OpBuilder& builder_;
  ConstantPool& constants_;
};

// ---------------------------------------------------------------------------
// The analysis of one marked loop.

struct StageLoad {
  Op* op = nullptr;
  int64_t bytes = 0;
  bool cluster_shared = false;  // issued once per cluster, multicast
};

struct LoopPlan {
  Config config;
  std::vector<Op*> nest;  // outermost first; back() is the marked loop
  std::vector<StageLoad> loads;
  std::vector<Value*> staged;  // in program order of their allocations
  std::set<const Value*> staged_set;
  std::vector<Value*> author_barriers;
  std::vector<Op*> author_waits;     // replaced by full waits
  std::vector<Op*> author_removals;  // inits, arrive_tx, invals
  // pingpong: shared buffers of the tile loop other than the stages (an
  // epilogue tile), which each consumer group gets a copy of.
  std::vector<const Value*> group_private;
  // Ops inside the nest, and (warp_specialized) top-level ops that move to
  // the consumers, that one iteration's loads need: cloned per iteration.
  std::set<const Op*> slice;
  std::vector<const Op*> top_slice;
  int64_t bytes = 0;  // one iteration's loads
  int block_threads = 0;
  // Multicast: the CTAs of the cluster (1: no `cluster_shared` load).
  int cluster_ctas = 1;

  Op* marked() const { return nest.back(); }
  int depth() const { return static_cast<int>(nest.size()); }
};

// How a top-level op fares when the block grows by a producer warpgroup.
enum class TopLevelClass {
  kKept,      // shared allocations, block-uniform computations: both roles
  kPosition,  // thread/warp/lane ids and block.dim: remapped in consumers
  kMoved,     // everything else: the consumers' code
};

class Classifier {
 public:
  explicit Classifier(const Kernel& kernel) {
    for (const auto& op : kernel.body().ops()) {
      classes_[op.get()] = Classify(*op);
    }
  }
  TopLevelClass Of(const Op& op) const {
    auto it = classes_.find(&op);
    return it == classes_.end() ? TopLevelClass::kMoved : it->second;
  }
  // Sizes, parameters and results of kept top-level ops.
  bool IsKeptValue(const Value* value) const {
    switch (value->kind()) {
      case Value::Kind::kSize:
      case Value::Kind::kParam:
        return true;
      case Value::Kind::kRegionArgument:
        return false;
      case Value::Kind::kResult:
        return Of(*value->defining_op()) == TopLevelClass::kKept;
    }
    return false;
  }

 private:
  TopLevelClass Classify(const Op& op) const {
    if (op.kind() == OpKind::kAllocShared) return TopLevelClass::kKept;
    if (IsPositionOp(op)) return TopLevelClass::kPosition;
    if (!FactsOf(op.kind()).computes || op.num_regions() != 0) {
      return TopLevelClass::kMoved;
    }
    bool kept = true;
    op.ForEachUse([&](const Value* value) {
      if (!IsKeptValue(value)) kept = false;
    });
    return kept ? TopLevelClass::kKept : TopLevelClass::kMoved;
  }

  std::map<const Op*, TopLevelClass> classes_;
};

class Analyzer {
 public:
  Analyzer(Kernel& kernel, const ThreadAnalysis& threads,
           const Classifier& classes, Op& loop, Config config)
      : kernel_(kernel), threads_(threads), classes_(classes), loop_(loop) {
    plan_.config = config;
  }

  absl::StatusOr<LoopPlan> Run() {
    using Step = absl::Status (Analyzer::*)();
    for (Step step :
         {&Analyzer::FindNest, &Analyzer::CheckBlock, &Analyzer::FindLoads,
          &Analyzer::CheckStagedBuffers, &Analyzer::CheckMulticast,
          &Analyzer::FindAuthorProtocol, &Analyzer::CheckPingPong,
          &Analyzer::CollectSlices, &Analyzer::CheckSharedMemory}) {
      absl::Status status = (this->*step)();
      if (!status.ok()) return status;
    }
    return std::move(plan_);
  }

 private:
  bool warp_specialized() const {
    return plan_.config.mode == Mode::kWarpSpecialized;
  }

  absl::Status FindNest() {
    std::vector<Op*> chain = {&loop_};
    for (Op* parent = loop_.parent_op(); parent != nullptr;
         parent = parent->parent_op()) {
      if (parent->kind() != OpKind::kFor) {
        return (Error(loop_.loc())
                << "circular buffering needs the marked loop nested in loops "
                   "only, from the kernel's top level; it is inside `"
                << parent->mnemonic() << "`")
            .Note(parent->loc(), "the enclosing op");
      }
      chain.push_back(parent);
    }
    std::reverse(chain.begin(), chain.end());
    plan_.nest = chain;
    for (const Op* loop : plan_.nest) {
      static constexpr const char* kWhat[] = {"lower bound", "upper bound",
                                              "step"};
      for (int i = 0; i < 3; ++i) {
        const Value* bound = loop->operand_value(i);
        if (!classes_.IsKeptValue(bound) ||
            (bound->kind() == Value::Kind::kResult &&
             !PrecedesNest(*bound->defining_op()))) {
          return (Error(loop_.loc())
                  << "the " << kWhat[i] << " " << Name(bound)
                  << " of a loop of the nest is not computed before the "
                     "nest from sizes, parameters, block indices and "
                     "constants; circular buffering counts iterations over "
                     "the whole nest")
              .Note(loop->loc(), "the loop");
        }
      }
    }
    return absl::OkStatus();
  }

  bool PrecedesNest(const Op& op) const {
    const Region& body = kernel_.body();
    return op.parent_region() == &body &&
           body.IndexOf(&op) < body.IndexOf(plan_.nest.front());
  }

  absl::Status CheckBlock() {
    std::optional<int> threads = threads_.num_threads();
    if (!threads) {
      return Error(loop_.loc())
             << "circular buffering needs a constant block shape: the empty "
                "barriers count the block's threads";
    }
    plan_.block_threads = *threads;
    if (!warp_specialized()) return absl::OkStatus();
    if (kernel_.block.y.AsConstant() != 1 ||
        kernel_.block.z.AsConstant() != 1 ||
        *threads % kWarpgroupThreads != 0) {
      return Error(loop_.loc())
             << "warp_specialized mode needs a one-dimensional block of whole "
                "warpgroups (the producer warpgroup goes in front of them); "
                "got block("
             << kernel_.block.x.ToString() << ", " << kernel_.block.y.ToString()
             << ", " << kernel_.block.z.ToString() << ")";
    }
    if (*threads + kWarpgroupThreads > kMaxBlockThreads) {
      return Error(loop_.loc())
             << "warp_specialized mode adds a producer warpgroup, but the "
                "block already has "
             << *threads << " threads (at most "
             << kMaxBlockThreads - kWarpgroupThreads << ")";
    }
    const Op* role = FindFirst(kernel_.body(), [](const Op& op) {
      return op.kind() == OpKind::kRole;
    });
    if (role != nullptr) {
      return (Error(loop_.loc())
              << "warp_specialized mode makes the roles of the kernel, which "
                 "already has one")
          .Note(role->loc(), "the role");
    }
    const Op* other = FindFirst(kernel_.body(), [&](const Op& op) {
      return &op != &loop_ && IsMarked(op);
    });
    if (other != nullptr) {
      return (Error(loop_.loc())
              << "warp_specialized mode splits the whole block into producer "
                 "and consumers, so it takes the kernel's only marked loop")
          .Note(other->loc(), "another marked loop");
    }
    // The nest becomes the consumer role's, which the producer warpgroup
    // does not run: a barrier of the whole block there would never
    // complete (V45).
    const Op* block_barrier =
        FindFirst(plan_.nest.front()->region(0), [](const Op& op) {
          return FactsOf(op.kind()).sync == SyncKind::kBlockBarrier;
        });
    if (block_barrier != nullptr) {
      return (Error(block_barrier->loc())
              << "warp_specialized mode runs the marked loop's nest in the "
                 "consumer warpgroups only, so a barrier of the whole block "
                 "cannot be in it; use barrier.named, or leave the barriers "
                 "to insert-syncs")
          .Note(loop_.loc(), "the marked loop");
    }
    return absl::OkStatus();
  }

  absl::Status FindLoads() {
    Walk(loop_.region(0), [&](Op& op) {
      if (IsStageLoadKind(op.kind())) plan_.loads.push_back(StageLoad{&op, 0});
    });
    if (plan_.loads.empty()) {
      return Error(loop_.loc())
             << "loop marked for circular buffering has no TMA or bulk load "
                "(tma.load, bulk.load) to pipeline";
    }
    for (StageLoad& load : plan_.loads) {
      Op& op = *load.op;
      for (Op* parent = op.parent_op(); parent != &loop_;
           parent = parent->parent_op()) {
        if (parent->kind() == OpKind::kFor) {
          return (Error(op.loc()) << "a load to pipeline must sit in the "
                                     "marked loop's body, not in an inner "
                                     "loop")
              .Note(parent->loc(), "the inner loop");
        }
        if (parent->kind() != OpKind::kIf) {
          return (Error(op.loc())
                  << "a load to pipeline may only be guarded by `if`s")
              .Note(parent->loc(), "the enclosing op");
        }
        const bool in_else = op.AncestorIn(parent->region(0)) == nullptr;
        const Value* condition = parent->operand_value(0);
        if (in_else || threads_.PerThreadValues(condition) == nullptr) {
          return (Error(op.loc())
                  << "a load to pipeline must run in every iteration, under "
                     "guards that only choose the issuing thread (the full "
                     "barrier expects the same bytes each time); "
                  << Name(condition)
                  << (in_else ? " guards it through its else branch"
                              : " depends on more than thread indices"))
              .Note(parent->loc(), "the guard");
        }
      }
      Value* buffer = op.operand_value(0);
      if (TopLevelSharedAlloc(kernel_, buffer) == nullptr) {
        return Error(op.loc())
               << "the destination " << Name(buffer)
               << " of a load to pipeline must be a shared allocation at the "
                  "kernel's top level";
      }
      if (op.kind() == OpKind::kTmaLoad) {
        const Type& map = op.operand_value(1)->type();
        int64_t elements = 1;
        for (int64_t extent : map.box()) elements *= extent;
        load.bytes = elements * DTypeBytes(map.dtype());
      } else {
        load.bytes = op.bytes();
      }
      // One iteration's loads complete on one stage's mbarrier, which
      // counts at most 2^20 - 1 bytes (V29 on the arrive_tx the pass
      // writes). Checked per load, so the sum cannot overflow.
      if (load.bytes > kMbarrierCountLimit - plan_.bytes) {
        return Error(op.loc())
               << "the loads of an iteration bring more than "
               << kMbarrierCountLimit
               << " bytes, the most one stage's mbarrier can expect (this "
                  "load: "
               << load.bytes << ")";
      }
      plan_.bytes += load.bytes;
      if (plan_.staged_set.insert(buffer).second) {
        plan_.staged.push_back(buffer);
      }
      Value* barrier = op.operand_value(2);
      if (std::find(plan_.author_barriers.begin(), plan_.author_barriers.end(),
                    barrier) == plan_.author_barriers.end()) {
        plan_.author_barriers.push_back(barrier);
      }
    }
    std::sort(plan_.staged.begin(), plan_.staged.end(),
              [&](const Value* a, const Value* b) {
                return kernel_.body().IndexOf(a->defining_op()) <
                       kernel_.body().IndexOf(b->defining_op());
              });
    return absl::OkStatus();
  }

  absl::Status CheckStagedBuffers() {
    absl::Status status;
    Walk(kernel_.body(), [&](const Op& op) {
      if (!status.ok()) return;
      for (const Operand& operand : op.operands()) {
        if (plan_.staged_set.count(operand.value) == 0) continue;
        if (!op.IsInside(loop_)) {
          status = (Error(op.loc())
                    << Name(operand.value)
                    << ", which a load to pipeline writes, is also accessed "
                       "outside the marked loop; its stages exist only in "
                       "the loop")
                       .Note(loop_.loc(), "the marked loop");
          return;
        }
        if (!operand.indexed) {
          status = Error(op.loc())
                   << "a staged buffer (" << Name(operand.value)
                   << ") must be accessed element- or box-wise, so that its "
                      "stage can be indexed";
          return;
        }
      }
    });
    return status;
  }

  // Multicast: a `cluster_shared` load names the same box in every CTA of
  // the cluster, so each CTA issues a slice of it (its rank's share of the
  // box's outermost rows) into every CTA. That needs every CTA of a
  // cluster to run the same iterations (a peer waiting for bytes no one
  // sends would hang) and to load the same box (else a CTA gets a peer's
  // rows).
  absl::Status CheckMulticast() {
    const Op* first = nullptr;
    for (StageLoad& load : plan_.loads) {
      // multicast=false: the promise is not used, each CTA loads its box.
      load.cluster_shared = plan_.config.multicast &&
                            load.op->kind() == OpKind::kTmaLoad &&
                            load.op->cluster_shared();
      if (load.cluster_shared && first == nullptr) first = load.op;
    }
    if (first == nullptr) return absl::OkStatus();
    if (!warp_specialized()) {
      return (Error(first->loc())
              << "a cluster_shared load is multicast by a producer role, so "
                 "it needs circular_buffer = warp_specialized")
          .Note(loop_.loc(), "the marked loop");
    }
    const std::optional<int64_t> ctas = kernel_.cluster.StaticVolume();
    if (!ctas || *ctas < 2) {
      return (Error(first->loc())
              << "a cluster_shared load needs a cluster of more than one CTA "
                 "to share it with; the kernel's cluster is "
              << (ctas ? absl::StrCat(*ctas) : std::string("not constant")))
          .Note(kernel_.loc(), "the kernel");
    }
    plan_.cluster_ctas = static_cast<int>(*ctas);
    const Region& body = kernel_.body();
    const Op* early_return = FindFirst(body, [&](const Op& op) {
      return op.kind() == OpKind::kReturn &&
             !(op.parent_region() == &body &&
               body.IndexOf(&op) + 1 == body.size());
    });
    if (early_return != nullptr) {
      return (Error(early_return->loc())
              << "a thread that leaves the kernel early would leave the CTAs "
                 "of its cluster waiting (for its releases of their stages, "
                 "and at the cluster barrier before the exit); with a "
                 "cluster_shared load only a `return` at the kernel's end "
                 "is allowed")
          .Note(first->loc(), "the cluster_shared load");
    }
    for (const Op* loop : plan_.nest) {
      static constexpr const char* kWhat[] = {"lower bound", "upper bound",
                                              "step"};
      for (int i = 0; i < 3; ++i) {
        const Value* bound = loop->operand_value(i);
        if (!ClusterUniform(bound)) {
          return (Error(loop->loc())
                  << "the " << kWhat[i] << " " << Name(bound)
                  << " of a loop of the nest may differ between the CTAs of "
                     "a cluster; with a cluster_shared load every CTA of the "
                     "cluster must run the same iterations (derive tiles "
                     "from the cluster's index, block.id / cluster size, "
                     "and the CTA's place in it from cluster.cta_rank inside "
                     "the loop)")
              .Note(first->loc(), "the cluster_shared load");
        }
      }
    }
    for (const StageLoad& load : plan_.loads) {
      if (!load.cluster_shared) continue;
      const Op& op = *load.op;
      if (op.has_multicast()) {
        return Error(op.loc()) << "a cluster_shared load is multicast by the "
                                  "pass; it takes no multicast mask";
      }
      for (const Value* coordinate : op.operand(1).indices) {
        if (!ClusterUniform(coordinate)) {
          return Error(op.loc())
                 << "the coordinate " << Name(coordinate)
                 << " of a cluster_shared load may differ between the CTAs "
                    "of a cluster, which then do not share its box";
        }
      }
      const Value* map = op.operand_value(1);
      const Param* param = kernel_.FindParam(map);
      KIR_CHECK(param != nullptr && param->kind == Param::Kind::kTensorMap);
      const std::vector<int64_t>& box = map->type().box();
      const int64_t alignment = param->swizzle == 0 ? 128 : param->swizzle * 8;
      if (box[0] % *ctas != 0 || (load.bytes / *ctas) % alignment != 0) {
        return Error(op.loc())
               << "a cluster_shared load is issued in " << *ctas
               << " slices of its box's outer dimension, one per CTA of the "
                  "cluster; "
               << Name(map) << "'s box [" << absl::StrJoin(box, ", ")
               << "] does not split into " << *ctas << " slices of a multiple "
               << "of " << alignment << " bytes (the "
               << (param->swizzle == 0
                       ? std::string("TMA destination")
                       : absl::StrCat(param->swizzle, "-byte swizzle"))
               << " alignment)";
      }
    }
    return absl::OkStatus();
  }

  // Whether `value` is the same in every CTA of the cluster: sizes,
  // parameters, constants, launch dimensions, block indices along a
  // dimension the cluster does not span (or divided by a multiple of its
  // extent there), the indices of loops with such bounds, and computations
  // of these.
  bool ClusterUniform(const Value* value, int depth = 0) const {
    if (depth > 64) return false;
    switch (value->kind()) {
      case Value::Kind::kSize:
      case Value::Kind::kParam:
        return true;
      case Value::Kind::kRegionArgument: {
        const Op* loop = value->owning_region()->parent_op();
        if (loop == nullptr || loop->kind() != OpKind::kFor) return false;
        for (int i = 0; i < 3; ++i) {
          if (!ClusterUniform(loop->operand_value(i), depth + 1)) return false;
        }
        return true;
      }
      case Value::Kind::kResult:
        break;
    }
    const Op& op = *value->defining_op();
    auto cluster_extent = [&](const Op& index) {
      const int d = static_cast<int>(index.dim());
      return kernel_.cluster[d].AsConstant().value_or(0);
    };
    switch (op.kind()) {
      case OpKind::kConst:
      case OpKind::kGridDim:
      case OpKind::kBlockDim:
        return true;
      case OpKind::kBlockId:
        return cluster_extent(op) == 1;
      case OpKind::kDiv: {
        const Value* dividend = op.operand_value(0);
        const std::optional<int64_t> divisor =
            IntegerConstant(op.operand_value(1));
        if (dividend->kind() == Value::Kind::kResult &&
            dividend->defining_op()->kind() == OpKind::kBlockId && divisor) {
          const int64_t extent = cluster_extent(*dividend->defining_op());
          if (extent > 0 && *divisor % extent == 0) return true;
        }
        break;
      }
      default:
        break;
    }
    if (!FactsOf(op.kind()).computes || op.num_regions() != 0 ||
        op.num_operands() == 0) {
      return false;  // index queries other than the above, memory, sync
    }
    bool uniform = true;
    op.ForEachUse([&](const Value* use) {
      if (uniform && !ClusterUniform(use, depth + 1)) uniform = false;
    });
    return uniform;
  }

  absl::Status FindAuthorProtocol() {
    const std::set<const Value*> barriers(plan_.author_barriers.begin(),
                                          plan_.author_barriers.end());
    int64_t expected_bytes = 0;
    const Op* first_arrive = nullptr;
    absl::Status status;
    Walk(kernel_.body(), [&](Op& op) {
      if (!status.ok()) return;
      bool uses = false;
      for (const Operand& operand : op.operands()) {
        if (barriers.count(operand.value) != 0) uses = true;
      }
      if (!uses) return;
      const bool in_loop = op.IsInside(loop_);
      switch (op.kind()) {
        case OpKind::kTmaLoad:
        case OpKind::kBulkLoad:
          if (in_loop && barriers.count(op.operand_value(2)) != 0 &&
              std::any_of(plan_.loads.begin(), plan_.loads.end(),
                          [&](const StageLoad& l) { return l.op == &op; })) {
            return;
          }
          break;
        case OpKind::kMbarrierArriveTx:
          if (in_loop) {
            expected_bytes += op.bytes();
            if (first_arrive == nullptr) first_arrive = &op;
            plan_.author_removals.push_back(&op);
            return;
          }
          break;
        case OpKind::kMbarrierWait:
          if (in_loop) {
            plan_.author_waits.push_back(&op);
            return;
          }
          break;
        case OpKind::kMbarrierInit:
        case OpKind::kMbarrierInval:
          if (!op.IsOrIsInside(*plan_.nest.front())) {
            plan_.author_removals.push_back(&op);
            return;
          }
          break;
        default:
          break;
      }
      status = (Error(op.loc())
                << "this use of the mbarrier the pipelined loads complete on "
                   "is not one circular buffering can replace (it replaces "
                   "the barrier's init, the arrive_tx and waits in the loop, "
                   "and its inval)")
                   .Note(loop_.loc(), "the marked loop");
    });
    if (!status.ok()) return status;
    if (first_arrive != nullptr && expected_bytes != plan_.bytes) {
      return Error(first_arrive->loc())
             << "the loads of an iteration bring " << plan_.bytes
             << " bytes, but the arrive_tx in the loop expect "
             << expected_bytes;
    }
    for (const Value* barrier : plan_.author_barriers) {
      if (TopLevelSharedAlloc(kernel_, barrier) == nullptr) {
        return Error(loop_.loc())
               << "the mbarrier " << Name(barrier)
               << " of the loads must be a shared allocation at the kernel's "
                  "top level";
      }
    }
    return absl::OkStatus();
  }

  // Whether `op` is one of the author's barrier ops that the rewrite
  // removes, or an `if` holding only such ops.
  bool RemovedWithProtocol(const Op& op) const {
    if (std::find(plan_.author_removals.begin(), plan_.author_removals.end(),
                  &op) != plan_.author_removals.end()) {
      return true;
    }
    if (op.kind() != OpKind::kIf) return false;
    for (int r = 0; r < op.num_regions(); ++r) {
      for (const auto& inner : op.region(r).ops()) {
        if (!RemovedWithProtocol(*inner)) return false;
      }
    }
    return true;
  }

  // pingpong: the input is one consumer warpgroup computing whole tiles in
  // a tile loop directly around the marked loop; the rewrite runs that
  // code in two warpgroups, each over every other tile. What would run
  // twice (effects outside the tile loop) or cannot be split by tiles is
  // an error.
  absl::Status CheckPingPong() {
    if (!plan_.config.pingpong) return absl::OkStatus();
    if (plan_.depth() != 2) {
      return Error(loop_.loc())
             << "pingpong needs a tile loop directly around the marked loop, "
                "at the kernel's top level (the two consumer warpgroups take "
                "its iterations in turn); the marked loop is in a nest of "
             << plan_.depth() << (plan_.depth() == 1 ? " loop" : " loops");
    }
    if (plan_.block_threads != kWarpgroupThreads) {
      return Error(loop_.loc())
             << "pingpong takes a kernel written for one consumer warpgroup "
                "that computes whole tiles (block(128)); the pass adds the "
                "second; got "
             << plan_.block_threads << " threads";
    }
    const Op* tile_loop = plan_.nest.front();
    // Shared memory other than the stages and the author's barriers is the
    // warpgroup's own (an epilogue tile): the second group gets a copy.
    Walk(tile_loop->region(0), [&](const Op& op) {
      for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
        if (effect.space != MemorySpace::kShared || effect.buffer == nullptr ||
            plan_.staged_set.count(effect.buffer) != 0 ||
            std::find(plan_.author_barriers.begin(),
                      plan_.author_barriers.end(),
                      effect.buffer) != plan_.author_barriers.end() ||
            std::find(plan_.group_private.begin(), plan_.group_private.end(),
                      effect.buffer) != plan_.group_private.end()) {
          continue;
        }
        plan_.group_private.push_back(effect.buffer);
      }
    });
    for (const auto& op : kernel_.body().ops()) {
      if (op.get() == tile_loop || classes_.Of(*op) != TopLevelClass::kMoved ||
          op->kind() == OpKind::kReturn || op->kind() == OpKind::kAllocReg ||
          RemovedWithProtocol(*op)) {
        continue;
      }
      if (FactsOf(op->kind()).computes && op->num_regions() == 0) continue;
      return (Error(op->loc())
              << "pingpong runs the consumers' code outside the tile loop in "
                 "both consumer warpgroups, so only computations may sit "
                 "there; this `"
              << op->mnemonic() << "` would run twice")
          .Note(tile_loop->loc(), "the tile loop");
    }
    return absl::OkStatus();
  }

  int NestLevelOf(const Value* argument) const {
    for (int k = 0; k < plan_.depth(); ++k) {
      if (argument->owning_region() == &plan_.nest[k]->region(0)) return k;
    }
    return -1;
  }

  // Adds what computes `value` for one iteration's loads to the slice.
  absl::Status CollectValue(const Value* value, const Op& load) {
    switch (value->kind()) {
      case Value::Kind::kSize:
      case Value::Kind::kParam:
        return absl::OkStatus();
      case Value::Kind::kRegionArgument:
        if (NestLevelOf(value) >= 0) return absl::OkStatus();
        return (Error(load.loc())
                << "the address of this load depends on " << Name(value)
                << ", the index of a loop inside the marked loop; loads can "
                   "only be issued ahead from the nest's own indices")
            .Note(value->defining_op()->loc(), "the inner loop");
      case Value::Kind::kResult:
        break;
    }
    const Op& op = *value->defining_op();
    if (plan_.slice.count(&op) != 0 ||
        std::find(plan_.top_slice.begin(), plan_.top_slice.end(), &op) !=
            plan_.top_slice.end()) {
      return absl::OkStatus();
    }
    const bool top_level = op.parent_region() == &kernel_.body();
    if (top_level &&
        (!warp_specialized() || classes_.Of(op) != TopLevelClass::kMoved)) {
      return absl::OkStatus();  // visible where the loads are issued
    }
    if (!FactsOf(op.kind()).computes || op.num_regions() != 0) {
      return (Error(load.loc())
              << "the address of this load depends on " << Name(value)
              << ", which `" << op.mnemonic()
              << "` computes from data, not from loop indices and values "
                 "defined before the loop; it cannot be issued ahead")
          .Note(op.loc(), "defined here");
    }
    if (top_level) {
      plan_.top_slice.push_back(&op);
    } else {
      plan_.slice.insert(&op);
    }
    absl::Status status;
    op.ForEachUse([&](const Value* operand) {
      if (status.ok()) status = CollectValue(operand, load);
    });
    return status;
  }

  absl::Status CollectSlices() {
    for (const StageLoad& load : plan_.loads) {
      absl::Status status = CollectSlice(*load.op);
      if (!status.ok()) return status;
      const Op& op = *load.op;
      // The producer issues the load from its own thread, so its addresses
      // may not depend on which thread issued it.
      for (const Operand& operand : op.operands()) {
        for (const Value* index : operand.indices) {
          if (index == nullptr ||
              threads_.UniformScope(index) >= Scope::kBlock) {
            continue;
          }
          return Error(op.loc())
                 << "the index " << Name(index)
                 << " of a load to pipeline depends on the issuing thread; "
                    "the producer issues it from a thread of its own";
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CollectSlice(const Op& load) {
    for (int slot = 0; slot < 2; ++slot) {
      for (const Value* index : load.operand(slot).indices) {
        if (absl::Status status = CollectValue(index, load); !status.ok())
          return status;
      }
    }
    std::sort(plan_.top_slice.begin(), plan_.top_slice.end(),
              [&](const Op* a, const Op* b) {
                return kernel_.body().IndexOf(a) < kernel_.body().IndexOf(b);
              });
    return absl::OkStatus();
  }

  // Whether the stages fit, asked of the shared-memory planner: the staged
  // buffers grown to `stages` copies, the author's barriers replaced by
  // the two rings, and the space of buffers that are dead while the loop
  // runs reused (an epilogue tile after a non-persistent loop), as
  // plan-shared-memory will lay them out.
  absl::Status CheckSharedMemory() {
    const int stages = plan_.config.stages;
    SharedMemoryRequest request;
    request.reuse = SharedReuse::kAlways;
    std::vector<std::string> staged_names;
    for (const auto& op : kernel_.body().ops()) {
      if (op->kind() != OpKind::kAllocShared) continue;
      const Value* buffer = op->result();
      if (std::find(plan_.author_barriers.begin(), plan_.author_barriers.end(),
                    buffer) != plan_.author_barriers.end()) {
        request.removed.insert(buffer);  // replaced by the rings
        continue;
      }
      if (plan_.staged_set.count(buffer) == 0) continue;
      std::optional<int64_t> bytes = SharedAllocationBytes(*op);
      if (!bytes) continue;  // V20
      const int64_t align = SharedAllocationAlignment(*op);
      if (*bytes % align != 0) {
        return Error(op->loc())
               << "one stage of " << Name(buffer) << " is " << *bytes
               << " bytes, not a multiple of its " << align
               << "-byte alignment, so its stages cannot follow each other";
      }
      request.bytes[buffer] = *bytes * stages;
      staged_names.push_back(Name(buffer));
    }
    // The full and empty rings, after the last staged buffer, and the
    // second consumer group's copies of its private buffers.
    request.added = {{8 * stages, 8}, {8 * stages, 8}};
    for (const Value* buffer : plan_.group_private) {
      const Op& alloc = *buffer->defining_op();
      if (std::optional<int64_t> bytes = SharedAllocationBytes(alloc)) {
        request.added.push_back({*bytes, SharedAllocationAlignment(alloc)});
      }
    }
    request.added_after = plan_.staged.back();
    const SharedMemoryEstimate estimate = EstimateSharedMemory(
        kernel_, request, kernel_.block.StaticVolume().value_or(0), 0);
    if (estimate.bytes > kMaxSharedBytes) {
      return Error(loop_.loc())
             << stages << " stages of " << absl::StrJoin(staged_names, ", ")
             << " need " << estimate.bytes
             << " bytes of shared memory with the "
             << "kernel's other allocations, more than the " << kMaxSharedBytes
             << " a block can use";
    }
    return absl::OkStatus();
  }

  Kernel& kernel_;
  const ThreadAnalysis& threads_;
  const Classifier& classes_;
  Op& loop_;
  LoopPlan plan_;
};

absl::StatusOr<Config> ReadConfig(const Op& loop, const Overrides& overrides) {
  Config config;
  config.mode = overrides.mode.value_or(
      loop.circular_buffer() == CircularBufferMode::kWarpSpecialized
          ? Mode::kWarpSpecialized
          : Mode::kPipelined);
  const std::optional<int64_t> stages = loop.stages();
  config.stages = static_cast<int>(overrides.stages > 0 ? overrides.stages
                                   : stages             ? *stages
                                                        : 2);
  if (config.stages < 1 || config.stages > 16) {
    return Error(loop.loc())
           << "stages must be in 1..16, got " << config.stages;
  }
  config.pingpong = overrides.pingpong.value_or(loop.pingpong());
  config.multicast = overrides.multicast;
  if (config.pingpong && config.mode != Mode::kWarpSpecialized) {
    return Error(loop.loc())
           << "pingpong needs warp_specialized mode: the two consumer "
              "warpgroups take turns on the tiles a producer loads";
  }
  if (config.mode == Mode::kPipelined) {
    const std::optional<int64_t> prefetch = loop.prefetch();
    int64_t value = overrides.prefetch >= 0 ? overrides.prefetch
                    : prefetch              ? *prefetch
                                            : config.stages - 1;
    if (value < 0 || value >= config.stages) {
      return Error(loop.loc()) << "prefetch must be in 0.." << config.stages - 1
                               << " (less than stages), got " << value;
    }
    config.prefetch = static_cast<int>(value);
    return config;
  }
  config.merged_producer = overrides.merged_producer;
  config.producer_warp =
      overrides.producer_warp.value_or(loop.producer() == ProducerKind::kWarp);
  if (config.producer_warp) return config;  // no setmaxnreg
  if (const std::optional<int64_t> regs = loop.producer_regs()) {
    config.producer_regs = static_cast<int>(*regs);
  }
  if (const std::optional<int64_t> regs = loop.consumer_regs()) {
    config.consumer_regs = static_cast<int>(*regs);
  }
  return config;
}

// ---------------------------------------------------------------------------
// The rewrite.

class Rewriter {
 public:
  Rewriter(Kernel& kernel, PassContext& context, LoopPlan plan,
           ConstantPool& constants)
      : kernel_(kernel),
        context_(context),
        plan_(std::move(plan)),
        constants_(constants),
        provenance_{kCircularBufferPassName, {plan_.marked()->loc()}} {}

  absl::Status Run() {
    CountUses();
    OrderSlice(kernel_.body());
    Op& outer = *plan_.nest.front();
    if (plan_.config.mode == Mode::kWarpSpecialized) {
      if (absl::Status status = ComputeRegisterSplit(); !status.ok())
        return status;
      BuildRoles();
    }
    // The setup goes right before the nest (pipelined) or the roles.
    Op* anchor =
        plan_.config.mode == Mode::kWarpSpecialized ? producer_role_ : &outer;
    if (multicast()) BuildSliceMaps();
    BuildSetup(*anchor);
    if (plan_.config.mode == Mode::kWarpSpecialized) {
      BuildProducer();
    } else {
      BuildPrologue();
    }
    RewriteConsumerLoop();
    Finish();
    if (plan_.config.pingpong) BuildPingPong();
    return absl::OkStatus();
  }

 private:
  bool warp_specialized() const {
    return plan_.config.mode == Mode::kWarpSpecialized;
  }
  Op& marked() const { return *plan_.marked(); }
  int stages() const { return plan_.config.stages; }
  bool multicast() const { return plan_.cluster_ctas > 1; }
  // The threads of the consumer role: ping-pong doubles the input's.
  int consumer_threads() const {
    return plan_.block_threads * (plan_.config.pingpong ? 2 : 1);
  }

  OpBuilder Builder(Region& region, int index) {
    OpBuilder builder(region, index);
    builder.set_provenance(provenance_);
    builder.set_loc(plan_.marked()->loc());
    return builder;
  }

  // ---- uses, for removing what the rewrite orphans ----------------------

  void CountUses() {
    uses_.clear();
    Walk(kernel_.body(), [&](const Op& op) {
      op.ForEachUse([&](const Value* value) { ++uses_[value]; });
    });
    kernel_.ForEachParamUse([&](const Value* value) { ++uses_[value]; });
  }

  // Removes `op`, and then an `if` that it leaves empty.
  void Erase(Op* op) {
    Op* parent = op->parent_op();
    EraseTree(op);
    if (parent != nullptr && parent->kind() == OpKind::kIf) {
      bool empty = true;
      for (int r = 0; r < parent->num_regions(); ++r) {
        if (!parent->region(r).empty()) empty = false;
      }
      if (empty) Erase(parent);
    }
  }

  void EraseTree(Op* op) {
    op->ForEachUse([&](const Value* value) {
      --uses_[value];
      if (value->kind() == Value::Kind::kResult) {
        orphan_candidates_.push_back(value->defining_op());
      }
    });
    for (int r = 0; r < op->num_regions(); ++r) {
      while (!op->region(r).empty()) {
        EraseTree(&op->region(r).op(op->region(r).size() - 1));
      }
    }
    Region* region = op->parent_region();
    // Kept alive: pointers to erased ops may still sit in the candidates.
    graveyard_.push_back(region->Take(region->IndexOf(op)));
  }

  // Removes the pure ops that the rewrite left without a use.
  void EraseOrphans() {
    while (!orphan_candidates_.empty()) {
      Op* op = orphan_candidates_.back();
      orphan_candidates_.pop_back();
      if (op->parent_region() == nullptr || op->num_regions() != 0 ||
          FactsOf(op->kind()).has_side_effects || op->num_results() == 0) {
        continue;
      }
      bool used = false;
      for (int i = 0; i < op->num_results(); ++i) {
        if (uses_[op->result(i)] > 0) used = true;
      }
      if (!used && StillInKernel(*op)) Erase(op);
    }
  }

  bool StillInKernel(const Op& op) const {
    const Region* region = op.parent_region();
    while (region != nullptr) {
      if (region == &kernel_.body()) return true;
      const Op* parent = region->parent_op();
      if (parent == nullptr) return false;
      region = parent->parent_region();
    }
    return false;
  }

  void SetOperand(Op& op, int slot, Operand operand) {
    const Operand& old = op.operand(slot);
    auto release = [&](const Value* value) {
      --uses_[value];
      if (value->kind() == Value::Kind::kResult) {
        orphan_candidates_.push_back(value->defining_op());
      }
    };
    release(old.value);
    for (const Value* index : old.indices) release(index);
    ++uses_[operand.value];
    for (const Value* index : operand.indices) ++uses_[index];
    op.mutable_operand(slot) = std::move(operand);
  }

  // ---- registers ----------------------------------------------------------

  absl::Status ComputeRegisterSplit() {
    const int consumers = consumer_threads();
    const Config& config = plan_.config;
    if (config.producer_warp) return absl::OkStatus();
    const bool asked = config.producer_regs || config.consumer_regs;
    // With one consumer warpgroup the launch bound already allows 255
    // registers a thread: nothing to move.
    if (!asked && consumers < 2 * kWarpgroupThreads) return absl::OkStatus();
    producer_regs_ = config.producer_regs.value_or(kDefaultProducerRegs);
    const int64_t left =
        kRegisterFileSize - kWarpgroupThreads * *producer_regs_;
    consumer_regs_ = config.consumer_regs.value_or(
        static_cast<int>(std::min<int64_t>(256, left / consumers / 8 * 8)));
    const int64_t total = int64_t{kWarpgroupThreads} * *producer_regs_ +
                          int64_t{consumers} * *consumer_regs_;
    if (total > kRegisterFileSize || *consumer_regs_ < *producer_regs_) {
      return Error(marked().loc())
             << "the register split asks for " << total
             << " registers (producer " << *producer_regs_ << " x "
             << kWarpgroupThreads << " + consumers " << *consumer_regs_ << " x "
             << consumers << ")"
             << (total > kRegisterFileSize
                     ? absl::StrCat(", more than the ", kRegisterFileSize,
                                    " of an SM")
                     : ", giving the consumers fewer than the producer");
    }
    return absl::OkStatus();
  }

  // ---- warp_specialized: roles --------------------------------------------

  // Moves the consumers' top-level code into role @consumer behind a new
  // role @producer, and grows the block.
  void BuildRoles() {
    Region& body = kernel_.body();
    const Classifier classes(kernel_);
    std::vector<Op*> moved;
    std::vector<Op*> positions;
    for (const auto& op : body.ops()) {
      switch (classes.Of(*op)) {
        case TopLevelClass::kMoved:
          moved.push_back(op.get());
          break;
        case TopLevelClass::kPosition:
          positions.push_back(op.get());
          break;
        case TopLevelClass::kKept:
          break;
      }
    }
    // A trailing `return` stays the last op of the top level.
    const int end =
        !body.empty() && body.op(body.size() - 1).kind() == OpKind::kReturn
            ? body.size() - 1
            : body.size();
    const int producer_warps = plan_.config.producer_warp ? 1 : 4;
    const int consumer_begin = kWarpgroupThreads / 32;
    OpBuilder roles = Builder(body, end);
    producer_role_ = roles.Role("producer", 0, producer_warps);
    consumer_role_ = roles.Role("consumer", consumer_begin,
                                consumer_begin + consumer_threads() / 32);
    Region& consumer = consumer_role_->region(0);
    for (Op* op : moved) {
      if (op->kind() == OpKind::kReturn) continue;
      consumer.Append(body.Take(body.IndexOf(op)));
    }
    kernel_.block.x =
        IndexExpr::Constant(consumer_threads() + kWarpgroupThreads);

    OpBuilder head = Builder(consumer, 0);
    if (consumer_regs_) {
      head.Create(
          OpKind::kSetMaxNReg, {},
          {attr::action(RegisterAction::kInc), attr::regs(*consumer_regs_)});
    }
    // Consumer threads count from the first consumer warp (ping-pong's
    // second consumer role, a copy of this one, from its own: the shifts
    // are remembered for it).
    std::map<const Value*, Value*> shifted;
    std::set<const Op*> substitutes;
    auto shift = [&](OpBuilder& builder, Op& position) {
      Value* value = position.result();
      IndexMath math(builder, constants_);
      Value* replacement = nullptr;
      int per_group = 0;
      if (position.kind() == OpKind::kThreadId && position.dim() == Dim::kX) {
        per_group = kWarpgroupThreads;
      } else if (position.kind() == OpKind::kWarpId) {
        per_group = kWarpgroupThreads / 32;
      }
      if (per_group != 0) {
        replacement = math.Sub(value, math.Const(per_group),
                               absl::StrCat("c", value->name()));
        shift_ops_[replacement->defining_op()] = per_group;
      } else if (position.kind() == OpKind::kBlockDim &&
                 position.dim() == Dim::kX) {
        replacement = math.Const(plan_.block_threads);
      }
      if (replacement == nullptr) return;
      shifted[value] = replacement;
      if (replacement->kind() == Value::Kind::kResult) {
        substitutes.insert(replacement->defining_op());
      }
    };
    for (Op* position : positions) {
      const bool used = FindFirst(consumer, [&](const Op& op) {
                          bool uses = false;
                          op.ForEachUse([&](const Value* v) {
                            uses = uses || v == position->result();
                          });
                          return uses;
                        }) != nullptr;
      if (used) shift(head, *position);
    }
    std::vector<Op*> nested_positions;
    Walk(consumer, [&](Op& op) {
      if (IsPositionOp(op)) nested_positions.push_back(&op);
    });
    for (Op* position : nested_positions) {
      Region& region = *position->parent_region();
      OpBuilder after = Builder(region, region.IndexOf(position) + 1);
      shift(after, *position);
    }
    Walk(consumer, [&](Op& op) {
      if (substitutes.count(&op) != 0) return;
      op.ForEachUse([&](Value*& value) {
        auto it = shifted.find(value);
        if (it != shifted.end()) value = it->second;
      });
    });
    CountUses();
  }

  // ---- multicast ----------------------------------------------------------

  // A map over the same tensor for each map of a cluster_shared load, its
  // box cut to one CTA's slice of the outer dimension. The launcher builds
  // it from the declaration like any other; the author's map stays (other
  // loads may use it).
  void BuildSliceMaps() {
    for (const StageLoad& load : plan_.loads) {
      if (!load.cluster_shared) continue;
      Value* map = load.op->operand_value(1);
      if (slice_maps_.count(map) != 0) continue;
      Param slice = *kernel_.FindParam(map);
      slice.value = nullptr;
      std::vector<int64_t> box = map->type().box();
      box[0] /= plan_.cluster_ctas;
      slice_maps_[map] =
          kernel_
              .AddParam(kernel_.FreshName(map->name() + "_slice"),
                        Type::TensorMap(map->type().dtype(), box),
                        std::move(slice), load.op->loc())
              .value;
    }
  }

  // Every thread of every CTA of the cluster: after the inits, no remote
  // arrival or multicast reaches a barrier not yet initialized; before the
  // exit, none reaches a CTA that has exited.
  void ClusterBarrier(OpBuilder& builder) {
    builder.Create(OpKind::kClusterArrive, {});
    builder.Create(OpKind::kClusterWait, {});
  }

  // ---- setup: trip counts, rings, inits -----------------------------------

  Value* FindOrCreateThreadIdX(Op& anchor) {
    Region& body = kernel_.body();
    const int limit = body.IndexOf(&anchor);
    for (int i = 0; i < limit; ++i) {
      Op& op = body.op(i);
      if (op.kind() == OpKind::kThreadId && op.dim() == Dim::kX) {
        return op.result();
      }
    }
    OpBuilder builder = Builder(body, limit);
    return builder
        .Create(OpKind::kThreadId, {}, {attr::dim(Dim::kX)},
                {Type::Scalar(DType::kIndex)}, {"tid"})
        ->result();
  }

  void BuildSetup(Op& anchor) {
    Region& body = kernel_.body();
    Value* tid = FindOrCreateThreadIdX(anchor);
    OpBuilder builder = Builder(body, body.IndexOf(&anchor));
    IndexMath math(builder, constants_);
    // Trip counts of the nest's loops, and of the whole nest.
    for (int k = 0; k < plan_.depth(); ++k) {
      const Op& loop = *plan_.nest[k];
      Value* lo = loop.operand_value(0);
      Value* hi = loop.operand_value(1);
      Value* step = loop.operand_value(2);
      const std::string iv = loop.region(0).argument(0)->name();
      Value* span = math.Sub(hi, lo, absl::StrCat(iv, "_span"));
      Value* trips = span;
      std::optional<int64_t> step_value = IntegerConstant(step);
      if (!step_value || *step_value != 1) {
        Value* rounded =
            math.Add(span, math.Sub(step, math.Const(1), iv + "_step1"),
                     absl::StrCat(iv, "_span_up"));
        trips = math.Div(rounded, step, absl::StrCat(iv, "_count"));
      }
      if (!NonNegative(trips)) {
        trips = math.Max(trips, math.Const(0), absl::StrCat(iv, "_trips"));
      }
      trips_.push_back(trips);
    }
    total_ = trips_[0];
    for (int k = 1; k < plan_.depth(); ++k) {
      total_ = math.Mul(total_, trips_[k], "cb_iterations");
    }
    is_issuer_ =
        builder.Compare(CmpPredicate::kEq, tid, math.Const(0), "cb_is_issuer");

    // The rings, after the last staged buffer.
    Op* last_alloc = plan_.staged.back()->defining_op();
    OpBuilder rings = Builder(body, body.IndexOf(last_alloc) + 1);
    const Type ring_type = Type::Buffer(MemorySpace::kShared, DType::kMbarrier,
                                        {IndexExpr::Constant(stages())});
    // `ring`: their phases are this pass's protocol (analysis/ordering.h).
    const AttrList ring_attrs = {attr::align(8), attr::ring(true)};
    full_ =
        rings
            .Create(OpKind::kAllocShared, {}, ring_attrs, {ring_type}, {"full"})
            ->result();
    empty_ = rings
                 .Create(OpKind::kAllocShared, {}, ring_attrs, {ring_type},
                         {"empty"})
                 ->result();
    if (plan_.config.pingpong) {
      // order[g]: warpgroup g may start its next tile's mainloop.
      order_ = rings
                   .Create(OpKind::kAllocShared, {}, ring_attrs,
                           {Type::Buffer(MemorySpace::kShared, DType::kMbarrier,
                                         {IndexExpr::Constant(2)})},
                           {"order"})
                   ->result();
    }

    // Inits, by one thread, before the nest.
    builder.SetInsertionPoint(body, body.IndexOf(&anchor));
    Op* guard = builder.If(is_issuer_);
    init_guard_ = guard;
    OpBuilder inside = Builder(guard->region(0), 0);
    Op* loop =
        inside.For(math.Const(0), math.Const(stages()), math.Const(1), "s");
    OpBuilder init = Builder(loop->region(0), 0);
    Value* s = loop->region(0).argument(0);
    init.Create(OpKind::kMbarrierInit, {Ref(full_, {s})}, {attr::count(1)});
    // Multicast: every CTA's producer writes into the stage, so it is
    // released in every CTA of the cluster: by C threads of each consumer
    // warpgroup where only wgmma reads it, else by every consumer thread.
    elected_release_ = multicast() && OnlyWgmmaReadsStages();
    const int releasers = elected_release_
                              ? plan_.block_threads / kWarpgroupThreads
                              : plan_.block_threads;
    init.Create(OpKind::kMbarrierInit, {Ref(empty_, {s})},
                {attr::count(releasers * plan_.cluster_ctas)});
    if (order_ != nullptr) {
      for (int group = 0; group < 2; ++group) {
        inside.Create(OpKind::kMbarrierInit, {Ref(order_, {math.Const(group)})},
                      {attr::count(plan_.block_threads)});
      }
    }
    if (multicast()) {
      builder.SetInsertionPoint(body, body.IndexOf(&anchor));
      ClusterBarrier(builder);
      // This CTA's slice of a cluster_shared box: rows rank * rows / ctas on.
      Value* rank = builder
                        .Create(OpKind::kClusterCtaRank, {}, {},
                                {Type::Scalar(DType::kIndex)}, {"cb_rank"})
                        ->result();
      for (const auto& [map, slice] : slice_maps_) {
        slice_rows_[slice] = math.Mul(rank, math.Const(slice->type().box()[0]),
                                      slice->name() + "_row");
      }
      // The other CTAs of the cluster, (rank + j) % C for j = 1..C-1.
      for (int j = 1; j < plan_.cluster_ctas && !elected_release_; ++j) {
        peers_.push_back(math.Rem(
            math.Add(rank, math.Const(j), absl::StrCat("cb_rank_plus", j)),
            math.Const(plan_.cluster_ctas), absl::StrCat("cb_peer", j)));
      }
      if (elected_release_) {
        // Thread j < C of each warpgroup releases in rank (rank + j) % C;
        // a warpgroup's threads keep their position in it when the roles
        // shift thread ids by whole warpgroups.
        Value* in_group =
            math.Rem(tid, math.Const(kWarpgroupThreads), "cb_wg_thread");
        signals_ =
            builder.Compare(CmpPredicate::kLt, in_group,
                            math.Const(plan_.cluster_ctas), "cb_signals");
        signals_own_ = builder.Compare(CmpPredicate::kEq, in_group,
                                       math.Const(0), "cb_signals_own");
        signal_rank_ =
            math.Rem(math.Add(rank, in_group, "cb_rank_plus_wg_thread"),
                     math.Const(plan_.cluster_ctas), "cb_signal_rank");
      }
    }
    CountUses();
  }

  // ---- one iteration's loads ----------------------------------------------

  // The ops of the slice under `region` (a nest loop's body or a guard
  // inside the marked loop), in program order.
  void OrderSlice(const Region& region) {
    for (const auto& op : region.ops()) {
      if (plan_.slice.count(op.get()) != 0) {
        slice_order_.push_back(op.get());
      } else if (op->kind() == OpKind::kFor) {
        if (std::find(plan_.nest.begin(), plan_.nest.end(), op.get()) !=
            plan_.nest.end()) {
          OrderSlice(op->region(0));
          return;  // nothing after a nest loop is visible inside it
        }
      } else if (op->kind() == OpKind::kIf && op->IsInside(marked())) {
        OrderSlice(op->region(0));
      }
    }
  }

  Operand MapOperand(const Operand& operand,
                     const std::map<const Value*, Value*>& map) {
    Operand mapped = operand;
    auto lookup = [&](Value* value) {
      auto it = map.find(value);
      return it == map.end() ? value : it->second;
    };
    mapped.value = lookup(mapped.value);
    for (Value*& index : mapped.indices) index = lookup(index);
    return mapped;
  }

  void CloneComputation(OpBuilder& builder, const Op& op,
                        std::map<const Value*, Value*>& map,
                        const std::string& prefix) {
    std::vector<Operand> operands;
    for (const Operand& operand : op.operands()) {
      operands.push_back(MapOperand(operand, map));
    }
    std::vector<Type> types;
    std::vector<std::string> names;
    for (int i = 0; i < op.num_results(); ++i) {
      types.push_back(op.result(i)->type());
      names.push_back(prefix + op.result(i)->name());
    }
    Op* clone = builder.Create(op.kind(), std::move(operands),
                               AttrList(op.attrs()), types, names);
    for (int i = 0; i < op.num_results(); ++i) {
      map[op.result(i)] = clone->result(i);
    }
  }

  // The nest level (0: outermost loop's body) of each op of the slice: the
  // innermost nest loop around it.
  int SliceLevel(const Op& op) const {
    for (const Op* parent = op.parent_op(); parent != nullptr;
         parent = parent->parent_op()) {
      for (int k = plan_.depth() - 1; k >= 0; --k) {
        if (parent == plan_.nest[k]) return k;
      }
    }
    return 0;
  }

  Value* Index(const Op& loop) const { return loop.region(0).argument(0); }

  // Maps into `map` the nest's indices of the iteration with flattened
  // index `flat`, at levels `from` and deeper, as far as the slice and the
  // loads use them (loop k's index: lo_k + step_k * (flat / trips of the
  // deeper loops) % trips_k).
  void DecodeIndices(OpBuilder& builder, Value* flat, int from,
                     const std::string& prefix,
                     std::map<const Value*, Value*>& map) {
    IndexMath math(builder, constants_);
    std::vector<bool> needed(plan_.depth(), false);
    auto note = [&](const Op& op) {
      op.ForEachUse([&](const Value* value) {
        for (int k = from; k < plan_.depth(); ++k) {
          if (value == Index(*plan_.nest[k])) needed[k] = true;
        }
      });
    };
    for (const Op* op : slice_order_) note(*op);
    for (const StageLoad& load : plan_.loads) note(*load.op);
    int outermost = plan_.depth();
    for (int k = from; k < plan_.depth(); ++k) {
      if (needed[k]) {
        outermost = k;
        break;
      }
    }
    Value* rest = flat;
    for (int k = plan_.depth() - 1; k >= outermost; --k) {
      const Op& loop = *plan_.nest[k];
      const std::string iv = Index(loop)->name();
      Value* index = rest;
      if (k > from) {
        index = math.Rem(rest, trips_[k], absl::StrCat(prefix, iv, "_iter"));
        if (k > outermost) {
          rest = math.Div(rest, trips_[k], absl::StrCat(prefix, iv, "_outer"));
        }
      }
      if (!needed[k]) continue;
      Value* scaled = math.Mul(index, loop.operand_value(2),
                               absl::StrCat(prefix, iv, "_offset"));
      map[Index(loop)] = math.Add(loop.operand_value(0), scaled, prefix + iv);
    }
  }

  // Clones the slice's ops of nest levels `from` to `to`, in program order.
  void CloneSlice(OpBuilder& builder, int from, int to,
                  std::map<const Value*, Value*>& map,
                  const std::string& prefix) {
    for (const Op* op : slice_order_) {
      const int level = SliceLevel(*op);
      if (level >= from && level <= to) {
        CloneComputation(builder, *op, map, prefix);
      }
    }
  }

  // Emits the issue of the iteration with flattened index `flat`, its
  // addresses in `map`: the wait for its stage to be empty (unless
  // `wait_empty` is false: round 0 only), the expected bytes, the loads.
  void EmitIssue(OpBuilder& builder, Value* flat, bool wait_empty,
                 const std::string& prefix,
                 const std::map<const Value*, Value*>& map) {
    IndexMath math(builder, constants_);
    Value* stage = math.Rem(flat, math.Const(stages()), prefix + "stage");
    if (wait_empty) {
      Value* round = math.Div(flat, math.Const(stages()), prefix + "round");
      Value* next = math.Add(round, math.Const(1), prefix + "round1");
      Value* parity = math.Rem(next, math.Const(2), prefix + "parity");
      // Peers' consumers release it too: acquire at cluster scope.
      builder.Create(OpKind::kMbarrierWait, {Ref(empty_, {stage}), Use(parity)},
                     WaitScope());
    }
    builder.Create(OpKind::kMbarrierArriveTx, {Ref(full_, {stage})},
                   {attr::bytes(plan_.bytes)});
    for (const StageLoad& load : plan_.loads) {
      const Op& op = *load.op;
      Operand destination = MapOperand(op.operand(0), map);
      Operand source = MapOperand(op.operand(1), map);
      AttrList attrs;
      for (const auto& [name, value] : op.attrs()) {
        if (name != "cluster_shared") attrs.emplace_back(name, value);
      }
      if (load.cluster_shared) {
        // This CTA's slice of the box's outer dimension (the buffer's
        // dimension that the box's first one lands in), into every CTA.
        Value* slice = slice_maps_.at(source.value);
        Value* row = slice_rows_.at(slice);
        const size_t dim = destination.indices.size() - source.indices.size();
        destination.indices[dim] =
            math.Add(destination.indices[dim], row, prefix + "mc_row");
        source.indices[0] = math.Add(source.indices[0], row, prefix + "mc_at");
        source.value = slice;
        attrs.push_back(
            attr::multicast((int64_t{1} << plan_.cluster_ctas) - 1));
        context_.stats.Add(kLoadsMulticast);
      }
      destination.indices.insert(destination.indices.begin(), stage);
      builder.Create(op.kind(), {destination, source, Ref(full_, {stage})},
                     attrs);
      context_.stats.Add(kLoadsPipelined);
    }
  }

  // The loads of flattened iteration `flat`, decoded from scratch.
  void EmitLoads(OpBuilder& builder, Value* flat, bool wait_empty,
                 const std::string& prefix,
                 std::map<const Value*, Value*> map = {}) {
    DecodeIndices(builder, flat, 0, prefix, map);
    CloneSlice(builder, 0, plan_.depth() - 1, map, prefix);
    EmitIssue(builder, flat, wait_empty, prefix, map);
  }

  // ---- pipelined: prologue ------------------------------------------------

  // In the initializing thread's guard, after the inits: the loads of the
  // first `prefetch` iterations of the nest, each in round 0 of its stage.
  void BuildPrologue() {
    if (plan_.config.prefetch == 0) return;
    Region& body = kernel_.body();
    OpBuilder builder = Builder(body, body.IndexOf(init_guard_));
    IndexMath math(builder, constants_);
    Value* count =
        math.Min(math.Const(plan_.config.prefetch), total_, "cb_prologue");
    OpBuilder inside =
        Builder(init_guard_->region(0), init_guard_->region(0).size());
    Op* loop = inside.For(math.Const(0), count, math.Const(1), "pro_it");
    OpBuilder iteration = Builder(loop->region(0), 0);
    EmitLoads(iteration, loop->region(0).argument(0), /*wait_empty=*/false,
              "pro_");
    CountUses();
  }

  // ---- warp_specialized: producer -----------------------------------------

  // Whether the loads' address computations read a thread or warp id
  // shifted into the consumer role.
  bool SliceUsesShiftedIds() const {
    bool uses = false;
    auto check = [&](const Op* op) {
      op->ForEachUse([&](const Value* value) {
        uses = uses || (value->kind() == Value::Kind::kResult &&
                        shift_ops_.count(value->defining_op()) != 0);
      });
    };
    for (const Op* op : plan_.top_slice) check(op);
    for (const Op* op : slice_order_) check(op);
    return uses;
  }

  // The producer's own nest: the loops of the consumers' nest with only what
  // the loads need (producer-loop=nested), or one loop over the flattened
  // iterations (producer-loop=merged), in one issuing thread.
  void BuildProducer() {
    Region& region = producer_role_->region(0);
    OpBuilder builder = Builder(region, 0);
    if (producer_regs_) {
      builder.Create(
          OpKind::kSetMaxNReg, {},
          {attr::action(RegisterAction::kDec), attr::regs(*producer_regs_)});
    }
    // A cluster barrier counts every thread of the block: the producer
    // passes each one the consumers' top-level code passes, in order
    // (serialize-split-k's mode=cluster arrives before the body and waits
    // after it). It touches no peer, so its last wait goes at its end,
    // after the loads, which then need not wait for the cluster.
    std::vector<const Op*> cluster_ops;
    for (const auto& op : consumer_role_->region(0).ops()) {
      if (op->kind() == OpKind::kClusterArrive ||
          op->kind() == OpKind::kClusterWait) {
        cluster_ops.push_back(op.get());
      }
    }
    const Op* final_wait = !cluster_ops.empty() && cluster_ops.back()->kind() ==
                                                       OpKind::kClusterWait
                               ? cluster_ops.back()
                               : nullptr;
    for (const Op* op : cluster_ops) {
      if (op != final_wait) builder.Create(op->kind(), {}, op->attrs());
    }
    // A load's indices are the same in every consumer thread (CollectSlices
    // refuses others), but may still be computed from a thread or warp id:
    // the producer computes them as consumer thread 0 would, from ids of 0,
    // not from the consumers' shifted ids, which it does not see.
    std::map<const Value*, Value*> map;
    if (SliceUsesShiftedIds()) {
      for (const auto& [shift, per_group] : shift_ops_) {
        map[shift->result()] = constants_.Get(0);
      }
    }
    for (const Op* op : plan_.top_slice) {
      CloneComputation(builder, *op, map, "p_");
    }
    IndexMath math(builder, constants_);
    Op* guard = builder.If(is_issuer_);
    OpBuilder inside = Builder(guard->region(0), 0);
    if (plan_.config.merged_producer) {
      Op* loop = inside.For(math.Const(0), total_, math.Const(1), "p_it");
      OpBuilder iteration = Builder(loop->region(0), 0);
      EmitLoads(iteration, loop->region(0).argument(0), /*wait_empty=*/true,
                "p_", map);
    } else {
      OpBuilder level = inside;
      Value* it = BuildCount(
          [&](int k) -> OpBuilder& {
            const Op& original = *plan_.nest[k];
            // What the loads need from the enclosing level, first.
            if (k > 0) CloneSlice(level, k - 1, k - 1, map, "p_");
            Op* loop = level.For(
                original.operand_value(0), original.operand_value(1),
                original.operand_value(2), "p_" + Index(original)->name());
            map[Index(original)] = Index(*loop);
            level = Builder(loop->region(0), 0);
            return level;
          },
          [&](int k) { return map.at(Index(*plan_.nest[k])); }, "p_");
      CloneSlice(level, plan_.depth() - 1, plan_.depth() - 1, map, "p_");
      EmitIssue(level, it, /*wait_empty=*/true, "p_", map);
    }
    if (final_wait != nullptr) {
      OpBuilder end = Builder(region, region.size());
      end.Create(final_wait->kind(), {}, final_wait->attrs());
    }
    CountUses();
  }

  // Builds the iteration count over the nest, level by level, where
  // `enter(k)` gives the builder at the start of level k's body and
  // `index(k)` its loop index: it_k = it_{k-1} * trips_k + (iv_k - lo_k) /
  // step_k. Returns the count at the innermost level (and in `*level0` the
  // outermost loop's own count, it_0).
  template <typename Enter, typename IndexOf>
  Value* BuildCount(Enter&& enter, IndexOf&& index, const std::string& prefix,
                    Value** level0 = nullptr) {
    Value* base = nullptr;
    for (int k = 0; k < plan_.depth(); ++k) {
      const Op& loop = *plan_.nest[k];
      OpBuilder& builder = enter(k);
      IndexMath math(builder, constants_);
      Value* iv = index(k);
      const std::string name = prefix + Index(loop)->name();
      Value* offset = math.Sub(iv, loop.operand_value(0), name + "_off");
      Value* local = math.Div(offset, loop.operand_value(2), name + "_iter");
      if (k == 0 && level0 != nullptr) *level0 = local;
      Value* count =
          base == nullptr ? local : math.Add(base, local, prefix + "it");
      if (k + 1 == plan_.depth()) return count;
      base = math.Mul(count, trips_[k + 1], prefix + "it_base");
    }
    return nullptr;
  }

  // ---- the consumers' loop ------------------------------------------------

  // The refill of iteration `next` = `it` + prefetch. In a nest, while the
  // marked loop's index stays in range (the common case) the outer indices
  // are this iteration's and no division is needed; only past the end of
  // the marked loop are they decoded from `next`.
  void BuildRefill(OpBuilder& builder, Value* it, Value* next) {
    const int n = plan_.depth() - 1;
    if (n == 0) {
      EmitLoads(builder, next, /*wait_empty=*/true, "pf_");
      return;
    }
    IndexMath math(builder, constants_);
    const Op& loop = marked();
    const int prefetch = plan_.config.prefetch;
    Value* advance =
        math.Mul(math.Const(prefetch), loop.operand_value(2), "pf_advance");
    Value* index = math.Add(Index(loop), advance, "pf_" + Index(loop)->name());
    Value* same = builder.Compare(CmpPredicate::kLt, index,
                                  loop.operand_value(1), "pf_same_outer");
    Op* branch = builder.If(same);
    OpBuilder here = Builder(branch->region(0), 0);
    std::map<const Value*, Value*> map = {{Index(loop), index}};
    CloneSlice(here, n, n, map, "pf_");
    EmitIssue(here, next, /*wait_empty=*/true, "pf_", map);
    OpBuilder later = Builder(branch->region(1), 0);
    EmitLoads(later, next, /*wait_empty=*/true, "pf_");
  }

  void RewriteConsumerLoop() {
    // The iteration count over the nest, built at the top of each level.
    std::vector<OpBuilder> builders;
    builders.reserve(plan_.depth());
    Value* it = BuildCount(
        [&](int k) -> OpBuilder& {
          builders.push_back(Builder(plan_.nest[k]->region(0), 0));
          return builders.back();
        },
        [&](int k) { return Index(*plan_.nest[k]); }, "", &consumer_tile_);
    consumer_point_ = builders.back().index();
    Region& body = marked().region(0);
    OpBuilder builder = Builder(body, consumer_point_);
    IndexMath math(builder, constants_);
    Value* stage = math.Rem(it, math.Const(stages()), "stage");
    Value* round = math.Div(it, math.Const(stages()), "round");
    Value* parity = math.Rem(round, math.Const(2), "parity");

    // pipelined: refill `prefetch` iterations ahead, first thing.
    const Op* refill = nullptr;
    if (!warp_specialized()) {
      const int prefetch = plan_.config.prefetch;
      if (prefetch == 0) {
        Op* guard = builder.If(is_issuer_);
        refill = guard;
        OpBuilder inside = Builder(guard->region(0), 0);
        EmitLoads(inside, it, /*wait_empty=*/true, "pf_");
      } else {
        Value* next = math.Add(it, math.Const(prefetch), "next_it");
        Value* in_range =
            builder.Compare(CmpPredicate::kLt, next, total_, "next_ok");
        Op* outer = builder.If(in_range);
        refill = outer;
        OpBuilder in_range_builder = Builder(outer->region(0), 0);
        Op* guard = in_range_builder.If(is_issuer_);
        OpBuilder inside = Builder(guard->region(0), 0);
        BuildRefill(inside, it, next);
      }
    }
    const int after_setup = builder.index();
    CountUses();

    // The original loads and the author's arrive_tx, inits and invals go.
    for (const StageLoad& load : plan_.loads) Erase(load.op);
    for (Op* op : plan_.author_removals) Erase(op);

    // Waits on the author's barrier become waits on full[stage].
    Op* first_wait = nullptr;
    for (Op* wait : plan_.author_waits) {
      SetOperand(*wait, 0, Ref(full_, {stage}));
      SetOperand(*wait, 1, Use(parity));
      if (first_wait == nullptr) first_wait = wait;
    }
    // Staged accesses take the stage index.
    Walk(body, [&](Op& op) {
      if (refill != nullptr && op.IsOrIsInside(*refill)) {
        return;  // built with its stage
      }
      for (int slot = 0; slot < op.num_operands(); ++slot) {
        const Operand& operand = op.operand(slot);
        if (plan_.staged_set.count(operand.value) == 0 || !operand.indexed) {
          continue;
        }
        Operand staged = operand;
        staged.indices.insert(staged.indices.begin(), stage);
        SetOperand(op, slot, std::move(staged));
      }
    });
    auto accesses_staged = [&](const Op& op) {
      return AnyNested(op, [&](const Op& inner) {
        for (const Operand& operand : inner.operands()) {
          if (plan_.staged_set.count(operand.value) != 0) return true;
        }
        return false;
      });
    };
    if (first_wait == nullptr) {
      int position = body.size();
      for (int i = after_setup; i < body.size(); ++i) {
        if (accesses_staged(body.op(i))) {
          position = i;
          break;
        }
      }
      OpBuilder wait = Builder(body, position);
      first_wait = wait.Create(OpKind::kMbarrierWait,
                               {Ref(full_, {stage}), Use(parity)});
    }

    // The release: after the last staged access (and the wait), with the
    // wgmmas that read the stage retired first.
    int last_access = body.IndexOf(first_wait->AncestorIn(body));
    int last_wgmma = -1;
    for (int i = 0; i < body.size(); ++i) {
      const Op& op = body.op(i);
      if (accesses_staged(op)) last_access = std::max(last_access, i);
      if (AnyNested(op, [&](const Op& inner) {
            if (inner.kind() != OpKind::kWgmma) return false;
            for (const MemoryEffect& effect : MemoryEffectsOf(inner)) {
              if (plan_.staged_set.count(effect.buffer) != 0) return true;
            }
            return false;
          })) {
        last_wgmma = i;
      }
    }
    OpBuilder release = Builder(body, last_access + 1);
    if (last_wgmma >= 0) {
      OpBuilder commit = Builder(body, last_wgmma + 1);
      Value* token = commit
                         .Create(OpKind::kWgmmaCommit, {}, {},
                                 {Type::Token(TokenKind::kWgmma)}, {"wt"})
                         ->result();
      release.SetInsertionPoint(body, last_access + 2);
      release.Create(OpKind::kWgmmaWait, {Use(token)});
    }
    // Generic accesses of the stage before the TMA refills it: each
    // accessing thread fences before its release (R3).
    const bool generic_access = AnyNested(marked(), [&](const Op& op) {
      for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
        if (effect.proxy == Proxy::kGeneric &&
            plan_.staged_set.count(effect.buffer) != 0) {
          return true;
        }
      }
      return false;
    });
    if (generic_access) {
      release.Create(OpKind::kFenceProxyAsync, {},
                     {attr::space(FenceSpace::kSharedCta)});
    }
    if (elected_release_) {
      // Only wgmma reads the stage, and a warpgroup's wgmmas are one
      // operation: once a thread of the warpgroup has passed the
      // wgmma.wait, they have read the stage for all 128 threads, so one
      // release per warpgroup and CTA hands that over (CUTLASS's
      // PipelineTmaAsync). Thread 0 of the warpgroup releases its own CTA,
      // threads 1..C-1 the peers (rank + j) % C.
      Op* signals = release.If(signals_);
      OpBuilder signal = Builder(signals->region(0), 0);
      Op* own = signal.If(signals_own_);
      Builder(own->region(0), 0)
          .Create(OpKind::kMbarrierArrive, {Ref(empty_, {stage})});
      // Release at cta scope (PTX's default, CUTLASS's form): the stage's
      // only reads were the warpgroup's wgmmas, which have completed, so
      // there is nothing of this thread's to make visible to the peer; a
      // cluster-scope release waits for that anyway, about 0.5 us per
      // k-step on the H100 (multicast ran 2.1x slower than per-CTA loads).
      Builder(own->region(1), 0)
          .Create(OpKind::kMbarrierArriveRemote,
                  {Ref(empty_, {stage}), Use(signal_rank_)},
                  {attr::scope(MemoryScope::kCta)});
    } else {
      release.Create(OpKind::kMbarrierArrive, {Ref(empty_, {stage})});
      // Multicast: every peer's producer wrote into this stage too, so it
      // is released in every peer as well.
      for (Value* peer : peers_) {
        release.Create(OpKind::kMbarrierArriveRemote,
                       {Ref(empty_, {stage}), Use(peer)});
      }
    }
    CountUses();
  }

  // Whether the only accesses of the stages in the marked loop, besides
  // their loads, are wgmmas of whole warpgroups: then a stage's reads are
  // retired by wgmma.wait for the warpgroup at once. A generic access (or
  // any other) is each thread's own, and each thread releases it.
  bool OnlyWgmmaReadsStages() const {
    if (plan_.block_threads % kWarpgroupThreads != 0) return false;
    bool wgmma = false;
    const bool other = AnyNested(marked(), [&](const Op& op) {
      if (IsStageLoadKind(op.kind())) return false;
      for (const MemoryEffect& effect : MemoryEffectsOf(op)) {
        if (plan_.staged_set.count(effect.buffer) == 0) continue;
        if (op.kind() != OpKind::kWgmma) return true;
        wgmma = true;
      }
      return false;
    });
    return wgmma && !other;
  }

  // The scope of the producer's waits for `empty`: cluster where peers'
  // consumers release it. Consumers' waits for `full` keep the default
  // (cta) scope: every byte of a stage, a peer's multicast slice too,
  // lands in this CTA's shared memory and completes on this CTA's own
  // barrier, as CUTLASS's consumer wait has it.
  AttrList WaitScope() const {
    if (!multicast()) return {};
    return {attr::scope(MemoryScope::kCluster)};
  }

  // ---- pingpong -----------------------------------------------------------

  // Deep copy of `op` at `builder` for the second consumer group (its
  // values named g1_*, renamed through `map`); the consumer role's id
  // shifts move on by one warpgroup.
  void CloneForGroup(OpBuilder& builder, const Op& op,
                     std::map<const Value*, Value*>& map) {
    std::vector<Operand> operands;
    for (const Operand& operand : op.operands()) {
      operands.push_back(MapOperand(operand, map));
    }
    auto shift = shift_ops_.find(&op);
    if (shift != shift_ops_.end()) {
      operands[1] = Use(constants_.Get(2 * shift->second));
    }
    builder.set_loc(op.loc());
    builder.set_provenance(op.provenance());
    Op* clone = nullptr;
    if (op.kind() == OpKind::kFor) {
      clone = builder.For(operands[0].value, operands[1].value,
                          operands[2].value, "g1_" + Index(op)->name());
      for (const auto& [name, value] : op.attrs()) clone->SetAttr(name, value);
      map[Index(op)] = Index(*clone);
    } else if (op.kind() == OpKind::kIf) {
      clone = builder.If(operands[0].value);
      for (const auto& [name, value] : op.attrs()) clone->SetAttr(name, value);
    } else {
      KIR_CHECK(op.num_regions() == 0) << "ping-pong copies loops and ifs";
      std::vector<Type> types;
      std::vector<std::string> names;
      for (int i = 0; i < op.num_results(); ++i) {
        types.push_back(op.result(i)->type());
        names.push_back("g1_" + op.result(i)->name());
      }
      clone = builder.Create(op.kind(), std::move(operands),
                             AttrList(op.attrs()), types, names);
    }
    for (int i = 0; i < op.num_results(); ++i) {
      map[op.result(i)] = clone->result(i);
    }
    for (int r = 0; r < op.num_regions(); ++r) {
      OpBuilder inner(clone->region(r), 0);
      for (const auto& nested : op.region(r).ops()) {
        CloneForGroup(inner, *nested, map);
      }
    }
  }

  // Makes the consumer role the first of two warpgroups that take the
  // block's tiles in turn: group g runs the tiles t = g, g + 2, ... of the
  // block (t counted from 0 over the tile loop, the order in which the
  // producer loads them), in role @consumer<g>, a copy of the consumers'
  // code. Their mainloops take turns: after its k loop a group arrives on
  // the other's order barrier, and before tile t's k loop it waits on its
  // own, order[g], for the other's mainloop of tile t - 1: the phase
  // (t + 1) / 2 - 1 of order[g], parity ((t + 1) / 2 + 1) % 2 (tile 0 finds
  // a fresh barrier's parity 1 complete). So one group's epilogue runs
  // beside the other's mainloop, and (what the ring needs) a group waits
  // on `full` only once every earlier iteration of the block is consumed:
  // otherwise it could wait for a phase two rounds ahead of the one in
  // progress, of the same parity. Each group is a role of its own: its
  // tile loop's bounds are uniform in it, and the two groups' accesses of
  // the same data are the program's to order (the rings and order barriers
  // do).
  void BuildPingPong() {
    Region& body = kernel_.body();
    Op& first = *consumer_role_;
    first.set_name("consumer0");
    const int group_warps = kWarpgroupThreads / 32;
    const int begin = static_cast<int>(first.warp_begin());
    first.set_warp_end(begin + group_warps);
    OpBuilder after = Builder(body, body.IndexOf(&first) + 1);
    Op* second =
        after.Role("consumer1", begin + group_warps, begin + 2 * group_warps);
    std::map<const Value*, Value*> map;
    // The second group's copies of the private buffers, allocated after
    // the originals.
    for (const Value* buffer : plan_.group_private) {
      const Op* alloc = buffer->defining_op();
      OpBuilder next = Builder(body, body.IndexOf(alloc) + 1);
      map[buffer] =
          next.Create(OpKind::kAllocShared, {}, AttrList(alloc->attrs()),
                      {buffer->type()}, {"g1_" + buffer->name()})
              ->result();
    }
    OpBuilder copy(second->region(0), 0);
    for (const auto& op : first.region(0).ops()) {
      CloneForGroup(copy, *op, map);
    }
    auto mapped = [&](const Value* value) {
      auto it = map.find(value);
      KIR_CHECK(it != map.end()) << "ping-pong lost a copied value";
      return it->second;
    };
    const Op& tiles = *plan_.nest.front();
    Op& tiles1 = *mapped(Index(tiles))->owning_region()->parent_op();
    Op& marked1 = *mapped(Index(marked()))->owning_region()->parent_op();
    TakeTurns(*plan_.nest.front(), marked(), consumer_tile_, 0);
    TakeTurns(tiles1, marked1, mapped(consumer_tile_), 1);
    context_.stats.Add(kLoopsPingPong);
  }

  // Group `group`'s tile loop starts at its iteration `group` and takes
  // every other; its mainloop waits for its turn and passes it on.
  void TakeTurns(Op& tiles, Op& mainloop, Value* tile_count, int group) {
    const std::string prefix = group == 0 ? "pp_" : "g1_pp_";
    Region& region = *tiles.parent_region();
    OpBuilder before = Builder(region, region.IndexOf(&tiles));
    IndexMath at_loop(before, constants_);
    Value* step = tiles.operand_value(2);
    if (group == 1) {
      tiles.mutable_operand(0) =
          Use(at_loop.Add(tiles.operand_value(0), step, prefix + "first"));
    }
    tiles.mutable_operand(2) =
        Use(at_loop.Mul(step, at_loop.Const(2), prefix + "stride"));

    Region& body = tiles.region(0);
    OpBuilder turn = Builder(body, body.IndexOf(&mainloop));
    IndexMath at_turn(turn, constants_);
    Value* next = at_turn.Add(tile_count, at_turn.Const(1), prefix + "next");
    Value* half = at_turn.Div(next, at_turn.Const(2), prefix + "turn");
    Value* phase = at_turn.Add(half, at_turn.Const(1), prefix + "phase");
    Value* parity = at_turn.Rem(phase, at_turn.Const(2), prefix + "parity");
    turn.Create(OpKind::kMbarrierWait,
                {Ref(order_, {at_turn.Const(group)}), Use(parity)});
    OpBuilder done = Builder(body, body.IndexOf(&mainloop) + 1);
    done.Create(OpKind::kMbarrierArrive,
                {Ref(order_, {IndexMath(done, constants_).Const(1 - group)})});
  }

  // ---- the end ------------------------------------------------------------

  void Finish() {
    // Buffers take their stages; their stage loads are ordered by the rings.
    for (Value* buffer : plan_.staged) {
      buffer->defining_op()->set_ring(true);
      const Type& type = buffer->type();
      std::vector<IndexExpr> shape = {IndexExpr::Constant(stages())};
      shape.insert(shape.end(), type.shape().begin(), type.shape().end());
      buffer->set_type(
          Type::Buffer(MemorySpace::kShared, type.dtype(), std::move(shape)));
      context_.stats.Add(kBuffersStaged);
    }
    EraseOrphans();
    for (Value* barrier : plan_.author_barriers) {
      Op* alloc = barrier->defining_op();
      if (uses_[barrier] == 0 && StillInKernel(*alloc)) Erase(alloc);
    }
    // Invalidation, by the thread that initialized, once every thread is
    // done with the rings (insert-syncs places the barrier before it).
    Region& body = kernel_.body();
    const int end =
        !body.empty() && body.op(body.size() - 1).kind() == OpKind::kReturn
            ? body.size() - 1
            : body.size();
    OpBuilder builder = Builder(body, end);
    IndexMath math(builder, constants_);
    if (multicast()) ClusterBarrier(builder);
    Op* guard = builder.If(is_issuer_);
    OpBuilder inside = Builder(guard->region(0), 0);
    Op* loop =
        inside.For(math.Const(0), math.Const(stages()), math.Const(1), "s");
    OpBuilder inval = Builder(loop->region(0), 0);
    Value* s = loop->region(0).argument(0);
    inval.Create(OpKind::kMbarrierInval, {Ref(full_, {s})});
    inval.Create(OpKind::kMbarrierInval, {Ref(empty_, {s})});
    if (order_ != nullptr) {
      for (int group = 0; group < 2; ++group) {
        inside.Create(OpKind::kMbarrierInval,
                      {Ref(order_, {math.Const(group)})});
      }
    }

    Op& marked_loop = marked();
    marked_loop.clear_circular_buffer();
    marked_loop.clear_stages();
    marked_loop.clear_prefetch();
    marked_loop.clear_producer();
    marked_loop.clear_producer_regs();
    marked_loop.clear_consumer_regs();
    marked_loop.clear_pingpong();
    context_.stats.Add(warp_specialized() ? kLoopsWarpSpecialized
                                          : kLoopsPipelined);
  }

  Kernel& kernel_;
  PassContext& context_;
  LoopPlan plan_;
  ConstantPool& constants_;
  Provenance provenance_;

  absl::flat_hash_map<const Value*, int> uses_;
  std::vector<Op*> orphan_candidates_;
  std::vector<std::unique_ptr<Op>> graveyard_;

  std::vector<const Op*> slice_order_;
  std::vector<Value*> trips_;
  Value* total_ = nullptr;
  Value* is_issuer_ = nullptr;
  Value* full_ = nullptr;
  Value* empty_ = nullptr;
  Value* order_ = nullptr;  // pingpong: the mainloops' turns
  // Multicast: each cluster_shared load's map and its slice map, and the
  // slice map's first row of this CTA's slice.
  std::map<const Value*, Value*> slice_maps_;
  std::map<const Value*, Value*> slice_rows_;
  std::vector<Value*> peers_;  // the ranks of the other CTAs
  // Multicast, only wgmma reading the stages: a warpgroup's threads j < C
  // release `empty` (thread 0 in this CTA, the others in rank
  // `signal_rank_`).
  bool elected_release_ = false;
  Value* signals_ = nullptr;
  Value* signals_own_ = nullptr;
  Value* signal_rank_ = nullptr;
  // The subtractions that shift thread and warp ids into the consumer
  // role, with the threads or warps of one warpgroup they subtract.
  std::map<const Op*, int> shift_ops_;
  Value* consumer_tile_ = nullptr;  // pingpong: the tile's count in block
  Op* init_guard_ = nullptr;
  Op* producer_role_ = nullptr;
  Op* consumer_role_ = nullptr;
  std::optional<int> producer_regs_;
  std::optional<int> consumer_regs_;
  int consumer_point_ = 0;
};

// The values are checked against passes.def (choices and ranges) when the
// pipeline is parsed; a prefetch the stages cannot hold is an error at the
// loop (ReadConfig).
absl::StatusOr<Overrides> ReadOverrides(const PassOptions& options) {
  Overrides overrides;
  absl::StatusOr<std::string> mode = options.GetString("mode");
  if (!mode.ok()) return mode.status();
  if (*mode == "pipelined") overrides.mode = Mode::kPipelined;
  if (*mode == "warp-specialized") overrides.mode = Mode::kWarpSpecialized;
  absl::StatusOr<int64_t> stages = options.GetInt("stages");
  if (!stages.ok()) return stages.status();
  absl::StatusOr<int64_t> prefetch = options.GetInt("prefetch");
  if (!prefetch.ok()) return prefetch.status();
  overrides.stages = *stages;
  overrides.prefetch = *prefetch;
  absl::StatusOr<std::string> producer_loop =
      options.GetString("producer-loop");
  if (!producer_loop.ok()) return producer_loop.status();
  overrides.merged_producer = *producer_loop == "merged";
  absl::StatusOr<std::string> producer = options.GetString("producer");
  if (!producer.ok()) return producer.status();
  if (*producer == "warpgroup" || *producer == "warp") {
    overrides.producer_warp = *producer == "warp";
  }
  absl::StatusOr<std::string> pingpong = options.GetString("pingpong");
  if (!pingpong.ok()) return pingpong.status();
  if (*pingpong != "marker") overrides.pingpong = *pingpong == "true";
  absl::StatusOr<std::string> multicast = options.GetString("multicast");
  if (!multicast.ok()) return multicast.status();
  overrides.multicast = *multicast != "false";
  return overrides;
}

}  // namespace

absl::Status CircularBuffer(Kernel& kernel, const PassOptions& options,
                            PassContext& context) {
  for (const char* counter :
       {kLoopsPipelined, kLoopsWarpSpecialized, kLoopsPingPong, kBuffersStaged,
        kLoadsPipelined, kLoadsMulticast}) {
    context.stats.Add(counter, 0);
  }
  absl::StatusOr<Overrides> overrides = ReadOverrides(options);
  if (!overrides.ok()) return overrides.status();
  // A cluster_shared load is a promise the pass relies on only in a marked
  // loop; elsewhere it would silently load the box in every CTA.
  const Op* stray = FindFirst(kernel.body(), [](const Op& op) {
    if (op.kind() != OpKind::kTmaLoad || !op.cluster_shared()) return false;
    for (const Op* parent = op.parent_op(); parent != nullptr;
         parent = parent->parent_op()) {
      if (IsMarked(*parent)) return false;
    }
    return true;
  });
  if (stray != nullptr) {
    return Error(stray->loc())
           << "a cluster_shared load must be a stage load of a loop marked "
              "circular_buffer = warp_specialized, which multicasts it";
  }
  ConstantPool constants(kernel);
  for (bool first = true;;) {
    Op* loop = kernel.MayHold(OpKind::kFor) ? FindFirst(kernel.body(), IsMarked)
                                            : nullptr;
    if (loop == nullptr) {
      if (first) context.PreserveAll();  // no marked loop: nothing changed
      break;
    }
    first = false;
    absl::StatusOr<Config> config = ReadConfig(*loop, *overrides);
    if (!config.ok()) return config.status();
    const ThreadAnalysis& threads = context.Get<ThreadAnalysis>(kernel);
    const Classifier classes(kernel);
    absl::StatusOr<LoopPlan> plan =
        Analyzer(kernel, threads, classes, *loop, *config).Run();
    if (!plan.ok()) return plan.status();
    if (absl::Status status =
            Rewriter(kernel, context, *std::move(plan), constants).Run();
        !status.ok())
      return status;
    // The next loop's analysis sees the rewritten kernel.
    context.Analyses(kernel).InvalidateAll();
  }
  return absl::OkStatus();
}

}  // namespace kir
