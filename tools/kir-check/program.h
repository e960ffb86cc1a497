// A kernel prepared for the interpreter: every value gets a slot in a
// thread's lane array, every op a record with its operands resolved, every
// buffer and tensor map a number, and shared allocations their addresses.
//
// The meaning of each op kind (who executes it, what it touches) is decided
// here and in machine.cc from the PTX ISA; nothing is taken from the
// passes' effects table. An op kind without a meaning here is a located
// error when the kernel is prepared, never a silent no-op.
#ifndef KIR_TOOLS_KIR_CHECK_PROGRAM_H_
#define KIR_TOOLS_KIR_CHECK_PROGRAM_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "tools/kir-check/layout.h"

namespace kir::check {

// Who executes one instance of an op (from PTX's `.aligned` and issue
// rules, and ir/language.md "Who executes an op").
enum class Exec {
  kThread,     // each executing thread on its own
  kSingle,     // each executing thread on its own, but meant to be issued
               // by one thread per instance: a second issuer is a hazard
  kWarp,       // `.aligned` over the 32 lanes of a warp
  kWarpgroup,  // `.aligned` over the 128 threads of a warpgroup
  kBarrier,    // a barrier: each thread arrives; `.aligned` per warp
  kControl,    // for, if, role, splitk, return
};

struct BufferRec {
  const Value* value = nullptr;
  int id = 0;
  MemorySpace space = MemorySpace::kGlobal;
  DType dtype = DType::kF32;
  bool is_param = false;              // a tensor parameter
  bool is_workspace = false;          // alloc.workspace
  const Op* alloc = nullptr;          // the allocating op, if any
  SharedLayout shared;                // kShared: where it lives
  std::vector<int64_t> static_shape;  // kShared, kRegister
};

struct TensorMapRec {
  const Param* param = nullptr;
  int id = 0;
  int tensor = 0;  // BufferRec id of the tensor
  DType dtype = DType::kF32;
  std::vector<int64_t> box;
  int swizzle = 0;
  bool oob_nan = false;
};

struct RegionRec;

struct OpRec {
  const Op* op = nullptr;
  OpKind kind = OpKind::kConst;
  int id = 0;  // dense, program order
  Exec exec = Exec::kThread;
  // Per operand slot: the lane-array offset of a value operand, or the
  // BufferRec / TensorMapRec id of a buffer or map operand (`is_buffer`).
  std::vector<int> operand;
  std::vector<bool> is_map;
  std::vector<std::vector<int>> indices;  // lane offsets of index values
  std::vector<int> distance;              // token `@k`
  std::vector<int> result;                // lane offsets of the results
  // Element type and lane count of each operand (a buffer's element type)
  // and of the first result.
  std::vector<DType> operand_dtype;
  std::vector<int> operand_lanes;
  DType result_dtype = DType::kI32;
  int result_lanes = 1;
  uint64_t constant = 0;  // `const`: the value's lane
  std::vector<std::unique_ptr<RegionRec>> regions;
  int loop_depth = 0;  // enclosing `for` loops
  // Decoded attributes used on the hot path.
  int64_t int_attr = 0;   // count, bytes, n, lane, regs, id ...
  int64_t int_attr2 = 0;  // threads, ...
  std::string str_attr;   // pred, mode, op, space, ...
  bool flag = false;      // zero_init, trans, read, relaxed
};

struct RegionRec {
  const Region* region = nullptr;
  const OpRec* owner = nullptr;  // null for the kernel body
  int index_in_owner = 0;        // then / else, body / epilogue
  int argument = -1;             // lane offset of the loop variable
  std::vector<std::unique_ptr<OpRec>> ops;
};

struct ValueSlot {
  int offset = 0;
  int lanes = 1;
  DType dtype = DType::kI32;
};

class Program {
 public:
  // Prepares `kernel`; errors are located (an unmodeled op, raw PTX, a
  // shared layout that does not fit).
  static absl::StatusOr<std::unique_ptr<Program>> Create(const Kernel& kernel);

  const Kernel& kernel() const { return *kernel_; }
  const RegionRec& body() const { return *body_; }
  int lane_count() const { return lane_count_; }
  const std::vector<BufferRec>& buffers() const { return buffers_; }
  const std::vector<TensorMapRec>& maps() const { return maps_; }
  int64_t shared_bytes() const { return shared_bytes_; }
  // Smallest element size among shared allocations (the shadow granule).
  int shared_granule() const { return shared_granule_; }
  const std::vector<const OpRec*>& ops() const { return ops_; }
  int max_token_distance() const { return max_token_distance_; }

  const ValueSlot* SlotOf(const Value* value) const;
  int BufferOf(const Value* value) const;  // -1 if not a buffer
  const OpRec* RecordOf(const Op* op) const;

 private:
  Program() = default;
  absl::Status Prepare(const Kernel& kernel);
  absl::Status AddRegion(const Region& region, const OpRec* owner, int index,
                         int loop_depth, RegionRec& out);
  absl::Status AddOp(const Op& op, int loop_depth, OpRec& out);
  void AddValue(const Value* value);
  absl::Status PlanShared();

  const Kernel* kernel_ = nullptr;
  std::unique_ptr<RegionRec> body_;
  int lane_count_ = 0;
  absl::flat_hash_map<const Value*, ValueSlot> slots_;
  absl::flat_hash_map<const Value*, int> buffer_ids_;
  absl::flat_hash_map<const Value*, int> map_ids_;
  absl::flat_hash_map<const Op*, const OpRec*> records_;
  std::vector<BufferRec> buffers_;
  std::vector<TensorMapRec> maps_;
  std::vector<const OpRec*> ops_;
  int64_t shared_bytes_ = 0;
  int shared_granule_ = 8;
  int max_token_distance_ = 0;
};

// Whether `kind` is lane-wise arithmetic (add ... fma, not, neg, abs, exp,
// sqrt, min, max, and, or, xor, shl, shr): Arithmetic() in values.h.
bool IsArithmetic(OpKind kind);

// Execution class of an op kind; nullopt when the interpreter does not
// model the kind.
std::optional<Exec> ExecOf(OpKind kind);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_PROGRAM_H_
