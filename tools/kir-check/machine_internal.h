// The interpreter's state and its Machine class, shared by machine.cc (the
// schedulers, memory and hazard tracking) and machine_ops.cc (what each op
// does). Not part of the library's interface.
#ifndef KIR_TOOLS_KIR_CHECK_MACHINE_INTERNAL_H_
#define KIR_TOOLS_KIR_CHECK_MACHINE_INTERNAL_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "tools/kir-check/machine.h"
#include "tools/kir-check/values.h"
#include "tools/kir-check/vclock.h"

namespace kir::check {

// A buffer index or coordinate tuple, outermost first.
using Index = absl::InlinedVector<int64_t, 6>;

// Who performs an access.
enum class Agent : uint8_t {
  kThread,
  kTmaLoad,
  kTmaStore,
  kTmaReduce,
  kBulkLoad,
  kBulkStore,
  kCpAsync,
  kWgmma,
  kStoreRemote,  // st.async into a peer CTA's shared memory (generic proxy)
};
const char* AgentName(Agent agent);
bool AgentIsAsyncProxy(Agent agent);

// One access as the shadow memory remembers it.
struct Access {
  Actor actor;
  uint32_t clock = 0;  // 0: no access
  const OpRec* op = nullptr;
  Agent agent = Agent::kThread;
  bool async_proxy = false;
  bool atomic = false;
  int32_t thread = -1;  // the accessing (or issuing) thread
  bool empty() const { return clock == 0; }
};

struct Cell {
  Access write;
  Access read;            // the last read, when read_set < 0
  int32_t read_set = -1;  // else an index into Machine::read_sets_
};

// A global buffer or one block's shared memory.
struct MemoryArea {
  MemorySpace space = MemorySpace::kGlobal;
  std::string name;                   // for messages
  int block = -1;                     // shared memory: its block
  int granule = 1;                    // bytes per shadow cell
  const BufferRec* buffer = nullptr;  // global: the buffer
  std::vector<uint8_t> data;          // the generic proxy's view
  std::vector<uint8_t> async_view;    // the async proxy's (adversarial)
  std::vector<Cell> cells;            // hazard tracking
  // Release sequences of atomics and semaphores, by cell.
  absl::flat_hash_map<int64_t, SyncClock> location_sync;
};

struct AccessCtx {
  Access access;
  const SyncClock* sync = nullptr;  // what the accessor has observed
};

struct Frame {
  const RegionRec* region = nullptr;
  int pc = 0;
  bool is_loop = false;
  int64_t iv = 0, hi = 0, step = 1;
  int64_t iteration = 0;
  int64_t instance = 0;  // this loop entry, for `%t@k`
};

enum class WaitState { kNone, kCollective, kBarrier, kPoll, kSplitK };

struct AsyncOp;

struct Group {
  int64_t id = 0;
  std::vector<AsyncOp*> ops;
};

// Commits of one token op in one thread, for `%t@k`.
struct TokenRecord {
  int64_t instance = -1;  // the loop entry the commit ran in
  int64_t iteration = 0;
  int64_t group = -1;
};

struct RegState {
  std::vector<Lane> lanes;
  // wgmma register rules: set by a generic access, cleared by wgmma.fence.
  std::vector<uint8_t> touched;
  // The wgmma (actor local id + 1) that last used each element; 0: none.
  std::vector<uint32_t> wgmma_actor;
};

struct Thread {
  int index = 0;  // in Machine::threads_
  int block = 0;
  int tid = 0;  // linear id in its block
  int warp = 0, lane = 0;
  int64_t xyz[3] = {0, 0, 0};
  std::vector<Lane> lanes;
  std::vector<Frame> frames;
  bool exited = false;
  WaitState wait = WaitState::kNone;
  int runnable_pos = -1;       // in Machine::runnable_, or -1
  std::vector<RegState> regs;  // per register buffer
  // Async groups: uncommitted ops and committed groups, per kind.
  std::vector<AsyncOp*> bulk_open, cp_async_open, wgmma_open;
  std::vector<Group> bulk_groups, cp_async_groups, wgmma_groups;
  absl::flat_hash_map<const OpRec*, std::deque<TokenRecord>> token_history;
  int64_t loop_instances = 0;
  // Hazard tracking.
  Actor actor;
  SyncClock sync;
  VClock pending_acquire;  // relaxed atomic reads, for fence.acq_rel
  std::unique_ptr<VClock> fence_release;  // the last fence.acq_rel
  std::vector<Actor> own_cp_async;        // cp.async copies this thread issued
  bool wgmma_fenced = false;              // a wgmma.fence ran in this thread
  int64_t cluster_arrived = -1;           // cluster barrier generation
  int64_t steps = 0;
  uint32_t Clock() const { return sync.happens.Get(actor); }
};

// An asynchronous operation: issued by one thread (or a warpgroup for
// wgmma), it reads, then writes, then completes.
struct AsyncOp {
  int64_t id = 0;
  Agent agent = Agent::kTmaLoad;
  const OpRec* rec = nullptr;
  int issuer = 0;  // thread index
  int block = 0;
  Actor actor;
  SyncClock base;  // the issuer's at issue
  bool read_done = false, write_done = false;
  bool waited_read = false, waited_full = false;
  bool touches_shared = false;
  // Operands, decoded at issue.
  int map = -1;
  Index coords;                   // TMA, outermost first
  int64_t shared_address = 0;     // start of the shared side (unswizzled)
  std::vector<int> dst_blocks;    // TMA load (multicast) destinations
  int64_t mbarrier_address = -1;  // loads
  int global_buffer = -1;         // bulk, cp.async
  int64_t global_offset = 0;      // storage element offset
  int64_t bytes = 0;
  int shared_buffer = -1;
  std::string reduce_op;
  // wgmma.
  std::vector<int> lanes;  // the 128 threads, by warpgroup position
  // The warpgroup's previous wgmma: wgmmas of one warpgroup use their
  // accumulators in issue order (PTX needs no fence between them), so this
  // one reads only after that one wrote.
  AsyncOp* previous = nullptr;
  Index acc_origin, a_origin, b_origin;
  int acc_buffer = -1, a_buffer = -1, b_buffer = -1;
  bool a_in_registers = false;
  // Starts from zero instead of the accumulator: the zero_init flag, or
  // the zero-init predicate as the warpgroup saw it at issue.
  bool zero_init = false;
  // Data read, to be written.
  std::vector<Lane> staged;
  std::vector<uint8_t> staged_bytes;
  std::vector<uint8_t> staged_valid;  // TMA store/reduce: element in bounds
};

struct MBarrier {
  bool valid = false;
  int64_t count = 0;
  int64_t pending = 0;
  int64_t tx = 0;
  int64_t phase = 0;
  Access init;
  SyncClock accumulated;  // releases into the current phase
  SyncClock completed;    // the last completed phase's
  bool completion_observed = true;
  const OpRec* last_arrive = nullptr;
  const OpRec* last_expect = nullptr;
  const OpRec* last_complete_tx = nullptr;
  int64_t expected_bytes = 0;  // posted in the current phase
  int64_t completed_bytes = 0;
};

struct BarrierState {
  int64_t expected = 0;
  std::vector<int> arrived;  // thread indices, this generation
  std::vector<int> waiting;  // those that wait (not barrier.arrive)
  std::vector<const OpRec*> waiting_ops;  // the op each of them waits at
  int64_t votes = 0;  // barrier.red: participants whose predicate is true
  SyncClock accumulated;
  const OpRec* op = nullptr;
};

// Warp or warpgroup rendezvous of an `.aligned` op.
struct Rendezvous {
  const OpRec* op = nullptr;
  std::vector<int64_t> key;
  std::vector<int> arrived;
};

struct Block {
  int index = 0;
  int64_t id[3] = {0, 0, 0};
  int cluster = 0;
  int cluster_rank = 0;
  bool created = false;
  bool finished = false;
  int first_thread = 0;
  int live = 0;
  MemoryArea shared;
  absl::flat_hash_map<int64_t, MBarrier> mbarriers;
  BarrierState barriers[16];
  std::vector<Rendezvous> warp_rendezvous, warpgroup_rendezvous;
  uint32_t next_agent = 0;
  int elected_lane_seed = 0;
  absl::flat_hash_map<std::string, int> issued;  // single-issue keys
  // mbarriers used while not initialized, and those ever initialized.
  absl::flat_hash_map<int64_t, const OpRec*> invalid_uses;
  absl::flat_hash_set<int64_t> initialized;
};

struct ClusterState {
  std::vector<int> blocks;
  int64_t generation = 0;
  int64_t completed = -1;
  int64_t arrived = 0;
  SyncClock accumulated, completed_clock;
};

struct SplitKState {
  int64_t expected = 0;
  int64_t arrived = 0;
  // partials[split][tid]: the thread's register buffer at the body's end.
  std::vector<std::vector<std::vector<Lane>>> partials;
  SyncClock accumulated;
};

// What executing an op did to the executing threads: advance past it,
// block on it (to be retried), leave the kernel, stop the run; kHandled: the
// callee advanced or blocked them itself.
enum class Outcome { kAdvance, kBlock, kExit, kFatal, kHandled };

class Machine {
 public:
  Machine(const Program& program, const MachineOptions& options);
  RunOutcome Run(const Launch& launch);

  // ---- used by the op semantics (machine_ops.cc) ----
  const Program& program_;
  MachineOptions options_;
  bool track_ = false;
  bool adversarial_ = false;
  std::mt19937_64 rng_;

  // Fatal errors and hazards.
  void Fatal(const OpRec* rec, const std::string& message);
  void Report(Hazard hazard) { hazards_.Add(std::move(hazard)); }
  // An async op's access of a block that has exited, or that it outlives.
  void ReportPendingAtExit(const AsyncOp& op, std::string message);
  // An error, or a hazard after which execution means nothing.
  bool failed() const { return !error_.ok() || stopped_; }
  void PartialCollective(const OpRec* op, const OpRec* other, bool warpgroup,
                         int group, int block, const std::string& detail);
  std::string DescribeThread(int thread) const;
  std::string DescribeAccess(const Access& access) const;

  // Values.
  Lane& V(Thread& t, int slot) { return t.lanes[slot]; }
  int64_t Int(Thread& t, int slot) {
    return static_cast<int64_t>(t.lanes[slot]);
  }
  Index Indices(Thread& t, const OpRec& rec, int operand);

  // Memory.
  MemoryArea& GlobalArea(int buffer) { return *global_areas_[buffer]; }
  MemoryArea& SharedArea(int block) { return blocks_[block].shared; }
  // Byte offset of a global element (storage order), or -1 out of bounds.
  int64_t GlobalOffset(int buffer, absl::Span<const int64_t> index) const;
  const TensorData& GlobalShape(int buffer) const {
    return global_shapes_[buffer];
  }
  Lane ReadLane(MemoryArea& area, int64_t byte, DType dtype,
                const AccessCtx* ctx);
  void WriteLane(MemoryArea& area, int64_t byte, DType dtype, Lane value,
                 const AccessCtx* ctx);
  // Raw bytes (bulk copies): tracked per granule.
  void ReadBytes(MemoryArea& area, int64_t byte, int64_t count, uint8_t* out,
                 const AccessCtx* ctx);
  void WriteBytes(MemoryArea& area, int64_t byte, int64_t count,
                  const uint8_t* in, const AccessCtx* ctx);
  // An element of a register buffer (flat index), or null out of range.
  Lane* RegLane(Thread& t, int buffer, int64_t flat);
  int64_t RegFlat(int buffer, absl::Span<const int64_t> index) const;
  int RegIndex(int buffer) const { return reg_index_[buffer]; }
  const std::vector<int64_t>& RegShape(int buffer) const {
    return program_.buffers()[buffer].static_shape;
  }

  // Access contexts.
  AccessCtx ThreadCtx(Thread& t, const OpRec* rec, bool atomic = false);
  AccessCtx AgentCtx(const AsyncOp& op, bool write);

  // Synchronization helpers (tracking only; no-ops otherwise).
  void Release(Thread& t, SyncClock& into);  // joins, then ticks t's clock
  void Acquire(Thread& t, const SyncClock& from);
  void Tick(Thread& t);
  void JoinAsync(Thread& t, AsyncOp& op, bool full);
  void StateChanged() { ++version_; }

  // Threads, blocks.
  std::vector<std::unique_ptr<Thread>> threads_;
  std::vector<Block> blocks_;
  std::vector<ClusterState> clusters_;
  int64_t grid_[3] = {1, 1, 1}, block_dim_[3] = {1, 1, 1},
          cluster_dim_[3] = {1, 1, 1};
  int threads_per_block_ = 1;
  std::vector<int64_t> IterationKey(const Thread& t) const;

  // Async operations.
  AsyncOp& NewAsync(Agent agent, const OpRec* rec, Thread& issuer);
  void Issue(AsyncOp& op);  // runs it now (reference) or queues it
  void PerformRead(AsyncOp& op);
  void PerformWrite(AsyncOp& op);
  void Complete(AsyncOp& op);
  std::vector<std::unique_ptr<AsyncOp>> async_ops_;
  std::vector<AsyncOp*> pending_;
  absl::flat_hash_map<int64_t, AsyncOp*> last_wgmma_;  // by block, warpgroup
  int64_t next_group_ = 1;

  // mbarriers. An mbarrier op is an access of the barrier's shadow cells:
  // the init a plain write, the others atomic. `block` is the block whose
  // barrier is accessed (a remote arrive's peer); -1 for the thread's own.
  void TrackMbarrier(Thread& t, const OpRec& rec, int64_t address, bool write,
                     bool atomic, int block = -1);
  MBarrier* FindMbarrier(int block, int64_t address);
  void CompleteTx(AsyncOp& op, int block, int64_t address, int64_t bytes);
  void MaybeCompletePhase(MBarrier& bar, int block, int64_t address);

  // splitk.
  absl::flat_hash_map<std::string, SplitKState> splitk_;

  // The shared byte address of a buffer operand's element, or -1.
  int64_t SharedAddress(Thread& t, const OpRec& rec, int operand);
  // The newest group a wait names (-1: none), `%t@k` resolved.
  int64_t NamedGroup(Thread& t, const OpRec& rec);
  // Remembers a commit for later `%t@k` waits.
  void RecordCommit(Thread& t, const OpRec& rec, int64_t group);

  // The op semantics (machine_ops.cc).
  Outcome ExecuteThreadOp(Thread& t, const OpRec& rec);
  Outcome ExecuteCollective(const OpRec& rec, const std::vector<int>& lanes);
  Outcome ExecuteBarrier(const OpRec& rec, const std::vector<int>& lanes);
  Outcome EnterControl(Thread& t, const OpRec& rec);
  void ArriveSplitK(Thread& t, const OpRec& rec);
  Outcome PollSplitK(Thread& t);

  // Control flow.
  const OpRec* Current(const Thread& t) const;
  void Advance(Thread& t);    // past the current op
  void Normalize(Thread& t);  // unwinds finished regions
  void ExitThread(Thread& t);

  // Scheduling.
  void MakeRunnable(Thread& t);
  void RemoveRunnable(Thread& t);
  void MaybeCompleteCluster(ClusterState& cluster);
  void Suspend(Thread& t, WaitState wait);

 private:
  absl::Status Setup(const Launch& launch);
  void CreateBlock(int block);
  // The block of `t`'s cluster whose cluster rank is `rank` (mapa), or -1.
  int ClusterPeer(const Thread& t, int64_t rank) const;
  void FinishBlock(int block);
  void RunReference();
  void RunAdversarial();
  bool StepBlockLockstep(int block);
  Outcome StepThread(Thread& t);
  void ReportDeadlock();
  void CheckExitState();
  int64_t StateBytes() const;
  void DrainAsync();

  // Shadow memory.
  bool TrackAccess(MemoryArea& area, int64_t cell, bool write,
                   const AccessCtx& ctx);
  void Conflict(const Access& prior, bool prior_write, const AccessCtx& now,
                bool now_write, MemoryArea& area, int64_t cell, bool proxy);

  absl::Status error_;
  HazardLog hazards_;
  std::vector<std::unique_ptr<MemoryArea>> global_areas_;  // by buffer id
  std::vector<TensorData> global_shapes_;                  // by buffer id
  std::vector<int> reg_index_;                             // by buffer id
  std::vector<std::vector<Access>> read_sets_;
  std::vector<int32_t> free_read_sets_;
  std::vector<Lane> lane_template_;
  std::vector<int> runnable_;
  std::vector<int> pollers_;
  int64_t version_ = 0;
  bool deadlocked_ = false;
  bool stopped_ = false;
  int64_t steps_ = 0;
  int64_t peak_bytes_ = 0;
  int next_block_to_create_ = 0;
  int total_blocks_ = 0;
  std::vector<int64_t> op_executions_;
  friend class MachineTestPeer;
};

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_MACHINE_INTERNAL_H_
