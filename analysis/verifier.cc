// Checks kernels against the rules listed in verifier.h.
//
// The verifier collects every violation, tagged with the position of the op
// it is about (kernel-level problems come first), and returns them sorted in
// program order. Checks that need the thread analysis run last, and only on
// kernels that pass every other rule, because the analysis assumes a
// well-formed kernel.
#include "analysis/verifier.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "analysis/analysis_manager.h"
#include "analysis/static_values.h"
#include "analysis/thread_analysis.h"
#include "ir/check.h"
#include "ir/checked_math.h"
#include "ir/diagnostics.h"
#include "ir/effects.h"
#include "ir/shared_memory.h"

namespace kir {
namespace {

// Rule ids, as numbered in verifier.h.
enum Rule : int {
  kOpShape = 1,
  kReturnLast,
  kDefinedBeforeUse,
  kTokenInstance,
  kConstValue,
  kArithmetic,
  kCmpSelect,
  kCast,
  kVectorOps,
  kIndexQueries,
  kBufferRef,
  kLoadStore,
  kControlOperands,
  kTokens,
  kAtomics,
  kSemaphores,
  kPtx,
  kMemorySpace,
  kMbarrierOperand,
  kAllocType,
  kAllocPlacement,
  kAllocAttrs,
  kSharedBudget,
  kTensorMapParam,
  kTensorMapBox,
  kTensorAlignment,
  kTmaShared,
  kCopySize,
  kMbarrierCounts,
  kWgmma,
  kCommitThreads,
  kWaitThreads,
  kWarpCollective,
  kWarpgroupCollective,
  kSingleIssue,
  kSetMaxNRegValue,
  kSetMaxNRegPlacement,
  kRegisterBudget,
  kRoleRange,
  kRoleNesting,
  kRoleOverlap,
  kRoleNames,
  kNamedBarrierIds,
  kNamedBarrierCounts,
  kBlockBarrier,
  kNamedBarrierUniform,
  kBlockShape,
  kGridShape,
  kClusterShape,
  kSplitK,
  kCircularBufferMarker,
  kWorkspaceMap,
  kRemoteArrive,
  kBarrierReduction,
  kPredicatedIf,
};
static_assert(kPredicatedIf == 55, "keep the rule ids in step with verifier.h");

constexpr int64_t kSharedMemoryLimit = 232448;  // 227 KiB per block
constexpr int64_t kRegisterFileSize = 65536;    // 32-bit registers per SM

std::string Name(const Value* value) {
  return absl::StrCat("%", value->name());
}

std::string Plural(int64_t count, absl::string_view noun,
                   absl::string_view plural = "") {
  if (count == 1) return absl::StrCat(count, " ", noun);
  return plural.empty() ? absl::StrCat(count, " ", noun, "s")
                        : absl::StrCat(count, " ", plural);
}

bool IsPowerOfTwo(int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

// Scalars and vectors of a numeric type: what arithmetic works on.
bool IsArithmeticType(const Type& type) {
  return (type.is_scalar() || type.is_vector()) &&
         type.dtype() != DType::kMbarrier;
}

bool IsSixteenBit(DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16;
}

const char* AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt:
      return "an integer";
    case AttrKind::kNumber:
      return "a number";
    case AttrKind::kFlag:
      return "a flag";
    case AttrKind::kString:
      return "a string";
    case AttrKind::kInts:
      return "an integer list";
    case AttrKind::kEnum:
      return "a keyword";
  }
  return "?";
}

// Commits and waits, and their groups' token kind, as the effects table
// lists them (the passes read the same facts).
bool IsCommit(OpKind kind) {
  return FactsOf(kind).sync == SyncKind::kGroupCommit;
}

bool IsWait(OpKind kind) { return FactsOf(kind).sync == SyncKind::kGroupWait; }

// The token kind a commit returns or a wait takes.
TokenKind GroupTokenKind(OpKind kind) {
  const std::optional<TokenKind> group = FactsOf(kind).group;
  KIR_CHECK(group.has_value() && (IsCommit(kind) || IsWait(kind)))
      << Mnemonic(kind) << " is neither a commit nor a wait";
  return *group;
}

bool IsMbarrierOp(OpKind kind) {
  return kind == OpKind::kMbarrierInit || kind == OpKind::kMbarrierArrive ||
         kind == OpKind::kMbarrierArriveTx || kind == OpKind::kMbarrierWait ||
         kind == OpKind::kMbarrierInval ||
         kind == OpKind::kMbarrierArriveRemote;
}

// Whether `slot` of `kind` is a TMA tensor-map operand.
bool IsTensorMapSlot(OpKind kind, int slot) {
  switch (kind) {
    case OpKind::kTmaLoad:
      return slot == 1;
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce:
    case OpKind::kTmaPrefetch:
      return slot == 0;
    default:
      return false;
  }
}

// Whether `slot` of `kind` names an mbarrier.
bool IsMbarrierSlot(OpKind kind, int slot) {
  if (IsMbarrierOp(kind)) return slot == 0;
  return (kind == OpKind::kTmaLoad || kind == OpKind::kBulkLoad ||
          kind == OpKind::kStoreRemote) &&
         slot == 2;
}

// How diagnostics name an operand slot.
std::string SlotName(OpKind kind, int slot) {
  switch (kind) {
    case OpKind::kLoad:
    case OpKind::kLdmatrix:
      return "source";
    case OpKind::kStore:
    case OpKind::kStmatrix:
      return slot == 0 ? "destination" : "value";
    case OpKind::kStoreRemote:
      return slot == 0   ? "destination"
             : slot == 1 ? "value"
             : slot == 2 ? "mbarrier"
                         : "CTA rank";
    case OpKind::kCpAsync:
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce:
    case OpKind::kBulkStore:
      return slot == 0 ? "destination" : "source";
    case OpKind::kTmaLoad:
    case OpKind::kBulkLoad:
      return slot == 0 ? "destination" : slot == 1 ? "source" : "mbarrier";
    case OpKind::kTmaPrefetch:
      return "tensor map";
    case OpKind::kWgmma:
      return slot == 0   ? "accumulator"
             : slot == 1 ? "A operand"
             : slot == 2 ? "B operand"
                         : "zero-init predicate";
    case OpKind::kMbarrierWait:
      return slot == 0 ? "mbarrier" : "phase";
    case OpKind::kSemWait:
    case OpKind::kSemRelease:
      return slot == 0 ? "semaphore" : "value";
    case OpKind::kAtomic:
    case OpKind::kReduce:
      return slot == 0 ? "target" : "value";
    case OpKind::kSplitK:
      return "partial";
    default:
      if (IsMbarrierOp(kind)) return "mbarrier";
      return absl::StrCat("operand ", slot + 1);
  }
}

// "32 threads (0-31)", "64 threads (0-31, 64-95)".
std::string DescribeThreads(const ThreadSet& threads) {
  std::vector<std::string> ranges;
  const std::vector<bool>& bits = threads.bits();
  int n = static_cast<int>(bits.size());
  for (int t = 0; t < n;) {
    if (!bits[t]) {
      ++t;
      continue;
    }
    int end = t;
    while (end + 1 < n && bits[end + 1]) ++end;
    if (ranges.size() == 4) {
      ranges.push_back("...");
      break;
    }
    ranges.push_back(end == t ? absl::StrCat(t) : absl::StrCat(t, "-", end));
    t = end + 1;
  }
  return absl::StrCat(Plural(threads.Count(), "thread"), " (",
                      ranges.empty() ? "none" : absl::StrJoin(ranges, ", "),
                      ")");
}

// "4 warps (0-3)", "2 warps (0, 4)".
std::string DescribeWarps(const ThreadSet& threads) {
  std::vector<int> warps = threads.Warps();
  std::vector<std::string> ranges;
  for (size_t i = 0; i < warps.size();) {
    size_t end = i;
    while (end + 1 < warps.size() && warps[end + 1] == warps[end] + 1) ++end;
    if (ranges.size() == 4) {
      ranges.push_back("...");
      break;
    }
    ranges.push_back(end == i ? absl::StrCat(warps[i])
                              : absl::StrCat(warps[i], "-", warps[end]));
    i = end + 1;
  }
  return absl::StrCat(Plural(static_cast<int>(warps.size()), "warp"), " (",
                      absl::StrJoin(ranges, ", "), ")");
}

// The innermost op of `kind` around `op`, or null.
std::string RoleName(const Op& role) { return absl::StrCat("@", role.name()); }

std::string RoleWarps(const Op& role) {
  return absl::StrCat("warps [", role.warp_begin(), ", ", role.warp_end(), ")");
}

// Products of user-given sizes saturate here instead of overflowing; every
// limit the verifier compares against is far below.
constexpr int64_t kSaturated = int64_t{1} << 62;

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || product > kSaturated ||
      product < -kSaturated) {
    return (a < 0) != (b < 0) ? -kSaturated : kSaturated;
  }
  return product;
}

// Bytes of a buffer with a constant shape; `pad` elements are added to each
// innermost row. Nullopt when the shape is not constant, and also when the
// count does not fit 64 bits, which sets `*overflow`.
std::optional<int64_t> StaticBytes(const Type& type, int64_t pad,
                                   bool* overflow) {
  *overflow = false;
  std::optional<int64_t> elements = 1;
  for (int d = 0; d < type.rank(); ++d) {
    std::optional<int64_t> extent = type.shape()[d].AsConstant();
    if (!extent) return std::nullopt;
    std::optional<int64_t> row =
        d == type.rank() - 1 ? CheckedAdd(*extent, pad) : extent;
    elements = elements && row ? CheckedMul(*elements, *row) : std::nullopt;
  }
  std::optional<int64_t> bytes =
      elements ? CheckedMul(*elements, DTypeBytes(type.dtype())) : std::nullopt;
  *overflow = !bytes;
  return bytes;
}

// "N bytes", or, when a count overflowed, "more bytes than fit in 64 bits".
std::string BytesText(std::optional<int64_t> bytes) {
  return bytes ? absl::StrCat(*bytes, " bytes")
               : std::string("more bytes than fit in 64 bits");
}

// The local memory a thread can have on sm_90 (where register buffers
// spill); a register buffer larger than it cannot be compiled.
constexpr int64_t kLocalMemoryPerThread = 512 * 1024;

// A shared-memory size or end from SharedAllocationBytes, which saturates at
// kSaturated: "N bytes", or "at least 2^62 bytes" (never the saturated number
// as if it were exact).
std::string SaturatedBytesText(int64_t bytes) {
  return bytes >= kSaturated ? std::string("at least 2^62 bytes")
                             : absl::StrCat(bytes, " bytes");
}

// The number of threads or CTAs of a launch shape whose dimensions are all
// constant and within `limit` each; nullopt otherwise.
std::optional<int64_t> BoundedVolume(const Dim3& dims, int64_t limit) {
  int64_t volume = 1;
  for (int d = 0; d < 3; ++d) {
    std::optional<int64_t> extent = dims[d].AsConstant();
    if (!extent || *extent < 1 || *extent > limit) return std::nullopt;
    volume *= *extent;
  }
  return volume;
}

class Verifier {
 public:
  Verifier(const Kernel& kernel, AnalysisManager* analyses)
      : kernel_(kernel), analyses_(analyses) {}

  absl::Status Run();

 private:
  // Starts a diagnostic for `rule` at `loc`, sorted by `order`.
  InFlightDiagnostic& Fail(const Location& loc, int order, Rule rule);
  InFlightDiagnostic& Fail(const Op& op, Rule rule) {
    return Fail(op.loc(), OrderOf(op), rule);
  }
  // Kernel-level problems sort before every op.
  InFlightDiagnostic& FailKernel(const Location& loc, Rule rule) {
    return Fail(loc, -1, rule);
  }
  int OrderOf(const Op& op) const;

  // Kernel-level rules.
  void CheckParams();
  void CheckTensorMap(const Param& param);
  void CheckWorkspaceMap(const Param& map, const Op& workspace);
  void CheckLaunch();

  // Per-op rules.
  bool CheckShape(const Op& op);
  // Whether `value` is defined where `use` can see it.
  bool IsVisible(const Value& value, const Op& use) const;
  void CheckUses(const Op& op);
  void CheckOp(const Op& op);
  bool CheckRefs(const Op& op);
  void CheckSpaces(const Op& op);
  bool ExpectSpace(const Op& op, int slot, std::vector<MemorySpace> spaces);
  bool ExpectTensorMap(const Op& op, int slot);
  void CheckConst(const Op& op);
  void CheckArithmetic(const Op& op);
  void CheckCmpSelectCast(const Op& op);
  void CheckVectorOp(const Op& op);
  void CheckLoadStore(const Op& op);
  void CheckMatrixMove(const Op& op);
  void CheckGroupTokens(const Op& op);
  void CheckAtomic(const Op& op);
  void CheckPtx(const Op& op);
  void CheckAlloc(const Op& op);
  void CheckTma(const Op& op);
  void CheckRemoteRank(const Op& op);
  void CheckStoreRemote(const Op& op);
  void CheckBarrierReduction(const Op& op);
  void CheckCopySize(const Op& op);
  void CheckWgmma(const Op& op);

  // Rules over several ops.
  void CheckSharedBudget();
  void CheckCircularBufferMarker(const Op& loop);
  void CheckRoles();
  void CheckSetMaxNReg();
  void CheckNamedBarriers();

  // Rules that need the thread analysis.
  void CheckWithThreadAnalysis();
  // `position`: the commit's in ops_.
  void CheckCommitThreads(const ThreadAnalysis& analysis, const Op& commit,
                          int position);
  void CheckWaitThreads(const ThreadAnalysis& analysis, const Op& wait);
  void CheckExecution(const ThreadAnalysis& analysis, const Op& op);

  const Kernel& kernel_;
  AnalysisManager* analyses_;   // null: the thread analysis is built here
  std::vector<const Op*> ops_;  // program order
  // The ops the kernel-wide rules look at (roles, setmaxnreg, barriers,
  // shared allocations, and those the thread-analysis rules check), in
  // program order: those rules then need not sweep the whole kernel again.
  std::vector<const Op*> rare_ops_;
  std::vector<int> rare_positions_;  // of rare_ops_, in ops_
  // Positions in ops_, indexed on the first query: only diagnostics and
  // commits ask, so a kernel that verifies never builds it.
  mutable absl::flat_hash_map<const Op*, int> order_;
  absl::flat_hash_set<const Op*> malformed_;  // ops that break V1
  std::optional<int64_t> block_threads_;
  std::deque<std::pair<int, InFlightDiagnostic>> diagnostics_;
};

InFlightDiagnostic& Verifier::Fail(const Location& loc, int order, Rule rule) {
  diagnostics_.emplace_back(order, Error(loc));
  return diagnostics_.back().second << "[V" << static_cast<int>(rule) << "] ";
}

int Verifier::OrderOf(const Op& op) const {
  if (order_.empty() && !ops_.empty()) {
    order_.reserve(ops_.size());
    for (size_t i = 0; i < ops_.size(); ++i) {
      order_[ops_[i]] = static_cast<int>(i);
    }
  }
  auto it = order_.find(&op);
  return it == order_.end() ? -1 : it->second;
}

// Ops for the thread-analysis rules (V30-V33 and the collectives).
bool NeedsThreadAnalysis(const Op& op) {
  return IsCommit(op.kind()) || IsWait(op.kind()) ||
         FactsOf(op.kind()).exec != ExecClass::kPerThread;
}

bool IsRareOp(const Op& op) {
  switch (op.kind()) {
    case OpKind::kRole:
    case OpKind::kSetMaxNReg:
    case OpKind::kBarrierBlock:
    case OpKind::kBarrierNamed:
    case OpKind::kBarrierArrive:
    case OpKind::kBarrierRed:
    case OpKind::kAllocShared:
      return true;
    default:
      return NeedsThreadAnalysis(op);
  }
}

absl::Status Verifier::Run() {
  Walk(kernel_.body(), [&](const Op& op) {
    if (IsRareOp(op)) {
      rare_ops_.push_back(&op);
      rare_positions_.push_back(static_cast<int>(ops_.size()));
    }
    ops_.push_back(&op);
  });
  // A block with a dimension out of range (V47) counts as unknown, so that
  // the rules which depend on its size stay quiet.
  block_threads_ = BoundedVolume(kernel_.block, 1024);
  if (!block_threads_ || *block_threads_ > 1024 ||
      kernel_.block.z.AsConstant().value_or(0) > 64) {
    block_threads_ = std::nullopt;
  }

  CheckParams();
  CheckLaunch();

  // Ops with the wrong shape are reported once and skipped by later rules,
  // which read their operands and attributes. Diagnostics are sorted by op
  // (stably), and an op's own rules report at the op and read only it and
  // its ancestors, so checking each op's shape, uses and rules together, in
  // that order, reports what checking all shapes first would.
  for (const Op* op : ops_) {
    const bool well_formed = CheckShape(*op);
    if (!well_formed) malformed_.insert(op);
    CheckUses(*op);
    if (well_formed) CheckOp(*op);
  }

  if (malformed_.empty()) {
    CheckSharedBudget();
    CheckRoles();
    CheckSetMaxNReg();
    CheckNamedBarriers();
    if (diagnostics_.empty()) CheckWithThreadAnalysis();
  }

  std::stable_sort(
      diagnostics_.begin(), diagnostics_.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<absl::Status> statuses;
  statuses.reserve(diagnostics_.size());
  for (const auto& [order, diagnostic] : diagnostics_) {
    statuses.push_back(diagnostic.ToStatus());
  }
  return JoinStatuses(statuses);
}

// ---------------------------------------------------------------------------
// Parameters and launch (V1, V24-V26, V47-V49).

void Verifier::CheckParams() {
  for (const Param& param : kernel_.params()) {
    const Value* value = param.value;
    const Type& type = value->type();
    switch (param.kind) {
      case Param::Kind::kTensor:
        if (!type.is_buffer() || type.space() != MemorySpace::kGlobal ||
            type.dtype() == DType::kMbarrier) {
          FailKernel(value->loc(), kOpShape)
              << "tensor parameter " << Name(value)
              << " must have a global buffer type, got " << type.ToString();
        } else if (!IsPowerOfTwo(param.align)) {
          FailKernel(value->loc(), kTensorAlignment)
              << "tensor parameter " << Name(value)
              << " must have a power-of-two alignment, got " << param.align;
        }
        break;
      case Param::Kind::kTensorMap:
        if (!type.is_tensor_map() || param.tensor == nullptr) {
          FailKernel(value->loc(), kOpShape)
              << "tensor map parameter " << Name(value)
              << " must have a tensormap type and a tensor, got "
              << type.ToString();
        } else {
          CheckTensorMap(param);
        }
        break;
      case Param::Kind::kScalar:
        if (!type.is_scalar() || type.dtype() == DType::kMbarrier) {
          FailKernel(value->loc(), kOpShape)
              << "scalar parameter " << Name(value)
              << " must have a scalar type, got " << type.ToString();
        }
        break;
    }
  }
}

void Verifier::CheckTensorMap(const Param& map) {
  const Value* value = map.value;
  const Type& type = value->type();
  // What the map covers: a tensor parameter, or a workspace allocated in
  // this kernel (compared by address first: a pass that dropped the
  // allocation leaves a pointer that must not be followed).
  const Param* tensor = kernel_.FindParam(map.tensor);
  const Op* workspace = nullptr;
  if (tensor == nullptr) {
    Walk(kernel_.body(), [&](const Op& op) {
      if (op.kind() == OpKind::kAllocWorkspace && op.num_results() == 1 &&
          op.result() == map.tensor) {
        workspace = &op;
      }
    });
  }
  if (workspace == nullptr &&
      (tensor == nullptr || tensor->kind != Param::Kind::kTensor ||
       !tensor->value->type().is_buffer())) {
    FailKernel(value->loc(), kTensorMapParam)
        << "tensor map " << Name(value)
        << " must map a tensor parameter or a workspace of the kernel"
        << (tensor != nullptr ? absl::StrCat(", got ", Name(map.tensor))
                              : std::string());
    return;
  }
  const Value* covered = workspace != nullptr ? map.tensor : tensor->value;
  const char* what = workspace != nullptr ? "workspace" : "tensor";
  const Type& tensor_type = covered->type();
  if (!tensor_type.is_buffer()) return;  // V20 reports the allocation
  if (tensor_type.dtype() != type.dtype()) {
    FailKernel(value->loc(), kTensorMapParam)
        << "tensor map " << Name(value) << " has element type "
        << DTypeName(type.dtype()) << " but its " << what << " "
        << Name(covered) << " has " << DTypeName(tensor_type.dtype());
  }
  int rank = static_cast<int>(type.box().size());
  if (rank < 1 || rank > 5) {
    FailKernel(value->loc(), kTensorMapParam)
        << "tensor map " << Name(value)
        << " must have 1 to 5 box dimensions, got " << rank;
    return;
  }
  if (rank != tensor_type.rank()) {
    FailKernel(value->loc(), kTensorMapParam)
        << "tensor map " << Name(value) << " has a box of rank " << rank
        << " but its " << what << " " << Name(covered) << " has rank "
        << tensor_type.rank();
  }
  if (map.swizzle != 0 && map.swizzle != 32 && map.swizzle != 64 &&
      map.swizzle != 128) {
    FailKernel(value->loc(), kTensorMapParam)
        << "tensor map " << Name(value)
        << " swizzle must be 0, 32, 64 or 128 bytes, got " << map.swizzle;
  }

  for (int d = 0; d < rank; ++d) {
    int64_t extent = type.box()[d];
    if (extent < 1 || extent > 256) {
      FailKernel(value->loc(), kTensorMapBox)
          << "tensor map " << Name(value) << " box dimension " << d
          << " must be in 1..256, got " << extent;
    }
  }
  int64_t inner_bytes =
      SaturatingMul(type.box().back(), DTypeBytes(type.dtype()));
  if (inner_bytes % 16 != 0) {
    FailKernel(value->loc(), kTensorMapBox)
        << "tensor map " << Name(value)
        << " innermost box extent must be a multiple of 16 bytes, got "
        << inner_bytes << " bytes (" << type.box().back() << " x "
        << DTypeName(type.dtype()) << ")";
  } else if (map.swizzle > 0 && inner_bytes > map.swizzle) {
    FailKernel(value->loc(), kTensorMapBox)
        << "tensor map " << Name(value) << " innermost box extent of "
        << inner_bytes << " bytes exceeds its " << map.swizzle
        << "-byte swizzle span";
  }

  if (workspace != nullptr) {
    CheckWorkspaceMap(map, *workspace);
    return;
  }
  if (tensor->align < 16) {
    FailKernel(tensor->value->loc(), kTensorAlignment)
        << "tensor " << Name(tensor->value) << " is mapped by " << Name(value)
        << " and must be at least 16-byte aligned, got align " << tensor->align;
  }
  // TMA takes byte strides of every dimension but the innermost; each must
  // be a multiple of 16.
  // (Column-major tensors are not checked here.)
  if (tensor->layout != TensorLayout::kColumnMajor) {
    std::optional<int64_t> row_major = 1;  // elements, while constant
    for (int d = tensor_type.rank() - 1; d > 0; --d) {
      std::optional<int64_t> extent = tensor_type.shape()[d].AsConstant();
      row_major =
          row_major && extent
              ? std::optional<int64_t>(SaturatingMul(*row_major, *extent))
              : std::nullopt;
      std::optional<int64_t> elements = row_major;
      if (tensor->layout == TensorLayout::kStrided) {
        elements = d - 1 < static_cast<int>(tensor->strides.size())
                       ? tensor->strides[d - 1].AsConstant()
                       : std::nullopt;
      }
      if (!elements) continue;
      int64_t bytes = SaturatingMul(*elements, DTypeBytes(tensor_type.dtype()));
      if (bytes % 16 != 0) {
        FailKernel(tensor->value->loc(), kTensorAlignment)
            << "tensor " << Name(tensor->value) << " is mapped by "
            << Name(value) << " and its dimension " << d - 1
            << " stride must be a multiple of 16 bytes, got " << bytes
            << " bytes";
        break;
      }
    }
  }
}

// V52: a workspace is row-major from its base; TMA needs that base 16-byte
// aligned and every outer stride a multiple of 16 bytes. Errors point at
// the allocation, with a note at the map.
void Verifier::CheckWorkspaceMap(const Param& map, const Op& workspace) {
  const Value* buffer = workspace.result();
  const Type& type = buffer->type();
  const int64_t align = workspace.align();
  if (align < 16) {
    (Fail(workspace, kWorkspaceMap)
     << "workspace " << Name(buffer) << " is mapped by " << Name(map.value)
     << " and must be at least 16-byte aligned, got align " << align)
        .Note(map.value->loc(), "the tensor map is declared here");
    return;
  }
  std::optional<int64_t> elements = 1;  // row-major stride, while constant
  for (int d = type.rank() - 1; d > 0; --d) {
    const std::optional<int64_t> extent = type.shape()[d].AsConstant();
    if (!elements || !extent) return;
    elements = SaturatingMul(*elements, *extent);
    const int64_t bytes = SaturatingMul(*elements, DTypeBytes(type.dtype()));
    if (bytes % 16 != 0) {
      (Fail(workspace, kWorkspaceMap)
       << "workspace " << Name(buffer) << " is mapped by " << Name(map.value)
       << " and its dimension " << d - 1
       << " stride must be a multiple of 16 bytes, got " << bytes << " bytes")
          .Note(map.value->loc(), "the tensor map is declared here");
      return;
    }
  }
}

void Verifier::CheckLaunch() {
  // Errors point at the dimension, the clause, or (for a clause left out)
  // the kernel.
  auto at = [&](const Dim3& dims, int d) -> const Location& {
    if (d >= 0 && dims.dim_loc[d].known()) return dims.dim_loc[d];
    return dims.loc.known() ? dims.loc : kernel_.loc();
  };
  static constexpr const char* kDims[] = {"x", "y", "z"};
  static constexpr int64_t kBlockLimits[] = {1024, 1024, 64};
  static constexpr int64_t kGridLimits[] = {2147483647, 65535, 65535};
  bool block_dims_ok = true;
  for (int d = 0; d < 3; ++d) {
    std::optional<int64_t> extent = kernel_.block[d].AsConstant();
    if (extent && (*extent < 1 || *extent > kBlockLimits[d])) {
      block_dims_ok = false;
      FailKernel(at(kernel_.block, d), kBlockShape)
          << "block dimension " << kDims[d] << " must be in 1.."
          << kBlockLimits[d] << ", got " << *extent;
    }
  }
  std::optional<int64_t> threads = BoundedVolume(kernel_.block, 1024);
  if (block_dims_ok && threads && *threads > 1024) {
    FailKernel(at(kernel_.block, -1), kBlockShape)
        << "a block has at most 1024 threads, got " << *threads;
  }
  for (int d = 0; d < 3; ++d) {
    std::optional<int64_t> extent = kernel_.grid[d].AsConstant();
    if (extent && (*extent < 1 || *extent > kGridLimits[d])) {
      FailKernel(at(kernel_.grid, d), kGridShape)
          << "grid dimension " << kDims[d] << " must be in 1.."
          << kGridLimits[d] << ", got " << *extent;
    }
  }
  for (int d = 0; d < 3; ++d) {
    std::optional<int64_t> extent = kernel_.cluster[d].AsConstant();
    if (!extent || *extent < 1) {
      FailKernel(at(kernel_.cluster, d), kClusterShape)
          << "cluster dimension " << kDims[d]
          << " must be a positive constant, got "
          << kernel_.cluster[d].ToString();
      return;
    }
    std::optional<int64_t> grid = kernel_.grid[d].AsConstant();
    if (grid && *grid > 0 && *grid % *extent != 0) {
      FailKernel(at(kernel_.cluster, d), kClusterShape)
          << "cluster dimension " << kDims[d] << " (" << *extent
          << ") must divide grid dimension " << kDims[d] << " (" << *grid
          << ")";
    }
  }
  std::optional<int64_t> cluster = BoundedVolume(kernel_.cluster, 1024);
  if (!cluster || *cluster > 8) {
    FailKernel(at(kernel_.cluster, -1), kClusterShape)
        << "a cluster may have at most 8 CTAs (the portable limit), got "
        << (cluster ? absl::StrCat(*cluster)
                    : absl::StrCat(kernel_.cluster.x.ToString(), " x ",
                                   kernel_.cluster.y.ToString(), " x ",
                                   kernel_.cluster.z.ToString()));
  }
}

// ---------------------------------------------------------------------------
// Op shape (V1).

bool Verifier::CheckShape(const Op& op) {
  const OpInfo& info = op.info();
  bool ok = true;
  auto fail = [&]() -> InFlightDiagnostic& {
    ok = false;
    return Fail(op, kOpShape);
  };

  const int num_slots = static_cast<int>(info.operands.size());
  const bool variadic =
      num_slots > 0 && info.operands.back() == OperandSlot::kVariadic;
  const bool optional =
      num_slots > 0 && info.operands.back() == OperandSlot::kOptional;
  const int count = op.num_operands();
  if (op.kind() != OpKind::kPtx &&
      (variadic   ? count < num_slots
       : optional ? count < num_slots - 1 || count > num_slots
                  : count != num_slots)) {
    fail() << op.mnemonic() << " takes " << (variadic ? "at least " : "")
           << Plural(optional ? num_slots - 1 : num_slots, "operand")
           << (optional ? " and an optional one" : "") << ", got " << count;
  } else {
    for (int i = 0; i < count; ++i) {
      const Operand& operand = op.operand(i);
      OperandSlot slot = op.kind() == OpKind::kPtx ? OperandSlot::kValue
                         : i < num_slots           ? info.operands[i]
                                                   : OperandSlot::kVariadic;
      if (operand.value == nullptr) {
        fail() << op.mnemonic() << " " << SlotName(op.kind(), i)
               << " has no value";
        continue;
      }
      if (slot == OperandSlot::kRef && !operand.indexed) {
        fail() << op.mnemonic() << " " << SlotName(op.kind(), i)
               << " must be a buffer reference " << Name(operand.value)
               << "[...]";
      } else if (slot != OperandSlot::kRef &&
                 (operand.indexed || !operand.indices.empty())) {
        fail() << op.mnemonic() << " " << SlotName(op.kind(), i) << " takes "
               << Name(operand.value) << " without indices";
      }
      for (const Value* index : operand.indices) {
        if (index == nullptr) {
          fail() << op.mnemonic() << " " << SlotName(op.kind(), i)
                 << " has an index with no value";
        }
      }
    }
  }

  for (const AttrSpec& spec : info.attrs) {
    const Attribute* attr = op.FindAttr(spec.name);
    if (attr == nullptr) {
      if (!spec.optional && !spec.default_value) {
        fail() << op.mnemonic() << " needs attribute `" << spec.name << "`";
      }
      continue;
    }
    if (attr->kind != spec.kind) {
      fail() << op.mnemonic() << " attribute `" << spec.name << "` must be "
             << AttrKindName(spec.kind) << ", got " << AttrKindName(attr->kind);
    } else if (spec.kind == AttrKind::kEnum &&
               std::find(spec.enum_values.begin(), spec.enum_values.end(),
                         attr->string_value) == spec.enum_values.end()) {
      fail() << op.mnemonic() << " attribute `" << spec.name
             << "` must be one of " << absl::StrJoin(spec.enum_values, ", ")
             << ", got " << attr->string_value;
    }
  }

  if (info.num_results >= 0 && op.num_results() != info.num_results) {
    fail() << op.mnemonic() << " has " << Plural(info.num_results, "result")
           << ", got " << op.num_results();
  }
  if (op.num_regions() != info.num_regions) {
    fail() << op.mnemonic() << " has " << Plural(info.num_regions, "region")
           << ", got " << op.num_regions();
  } else {
    for (int r = 0; r < op.num_regions(); ++r) {
      const Region& region = op.region(r);
      int expected = op.kind() == OpKind::kFor ? 1 : 0;
      if (region.num_arguments() != expected) {
        fail() << op.mnemonic() << " region " << r << " takes "
               << Plural(expected, "argument") << ", got "
               << region.num_arguments();
      } else if (expected == 1 && !region.argument(0)->type().is_index()) {
        fail() << "for induction variable " << Name(region.argument(0))
               << " must be index, got "
               << region.argument(0)->type().ToString();
      }
    }
  }
  return ok;
}

// ---------------------------------------------------------------------------
// Scope (V3, V4).

// A value is visible after its definition in the region that holds it,
// including the regions nested there; a region argument inside its region;
// sizes and parameters everywhere in their kernel. A token stays usable
// after each region around its commit as well: past a loop it names the
// last group committed, past an if the group of the threads that took the
// branch (V32 checks that they are the ones waiting). Decided from the
// op's place, so that checking a use costs no table of the values seen.
bool Verifier::IsVisible(const Value& value, const Op& use) const {
  switch (value.kind()) {
    case Value::Kind::kSize: {
      const auto& sizes = kernel_.sizes();
      return value.index() < static_cast<int>(sizes.size()) &&
             sizes[value.index()].get() == &value;
    }
    case Value::Kind::kParam: {
      const auto& params = kernel_.params();
      return value.index() < static_cast<int>(params.size()) &&
             params[value.index()].value == &value;
    }
    case Value::Kind::kRegionArgument:
      for (const Region* region = use.parent_region(); region != nullptr;
           region = region->parent_op() != nullptr
                        ? region->parent_op()->parent_region()
                        : nullptr) {
        if (region == value.owning_region()) return true;
      }
      return false;
    case Value::Kind::kResult: {
      // The innermost region holding both the definition (or, for a token,
      // an op around it) and the use decides: the use's op there must come
      // after the definition's.
      const bool escapes = value.type().is_token();
      for (const Op* def = value.defining_op();
           def != nullptr && def->parent_region() != nullptr;
           def = escapes ? def->parent_op() : nullptr) {
        const Region& region = *def->parent_region();
        const Op* later = use.AncestorIn(region);
        if (later != nullptr) {
          return region.IndexOf(def) < region.IndexOf(later);
        }
      }
      return false;
    }
  }
  return false;
}

void Verifier::CheckUses(const Op& op) {
  std::vector<const Value*> reported;  // each value once per op
  auto check_visible = [&](const Value* value) {
    if (value == nullptr || IsVisible(*value, op)) return;
    if (std::find(reported.begin(), reported.end(), value) != reported.end()) {
      return;
    }
    reported.push_back(value);
    const Op* definer = value->defining_op();
    bool in_kernel = (definer != nullptr && OrderOf(*definer) >= 0) ||
                     value->kind() == Value::Kind::kRegionArgument;
    if (!in_kernel) {
      Fail(op, kDefinedBeforeUse)
          << Name(value) << " is not defined in kernel @" << kernel_.name();
    } else if (value->kind() == Value::Kind::kResult &&
               OrderOf(*definer) >= OrderOf(op)) {
      (Fail(op, kDefinedBeforeUse)
       << Name(value) << " is used before it is defined")
          .Note(value->loc(), "defined here");
    } else {
      (Fail(op, kDefinedBeforeUse)
       << Name(value)
       << " is not in scope here: it is defined in a region that does "
          "not enclose this use")
          .Note(value->loc(), "defined here");
    }
  };
  for (const Operand& operand : op.operands()) {
    for (const Value* index : operand.indices) check_visible(index);
    const Value* value = operand.value;
    if (value == nullptr) continue;
    if (operand.distance == 0) {
      check_visible(value);
      continue;
    }
    if (!value->type().is_token()) {
      Fail(op, kTokenInstance)
          << Name(value) << "@" << operand.distance
          << ": only tokens name an earlier instance, but " << Name(value)
          << " is " << value->type().ToString();
      continue;
    }
    if (operand.distance < 0) {
      Fail(op, kTokenInstance) << Name(value) << "@" << operand.distance
                               << ": the instance distance must be positive";
      continue;
    }
    const Op* commit = value->defining_op();
    const Op* loop =
        commit == nullptr ? nullptr : commit->EnclosingOp(OpKind::kFor);
    if (loop == nullptr) {
      (Fail(op, kTokenInstance)
       << Name(value) << "@" << operand.distance
       << " names an earlier iteration, but " << Name(value)
       << " is not committed inside a loop")
          .Note(value->loc(), "committed here");
    } else if (!op.IsInside(*loop)) {
      (Fail(op, kTokenInstance)
       << Name(value) << "@" << operand.distance
       << " is used outside the loop that commits " << Name(value))
          .Note(loop->loc(), "the loop");
    }
  }
}

// ---------------------------------------------------------------------------
// Per-op rules.

void Verifier::CheckOp(const Op& op) {
  const OpKind kind = op.kind();
  // Buffer references come first: the rules below read buffer types.
  if (!CheckRefs(op)) return;
  CheckSpaces(op);
  switch (kind) {
    case OpKind::kConst:
      CheckConst(op);
      break;
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
      CheckArithmetic(op);
      break;
    case OpKind::kCmp:
    case OpKind::kSelect:
    case OpKind::kCast:
      CheckCmpSelectCast(op);
      break;
    case OpKind::kVecFrom:
    case OpKind::kVecExtract:
      CheckVectorOp(op);
      break;
    case OpKind::kThreadId:
    case OpKind::kBlockId:
    case OpKind::kBlockDim:
    case OpKind::kGridDim:
    case OpKind::kClusterCtaId:
    case OpKind::kClusterCtaRank:
    case OpKind::kLaneId:
    case OpKind::kWarpId:
      if (!op.result()->type().is_index()) {
        Fail(op, kIndexQueries)
            << op.mnemonic() << " result must be index, got "
            << op.result()->type().ToString();
      }
      break;
    case OpKind::kElectSync:
      if (!op.result()->type().is_scalar(DType::kI1)) {
        Fail(op, kIndexQueries) << "elect.sync result must be i1, got "
                                << op.result()->type().ToString();
      }
      break;
    case OpKind::kShflSync: {
      const Type& value = op.operand_value(0)->type();
      const Type& lane = op.operand_value(1)->type();
      if (!value.is_scalar(DType::kI32) && !value.is_scalar(DType::kF32)) {
        Fail(op, kIndexQueries)
            << "shfl.sync value must be i32 or f32, got " << value.ToString();
      } else if (op.result()->type() != value) {
        Fail(op, kIndexQueries)
            << "shfl.sync result must be " << value.ToString()
            << " like its value, got " << op.result()->type().ToString();
      }
      if (!lane.is_index() && !lane.is_scalar(DType::kI32)) {
        Fail(op, kIndexQueries)
            << "shfl.sync lane must be index or i32, got " << lane.ToString();
      }
      break;
    }
    case OpKind::kAllocShared:
    case OpKind::kAllocReg:
    case OpKind::kAllocWorkspace:
      CheckAlloc(op);
      break;
    case OpKind::kLoad:
    case OpKind::kStore:
      CheckLoadStore(op);
      break;
    case OpKind::kLdmatrix:
    case OpKind::kStmatrix:
      CheckMatrixMove(op);
      break;
    case OpKind::kCpAsync:
    case OpKind::kBulkLoad:
    case OpKind::kBulkStore:
      CheckCopySize(op);
      break;
    case OpKind::kTmaLoad:
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce:
      CheckTma(op);
      break;
    case OpKind::kBulkCommit:
    case OpKind::kWgmmaCommit:
    case OpKind::kCpAsyncCommit:
    case OpKind::kBulkWait:
    case OpKind::kWgmmaWait:
    case OpKind::kCpAsyncWait:
      CheckGroupTokens(op);
      break;
    case OpKind::kWgmma:
      CheckWgmma(op);
      break;
    case OpKind::kMbarrierInit:
    case OpKind::kMbarrierArriveTx: {
      const bool init = kind == OpKind::kMbarrierInit;
      const char* what = init ? "count" : "bytes";
      int64_t value = init ? op.count() : op.bytes();
      if (value < 1 || value > kMbarrierCountLimit) {
        Fail(op, kMbarrierCounts)
            << op.mnemonic() << " " << what << " must be in 1.."
            << kMbarrierCountLimit << ", got " << value;
      }
      break;
    }
    case OpKind::kMbarrierArriveRemote:
      CheckRemoteRank(op);
      break;
    case OpKind::kStoreRemote:
      CheckStoreRemote(op);
      break;
    case OpKind::kMbarrierWait:
      if (!op.operand_value(1)->type().is_integer_scalar()) {
        Fail(op, kMbarrierOperand)
            << "mbarrier.wait phase must be an integer scalar, got "
            << op.operand_value(1)->type().ToString();
      }
      break;
    case OpKind::kSemWait:
    case OpKind::kSemRelease: {
      const Type& sem = op.operand_value(0)->type();
      const Type& value = op.operand_value(1)->type();
      if (sem.dtype() != DType::kI32) {
        Fail(op, kSemaphores)
            << op.mnemonic() << " semaphore must be a buffer of i32, got "
            << sem.ToString();
      }
      if (!value.is_scalar(DType::kI32)) {
        Fail(op, kSemaphores)
            << op.mnemonic() << " value must be i32, got " << value.ToString();
      }
      break;
    }
    case OpKind::kAtomic:
    case OpKind::kReduce:
      CheckAtomic(op);
      break;
    case OpKind::kSetMaxNReg: {
      int64_t regs = op.regs();
      if (regs < 24 || regs > 256 || regs % 8 != 0) {
        Fail(op, kSetMaxNRegValue)
            << "setmaxnreg regs must be a multiple of 8 in 24..256, got "
            << regs;
      }
      break;
    }
    case OpKind::kPtx:
      CheckPtx(op);
      break;
    case OpKind::kIf: {
      if (!op.operand_value(0)->type().is_scalar(DType::kI1)) {
        Fail(op, kControlOperands) << "if condition must be i1, got "
                                   << op.operand_value(0)->type().ToString();
      }
      std::string why;
      if (op.predicated() && !CanIssuePredicated(op, &why)) {
        Fail(op, kPredicatedIf)
            << "if {predicated} cannot be issued branch-free: " << why;
      }
      break;
    }
    case OpKind::kFor: {
      static constexpr const char* kWhat[] = {"lower bound", "upper bound",
                                              "step"};
      for (int i = 0; i < 3; ++i) {
        if (!op.operand_value(i)->type().is_index()) {
          Fail(op, kControlOperands)
              << "for " << kWhat[i] << " must be index, got "
              << op.operand_value(i)->type().ToString();
        }
      }
      if (op.unroll() < 0) {
        Fail(op, kControlOperands)
            << "for unroll must be 0 (the compiler decides), 1 (rolled) or "
               "a count, got "
            << op.unroll();
      }
      CheckCircularBufferMarker(op);
      break;
    }
    case OpKind::kSplitK: {
      const Type& partial = op.operand_value(0)->type();
      if (!partial.is_buffer() || partial.space() != MemorySpace::kRegister) {
        Fail(op, kSplitK) << "splitk partial must be a register buffer, got "
                          << partial.ToString();
      }
      if (const Op* outer = op.EnclosingOp(OpKind::kSplitK)) {
        (Fail(op, kSplitK) << "splitk must not be nested in another splitk")
            .Note(outer->loc(), "the enclosing splitk");
      } else if (const Op* loop = op.EnclosingOp(OpKind::kFor)) {
        (Fail(op, kSplitK) << "splitk must not be inside a loop")
            .Note(loop->loc(), "the enclosing loop");
      }
      break;
    }
    case OpKind::kReturn: {
      const Region* region = op.parent_region();
      if (region != nullptr && &region->op(region->size() - 1) != &op) {
        Fail(op, kReturnLast) << "return must be the last op of its region";
      }
      break;
    }
    case OpKind::kBarrierRed:
      CheckBarrierReduction(op);
      [[fallthrough]];
    case OpKind::kBarrierNamed:
    case OpKind::kBarrierArrive: {
      int64_t id = op.id();
      int64_t threads = op.threads();
      if (id < 1 || id > 15) {
        Fail(op, kNamedBarrierIds)
            << op.mnemonic()
            << " id must be in 1..15 (0 is barrier.block), got " << id;
      }
      if (threads < 32 || threads % 32 != 0) {
        Fail(op, kNamedBarrierIds)
            << op.mnemonic()
            << " threads must be a positive multiple of 32, got " << threads;
      } else if (block_threads_ && threads > *block_threads_) {
        Fail(op, kNamedBarrierIds)
            << op.mnemonic() << " counts " << threads
            << " threads but the block has " << *block_threads_;
      }
      break;
    }
    case OpKind::kBarrierBlock: {
      const Op* role = op.EnclosingOp(OpKind::kRole);
      if (role != nullptr && !malformed_.contains(role) && block_threads_ &&
          (role->warp_begin() != 0 ||
           role->warp_end() != *block_threads_ / 32 ||
           *block_threads_ % 32 != 0)) {
        (Fail(op, kBlockBarrier)
         << "barrier.block waits for all " << *block_threads_
         << " threads of the block, but role " << RoleName(*role)
         << " runs only " << RoleWarps(*role) << "; use barrier.named")
            .Note(role->loc(), "the role");
      }
      break;
    }
    default:
      break;
  }

  // Allocations go at the top level or directly in a role.
  if (kind == OpKind::kAllocShared || kind == OpKind::kAllocReg ||
      kind == OpKind::kAllocWorkspace) {
    const Op* parent = op.parent_op();
    if (parent != nullptr && parent->kind() != OpKind::kRole) {
      (Fail(op, kAllocPlacement)
       << op.mnemonic()
       << " must be at the kernel's top level or directly in a role, "
          "not inside "
       << parent->mnemonic())
          .Note(parent->loc(),
                absl::StrCat("the enclosing ", parent->mnemonic()));
    }
  }
}

bool Verifier::CheckRefs(const Op& op) {
  bool ok = true;
  for (int i = 0; i < op.num_operands(); ++i) {
    const Operand& operand = op.operand(i);
    const Type& type = operand.value->type();
    bool ref = operand.indexed;
    bool whole =
        op.kind() != OpKind::kPtx &&
        op.info().operands[std::min<int>(i, op.info().operands.size() - 1)] ==
            OperandSlot::kBuffer;
    if (!ref && !whole) continue;
    if (!type.is_buffer() && !type.is_tensor_map()) {
      ok = false;
      Fail(op, kBufferRef) << op.mnemonic() << " " << SlotName(op.kind(), i)
                           << " must be a buffer, got " << Name(operand.value)
                           << " of type " << type.ToString();
      continue;
    }
    if (type.is_tensor_map() && !IsTensorMapSlot(op.kind(), i)) {
      ok = false;
      Fail(op, kBufferRef) << op.mnemonic() << " " << SlotName(op.kind(), i)
                           << " must be a buffer, got tensor map "
                           << Name(operand.value);
      continue;
    }
    if (!ref) continue;
    int rank = type.is_tensor_map() ? static_cast<int>(type.box().size())
                                    : type.rank();
    int count = static_cast<int>(operand.indices.size());
    if (count != rank) {
      ok = false;
      Fail(op, kBufferRef) << op.mnemonic() << " " << SlotName(op.kind(), i)
                           << " " << Name(operand.value) << " has rank " << rank
                           << " but is indexed with "
                           << Plural(count, "index", "indices");
    }
    for (const Value* index : operand.indices) {
      if (!index->type().is_index()) {
        ok = false;
        Fail(op, kBufferRef)
            << op.mnemonic() << " " << SlotName(op.kind(), i) << " index "
            << Name(index) << " must be index, got "
            << index->type().ToString();
      }
    }
  }
  return ok;
}

bool Verifier::ExpectSpace(const Op& op, int slot,
                           std::vector<MemorySpace> spaces) {
  const Value* value = op.operand_value(slot);
  const Type& type = value->type();
  if (type.is_buffer() &&
      std::find(spaces.begin(), spaces.end(), type.space()) != spaces.end()) {
    return true;
  }
  std::vector<std::string> names;
  for (MemorySpace space : spaces) {
    names.push_back(space == MemorySpace::kRegister
                        ? "registers"
                        : absl::StrCat(MemorySpaceName(space), " memory"));
  }
  Fail(op, kMemorySpace) << op.mnemonic() << " " << SlotName(op.kind(), slot)
                         << " must be in " << absl::StrJoin(names, " or ")
                         << ", got "
                         << (type.is_buffer() ? MemorySpaceName(type.space())
                                              : type.ToString().c_str())
                         << " " << Name(value);
  return false;
}

bool Verifier::ExpectTensorMap(const Op& op, int slot) {
  const Value* value = op.operand_value(slot);
  const Param* param = kernel_.FindParam(value);
  if (value->type().is_tensor_map() && param != nullptr &&
      param->kind == Param::Kind::kTensorMap) {
    return true;
  }
  Fail(op, kMemorySpace) << op.mnemonic() << " " << SlotName(op.kind(), slot)
                         << " must be a tensor map parameter, got "
                         << Name(value) << " of type "
                         << value->type().ToString();
  return false;
}

void Verifier::CheckSpaces(const Op& op) {
  using S = MemorySpace;
  const OpKind kind = op.kind();
  switch (kind) {
    case OpKind::kCpAsync:
      ExpectSpace(op, 0, {S::kShared});
      ExpectSpace(op, 1, {S::kGlobal});
      break;
    case OpKind::kLdmatrix:
    case OpKind::kStmatrix:
      ExpectSpace(op, 0, {S::kShared});
      break;
    case OpKind::kTmaLoad:
      ExpectSpace(op, 0, {S::kShared});
      ExpectTensorMap(op, 1);
      break;
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce:
      ExpectTensorMap(op, 0);
      ExpectSpace(op, 1, {S::kShared});
      break;
    case OpKind::kTmaPrefetch:
      ExpectTensorMap(op, 0);
      break;
    case OpKind::kBulkLoad:
      ExpectSpace(op, 0, {S::kShared});
      ExpectSpace(op, 1, {S::kGlobal});
      break;
    case OpKind::kBulkStore:
      ExpectSpace(op, 0, {S::kGlobal});
      ExpectSpace(op, 1, {S::kShared});
      break;
    case OpKind::kWgmma:
      ExpectSpace(op, 0, {S::kRegister});
      ExpectSpace(op, 1, {S::kShared, S::kRegister});
      ExpectSpace(op, 2, {S::kShared});
      break;
    case OpKind::kSemWait:
    case OpKind::kSemRelease:
      ExpectSpace(op, 0, {S::kGlobal});
      break;
    case OpKind::kAtomic:
    case OpKind::kReduce:
      ExpectSpace(op, 0, {S::kGlobal, S::kShared});
      break;
    default:
      break;
  }

  // mbarrier operands, and no other access to mbarrier buffers.
  for (int i = 0; i < op.num_operands(); ++i) {
    const Value* value = op.operand_value(i);
    const Type& type = value->type();
    if (IsMbarrierSlot(kind, i)) {
      if (!type.is_buffer() || type.space() != MemorySpace::kShared ||
          type.dtype() != DType::kMbarrier) {
        Fail(op, kMbarrierOperand)
            << op.mnemonic() << " " << SlotName(kind, i)
            << " must be a shared mbarrier buffer, got " << Name(value)
            << " of type " << type.ToString();
      }
    } else if (type.is_buffer() && type.dtype() == DType::kMbarrier) {
      Fail(op, kMbarrierOperand)
          << op.mnemonic() << " cannot access mbarrier buffer " << Name(value)
          << "; only mbarrier ops and the completion operand of tma.load and "
             "bulk.load use it";
    }
  }
}

void Verifier::CheckConst(const Op& op) {
  const Type& type = op.result()->type();
  const Attribute& value = op.value();
  if (!type.is_scalar() || type.dtype() == DType::kMbarrier) {
    Fail(op, kConstValue) << "const result must be a scalar, got "
                          << type.ToString();
    return;
  }
  if (IsFloat(type.dtype())) {
    // inf and nan are written as such; a finite literal must stay finite.
    const double number = value.is_integral
                              ? static_cast<double>(value.int_value)
                              : value.float_value;
    if (std::isfinite(number) &&
        std::fabs(number) >= FloatOverflowThreshold(type.dtype())) {
      Fail(op, kConstValue)
          << "const value " << number << " is out of the range of "
          << type.ToString() << " (it would round to infinity; write inf if "
          << "that is meant)";
    }
    return;
  }
  if (!value.is_integral) {
    Fail(op, kConstValue) << "const of type " << type.ToString()
                          << " needs an integer value, got "
                          << value.float_value;
    return;
  }
  int64_t v = value.int_value;
  bool in_range = true;
  switch (type.dtype()) {
    case DType::kI1:
      in_range = v == 0 || v == 1;
      break;
    // i32 takes signed and unsigned 32-bit spellings (0xffffffff).
    case DType::kI32:
      in_range = v >= INT32_MIN && v <= UINT32_MAX;
      break;
    default:
      break;
  }
  if (!in_range) {
    Fail(op, kConstValue) << "const value " << v << " does not fit in "
                          << type.ToString();
  }
}

void Verifier::CheckArithmetic(const Op& op) {
  const OpKind kind = op.kind();
  const Type& type = op.operand_value(0)->type();
  for (int i = 1; i < op.num_operands(); ++i) {
    const Type& other = op.operand_value(i)->type();
    if (other != type) {
      Fail(op, kArithmetic)
          << op.mnemonic() << " operands must have one type, got "
          << type.ToString() << " and " << other.ToString();
      return;
    }
  }
  if (!IsArithmeticType(type)) {
    Fail(op, kArithmetic) << op.mnemonic()
                          << " operands must be scalars or vectors, got "
                          << type.ToString();
    return;
  }
  const DType dtype = type.dtype();
  switch (kind) {
    case OpKind::kAnd:
    case OpKind::kOr:
    case OpKind::kXor:
    case OpKind::kNot:
      if (!IsInteger(dtype)) {
        Fail(op, kArithmetic)
            << op.mnemonic() << " needs integer operands, got "
            << type.ToString();
      }
      break;
    case OpKind::kShl:
    case OpKind::kShr:
      if (!IsInteger(dtype) || dtype == DType::kI1) {
        Fail(op, kArithmetic)
            << op.mnemonic() << " needs i32, i64 or index operands, got "
            << type.ToString();
      }
      break;
    case OpKind::kExp:
    case OpKind::kSqrt:
      if (!IsFloat(dtype)) {
        Fail(op, kArithmetic)
            << op.mnemonic() << " needs floating-point operands, got "
            << type.ToString();
      }
      break;
    default:
      if (dtype == DType::kI1) {
        Fail(op, kArithmetic) << op.mnemonic()
                              << " does not take i1; use and, or, xor or "
                                 "select";
      }
      break;
  }
  if (op.result()->type() != type) {
    Fail(op, kArithmetic) << op.mnemonic() << " result must be "
                          << type.ToString() << " like its operands, got "
                          << op.result()->type().ToString();
  }
}

void Verifier::CheckCmpSelectCast(const Op& op) {
  const Type& result = op.result()->type();
  switch (op.kind()) {
    case OpKind::kCmp: {
      const Type& lhs = op.operand_value(0)->type();
      const Type& rhs = op.operand_value(1)->type();
      if (lhs != rhs) {
        Fail(op, kCmpSelect) << "cmp operands must have one type, got "
                             << lhs.ToString() << " and " << rhs.ToString();
      } else if (!lhs.is_scalar() || lhs.dtype() == DType::kMbarrier) {
        Fail(op, kCmpSelect)
            << "cmp operands must be scalars, got " << lhs.ToString();
      }
      if (!result.is_scalar(DType::kI1)) {
        Fail(op, kCmpSelect)
            << "cmp result must be i1, got " << result.ToString();
      }
      break;
    }
    case OpKind::kSelect: {
      const Type& condition = op.operand_value(0)->type();
      const Type& on_true = op.operand_value(1)->type();
      const Type& on_false = op.operand_value(2)->type();
      if (!condition.is_scalar(DType::kI1)) {
        Fail(op, kCmpSelect)
            << "select condition must be i1, got " << condition.ToString();
      }
      if (on_true != on_false) {
        Fail(op, kCmpSelect)
            << "select values must have one type, got " << on_true.ToString()
            << " and " << on_false.ToString();
      } else if (!IsArithmeticType(on_true)) {
        Fail(op, kCmpSelect) << "select values must be scalars or vectors, got "
                             << on_true.ToString();
      } else if (result != on_true) {
        Fail(op, kCmpSelect) << "select result must be " << on_true.ToString()
                             << " like its values, got " << result.ToString();
      }
      break;
    }
    default: {  // cast
      const Type& source = op.operand_value(0)->type();
      if (!IsArithmeticType(source) || !IsArithmeticType(result)) {
        Fail(op, kCast) << "cast converts between numeric scalars or vectors, "
                           "got "
                        << source.ToString() << " to " << result.ToString();
      } else if (source.is_vector() != result.is_vector() ||
                 source.lanes() != result.lanes()) {
        Fail(op, kCast) << "cast keeps the number of lanes, got "
                        << source.ToString() << " to " << result.ToString();
      }
      break;
    }
  }
}

void Verifier::CheckVectorOp(const Op& op) {
  const Type& result = op.result()->type();
  if (op.kind() == OpKind::kVecFrom) {
    const Type& element = op.operand_value(0)->type();
    for (int i = 0; i < op.num_operands(); ++i) {
      const Type& type = op.operand_value(i)->type();
      if (!type.is_scalar() || type.dtype() == DType::kMbarrier ||
          type != element) {
        Fail(op, kVectorOps)
            << "vec.from lanes must be scalars of one type, "
               "got "
            << element.ToString() << " and " << type.ToString();
        return;
      }
    }
    Type expected = Type::Vector(element.dtype(), op.num_operands());
    if (result != expected) {
      Fail(op, kVectorOps) << "vec.from of " << op.num_operands() << " "
                           << element.ToString() << " lanes must return "
                           << expected.ToString() << ", got "
                           << result.ToString();
    }
    return;
  }
  const Type& vector = op.operand_value(0)->type();
  if (!vector.is_vector()) {
    Fail(op, kVectorOps) << "vec.extract operand must be a vector, got "
                         << vector.ToString();
    return;
  }
  int64_t lane = op.lane();
  if (lane < 0 || lane >= vector.lanes()) {
    Fail(op, kVectorOps) << "vec.extract lane " << lane << " is outside "
                         << vector.ToString();
  }
  if (result != vector.ElementType()) {
    Fail(op, kVectorOps) << "vec.extract result must be "
                         << vector.ElementType().ToString() << ", got "
                         << result.ToString();
  }
}

void Verifier::CheckLoadStore(const Op& op) {
  const Type& buffer = op.operand_value(0)->type();
  // Other uses of mbarrier buffers are reported by CheckSpaces.
  if (buffer.dtype() == DType::kMbarrier) return;
  const bool load = op.kind() == OpKind::kLoad;
  const Type& moved = load ? op.result()->type() : op.operand_value(1)->type();
  const char* what = load ? "load result" : "store value";
  if (moved == buffer.ElementType()) return;
  if (!moved.is_vector() || moved.dtype() != buffer.dtype()) {
    Fail(op, kLoadStore) << what << " must be " << DTypeName(buffer.dtype())
                         << " or vec<N x " << DTypeName(buffer.dtype())
                         << "> like the elements of "
                         << Name(op.operand_value(0)) << ", got "
                         << moved.ToString();
    return;
  }
  int64_t bytes = int64_t{moved.lanes()} * DTypeBytes(moved.dtype());
  if (!IsPowerOfTwo(moved.lanes()) || moved.lanes() < 2) {
    Fail(op, kLoadStore) << what
                         << " vector must have a power-of-two number "
                            "of lanes, got "
                         << moved.ToString();
  } else if (buffer.space() != MemorySpace::kRegister && bytes > 16) {
    Fail(op, kLoadStore) << what << " " << moved.ToString() << " moves "
                         << bytes << " bytes; vector accesses to "
                         << MemorySpaceName(buffer.space())
                         << " memory move at most 16";
  }
}

void Verifier::CheckMatrixMove(const Op& op) {
  const Type& buffer = op.operand_value(0)->type();
  const bool load = op.kind() == OpKind::kLdmatrix;
  const Type& moved = load ? op.result()->type() : op.operand_value(1)->type();
  int64_t count = op.count();
  if (count != 1 && count != 2 && count != 4) {
    Fail(op, kLoadStore) << op.mnemonic() << " count must be 1, 2 or 4, got "
                         << count;
    return;
  }
  if (!IsSixteenBit(buffer.dtype())) {
    Fail(op, kLoadStore) << op.mnemonic() << " moves 16-bit elements, but "
                         << Name(op.operand_value(0)) << " holds "
                         << DTypeName(buffer.dtype());
    return;
  }
  Type as_elements = Type::Vector(buffer.dtype(), static_cast<int>(2 * count));
  Type as_words = Type::Vector(DType::kI32, static_cast<int>(count));
  if (moved != as_elements && moved != as_words) {
    Fail(op, kLoadStore) << op.mnemonic() << " of " << count
                         << (count == 1 ? " matrix " : " matrices ")
                         << (load ? "returns " : "stores ")
                         << as_elements.ToString() << " or "
                         << as_words.ToString() << " per thread, got "
                         << moved.ToString();
  }
}

void Verifier::CheckGroupTokens(const Op& op) {
  TokenKind kind = GroupTokenKind(op.kind());
  Type expected = Type::Token(kind);
  if (IsCommit(op.kind())) {
    if (op.result()->type() != expected) {
      Fail(op, kTokens) << op.mnemonic() << " returns " << expected.ToString()
                        << ", got " << op.result()->type().ToString();
    }
    return;
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    const Value* token = op.operand_value(i);
    if (token->type() != expected) {
      Fail(op, kTokens) << op.mnemonic() << " waits for " << expected.ToString()
                        << " tokens, got " << Name(token) << " of type "
                        << token->type().ToString();
    }
  }
}

void Verifier::CheckAtomic(const Op& op) {
  const Type& buffer = op.operand_value(0)->type();
  const Type& value = op.operand_value(1)->type();
  const CombineOp reduction = op.op();
  DType dtype = buffer.dtype();
  if (dtype == DType::kI1 || dtype == DType::kMbarrier) {
    Fail(op, kAtomics) << op.mnemonic() << " does not work on "
                       << DTypeName(dtype) << " elements";
    return;
  }
  if (value != buffer.ElementType()) {
    Fail(op, kAtomics) << op.mnemonic() << " value must be " << DTypeName(dtype)
                       << " like the elements of " << Name(op.operand_value(0))
                       << ", got " << value.ToString();
  }
  bool bitwise = reduction == CombineOp::kAnd || reduction == CombineOp::kOr;
  if (bitwise && !IsInteger(dtype)) {
    Fail(op, kAtomics) << op.mnemonic() << " " << EnumName(reduction)
                       << " needs integer elements, got " << DTypeName(dtype);
  }
  if (op.kind() == OpKind::kAtomic &&
      op.result()->type() != buffer.ElementType()) {
    Fail(op, kAtomics) << "atomic result must be " << DTypeName(dtype)
                       << ", got " << op.result()->type().ToString();
  }
}

void Verifier::CheckPtx(const Op& op) {
  // PTX is ASCII; the text goes into a C++ string literal in the CUDA
  // source, where a stray byte would fail far from here.
  const absl::string_view ptx_text = op.text();
  for (size_t i = 0; i < ptx_text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(ptx_text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f) {
      Fail(op, kPtx) << "ptx text must be printable ASCII (and newlines and "
                        "tabs), got byte 0x"
                     << absl::StrCat(absl::Hex(c, absl::kZeroPad2))
                     << " at offset " << i;
      break;
    }
  }
  int64_t reads = op.reads();
  int64_t writes = op.writes();
  int operands = op.num_operands();
  if (reads < 0 || writes < 0 || reads > operands ||
      writes > operands - reads) {
    Fail(op, kPtx) << "ptx declares " << reads << " read and " << writes
                   << " written buffers but has "
                   << Plural(operands, "operand");
    return;
  }
  int inputs = operands - static_cast<int>(reads + writes);
  for (int i = 0; i < operands; ++i) {
    const Value* value = op.operand_value(i);
    const Type& type = value->type();
    if (i < inputs) {
      if (!IsArithmeticType(type)) {
        Fail(op, kPtx) << "ptx input " << Name(value)
                       << " must be a scalar or vector, got "
                       << type.ToString();
      }
    } else if (!type.is_buffer()) {
      Fail(op, kPtx) << "ptx " << (i < inputs + reads ? "reads" : "writes")
                     << " operand " << Name(value) << " must be a buffer, got "
                     << type.ToString();
    }
  }
  for (int r = 0; r < op.num_results(); ++r) {
    if (!IsArithmeticType(op.result(r)->type())) {
      Fail(op, kPtx) << "ptx result " << Name(op.result(r))
                     << " must be a scalar or vector, got "
                     << op.result(r)->type().ToString();
    }
  }
  const absl::string_view text = op.text();
  if (absl::StripAsciiWhitespace(text).empty()) {
    Fail(op, kPtx) << "ptx text is empty";
    return;
  }
  int placeholders = op.num_results() + inputs;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '$' || !absl::ascii_isdigit(text[i + 1])) continue;
    int64_t number = 0;
    size_t j = i + 1;
    while (j < text.size() && absl::ascii_isdigit(text[j]) && number < 1000) {
      number = number * 10 + (text[j] - '0');
      ++j;
    }
    if (number >= placeholders) {
      Fail(op, kPtx) << "ptx text names $" << number << " but has only "
                     << Plural(op.num_results(), "result") << " and "
                     << Plural(inputs, "input") << " ($0..$" << placeholders - 1
                     << ")";
      return;
    }
    i = j - 1;
  }
}

void Verifier::CheckAlloc(const Op& op) {
  const Type& type = op.result()->type();
  const MemorySpace space =
      op.kind() == OpKind::kAllocShared ? MemorySpace::kShared
      : op.kind() == OpKind::kAllocReg  ? MemorySpace::kRegister
                                        : MemorySpace::kGlobal;
  if (!type.is_buffer() || type.space() != space) {
    Fail(op, kAllocType) << op.mnemonic() << " must return a "
                         << MemorySpaceName(space) << " buffer, got "
                         << type.ToString();
    return;
  }
  if (type.dtype() == DType::kMbarrier && space != MemorySpace::kShared) {
    Fail(op, kAllocType) << "mbarriers live in shared memory, not in "
                         << MemorySpaceName(space);
  }
  for (int d = 0; d < type.rank(); ++d) {
    std::optional<int64_t> extent = type.shape()[d].AsConstant();
    if (!extent && space == MemorySpace::kGlobal) continue;
    if (!extent || *extent < 1) {
      Fail(op, kAllocType) << op.mnemonic() << " dimension " << d
                           << " must be a positive constant, got "
                           << type.shape()[d].ToString();
      return;
    }
  }

  if (op.kind() == OpKind::kAllocReg) {
    bool overflow = false;
    std::optional<int64_t> bytes = StaticBytes(type, 0, &overflow);
    if (overflow || (bytes && *bytes > kLocalMemoryPerThread)) {
      Fail(op, kAllocType) << "alloc.reg needs " << BytesText(bytes)
                           << " per thread, more than the "
                           << kLocalMemoryPerThread
                           << " bytes of local memory (where registers "
                              "spill) a thread can have";
    }
    return;
  }
  int64_t align = op.align();
  if (!IsPowerOfTwo(align) || align < DTypeBytes(type.dtype())) {
    Fail(op, kAllocAttrs) << op.mnemonic()
                          << " align must be a power of two of at least "
                          << DTypeBytes(type.dtype()) << " bytes, got "
                          << align;
    return;
  }
  if (op.kind() != OpKind::kAllocShared) return;
  int64_t swizzle = op.swizzle();
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128) {
    Fail(op, kAllocAttrs) << "alloc.shared swizzle must be 0, 32, 64 or 128 "
                             "bytes, got "
                          << swizzle;
  }
  if (op.pad() < 0) {
    Fail(op, kAllocAttrs) << "alloc.shared pad must not be negative, got "
                          << op.pad();
  }
  if (const std::optional<int64_t> offset = op.offset()) {
    if (*offset < 0 || *offset % align != 0) {
      Fail(op, kAllocAttrs)
          << "alloc.shared offset " << *offset
          << " must be a non-negative multiple of its align " << align;
    }
  }
  const bool mbarrier_ring =
      type.dtype() == DType::kMbarrier && type.rank() == 1;
  const bool data_ring = type.dtype() != DType::kMbarrier && type.rank() >= 2;
  if (op.ring() && !mbarrier_ring && !data_ring) {
    Fail(op, kAllocAttrs) << "alloc.shared ring needs data with a leading "
                             "stage dimension (rank 2 or more) or one "
                             "mbarrier per stage (rank 1), got "
                          << type.ToString();
  }
}

// The shared allocation `buffer` comes from, or null.
const Op* SharedAlloc(const Value* buffer) {
  const Op* op = buffer->defining_op();
  if (op == nullptr || op->kind() != OpKind::kAllocShared) return nullptr;
  return op;
}

void Verifier::CheckTma(const Op& op) {
  const bool load = op.kind() == OpKind::kTmaLoad;
  const Value* map_value = op.operand_value(load ? 1 : 0);
  const Value* smem = op.operand_value(load ? 0 : 1);
  const Param* map = kernel_.FindParam(map_value);
  const Op* alloc = SharedAlloc(smem);
  if (map == nullptr || map->kind != Param::Kind::kTensorMap ||
      !map_value->type().is_tensor_map() || alloc == nullptr) {
    return;  // reported by CheckSpaces
  }
  DType dtype = map_value->type().dtype();
  if (smem->type().dtype() != dtype) {
    Fail(op, kTmaShared) << op.mnemonic() << " moves " << DTypeName(dtype)
                         << " elements of " << Name(map_value) << " but "
                         << Name(smem) << " holds "
                         << DTypeName(smem->type().dtype());
  }
  int64_t swizzle = alloc->swizzle();
  if (swizzle != map->swizzle) {
    (Fail(op, kTmaShared) << op.mnemonic() << " tensor map " << Name(map_value)
                          << " has " << map->swizzle << "-byte swizzle but "
                          << Name(smem) << " has " << swizzle
                          << "-byte swizzle")
        .Note(alloc->loc(), absl::StrCat(Name(smem), " allocated here"));
  }
  int64_t required = map->swizzle == 0 ? 128 : 8 * int64_t{map->swizzle};
  int64_t align = alloc->align();
  if (align < required) {
    (
        Fail(op, kTmaShared)
        << op.mnemonic() << " shared " << SlotName(op.kind(), load ? 0 : 1)
        << " " << Name(smem) << " must be aligned to " << required << " bytes"
        << (map->swizzle ? absl::StrCat(" for ", map->swizzle, "-byte swizzle")
                         : std::string())
        << ", got align " << align)
        .Note(alloc->loc(), absl::StrCat(Name(smem), " allocated here"));
  }
  if (op.kind() == OpKind::kTmaReduce) {
    const CombineOp reduction = op.op();
    std::vector<DType> supported =
        reduction == CombineOp::kAdd
            ? std::vector<DType>{DType::kI32, DType::kI64, DType::kIndex,
                                 DType::kF32, DType::kF16, DType::kBF16}
            : std::vector<DType>{DType::kI32, DType::kI64, DType::kIndex,
                                 DType::kF16, DType::kBF16};
    if (std::find(supported.begin(), supported.end(), dtype) ==
        supported.end()) {
      Fail(op, kTmaShared) << "tma.reduce " << EnumName(reduction)
                           << " does not support " << DTypeName(dtype)
                           << " elements";
    }
  }
  if (const std::optional<int64_t> multicast = op.multicast()) {
    int64_t ctas = BoundedVolume(kernel_.cluster, 1024).value_or(1);
    if (ctas > 16) {
      // An oversized cluster is reported by V49.
    } else if (ctas <= 1) {
      Fail(op, kTmaShared) << "tma.load multicast needs a cluster of more "
                              "than one CTA, got "
                           << ctas;
    } else if (*multicast < 1 || *multicast >= (int64_t{1} << ctas)) {
      Fail(op, kTmaShared) << "tma.load multicast mask " << *multicast
                           << " must name CTAs of a " << ctas
                           << "-CTA cluster (1.." << (int64_t{1} << ctas) - 1
                           << ")";
    }
  }
}

void Verifier::CheckBarrierReduction(const Op& op) {
  const Type& value = op.operand_value(0)->type();
  if (!value.is_scalar(DType::kI1)) {
    Fail(op, kBarrierReduction)
        << "barrier.red takes an i1 predicate, got " << value.ToString();
  }
  const bool count = op.op() == CombineOp::kPopc;
  const DType want = count ? DType::kI32 : DType::kI1;
  if (!op.result()->type().is_scalar(want)) {
    Fail(op, kBarrierReduction)
        << "barrier.red " << EnumName(op.op()) << " returns "
        << (count ? "i32 (how many participants voted true)"
                  : "i1 like its predicate")
        << ", got " << op.result()->type().ToString();
  }
}

// V53's rank rules, for mbarrier.arrive_remote and store.remote.
void Verifier::CheckRemoteRank(const Op& op) {
  const Type& rank = op.operand_value(RemoteRankSlot(op))->type();
  if (!rank.is_index() && !rank.is_integer_scalar()) {
    Fail(op, kRemoteArrive)
        << op.mnemonic() << " CTA rank must be index or an integer scalar, got "
        << rank.ToString();
  }
  const int64_t ctas = BoundedVolume(kernel_.cluster, 1024).value_or(1);
  if (ctas > 16) return;  // an oversized cluster is reported by V49
  if (ctas <= 1) {
    Fail(op, kRemoteArrive)
        << op.mnemonic() << " needs a cluster of more than one CTA, got "
        << ctas;
    return;
  }
  if (const std::optional<RankOutsideCluster> outside =
          RemoteRankOutsideCluster(kernel_, op)) {
    Fail(op, kRemoteArrive)
        << op.mnemonic() << " CTA rank " << outside->rank << " is not in a "
        << outside->ctas << "-CTA cluster (0.." << outside->ctas - 1 << ")";
  }
}

// store.remote: st.async moves 4, 8 or 16 bytes of 32-bit elements into a
// peer CTA's shared memory.
void Verifier::CheckStoreRemote(const Op& op) {
  const Type& buffer = op.operand_value(0)->type();
  const Type& value = op.operand_value(1)->type();
  if (buffer.is_buffer() && buffer.space() != MemorySpace::kShared) {
    Fail(op, kRemoteArrive) << "store.remote destination must be shared "
                               "memory, got "
                            << buffer.ToString();
  }
  const DType dtype = value.dtype();
  const int lanes = value.lanes();
  if ((dtype != DType::kF32 && dtype != DType::kI32) ||
      (lanes != 1 && lanes != 2 && lanes != 4)) {
    Fail(op, kRemoteArrive) << "store.remote stores f32 or i32, a scalar or a "
                               "vector of 2 or 4, got "
                            << value.ToString();
  } else if (buffer.is_buffer() && buffer.dtype() != dtype) {
    Fail(op, kRemoteArrive)
        << "store.remote value " << value.ToString()
        << " does not match the destination's elements " << buffer.ToString();
  }
  CheckRemoteRank(op);
}

void Verifier::CheckCopySize(const Op& op) {
  const Type& destination = op.operand_value(0)->type();
  const Type& source = op.operand_value(1)->type();
  int64_t bytes = op.bytes();
  if (op.kind() == OpKind::kCpAsync) {
    if (bytes != 4 && bytes != 8 && bytes != 16) {
      Fail(op, kCopySize) << "cp.async copies 4, 8 or 16 bytes, got " << bytes;
    }
  } else if (bytes < 16 || bytes % 16 != 0) {
    Fail(op, kCopySize) << op.mnemonic()
                        << " bytes must be a positive multiple of 16, got "
                        << bytes;
  }
  if (destination.is_buffer() && source.is_buffer() &&
      destination.dtype() != source.dtype() &&
      destination.dtype() != DType::kMbarrier &&
      source.dtype() != DType::kMbarrier) {
    Fail(op, kCopySize) << op.mnemonic() << " copies between buffers of one "
                        << "element type, got "
                        << DTypeName(destination.dtype()) << " <- "
                        << DTypeName(source.dtype());
  }
}

void Verifier::CheckWgmma(const Op& op) {
  const Type& accumulator = op.operand_value(0)->type();
  const Type& a = op.operand_value(1)->type();
  const Type& b = op.operand_value(2)->type();
  int64_t n = op.n();
  if (n < 8 || n > 256 || n % 8 != 0) {
    Fail(op, kWgmma) << "wgmma n must be a multiple of 8 in 8..256, got " << n;
  }
  if (a.dtype() != b.dtype() || !IsSixteenBit(a.dtype())) {
    Fail(op, kWgmma) << "wgmma A and B must both be f16 or both bf16, got "
                     << DTypeName(a.dtype()) << " and " << DTypeName(b.dtype());
  } else if (accumulator.dtype() != DType::kF32 &&
             !(accumulator.dtype() == DType::kF16 &&
               a.dtype() == DType::kF16)) {
    Fail(op, kWgmma) << "wgmma accumulator must be f32"
                     << (a.dtype() == DType::kF16 ? " or f16" : "") << ", got "
                     << DTypeName(accumulator.dtype());
  }
  if (a.is_buffer() && a.space() == MemorySpace::kRegister &&
      op.a_major() != Major::kK) {
    Fail(op, kWgmma) << "wgmma A from registers must be K-major, got a_major = "
                     << EnumName(op.a_major());
  }
  if (op.num_operands() > 3) {
    const Type& zero = op.operand_value(3)->type();
    if (!zero.is_scalar(DType::kI1)) {
      Fail(op, kWgmma) << "wgmma zero-init predicate must be i1, got "
                       << zero.ToString();
    } else if (op.zero_init()) {
      Fail(op, kWgmma) << "wgmma takes a zero-init predicate or the zero_init "
                          "flag, not both";
    }
  }
}

// ---------------------------------------------------------------------------
// Rules over several ops.

void Verifier::CheckSharedBudget() {
  // A placed allocation ends inside the block's shared memory, at the same
  // bytes (alignment and `pad` included) the emitter uses. Before
  // plan-shared-memory has placed it, it must at least fit alone: whether
  // all fit together depends on which may share bytes, which the planner
  // decides (and reports, naming what is live at its peak).
  std::vector<const Op*> allocations;
  for (const Op* op : rare_ops_) {
    if (op->kind() == OpKind::kAllocShared) allocations.push_back(op);
  }
  for (const SharedPlacement& placed :
       LayoutWithoutReuse(allocations).placements) {
    const Value* buffer = placed.alloc->result();
    if (placed.explicit_offset) {
      // Both are at most kSaturated, so the sum does not overflow.
      const int64_t end = std::min(placed.offset, kSaturated) + placed.bytes;
      if (end > kSharedMemoryLimit) {
        Fail(*placed.alloc, kSharedBudget)
            << Name(buffer) << " at offset " << placed.offset << " ends "
            << (end >= kSaturated ? std::string("past byte 2^62")
                                  : absl::StrCat("at byte ", end))
            << ", past the " << kSharedMemoryLimit << " bytes a block can use";
      }
    } else if (placed.bytes > kSharedMemoryLimit) {
      Fail(*placed.alloc, kSharedBudget)
          << Name(buffer) << " needs " << SaturatedBytesText(placed.bytes)
          << ", more than the " << kSharedMemoryLimit
          << " bytes (227 KiB) a block can use";
    }
  }
}

void Verifier::CheckCircularBufferMarker(const Op& loop) {
  const CircularBufferMode mode = loop.circular_buffer();
  const std::pair<const char*, bool> marker_attrs[] = {
      {"stages", loop.has_stages()},
      {"prefetch", loop.has_prefetch()},
      {"producer", loop.has_producer()},
      {"producer_regs", loop.has_producer_regs()},
      {"consumer_regs", loop.has_consumer_regs()},
      {"pingpong", loop.has_pingpong()}};
  if (mode == CircularBufferMode::kNone) {
    for (const auto& [name, present] : marker_attrs) {
      if (present) {
        Fail(loop, kCircularBufferMarker)
            << "'" << name
            << "' needs 'circular_buffer = pipelined | warp_specialized' on "
               "the loop";
        return;
      }
    }
    return;
  }
  const std::optional<int64_t> stages = loop.stages();
  if (!stages.has_value()) {
    Fail(loop, kCircularBufferMarker)
        << "a loop marked for circular buffering needs 'stages'";
  } else if (*stages < 1 || *stages > 16) {
    Fail(loop, kCircularBufferMarker)
        << "stages must be in 1..16, got " << *stages;
  }
  if (const std::optional<int64_t> prefetch = loop.prefetch()) {
    if (mode != CircularBufferMode::kPipelined) {
      Fail(loop, kCircularBufferMarker)
          << "'prefetch' applies to pipelined mode; in warp_specialized mode "
             "the producer runs up to 'stages' iterations ahead";
    } else if (stages.has_value() && (*prefetch < 0 || *prefetch >= *stages)) {
      Fail(loop, kCircularBufferMarker)
          << "prefetch must be in 0.." << *stages - 1
          << " (less than stages), got " << *prefetch;
    }
  }
  if (mode == CircularBufferMode::kPipelined) {
    // Every marker attribute but stages and prefetch.
    for (const auto& [name, present] :
         absl::MakeSpan(marker_attrs).subspan(2)) {
      if (present) {
        Fail(loop, kCircularBufferMarker)
            << "'" << name << "' applies to warp_specialized mode only";
      }
    }
  }
  const std::pair<const char*, std::optional<int64_t>> regs_attrs[] = {
      {"producer_regs", loop.producer_regs()},
      {"consumer_regs", loop.consumer_regs()}};
  for (const auto& [name, regs] : regs_attrs) {
    if (!regs.has_value()) continue;
    if (*regs < 24 || *regs > 256 || *regs % 8 != 0) {
      Fail(loop, kCircularBufferMarker)
          << name << " must be a multiple of 8 in 24..256, got " << *regs;
    } else if (loop.producer() == ProducerKind::kWarp) {
      Fail(loop, kCircularBufferMarker)
          << name
          << " needs producer = warpgroup (a producer warp cannot run "
             "setmaxnreg)";
    }
  }
  for (const Op* outer = loop.parent_op(); outer != nullptr;
       outer = outer->parent_op()) {
    if (outer->kind() == OpKind::kFor &&
        outer->circular_buffer() != CircularBufferMode::kNone) {
      (Fail(loop, kCircularBufferMarker)
       << "a loop marked for circular buffering cannot be nested in another "
          "marked loop")
          .Note(outer->loc(), "the enclosing marked loop");
      break;
    }
  }
}

void Verifier::CheckRoles() {
  absl::flat_hash_map<std::string, const Op*> by_name;
  for (const Op* op : rare_ops_) {
    if (op->kind() != OpKind::kRole) continue;
    const Op& role = *op;
    int64_t begin = role.warp_begin();
    int64_t end = role.warp_end();
    if (block_threads_ && *block_threads_ % 32 != 0) {
      Fail(role, kRoleRange) << "role " << RoleName(role)
                             << " needs a block of whole warps, but the block "
                                "has "
                             << *block_threads_ << " threads";
    } else if (begin < 0 || begin >= end) {
      Fail(role, kRoleRange)
          << "role " << RoleName(role)
          << " must cover a non-empty warp range, got " << RoleWarps(role);
    } else if (block_threads_ && end > *block_threads_ / 32) {
      Fail(role, kRoleRange)
          << "role " << RoleName(role) << " " << RoleWarps(role)
          << " ends past the block's " << Plural(*block_threads_ / 32, "warp");
    }
    if (const Op* outer = role.EnclosingOp(OpKind::kRole)) {
      (Fail(role, kRoleNesting) << "role " << RoleName(role)
                                << " is nested in role " << RoleName(*outer))
          .Note(outer->loc(), "the enclosing role");
    }
    // Earlier roles in the same region must not share a warp with this one.
    const Region* region = role.parent_region();
    for (int i = 0; region != nullptr && &region->op(i) != &role; ++i) {
      const Op& sibling = region->op(i);
      if (sibling.kind() != OpKind::kRole) continue;
      if (begin < sibling.warp_end() && sibling.warp_begin() < end) {
        (Fail(role, kRoleOverlap)
         << "role " << RoleName(role) << " " << RoleWarps(role)
         << " overlaps role " << RoleName(sibling) << " " << RoleWarps(sibling))
            .Note(sibling.loc(), "the other role");
        break;
      }
    }
    auto [it, inserted] = by_name.emplace(role.name(), &role);
    if (!inserted) {
      (Fail(role, kRoleNames)
       << "role name " << RoleName(role) << " is already used")
          .Note(it->second->loc(), "first used here");
    }
  }
}

void Verifier::CheckSetMaxNReg() {
  // Per role with setmaxnreg, the largest count it asks for, in program
  // order of the roles.
  std::vector<std::pair<const Op*, int64_t>> role_regs;
  const Op* first_inc = nullptr;
  std::vector<const Op*> dec_roles;
  for (const Op* op : rare_ops_) {
    if (op->kind() != OpKind::kSetMaxNReg) continue;
    const Op* role = op->EnclosingOp(OpKind::kRole);
    if (!block_threads_) {
      Fail(*op, kSetMaxNRegPlacement)
          << "setmaxnreg needs a constant block shape, so that the kernel "
             "gets a launch bound; got block("
          << kernel_.block.x.ToString() << ", " << kernel_.block.y.ToString()
          << ", " << kernel_.block.z.ToString() << ")";
      continue;
    }
    if (role == nullptr) {
      Fail(*op, kSetMaxNRegPlacement)
          << "setmaxnreg must be inside a role of whole warpgroups";
      continue;
    }
    int64_t begin = role->warp_begin();
    int64_t end = role->warp_end();
    if (begin < 0 || end <= begin || end > *block_threads_ / 32) {
      continue;  // a broken role, reported by V39
    }
    if (begin % 4 != 0 || (end - begin) % 4 != 0) {
      (Fail(*op, kSetMaxNRegPlacement)
       << "setmaxnreg must be inside a role of whole warpgroups, but "
          "role "
       << RoleName(*role) << " runs " << RoleWarps(*role))
          .Note(role->loc(), "the role");
      continue;
    }
    // Counts out of range are reported by V36 and left out of the budget.
    int64_t regs = std::clamp<int64_t>(op->regs(), 0, 256);
    auto it =
        std::find_if(role_regs.begin(), role_regs.end(),
                     [&](const auto& entry) { return entry.first == role; });
    if (it == role_regs.end()) {
      role_regs.push_back({role, regs});
    } else {
      it->second = std::max(it->second, regs);
    }
    if (op->action() == RegisterAction::kInc) {
      if (first_inc == nullptr) first_inc = op;
    } else if (std::find(dec_roles.begin(), dec_roles.end(), role) ==
               dec_roles.end()) {
      dec_roles.push_back(role);
    }
  }
  if (role_regs.empty() || !block_threads_) return;

  if (first_inc != nullptr) {
    const Op* inc_role = first_inc->EnclosingOp(OpKind::kRole);
    bool other_dec =
        std::any_of(dec_roles.begin(), dec_roles.end(),
                    [&](const Op* role) { return role != inc_role; });
    if (!other_dec) {
      Fail(*first_inc, kRegisterBudget)
          << "setmaxnreg inc in role " << RoleName(*inc_role)
          << " can only take registers that another role released, but no "
             "other role runs setmaxnreg dec";
    }
  }

  // Threads outside the roles above keep the launch-bound share.
  int64_t role_threads = 0;
  int64_t total = 0;
  std::vector<std::string> terms;
  for (const auto& [role, regs] : role_regs) {
    int64_t threads = 32 * (role->warp_end() - role->warp_begin());
    role_threads += threads;
    total += regs * threads;
    terms.push_back(absl::StrCat(RoleName(*role), " ", regs, " x ", threads));
  }
  int64_t others = *block_threads_ - role_threads;
  if (others > 0) {
    int64_t share =
        std::min<int64_t>(256, kRegisterFileSize / *block_threads_ / 8 * 8);
    total += share * others;
    terms.push_back(absl::StrCat("other threads ", share, " x ", others));
  }
  if (total > kRegisterFileSize) {
    const Op* last = role_regs.back().first;
    Fail(*last, kRegisterBudget)
        << "roles ask for " << total << " registers ("
        << absl::StrJoin(terms, " + ") << "), more than the "
        << kRegisterFileSize << " of an SM";
  }
}

void Verifier::CheckNamedBarriers() {
  std::vector<const Op*> first_use(16, nullptr);
  for (const Op* op : rare_ops_) {
    if (op->kind() != OpKind::kBarrierNamed &&
        op->kind() != OpKind::kBarrierArrive &&
        op->kind() != OpKind::kBarrierRed) {
      continue;
    }
    int64_t id = op->id();
    if (id < 1 || id > 15) continue;  // reported by CheckOp
    const Op*& first = first_use[id];
    if (first == nullptr) {
      first = op;
    } else if (first->threads() != op->threads()) {
      (Fail(*op, kNamedBarrierCounts)
       << op->mnemonic() << " " << id << " counts " << op->threads()
       << " threads, but barrier " << id << " is used with " << first->threads()
       << " threads before")
          .Note(first->loc(), "first use");
    }
  }
}

// ---------------------------------------------------------------------------
// Rules that need the thread analysis (V31-V35, V45, V46).

void Verifier::CheckWithThreadAnalysis() {
  // The analysis costs time in proportion to the kernel; skip it when no op
  // is subject to these rules.
  if (std::none_of(rare_ops_.begin(), rare_ops_.end(),
                   [](const Op* op) { return NeedsThreadAnalysis(*op); })) {
    return;
  }
  std::unique_ptr<ThreadAnalysis> own;
  if (analyses_ == nullptr) own = std::make_unique<ThreadAnalysis>(kernel_);
  const ThreadAnalysis& analysis =
      own != nullptr ? *own : analyses_->Get<ThreadAnalysis>();
  for (size_t i = 0; i < rare_ops_.size(); ++i) {
    const Op* op = rare_ops_[i];
    if (IsCommit(op->kind())) {
      CheckCommitThreads(analysis, *op, rare_positions_[i]);
    }
    if (IsWait(op->kind())) CheckWaitThreads(analysis, *op);
    CheckExecution(analysis, *op);
  }
}

void Verifier::CheckCommitThreads(const ThreadAnalysis& analysis,
                                  const Op& commit, int position) {
  // The group's ops: those of the commit's completion kind between the
  // previous commit of its kind and this one, in program order (wherever
  // they are nested; loop back edges are not followed).
  const Completion completion = GroupCompletion(GroupTokenKind(commit.kind()));
  std::vector<const Op*> issuers;
  for (int i = position - 1; i >= 0; --i) {
    const Op* op = ops_[i];
    if (op->kind() == commit.kind()) break;
    if (FactsOf(op->kind()).completion == completion) issuers.push_back(op);
  }
  std::reverse(issuers.begin(), issuers.end());
  const ThreadSet& committing = analysis.ExecutingThreads(commit);
  if (!committing.known()) return;
  for (const Op* issuer : issuers) {
    const ThreadSet& issuing = analysis.ExecutingThreads(*issuer);
    // An op that runs in no thread (under a condition that is never true)
    // issues nothing to commit.
    if (!issuing.known() || issuing == committing || issuing.Count() == 0) {
      continue;
    }
    (Fail(commit, kCommitThreads)
     << commit.mnemonic() << " runs in " << DescribeThreads(committing)
     << " but the " << issuer->mnemonic() << " it commits runs in "
     << DescribeThreads(issuing)
     << "; groups are per thread, so the issuing threads must commit")
        .Note(issuer->loc(), absl::StrCat(issuer->mnemonic(), " issued here"));
    return;
  }
}

void Verifier::CheckWaitThreads(const ThreadAnalysis& analysis,
                                const Op& wait) {
  const ThreadSet& waiting = analysis.ExecutingThreads(wait);
  // A wait that runs in no thread waits for nothing.
  if (!waiting.known() || waiting.Count() == 0) return;
  for (int i = 0; i < wait.num_operands(); ++i) {
    const Op* commit = wait.operand_value(i)->defining_op();
    if (commit == nullptr) continue;
    const ThreadSet& committing = analysis.ExecutingThreads(*commit);
    // Nor does one wait for a commit that runs in no thread.
    if (!committing.known() || committing == waiting ||
        committing.Count() == 0) {
      continue;
    }
    (Fail(wait, kWaitThreads)
     << wait.mnemonic() << " runs in " << DescribeThreads(waiting) << " but "
     << Name(wait.operand_value(i)) << " was committed by "
     << DescribeThreads(committing)
     << "; only the committing threads can wait for their groups")
        .Note(commit->loc(), "committed here");
    return;
  }
}

void Verifier::CheckExecution(const ThreadAnalysis& analysis, const Op& op) {
  const ExecClass exec = FactsOf(op.kind()).exec;
  const Op* culprit = nullptr;
  auto note_culprit = [&](InFlightDiagnostic& diagnostic, Scope scope) {
    if (culprit != nullptr) {
      diagnostic.Note(
          culprit->loc(),
          absl::StrCat("this condition is not ", ScopeName(scope), "-uniform"));
    }
  };
  switch (exec) {
    case ExecClass::kWarpCollective:
      if (!analysis.GuardsUniformOver(op, Scope::kWarp, &culprit)) {
        note_culprit(Fail(op, kWarpCollective)
                         << op.mnemonic()
                         << " is warp-collective: all 32 lanes of a warp must "
                            "run it together, but a condition around it may "
                            "differ between lanes",
                     Scope::kWarp);
      }
      break;
    case ExecClass::kWarpgroupCollective: {
      const bool uniform =
          analysis.GuardsUniformOver(op, Scope::kWarpgroup, &culprit);
      const Op* role = op.EnclosingOp(OpKind::kRole);
      const bool role_splits_warpgroups =
          role != nullptr && (role->warp_begin() % 4 != 0 ||
                              (role->warp_end() - role->warp_begin()) % 4 != 0);
      if (role_splits_warpgroups) {
        (Fail(op, kWarpgroupCollective)
         << op.mnemonic() << " runs in role " << RoleName(*role) << " ("
         << RoleWarps(*role) << "), which is not made of whole warpgroups")
            .Note(role->loc(), "the role");
      } else if (!uniform) {
        note_culprit(Fail(op, kWarpgroupCollective)
                         << op.mnemonic()
                         << " is warpgroup-collective: all 128 threads of a "
                            "warpgroup must run it together, but a condition "
                            "around it may differ between them",
                     Scope::kWarpgroup);
      } else if (role == nullptr && block_threads_ &&
                 *block_threads_ % 128 != 0) {
        Fail(op, kWarpgroupCollective)
            << op.mnemonic() << " needs whole warpgroups, but the block has "
            << *block_threads_ << " threads, not a multiple of 128";
      }
      break;
    }
    case ExecClass::kSingleIssue:
      if (!analysis.IsSingleThread(op)) {
        const ThreadSet& threads = analysis.ExecutingThreads(op);
        std::string where;
        if (!threads.known()) {
          where = "no condition around it is known to select one thread";
        } else if (analysis.IsElectedPerWarp(op)) {
          // An election picks one lane in each warp that reaches it.
          where = absl::StrCat("it may run in one elected lane of each of ",
                               DescribeWarps(threads));
        } else {
          where = absl::StrCat("it may run in ", DescribeThreads(threads));
        }
        Fail(op, kSingleIssue)
            << op.mnemonic() << " must be issued by one thread, but " << where;
      }
      break;
    default:
      break;
  }
  // Within a role, "uniform over the role" is "uniform over the block": a
  // role around barrier.block must cover the whole block (checked above).
  if (op.kind() == OpKind::kBarrierBlock &&
      !analysis.GuardsUniformOver(op, Scope::kRole, &culprit)) {
    note_culprit(Fail(op, kBlockBarrier)
                     << "barrier.block must be reached by every thread of the "
                        "block, but a condition around it may differ between "
                        "them",
                 Scope::kBlock);
  }
  if ((op.kind() == OpKind::kBarrierNamed ||
       op.kind() == OpKind::kBarrierArrive ||
       op.kind() == OpKind::kBarrierRed) &&
      exec != ExecClass::kWarpCollective &&
      !analysis.GuardsUniformOver(op, Scope::kWarp, &culprit)) {
    note_culprit(Fail(op, kNamedBarrierUniform)
                     << op.mnemonic()
                     << " runs in whole warps, but a condition around it may "
                        "differ between lanes",
                 Scope::kWarp);
  }
}

}  // namespace

absl::Status Verify(const Kernel& kernel) {
  return Verifier(kernel, nullptr).Run();
}

absl::Status Verify(const Kernel& kernel, AnalysisManager& analyses) {
  return Verifier(kernel, &analyses).Run();
}

absl::Status Verify(const Module& module) {
  std::vector<absl::Status> statuses;
  for (const auto& kernel : module.kernels) {
    statuses.push_back(Verify(*kernel));
  }
  return JoinStatuses(statuses);
}

int RemoteRankSlot(const Op& op) {
  switch (op.kind()) {
    case OpKind::kMbarrierArriveRemote:
      return 1;
    case OpKind::kStoreRemote:
      return 3;
    default:
      return -1;
  }
}

std::optional<RankOutsideCluster> RemoteRankOutsideCluster(const Kernel& kernel,
                                                           const Op& op) {
  if (RemoteRankSlot(op) < 0) return std::nullopt;
  const int64_t ctas = BoundedVolume(kernel.cluster, 1024).value_or(1);
  // A cluster of one CTA or of more than 16 is reported by other rules.
  if (ctas <= 1 || ctas > 16) return std::nullopt;
  const std::optional<int64_t> rank =
      IntegerConstant(op.operand_value(RemoteRankSlot(op)));
  if (!rank || (*rank >= 0 && *rank < ctas)) return std::nullopt;
  return RankOutsideCluster{*rank, ctas};
}

}  // namespace kir
