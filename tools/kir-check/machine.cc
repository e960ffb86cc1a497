// The interpreter's machinery: launch setup, memories and their shadow
// cells, the reference and adversarial schedulers, control flow, and the
// deadlock and exit checks. What each op does is in machine_ops.cc.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "ir/diagnostics.h"
#include "tools/kir-check/machine_internal.h"

namespace kir::check {

// ---------------------------------------------------------------------------
// Tensors.

int64_t TensorData::elements() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

int64_t TensorData::Offset(absl::Span<const int64_t> index) const {
  if (index.size() != shape.size()) return -1;
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape[d]) return -1;
    offset += index[d] * strides[d];
  }
  return offset;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

TensorData MakeTensor(DType dtype, const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& strides) {
  TensorData tensor;
  tensor.dtype = dtype;
  tensor.shape = shape;
  tensor.strides = strides;
  int64_t span = 1;
  for (int64_t extent : shape) {
    if (extent == 0) span = 0;
  }
  if (span != 0) {
    for (size_t d = 0; d < shape.size(); ++d)
      span += (shape[d] - 1) * strides[d];
  }
  tensor.bytes.assign(static_cast<size_t>(span) * DTypeBytes(dtype), 0);
  return tensor;
}

const char* AgentName(Agent agent) {
  switch (agent) {
    case Agent::kThread:
      return "thread";
    case Agent::kTmaLoad:
      return "tma.load";
    case Agent::kTmaStore:
      return "tma.store";
    case Agent::kTmaReduce:
      return "tma.reduce";
    case Agent::kBulkLoad:
      return "bulk.load";
    case Agent::kBulkStore:
      return "bulk.store";
    case Agent::kCpAsync:
      return "cp.async";
    case Agent::kWgmma:
      return "wgmma";
    case Agent::kStoreRemote:
      return "store.remote";
  }
  return "?";
}

bool AgentIsAsyncProxy(Agent agent) {
  return agent != Agent::kThread && agent != Agent::kCpAsync &&
         agent != Agent::kStoreRemote;
}

// ---------------------------------------------------------------------------
// Setup.

Machine::Machine(const Program& program, const MachineOptions& options)
    : program_(program), options_(options), rng_(options.seed) {
  adversarial_ = options.schedule == Schedule::kAdversarial;
  track_ = options.track_hazards || adversarial_;
}

void Machine::Fatal(const OpRec* rec, const std::string& message) {
  if (!error_.ok()) return;
  const Location loc =
      rec != nullptr ? rec->op->loc() : program_.kernel().loc();
  error_ = Error(loc) << message;
}

absl::Status Machine::Setup(const Launch& launch) {
  const Kernel& kernel = program_.kernel();
  absl::flat_hash_map<const Value*, int64_t> sizes;
  for (const auto& size : kernel.sizes()) {
    auto found = launch.sizes.find(size->name());
    if (found == launch.sizes.end()) {
      return Error(size->loc()) << "size %" << size->name() << " is unbound";
    }
    sizes[size.get()] = found->second;
  }
  auto size_of = [&](const Value* value) -> std::optional<int64_t> {
    auto found = sizes.find(value);
    if (found == sizes.end()) return std::nullopt;
    return found->second;
  };
  auto dims = [&](const Dim3& dim, int64_t out[3],
                  const char* what) -> absl::Status {
    for (int i = 0; i < 3; ++i) {
      std::optional<int64_t> value = dim[i].Evaluate(size_of);
      if (!value.has_value() || *value < 1) {
        return Error(kernel.loc()) << what << " dimension "
                                   << "xyz"[i] << " (" << dim[i].ToString()
                                   << ") is not a positive count here";
      }
      out[i] = *value;
    }
    return absl::OkStatus();
  };
  if (absl::Status s = dims(kernel.grid, grid_, "grid"); !s.ok()) return s;
  if (absl::Status s = dims(kernel.block, block_dim_, "block"); !s.ok())
    return s;
  if (absl::Status s = dims(kernel.cluster, cluster_dim_, "cluster"); !s.ok())
    return s;
  threads_per_block_ =
      static_cast<int>(block_dim_[0] * block_dim_[1] * block_dim_[2]);
  if (threads_per_block_ > 1024) {
    return Error(kernel.loc())
           << "a block of " << threads_per_block_ << " threads (at most 1024)";
  }
  for (int i = 0; i < 3; ++i) {
    if (grid_[i] % cluster_dim_[i] != 0) {
      return Error(kernel.loc()) << "the cluster does not divide the grid";
    }
  }
  const int64_t blocks = grid_[0] * grid_[1] * grid_[2];
  if (blocks > (int64_t{1} << 22)) {
    return Error(kernel.loc())
           << "a grid of " << blocks << " blocks is too large to interpret";
  }
  total_blocks_ = static_cast<int>(blocks);

  // Lanes every thread starts with: sizes, scalar parameters; tokens name
  // no group.
  lane_template_.assign(program_.lane_count(), 0);
  for (const auto& size : kernel.sizes())
    lane_template_[program_.SlotOf(size.get())->offset] =
        static_cast<Lane>(sizes[size.get()]);
  for (const Param& param : kernel.params()) {
    if (param.kind != Param::Kind::kScalar) continue;
    auto found = launch.scalars.find(param.value->name());
    if (found == launch.scalars.end()) {
      return Error(param.value->loc())
             << "scalar parameter %" << param.value->name() << " is unbound";
    }
    lane_template_[program_.SlotOf(param.value)->offset] =
        DoubleToLane(param.value->type().dtype(), found->second);
  }
  Walk(kernel.body(), [&](const Op& op) {
    for (int i = 0; i < op.num_results(); ++i) {
      if (op.result(i)->type().is_token())
        lane_template_[program_.SlotOf(op.result(i))->offset] =
            static_cast<Lane>(int64_t{-1});
    }
  });

  // Global memory.
  const std::vector<BufferRec>& buffers = program_.buffers();
  global_areas_.resize(buffers.size());
  global_shapes_.resize(buffers.size());
  reg_index_.assign(buffers.size(), -1);
  int regs = 0;
  for (const BufferRec& buffer : buffers) {
    if (buffer.space == MemorySpace::kRegister) {
      reg_index_[buffer.id] = regs++;
      continue;
    }
    if (buffer.space != MemorySpace::kGlobal) continue;
    std::vector<int64_t> shape;
    for (const IndexExpr& extent : buffer.value->type().shape()) {
      std::optional<int64_t> value = extent.Evaluate(size_of);
      if (!value.has_value() || *value < 0) {
        return Error(buffer.value->loc())
               << "the shape of %" << buffer.value->name()
               << " does not evaluate to sizes >= 0";
      }
      shape.push_back(*value);
    }
    TensorData tensor;
    if (buffer.is_param) {
      auto found = launch.tensors.find(buffer.value->name());
      if (found == launch.tensors.end()) {
        return Error(buffer.value->loc())
               << "tensor parameter %" << buffer.value->name() << " is unbound";
      }
      tensor = found->second;
      if (tensor.dtype != buffer.dtype || tensor.shape != shape) {
        return Error(buffer.value->loc())
               << "the tensor bound to %" << buffer.value->name()
               << " does not have its type";
      }
    } else if (auto kept = launch.workspaces.find(buffer.value->name());
               kept != launch.workspaces.end() &&
               kept->second.dtype == buffer.dtype &&
               kept->second.shape == shape) {
      tensor = kept->second;
    } else {
      tensor = MakeTensor(buffer.dtype, shape, RowMajorStrides(shape));
    }
    auto area = std::make_unique<MemoryArea>();
    area->space = MemorySpace::kGlobal;
    area->name = absl::StrCat("%", buffer.value->name());
    area->granule = DTypeBytes(buffer.dtype);
    area->buffer = &buffer;
    area->data = tensor.bytes;
    if (adversarial_) area->async_view = area->data;
    if (track_) area->cells.resize(area->data.size() / area->granule);
    tensor.bytes.clear();
    global_shapes_[buffer.id] = std::move(tensor);
    global_areas_[buffer.id] = std::move(area);
  }

  blocks_.resize(total_blocks_);
  const int64_t cluster_size =
      cluster_dim_[0] * cluster_dim_[1] * cluster_dim_[2];
  clusters_.resize(total_blocks_ / cluster_size);
  for (int b = 0; b < total_blocks_; ++b) {
    Block& block = blocks_[b];
    block.index = b;
    block.id[0] = b % grid_[0];
    block.id[1] = (b / grid_[0]) % grid_[1];
    block.id[2] = b / (grid_[0] * grid_[1]);
    int64_t cluster_id[3], rank_in[3];
    for (int i = 0; i < 3; ++i) {
      cluster_id[i] = block.id[i] / cluster_dim_[i];
      rank_in[i] = block.id[i] % cluster_dim_[i];
    }
    const int64_t clusters_x = grid_[0] / cluster_dim_[0];
    const int64_t clusters_y = grid_[1] / cluster_dim_[1];
    block.cluster = static_cast<int>(
        cluster_id[0] +
        clusters_x * (cluster_id[1] + clusters_y * cluster_id[2]));
    block.cluster_rank = static_cast<int>(
        rank_in[0] +
        cluster_dim_[0] * (rank_in[1] + cluster_dim_[1] * rank_in[2]));
    clusters_[block.cluster].blocks.push_back(b);
  }
  op_executions_.assign(program_.ops().size(), 0);
  return absl::OkStatus();
}

void Machine::ReportPendingAtExit(const AsyncOp& op, std::string message) {
  Hazard hazard;
  hazard.kind = HazardKind::kPendingAtExit;
  hazard.op = op.rec->op;
  hazard.message = std::move(message);
  Report(std::move(hazard));
}

int Machine::ClusterPeer(const Thread& t, int64_t rank) const {
  for (int b : clusters_[blocks_[t.block].cluster].blocks) {
    if (blocks_[b].cluster_rank == rank) return b;
  }
  return -1;
}

void Machine::CreateBlock(int b) {
  Block& block = blocks_[b];
  if (block.created) return;
  block.created = true;
  block.shared.space = MemorySpace::kShared;
  block.shared.name = "shared memory";
  block.shared.block = b;
  block.shared.granule = program_.shared_granule();
  block.shared.data.assign(program_.shared_bytes(), 0);
  if (adversarial_) block.shared.async_view = block.shared.data;
  if (track_)
    block.shared.cells.resize(program_.shared_bytes() / block.shared.granule +
                              1);
  const int warps = (threads_per_block_ + 31) / 32;
  block.warp_rendezvous.assign(warps, Rendezvous());
  block.warpgroup_rendezvous.assign((threads_per_block_ + 127) / 128,
                                    Rendezvous());
  block.next_agent = static_cast<uint32_t>(threads_per_block_);
  block.elected_lane_seed = static_cast<int>(rng_() & 0x7fffffff);
  block.first_thread = static_cast<int>(threads_.size());
  block.live = threads_per_block_;
  for (int tid = 0; tid < threads_per_block_; ++tid) {
    auto thread = std::make_unique<Thread>();
    Thread& t = *thread;
    t.index = static_cast<int>(threads_.size());
    t.block = b;
    t.tid = tid;
    t.warp = tid / 32;
    t.lane = tid % 32;
    t.xyz[0] = tid % block_dim_[0];
    t.xyz[1] = (tid / block_dim_[0]) % block_dim_[1];
    t.xyz[2] = tid / (block_dim_[0] * block_dim_[1]);
    t.lanes = lane_template_;
    for (const BufferRec& buffer : program_.buffers()) {
      if (buffer.space != MemorySpace::kRegister) continue;
      int64_t n = 1;
      for (int64_t extent : buffer.static_shape) n *= extent;
      RegState reg;
      reg.lanes.assign(n, 0);
      if (track_) {
        reg.touched.assign(n, 0);
        reg.wgmma_actor.assign(n, 0);
      }
      t.regs.push_back(std::move(reg));
    }
    t.actor = Actor{static_cast<uint32_t>(b), static_cast<uint32_t>(tid)};
    if (track_) t.sync.happens.Set(t.actor, 1);
    Frame frame;
    frame.region = &program_.body();
    t.frames.push_back(frame);
    threads_.push_back(std::move(thread));
  }
  for (int tid = 0; tid < threads_per_block_; ++tid) {
    Thread& t = *threads_[block.first_thread + tid];
    Normalize(t);
    if (adversarial_ && !t.exited) MakeRunnable(t);
  }
  // Sampled: counting walks every thread.
  if (b % 16 == 0) peak_bytes_ = std::max(peak_bytes_, StateBytes());
}

void Machine::FinishBlock(int b) {
  Block& block = blocks_[b];
  if (block.finished) return;
  block.finished = true;
  // Async work that still reads or writes this block's shared memory and
  // that no thread of the block waited for.
  if (track_) {
    for (const auto& op : async_ops_) {
      if (op->block != b || !op->touches_shared) continue;
      bool pending = false;
      const char* what = "";
      switch (op->agent) {
        case Agent::kTmaStore:
        case Agent::kTmaReduce:
        case Agent::kBulkStore:
          pending = !op->waited_read;
          what = "may still be reading its shared-memory source";
          break;
        case Agent::kTmaLoad:
        case Agent::kBulkLoad:
          pending = !op->write_done;
          what = "may still be writing shared memory";
          break;
        case Agent::kCpAsync:
        case Agent::kWgmma:
          pending = !op->waited_full;
          what = "may still be accessing shared memory";
          break;
        default:
          break;
      }
      if (!pending) continue;
      ReportPendingAtExit(
          *op, absl::StrCat("block ", b, " exits while this ",
                            AgentName(op->agent), " ", what,
                            " (no wait for it before the block's threads "
                            "exit)"));
    }
  }
  if (!adversarial_) {
    // The reference schedule creates blocks lazily; give the memory back.
    for (int i = 0; i < threads_per_block_; ++i) {
      Thread& t = *threads_[block.first_thread + i];
      std::vector<Lane>().swap(t.lanes);
      std::vector<RegState>().swap(t.regs);
      t.token_history.clear();
    }
    if (!track_) std::vector<uint8_t>().swap(block.shared.data);
  }
}

// ---------------------------------------------------------------------------
// Memory.

int64_t Machine::GlobalOffset(int buffer,
                              absl::Span<const int64_t> index) const {
  const int64_t element = global_shapes_[buffer].Offset(index);
  if (element < 0) return -1;
  return element * DTypeBytes(global_shapes_[buffer].dtype);
}

Index Machine::Indices(Thread& t, const OpRec& rec, int operand) {
  Index out;
  for (int slot : rec.indices[operand])
    out.push_back(static_cast<int64_t>(t.lanes[slot]));
  return out;
}

int64_t Machine::RegFlat(int buffer, absl::Span<const int64_t> index) const {
  const std::vector<int64_t>& shape = program_.buffers()[buffer].static_shape;
  if (index.size() != shape.size()) return -1;
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape[d]) return -1;
    flat = flat * shape[d] + index[d];
  }
  return flat;
}

Lane* Machine::RegLane(Thread& t, int buffer, int64_t flat) {
  RegState& reg = t.regs[reg_index_[buffer]];
  if (flat < 0 || flat >= static_cast<int64_t>(reg.lanes.size()))
    return nullptr;
  return &reg.lanes[flat];
}

AccessCtx Machine::ThreadCtx(Thread& t, const OpRec* rec, bool atomic) {
  AccessCtx ctx;
  ctx.access.actor = t.actor;
  ctx.access.clock = track_ ? t.Clock() : 1;
  ctx.access.op = rec;
  ctx.access.agent = Agent::kThread;
  ctx.access.atomic = atomic;
  ctx.access.thread = t.index;
  ctx.sync = &t.sync;
  return ctx;
}

AccessCtx Machine::AgentCtx(const AsyncOp& op, bool write) {
  AccessCtx ctx;
  ctx.access.actor = op.actor;
  ctx.access.clock = write ? 2 : 1;
  ctx.access.op = op.rec;
  ctx.access.agent = op.agent;
  ctx.access.async_proxy = AgentIsAsyncProxy(op.agent);
  ctx.access.atomic = op.agent == Agent::kTmaReduce && write;
  ctx.access.thread = op.issuer;
  ctx.sync = &op.base;
  return ctx;
}

Lane Machine::ReadLane(MemoryArea& area, int64_t byte, DType dtype,
                       const AccessCtx* ctx) {
  const int bytes = DTypeBytes(dtype);
  bool stale = false;
  if (ctx != nullptr && track_) {
    for (int64_t cell = byte / area.granule;
         cell <= (byte + bytes - 1) / area.granule; ++cell)
      stale |= TrackAccess(area, cell, false, *ctx);
  }
  if (adversarial_ && ctx != nullptr && ctx->access.async_proxy &&
      !area.async_view.empty()) {
    if (stale) return LoadLane(dtype, &area.async_view[byte]);
    std::memcpy(&area.async_view[byte], &area.data[byte], bytes);
  }
  return LoadLane(dtype, &area.data[byte]);
}

void Machine::WriteLane(MemoryArea& area, int64_t byte, DType dtype, Lane value,
                        const AccessCtx* ctx) {
  const int bytes = DTypeBytes(dtype);
  if (ctx != nullptr && track_) {
    for (int64_t cell = byte / area.granule;
         cell <= (byte + bytes - 1) / area.granule; ++cell)
      TrackAccess(area, cell, true, *ctx);
  }
  StoreLane(dtype, value, &area.data[byte]);
  if (!area.async_view.empty() && ctx != nullptr && ctx->access.async_proxy)
    StoreLane(dtype, value, &area.async_view[byte]);
}

void Machine::ReadBytes(MemoryArea& area, int64_t byte, int64_t count,
                        uint8_t* out, const AccessCtx* ctx) {
  for (int64_t at = byte; at < byte + count; at += area.granule) {
    bool stale = false;
    if (ctx != nullptr && track_)
      stale = TrackAccess(area, at / area.granule, false, *ctx);
    const int64_t n = std::min<int64_t>(area.granule, byte + count - at);
    const bool async_read = adversarial_ && ctx != nullptr &&
                            ctx->access.async_proxy && !area.async_view.empty();
    if (async_read && stale) {
      std::memcpy(out + (at - byte), &area.async_view[at], n);
    } else {
      if (async_read) std::memcpy(&area.async_view[at], &area.data[at], n);
      std::memcpy(out + (at - byte), &area.data[at], n);
    }
  }
}

void Machine::WriteBytes(MemoryArea& area, int64_t byte, int64_t count,
                         const uint8_t* in, const AccessCtx* ctx) {
  for (int64_t at = byte; at < byte + count; at += area.granule) {
    if (ctx != nullptr && track_)
      TrackAccess(area, at / area.granule, true, *ctx);
  }
  std::memcpy(&area.data[byte], in, count);
  if (!area.async_view.empty() && ctx != nullptr && ctx->access.async_proxy)
    std::memcpy(&area.async_view[byte], in, count);
}

// ---------------------------------------------------------------------------
// Shadow memory: FastTrack-style epochs and read sets, plus the proxy rule.

bool Machine::TrackAccess(MemoryArea& area, int64_t cell_index, bool write,
                          const AccessCtx& ctx) {
  if (cell_index < 0 || cell_index >= static_cast<int64_t>(area.cells.size()))
    return false;
  Cell& cell = area.cells[cell_index];
  const Access& now = ctx.access;
  const SyncClock& sync = *ctx.sync;
  const VClock& published = area.space == MemorySpace::kShared
                                ? sync.published_shared
                                : sync.published_global;
  auto ordered = [&](const Access& prior) {
    return prior.actor == now.actor ||
           sync.happens.Get(prior.actor) >= prior.clock;
  };
  auto fenced = [&](const Access& prior) {
    return published.Get(prior.actor) >= prior.clock;
  };
  bool stale = false;
  // Against the last write.
  if (!cell.write.empty() && !(cell.write.atomic && now.atomic)) {
    if (!ordered(cell.write)) {
      Conflict(cell.write, true, ctx, write, area, cell_index, false);
    } else if (now.async_proxy && !cell.write.async_proxy &&
               !fenced(cell.write)) {
      Conflict(cell.write, true, ctx, write, area, cell_index, true);
      stale = true;
    }
  }
  auto check_read = [&](const Access& read) {
    if (read.actor == now.actor || (read.atomic && now.atomic)) return;
    if (!ordered(read)) {
      Conflict(read, false, ctx, true, area, cell_index, false);
    } else if (now.async_proxy && !read.async_proxy && !fenced(read)) {
      Conflict(read, false, ctx, true, area, cell_index, true);
    }
  };
  if (write) {
    if (cell.read_set >= 0) {
      for (const Access& read : read_sets_[cell.read_set]) check_read(read);
      read_sets_[cell.read_set].clear();
      free_read_sets_.push_back(cell.read_set);
      cell.read_set = -1;
    } else if (!cell.read.empty()) {
      check_read(cell.read);
    }
    cell.read = Access();
    cell.write = now;
    return stale;
  }
  // A read: keep one epoch while reads are ordered, a set otherwise.
  auto subsumes = [&](const Access& read) {
    return read.actor == now.actor ||
           (ordered(read) && read.async_proxy == now.async_proxy);
  };
  if (cell.read_set < 0) {
    if (cell.read.empty() || subsumes(cell.read)) {
      cell.read = now;
      return stale;
    }
    int32_t set;
    if (!free_read_sets_.empty()) {
      set = free_read_sets_.back();
      free_read_sets_.pop_back();
    } else {
      set = static_cast<int32_t>(read_sets_.size());
      read_sets_.emplace_back();
    }
    read_sets_[set].push_back(cell.read);
    read_sets_[set].push_back(now);
    cell.read = Access();
    cell.read_set = set;
    return stale;
  }
  std::vector<Access>& reads = read_sets_[cell.read_set];
  for (Access& read : reads) {
    if (subsumes(read)) {
      read = now;
      return stale;
    }
  }
  reads.push_back(now);
  return stale;
}

std::string Machine::DescribeThread(int thread) const {
  const Thread& t = *threads_[thread];
  return absl::StrCat("block ", t.block, " thread ", t.tid);
}

std::string Machine::DescribeAccess(const Access& access) const {
  if (access.agent == Agent::kThread) return DescribeThread(access.thread);
  if (access.agent == Agent::kWgmma) {
    const Thread& t = *threads_[access.thread];
    return absl::StrCat("the wgmma of warpgroup ", t.tid / 128, " of block ",
                        t.block);
  }
  return absl::StrCat("the ", AgentName(access.agent), " issued by ",
                      DescribeThread(access.thread));
}

namespace {

// The shared allocation holding `address`, for messages.
std::string SharedName(const Program& program, int64_t address) {
  for (const BufferRec& buffer : program.buffers()) {
    if (buffer.space != MemorySpace::kShared) continue;
    if (address >= buffer.shared.base &&
        address < buffer.shared.base + buffer.shared.Bytes())
      return absl::StrCat("%", buffer.value->name());
  }
  return "shared memory";
}

bool IsLoadAgent(Agent agent) {
  return agent == Agent::kTmaLoad || agent == Agent::kBulkLoad ||
         agent == Agent::kCpAsync;
}

bool IsSourceReader(Agent agent) {
  return agent == Agent::kTmaStore || agent == Agent::kTmaReduce ||
         agent == Agent::kBulkStore || agent == Agent::kWgmma;
}

}  // namespace

void Machine::Conflict(const Access& prior, bool prior_write,
                       const AccessCtx& ctx, bool now_write, MemoryArea& area,
                       int64_t cell, bool proxy) {
  const Access& now = ctx.access;
  const std::string where = area.space == MemorySpace::kShared
                                ? SharedName(program_, cell * area.granule)
                                : area.name;
  Hazard hazard;
  if (proxy) {
    // The two accesses are ordered; the later (async) one lacks the fence.
    const char* now_verb = now_write ? "writes" : "reads";
    const char* prior_verb = prior_write ? "write" : "read";
    hazard.kind = HazardKind::kProxy;
    hazard.op = now.op != nullptr ? now.op->op : nullptr;
    hazard.other = prior.op != nullptr ? prior.op->op : nullptr;
    const char* space =
        area.space == MemorySpace::kShared ? "shared_cta" : "global";
    hazard.message = absl::StrCat(
        DescribeAccess(now), " ", now_verb, " ", where,
        " through the async proxy, but the generic-proxy ", prior_verb, " by ",
        DescribeAccess(prior), " was not made visible to it by a ",
        "fence.proxy.async ", space,
        options_.fence_model == FenceModel::kPerThread
            ? " of that thread before the synchronization that orders them"
            : " on a happens-before path between them");
    hazard.note =
        absl::StrCat("the generic ", prior_verb, " by ", DescribeAccess(prior));
    Report(std::move(hazard));
    return;
  }
  // Unordered: classify by what the two accesses are, not by which one the
  // schedule happened to run first, so that every schedule reports a pair
  // the same way.
  struct Side {
    const Access* access;
    bool write;
  };
  const Side sides[2] = {{&prior, prior_write}, {&now, now_write}};
  auto describe = [&](const Side& side) {
    return absl::StrCat(side.write ? "a write by " : "a read by ",
                        DescribeAccess(*side.access));
  };
  auto report_at = [&](const Side& reported, const Side& other) {
    hazard.op =
        reported.access->op != nullptr ? reported.access->op->op : nullptr;
    hazard.other = other.access->op != nullptr ? other.access->op->op : nullptr;
  };
  for (int i = 0; i < 2; ++i) {
    const Side& a = sides[i];
    const Side& b = sides[1 - i];
    if (IsLoadAgent(a.access->agent) && a.write && !b.write) {
      hazard.kind = HazardKind::kEarlyRead;
      report_at(b, a);
      hazard.message = absl::StrCat(
          DescribeAccess(*b.access), " reads ", where, " that ",
          DescribeAccess(*a.access), " writes, without being ordered after ",
          a.access->agent == Agent::kCpAsync ? "the cp.async.wait"
                                             : "the mbarrier phase",
          " that completes it");
      hazard.note = absl::StrCat("the ", AgentName(a.access->agent),
                                 " whose data is read early");
      Report(std::move(hazard));
      return;
    }
    if (IsSourceReader(a.access->agent) && !a.write && b.write) {
      hazard.kind = HazardKind::kSourceOverwritten;
      report_at(b, a);
      hazard.message = absl::StrCat(
          DescribeAccess(*b.access), " writes ", where, " that ",
          DescribeAccess(*a.access), " reads, without being ordered after ",
          a.access->agent == Agent::kWgmma
              ? "a wgmma.wait for it"
              : "the issuing thread's bulk.wait {read} for it");
      hazard.note =
          absl::StrCat("the ", AgentName(a.access->agent), " reading it");
      Report(std::move(hazard));
      return;
    }
  }
  // A plain pair: report at the op later in the program, the note at the
  // other. An mbarrier's init against a use is a class of its own.
  const bool now_later =
      now.op == nullptr || (prior.op != nullptr && now.op->id >= prior.op->id);
  const Side& later = now_later ? sides[1] : sides[0];
  const Side& earlier = now_later ? sides[0] : sides[1];
  report_at(later, earlier);
  auto is_init = [](const Side& side) {
    return side.access->op != nullptr &&
           (side.access->op->kind == OpKind::kMbarrierInit ||
            side.access->op->kind == OpKind::kMbarrierInval);
  };
  if (is_init(later) || is_init(earlier)) {
    hazard.kind = HazardKind::kMbarrierInit;
    hazard.message = absl::StrCat(
        "the mbarrier's ", is_init(earlier) ? "init" : "use", " by ",
        DescribeAccess(*earlier.access), " and its ",
        is_init(later) ? "init" : "use", " by ", DescribeAccess(*later.access),
        " are not ordered (a barrier after mbarrier.init orders them)");
    hazard.note = absl::StrCat("the other access: the `",
                               earlier.access->op->op->mnemonic(), "`");
    Report(std::move(hazard));
    return;
  }
  const bool threads =
      prior.agent == Agent::kThread && now.agent == Agent::kThread;
  hazard.kind = threads ? HazardKind::kRace : HazardKind::kAsyncRace;
  hazard.message =
      absl::StrCat(threads ? "data race on " : "unordered accesses of ", where,
                   ": ", describe(later), " and ", describe(earlier),
                   " are not ordered by any synchronization");
  hazard.note = absl::StrCat("the other access: ", describe(earlier));
  Report(std::move(hazard));
}

// ---------------------------------------------------------------------------
// Synchronization.

void Machine::Tick(Thread& t) {
  if (track_) t.sync.happens.Set(t.actor, t.Clock() + 1);
}

void Machine::Release(Thread& t, SyncClock& into) {
  if (!track_) return;
  into.Join(t.sync);
  Tick(t);
}

void Machine::Acquire(Thread& t, const SyncClock& from) {
  if (track_) t.sync.Join(from);
}

void Machine::JoinAsync(Thread& t, AsyncOp& op, bool full) {
  op.waited_read = true;
  if (full) op.waited_full = true;
  if (!track_) return;
  t.sync.Join(op.base);
  const uint32_t level = full ? 2 : 1;
  if (t.sync.happens.Get(op.actor) < level) t.sync.happens.Set(op.actor, level);
}

std::vector<int64_t> Machine::IterationKey(const Thread& t) const {
  std::vector<int64_t> key;
  for (const Frame& frame : t.frames) {
    if (frame.is_loop) key.push_back(frame.iteration);
  }
  return key;
}

// ---------------------------------------------------------------------------
// Async operations.

AsyncOp& Machine::NewAsync(Agent agent, const OpRec* rec, Thread& issuer) {
  auto op = std::make_unique<AsyncOp>();
  op->id = static_cast<int64_t>(async_ops_.size());
  op->agent = agent;
  op->rec = rec;
  op->issuer = issuer.index;
  op->block = issuer.block;
  Block& block = blocks_[issuer.block];
  op->actor = Actor{static_cast<uint32_t>(issuer.block), block.next_agent++};
  if (track_) op->base = issuer.sync;
  async_ops_.push_back(std::move(op));
  return *async_ops_.back();
}

void Machine::Issue(AsyncOp& op) {
  if (!adversarial_) {
    PerformRead(op);
    if (!failed()) PerformWrite(op);
    return;
  }
  pending_.push_back(&op);
}

void Machine::DrainAsync() {
  while (!pending_.empty() && !failed()) {
    AsyncOp* op = pending_.back();
    if (op->write_done) {
      pending_.pop_back();
      continue;
    }
    if (!op->read_done) {
      PerformRead(*op);
    } else {
      PerformWrite(*op);
      pending_.pop_back();
    }
  }
}

void Machine::TrackMbarrier(Thread& t, const OpRec& rec, int64_t address,
                            bool write, bool atomic, int block) {
  if (!track_) return;
  MemoryArea& area = SharedArea(block < 0 ? t.block : block);
  const AccessCtx ctx = ThreadCtx(t, &rec, atomic);
  for (int64_t cell = address / area.granule;
       cell <= (address + 7) / area.granule; ++cell)
    TrackAccess(area, cell, write, ctx);
}

MBarrier* Machine::FindMbarrier(int block, int64_t address) {
  auto found = blocks_[block].mbarriers.find(address);
  return found == blocks_[block].mbarriers.end() ? nullptr : &found->second;
}

void Machine::MaybeCompletePhase(MBarrier& bar, int block, int64_t address) {
  if (bar.pending != 0 || bar.tx != 0) return;
  bar.completed = bar.accumulated;
  bar.accumulated = SyncClock();
  bar.phase += 1;
  bar.pending = bar.count;
  bar.expected_bytes = 0;
  bar.completed_bytes = 0;
  bar.completion_observed = false;
  StateChanged();
}

void Machine::CompleteTx(AsyncOp& op, int block, int64_t address,
                         int64_t bytes) {
  MBarrier* bar = FindMbarrier(block, address);
  if (bar == nullptr || !bar->valid) {
    Hazard hazard;
    hazard.kind = HazardKind::kMbarrierInit;
    hazard.op = op.rec->op;
    hazard.message = absl::StrCat(
        "the ", AgentName(op.agent),
        " completes its bytes on an mbarrier that is not initialized in block ",
        block);
    Report(std::move(hazard));
    return;
  }
  if (track_) {
    // The copy engine updates the mbarrier through the generic proxy (PTX:
    // "accesses its mbarrier operand using generic-proxy"), atomically.
    AccessCtx ctx = AgentCtx(op, true);
    ctx.access.atomic = true;
    ctx.access.async_proxy = false;
    MemoryArea& area = SharedArea(block);
    for (int64_t cell = address / area.granule;
         cell <= (address + 7) / area.granule; ++cell)
      TrackAccess(area, cell, true, ctx);
  }
  bar->tx -= bytes;
  bar->completed_bytes += bytes;
  bar->last_complete_tx = op.rec;
  if (track_) {
    bar->accumulated.Join(op.base);
    if (bar->accumulated.happens.Get(op.actor) < 2)
      bar->accumulated.happens.Set(op.actor, 2);
  }
  MaybeCompletePhase(*bar, block, address);
}

// ---------------------------------------------------------------------------
// Control flow.

const OpRec* Machine::Current(const Thread& t) const {
  if (t.frames.empty()) return nullptr;
  const Frame& frame = t.frames.back();
  if (frame.pc >= static_cast<int>(frame.region->ops.size())) return nullptr;
  return frame.region->ops[frame.pc].get();
}

void Machine::Advance(Thread& t) {
  if (t.frames.empty()) return;
  t.frames.back().pc += 1;
  Normalize(t);
}

void Machine::Normalize(Thread& t) {
  while (!t.frames.empty()) {
    Frame& frame = t.frames.back();
    if (frame.pc < static_cast<int>(frame.region->ops.size())) return;
    const OpRec* owner = frame.region->owner;
    if (owner == nullptr) {
      ExitThread(t);
      return;
    }
    if (frame.is_loop) {
      frame.iteration += 1;
      frame.iv += frame.step;
      if (frame.iv < frame.hi) {
        t.lanes[frame.region->argument] = static_cast<Lane>(frame.iv);
        frame.pc = 0;
        continue;
      }
    } else if (owner->kind == OpKind::kSplitK &&
               frame.region->index_in_owner == 0) {
      // The body is done: wait for every split of this output tile.
      ArriveSplitK(t, *owner);
      return;
    }
    t.frames.pop_back();
    if (!t.frames.empty()) t.frames.back().pc += 1;
  }
}

void Machine::ExitThread(Thread& t) {
  if (t.exited) return;
  t.exited = true;
  t.frames.clear();
  t.wait = WaitState::kNone;
  RemoveRunnable(t);
  Block& block = blocks_[t.block];
  block.live -= 1;
  // Lanes left waiting at an `.aligned` op can never complete it.
  for (Rendezvous* rendezvous : {&block.warp_rendezvous[t.warp],
                                 &block.warpgroup_rendezvous[t.tid / 128]}) {
    if (rendezvous->op == nullptr || rendezvous->arrived.empty()) continue;
    const bool warpgroup = rendezvous != &block.warp_rendezvous[t.warp];
    PartialCollective(
        rendezvous->op, nullptr, warpgroup, warpgroup ? t.tid / 128 : t.warp,
        t.block,
        absl::StrCat(rendezvous->arrived.size(), " lanes wait at it while ",
                     DescribeThread(t.index), " leaves the kernel"));
  }
  // A cluster barrier no longer waits for this thread.
  MaybeCompleteCluster(clusters_[block.cluster]);
  if (block.live == 0) FinishBlock(t.block);
}

void Machine::MaybeCompleteCluster(ClusterState& cluster) {
  int64_t live = 0;
  for (int b : cluster.blocks)
    live += blocks_[b].created ? blocks_[b].live : threads_per_block_;
  if (cluster.arrived == 0 || cluster.arrived < live) return;
  cluster.completed = cluster.generation;
  cluster.completed_clock = cluster.accumulated;
  cluster.accumulated = SyncClock();
  cluster.generation += 1;
  cluster.arrived = 0;
  StateChanged();
}

void Machine::PartialCollective(const OpRec* op, const OpRec* other,
                                bool warpgroup, int group, int block,
                                const std::string& detail) {
  Hazard hazard;
  hazard.kind = HazardKind::kPartialCollective;
  hazard.op = op->op;
  hazard.other = other != nullptr ? other->op : nullptr;
  hazard.message = absl::StrCat(
      "`", op->op->mnemonic(), "` is `.aligned`, but only part of ",
      warpgroup ? "warpgroup " : "warp ", group, " of block ", block,
      " executes it: ", detail, "; the run stops here");
  hazard.note = "where the other lanes are";
  Report(std::move(hazard));
  stopped_ = true;
}

// ---------------------------------------------------------------------------
// Scheduling.

void Machine::MakeRunnable(Thread& t) {
  if (!adversarial_ || t.exited || t.runnable_pos >= 0) return;
  t.runnable_pos = static_cast<int>(runnable_.size());
  runnable_.push_back(t.index);
}

void Machine::RemoveRunnable(Thread& t) {
  if (t.runnable_pos < 0) return;
  const int last = runnable_.back();
  runnable_[t.runnable_pos] = last;
  threads_[last]->runnable_pos = t.runnable_pos;
  runnable_.pop_back();
  t.runnable_pos = -1;
}

void Machine::Suspend(Thread& t, WaitState wait) {
  t.wait = wait;
  if (!adversarial_) return;
  RemoveRunnable(t);
  if (wait == WaitState::kPoll || wait == WaitState::kSplitK)
    pollers_.push_back(t.index);
}

Outcome Machine::StepThread(Thread& t) {
  ++steps_;
  ++t.steps;
  if (t.wait == WaitState::kSplitK) return PollSplitK(t);
  const OpRec* rec = Current(t);
  if (rec == nullptr) return Outcome::kExit;
  ++op_executions_[rec->id];
  if (rec->exec == Exec::kWarp || rec->exec == Exec::kWarpgroup ||
      rec->exec == Exec::kBarrier) {
    Block& block = blocks_[t.block];
    const bool group_is_warpgroup = rec->exec == Exec::kWarpgroup;
    Rendezvous& rendezvous = group_is_warpgroup
                                 ? block.warpgroup_rendezvous[t.tid / 128]
                                 : block.warp_rendezvous[t.warp];
    std::vector<int64_t> key = IterationKey(t);
    if (rendezvous.op == nullptr) {
      rendezvous.op = rec;
      rendezvous.key = key;
    } else if (rendezvous.op != rec || rendezvous.key != key) {
      PartialCollective(
          rendezvous.op, rec, group_is_warpgroup,
          group_is_warpgroup ? t.tid / 128 : t.warp, t.block,
          absl::StrCat(rendezvous.arrived.size(), " lanes wait at it while ",
                       DescribeThread(t.index), " is at `", rec->op->mnemonic(),
                       "`",
                       rendezvous.op == rec ? " in another iteration" : ""));
      return Outcome::kFatal;
    }
    rendezvous.arrived.push_back(t.index);
    Suspend(t, WaitState::kCollective);
    // Live members of the group.
    const int first = group_is_warpgroup ? (t.tid / 128) * 128 : t.warp * 32;
    const int size = group_is_warpgroup ? 128 : 32;
    int live = 0;
    for (int i = first; i < std::min(first + size, threads_per_block_); ++i) {
      if (!threads_[block.first_thread + i]->exited) ++live;
    }
    if (static_cast<int>(rendezvous.arrived.size()) < live)
      return Outcome::kHandled;
    std::vector<int> lanes = std::move(rendezvous.arrived);
    std::sort(lanes.begin(), lanes.end());
    rendezvous = Rendezvous();
    for (int lane : lanes) threads_[lane]->wait = WaitState::kNone;
    const Outcome outcome = rec->exec == Exec::kBarrier
                                ? ExecuteBarrier(*rec, lanes)
                                : ExecuteCollective(*rec, lanes);
    for (size_t i = 1; i < lanes.size(); ++i) ++op_executions_[rec->id];
    if (outcome == Outcome::kAdvance) {
      for (int lane : lanes) {
        Advance(*threads_[lane]);
        MakeRunnable(*threads_[lane]);
      }
    } else if (outcome == Outcome::kBlock) {
      for (int lane : lanes) Suspend(*threads_[lane], WaitState::kPoll);
    }
    return Outcome::kHandled;
  }
  if (rec->exec == Exec::kControl) return EnterControl(t, *rec);
  const Outcome outcome = ExecuteThreadOp(t, *rec);
  switch (outcome) {
    case Outcome::kAdvance:
      t.wait = WaitState::kNone;
      Advance(t);
      break;
    case Outcome::kBlock:
      Suspend(t, WaitState::kPoll);
      break;
    case Outcome::kExit:
      ExitThread(t);
      break;
    default:
      break;
  }
  return outcome;
}

void Machine::RunAdversarial() {
  for (int b = 0; b < total_blocks_; ++b) CreateBlock(b);
  // Per-seed personality: how eagerly async operations run, how long a
  // thread keeps the processor.
  const double eagerness[] = {0.02, 0.15, 0.5, 0.9};
  const double async_probability = eagerness[rng_() % 4];
  const int bursts[] = {1, 3, 16, 64};
  const int max_burst = bursts[rng_() % 4];
  int64_t seen_version = version_;
  while (!failed()) {
    if (version_ != seen_version) {
      seen_version = version_;
      std::vector<int> pollers = std::move(pollers_);
      pollers_.clear();
      for (int index : pollers) {
        Thread& t = *threads_[index];
        if (!t.exited &&
            (t.wait == WaitState::kPoll || t.wait == WaitState::kSplitK))
          MakeRunnable(t);
      }
    }
    if (runnable_.empty() && pending_.empty()) break;
    if (!pending_.empty() &&
        (runnable_.empty() || std::uniform_real_distribution<double>(
                                  0, 1)(rng_) < async_probability)) {
      const size_t pick = rng_() % pending_.size();
      AsyncOp* op = pending_[pick];
      if (op->write_done) {  // completed early, for a later wgmma
        pending_[pick] = pending_.back();
        pending_.pop_back();
        continue;
      }
      if (!op->read_done) {
        PerformRead(*op);
      } else {
        PerformWrite(*op);
        pending_[pick] = pending_.back();
        pending_.pop_back();
      }
      continue;
    }
    const int index = runnable_[rng_() % runnable_.size()];
    Thread& t = *threads_[index];
    const int burst = 1 + static_cast<int>(rng_() % max_burst);
    for (int i = 0; i < burst && t.runnable_pos >= 0 && !failed(); ++i) {
      StepThread(t);
      if (steps_ > options_.max_steps) {
        Fatal(Current(t), absl::StrCat("stopped after ", steps_,
                                       " steps: the kernel does not finish"));
      }
      if (version_ != seen_version) break;
    }
  }
  if (failed()) return;
  bool live = false;
  for (const auto& thread : threads_) live |= !thread->exited;
  if (live) ReportDeadlock();
  DrainAsync();
}

// The lockstep position of a thread: the op it is at, with the iteration
// and branch of every enclosing region, comparable in program order.
namespace {

void PositionOf(const Thread& t, std::vector<int64_t>& out) {
  out.clear();
  for (size_t i = 0; i < t.frames.size(); ++i) {
    const Frame& frame = t.frames[i];
    if (i > 0) {
      out.push_back(frame.region->index_in_owner);
      out.push_back(frame.iteration);
    }
    out.push_back(frame.pc);
  }
}

const OpRec* RoleOf(const Thread& t) {
  for (const Frame& frame : t.frames) {
    if (frame.region->owner != nullptr &&
        frame.region->owner->kind == OpKind::kRole)
      return frame.region->owner;
  }
  return nullptr;
}

}  // namespace

bool Machine::StepBlockLockstep(int b) {
  Block& block = blocks_[b];
  bool any = false;
  std::vector<int64_t> position;
  struct Partition {
    const OpRec* role = nullptr;
    std::vector<int64_t> min;
    std::vector<int> threads;
  };
  while (!failed() && !block.finished) {
    // Partition the live threads by role; find each partition's earliest
    // statement.
    std::vector<Partition> partitions;
    for (int i = 0; i < threads_per_block_; ++i) {
      Thread& t = *threads_[block.first_thread + i];
      if (t.exited) continue;
      const OpRec* role = RoleOf(t);
      Partition* partition = nullptr;
      for (Partition& p : partitions) {
        if (p.role == role) partition = &p;
      }
      if (partition == nullptr) {
        partitions.push_back(Partition{role, {}, {}});
        partition = &partitions.back();
      }
      PositionOf(t, position);
      if (partition->threads.empty() || position < partition->min) {
        partition->min = position;
        partition->threads.clear();
        partition->threads.push_back(t.index);
      } else if (position == partition->min) {
        partition->threads.push_back(t.index);
      }
    }
    bool round = false;
    for (Partition& partition : partitions) {
      if (failed()) break;
      const OpRec* next = Current(*threads_[partition.threads.front()]);
      if (partition.role == nullptr &&
          (next == nullptr || next->kind != OpKind::kRole)) {
        // Statements after the roles wait for the roles to finish; roles
        // themselves start while others run (they are concurrent).
        bool behind = false;
        for (const Partition& other : partitions) {
          if (other.role != nullptr && other.min < partition.min) behind = true;
        }
        if (behind) continue;
      }
      std::vector<int>& group = partition.threads;
      Thread& first = *threads_[group.front()];
      if (first.wait == WaitState::kSplitK) {
        for (int index : group) {
          steps_ += 1;
          if (PollSplitK(*threads_[index]) != Outcome::kBlock) round = true;
        }
        continue;
      }
      const OpRec* rec = Current(first);
      if (rec == nullptr) continue;
      // Threads that already arrived at a barrier wait for it to complete.
      std::vector<int> active;
      for (int index : group) {
        if (threads_[index]->wait != WaitState::kBarrier)
          active.push_back(index);
      }
      if (active.empty()) continue;
      steps_ += static_cast<int64_t>(active.size());
      op_executions_[rec->id] += static_cast<int64_t>(active.size());
      if (rec->exec == Exec::kWarp || rec->exec == Exec::kWarpgroup ||
          rec->exec == Exec::kBarrier) {
        const int size = rec->exec == Exec::kWarpgroup ? 128 : 32;
        std::map<int, std::vector<int>> groups;
        for (int index : active)
          groups[threads_[index]->tid / size].push_back(index);
        for (auto& [group_id, lanes] : groups) {
          int live = 0;
          const int first_tid = group_id * size;
          for (int i = first_tid;
               i < std::min(first_tid + size, threads_per_block_); ++i) {
            if (!threads_[block.first_thread + i]->exited) ++live;
          }
          if (static_cast<int>(lanes.size()) < live) {
            PartialCollective(rec, nullptr, size == 128, group_id, b,
                              absl::StrCat(lanes.size(), " of its ", live,
                                           " live lanes reach it together"));
            break;
          }
          for (int lane : lanes) threads_[lane]->wait = WaitState::kNone;
          const Outcome outcome = rec->exec == Exec::kBarrier
                                      ? ExecuteBarrier(*rec, lanes)
                                      : ExecuteCollective(*rec, lanes);
          if (outcome == Outcome::kAdvance) {
            for (int lane : lanes) Advance(*threads_[lane]);
            round = true;
          } else if (outcome == Outcome::kHandled) {
            round = true;
          } else if (outcome == Outcome::kBlock) {
            for (int lane : lanes) threads_[lane]->wait = WaitState::kPoll;
          }
        }
        continue;
      }
      for (int index : active) {
        Thread& t = *threads_[index];
        if (t.exited || failed()) continue;
        if (rec->exec == Exec::kControl) {
          EnterControl(t, *rec);
          round = true;
          continue;
        }
        const Outcome outcome = ExecuteThreadOp(t, *rec);
        if (outcome == Outcome::kAdvance) {
          t.wait = WaitState::kNone;
          Advance(t);
          round = true;
        } else if (outcome == Outcome::kBlock) {
          t.wait = WaitState::kPoll;
        } else if (outcome == Outcome::kExit) {
          ExitThread(t);
          round = true;
        }
      }
    }
    if (steps_ > options_.max_steps) {
      Fatal(nullptr, absl::StrCat("stopped after ", steps_,
                                  " steps: the kernel does not finish"));
    }
    if (!round) break;
    any = true;
  }
  return any;
}

void Machine::RunReference() {
  auto create_next_cluster = [&]() {
    if (next_block_to_create_ >= total_blocks_) return false;
    const int cluster = blocks_[next_block_to_create_].cluster;
    for (int b : clusters_[cluster].blocks) CreateBlock(b);
    while (next_block_to_create_ < total_blocks_ &&
           blocks_[next_block_to_create_].created)
      ++next_block_to_create_;
    return true;
  };
  create_next_cluster();
  while (!failed()) {
    bool progressed = false;
    for (int b = 0; b < total_blocks_ && !failed(); ++b) {
      if (!blocks_[b].created || blocks_[b].finished) continue;
      if (StepBlockLockstep(b)) progressed = true;
    }
    if (progressed) continue;
    if (create_next_cluster()) continue;
    bool live = false;
    for (int b = 0; b < total_blocks_; ++b)
      live |= blocks_[b].created && !blocks_[b].finished;
    if (live) ReportDeadlock();
    break;
  }
  DrainAsync();
}

// ---------------------------------------------------------------------------
// Deadlocks and exit state.

void Machine::ReportDeadlock() {
  struct Waiters {
    const OpRec* op = nullptr;
    int block = 0;
    WaitState wait = WaitState::kNone;
    int count = 0;
    int first = 0;
  };
  std::vector<Waiters> groups;
  for (const auto& thread : threads_) {
    const Thread& t = *thread;
    if (t.exited || !blocks_[t.block].created) continue;
    const OpRec* op = Current(t);
    Waiters* group = nullptr;
    for (Waiters& g : groups) {
      if (g.op == op && g.block == t.block && g.wait == t.wait) group = &g;
    }
    if (group == nullptr) {
      groups.push_back(Waiters{op, t.block, t.wait, 0, t.index});
      group = &groups.back();
    }
    ++group->count;
  }
  if (groups.empty()) return;
  deadlocked_ = true;
  auto explain = [&](const Waiters& g) -> std::string {
    const Thread& t = *threads_[g.first];
    std::string who = absl::StrCat(
        g.count, g.count == 1 ? " thread" : " threads", " of block ", g.block);
    const char* verb = g.count == 1 ? " waits" : " wait";
    if (g.wait == WaitState::kSplitK) {
      return absl::StrCat(who, verb, " for the other splits of the tile");
    }
    if (g.op == nullptr) return absl::StrCat(who, verb);
    const OpRec& rec = *g.op;
    switch (rec.kind) {
      case OpKind::kMbarrierWait: {
        Thread& waiter = *threads_[g.first];
        const int64_t address = SharedAddress(waiter, rec, 0);
        const MBarrier* bar = FindMbarrier(g.block, address);
        const int64_t parity =
            static_cast<int64_t>(waiter.lanes[rec.operand[1]]);
        if (bar == nullptr || !bar->valid)
          return absl::StrCat(who, verb, " on an uninitialized mbarrier");
        return absl::StrCat(who, verb, " for parity ", parity,
                            "; the mbarrier is in phase ", bar->phase, " with ",
                            bar->pending, " of ", bar->count,
                            " arrivals pending and tx-count ", bar->tx);
      }
      case OpKind::kSemWait: {
        return absl::StrCat(who, verb, " for the semaphore to hold ",
                            LaneToInt(DType::kI32, t.lanes[rec.operand[1]]));
      }
      case OpKind::kBarrierBlock:
      case OpKind::kBarrierNamed:
      case OpKind::kBarrierRed: {
        if (g.wait == WaitState::kCollective) break;
        const int id = rec.kind == OpKind::kBarrierBlock
                           ? 0
                           : static_cast<int>(rec.int_attr);
        const BarrierState& state = blocks_[g.block].barriers[id];
        return absl::StrCat(who, verb, " at barrier ", id, ": ",
                            state.arrived.size(), " of ", state.expected,
                            " threads arrived");
      }
      default:
        break;
    }
    if (g.wait == WaitState::kCollective) {
      return absl::StrCat(who, verb, " for the rest of the ",
                          rec.exec == Exec::kWarpgroup ? "warpgroup" : "warp",
                          " at this `.aligned` op");
    }
    return absl::StrCat(who, verb, " here");
  };
  // (Lanes of an `.aligned` op that diverged were reported when they did;
  // lanes waiting at one here wait for mates blocked elsewhere.)
  bool all_barriers = true;
  const Waiters* bytes_short = nullptr;  // all arrived, bytes outstanding
  for (const Waiters& g : groups) {
    if (g.op == nullptr || (g.op->kind != OpKind::kBarrierBlock &&
                            g.op->kind != OpKind::kBarrierNamed &&
                            g.op->kind != OpKind::kBarrierRed))
      all_barriers = false;
    if (g.op != nullptr && g.op->kind == OpKind::kMbarrierWait) {
      const MBarrier* bar =
          FindMbarrier(g.block, SharedAddress(*threads_[g.first], *g.op, 0));
      if (bar != nullptr && bar->valid && bar->pending == 0 && bar->tx != 0)
        bytes_short = &g;
    }
  }
  // Lead with the most telling group.
  const Waiters& lead = bytes_short != nullptr ? *bytes_short : groups.front();
  Hazard hazard;
  hazard.kind = bytes_short != nullptr ? HazardKind::kMbarrierCount
                : all_barriers         ? HazardKind::kBarrierCount
                                       : HazardKind::kDeadlock;
  hazard.op = lead.op != nullptr ? lead.op->op : nullptr;
  hazard.message = absl::StrCat(
      bytes_short != nullptr
          ? "transaction bytes do not add up (every arrival is in, bytes "
            "are not) and nobody can proceed: "
      : all_barriers ? "a barrier is reached by other threads than it counts "
                       "and nobody can proceed: "
                     : "deadlock, nobody can proceed: ",
      explain(lead));
  for (size_t i = 0; i < groups.size() && i < 8; ++i) {
    if (&groups[i] == &lead) continue;
    hazard.extra_notes.emplace_back(
        groups[i].op != nullptr ? groups[i].op->op : nullptr,
        explain(groups[i]));
  }
  if (groups.size() > 8) {
    hazard.extra_notes.emplace_back(
        nullptr, absl::StrCat(groups.size() - 8, " more groups of waiters"));
  }
  Report(std::move(hazard));
}

void Machine::CheckExitState() {
  for (const Block& block : blocks_) {
    if (!block.created) continue;
    for (const auto& [address, bar] : block.mbarriers) {
      if (!bar.valid) continue;
      if (bar.pending == bar.count && bar.tx == 0) continue;
      Hazard hazard;
      hazard.kind = HazardKind::kMbarrierCount;
      const OpRec* where = bar.last_arrive != nullptr   ? bar.last_arrive
                           : bar.last_expect != nullptr ? bar.last_expect
                                                        : bar.last_complete_tx;
      hazard.op = where != nullptr ? where->op : bar.init.op->op;
      hazard.message = absl::StrCat(
          "the kernel ends with an mbarrier of block ", block.index,
          " in the middle of phase ", bar.phase, ": ", bar.count - bar.pending,
          " of ", bar.count, " arrivals and tx-count ", bar.tx,
          " (arrival counts or transaction bytes do not add up)");
      if (bar.init.op != nullptr) {
        hazard.other = bar.init.op->op;
        hazard.note = "the mbarrier's init";
      }
      Report(std::move(hazard));
    }
    for (int id = 0; id < 16; ++id) {
      const BarrierState& state = block.barriers[id];
      if (state.arrived.empty()) continue;
      Hazard hazard;
      hazard.kind = HazardKind::kBarrierCount;
      hazard.op = state.op != nullptr ? state.op->op : nullptr;
      hazard.message =
          absl::StrCat("the kernel ends with barrier ", id, " of block ",
                       block.index, " reached by ", state.arrived.size(),
                       " of the ", state.expected, " threads it counts");
      Report(std::move(hazard));
    }
  }
}

int64_t Machine::StateBytes() const {
  int64_t bytes = 0;
  for (const auto& thread : threads_) {
    const Thread& t = *thread;
    bytes += sizeof(Thread) + t.lanes.capacity() * sizeof(Lane) +
             t.frames.capacity() * sizeof(Frame) + t.sync.Bytes();
    for (const RegState& reg : t.regs)
      bytes += reg.lanes.capacity() * (sizeof(Lane) + 5);
  }
  auto area_bytes = [](const MemoryArea& area) {
    return static_cast<int64_t>(area.data.capacity() +
                                area.async_view.capacity() +
                                area.cells.capacity() * sizeof(Cell));
  };
  for (const auto& area : global_areas_) {
    if (area != nullptr) bytes += area_bytes(*area);
  }
  for (const Block& block : blocks_) bytes += area_bytes(block.shared);
  for (const auto& set : read_sets_) bytes += set.capacity() * sizeof(Access);
  for (const auto& op : async_ops_)
    bytes += sizeof(AsyncOp) + op->base.Bytes() +
             op->staged.capacity() * sizeof(Lane) + op->staged_bytes.capacity();
  return bytes;
}

RunOutcome Machine::Run(const Launch& launch) {
  RunOutcome outcome;
  const auto start = std::chrono::steady_clock::now();
  error_ = Setup(launch);
  if (error_.ok()) {
    if (adversarial_) {
      RunAdversarial();
    } else {
      RunReference();
    }
    if (!failed() && track_ && !deadlocked_) CheckExitState();
    for (const Block& block : blocks_) {
      for (const auto& [address, rec] : block.invalid_uses) {
        if (block.initialized.contains(address)) continue;
        Hazard hazard;
        hazard.kind = HazardKind::kMbarrierInit;
        hazard.op = rec->op;
        hazard.message = absl::StrCat("`", rec->op->mnemonic(),
                                      "` uses an mbarrier that block ",
                                      block.index, " never initializes");
        Report(std::move(hazard));
      }
    }
  }
  peak_bytes_ = std::max(peak_bytes_, StateBytes());
  outcome.error = error_;
  outcome.stopped = stopped_;
  outcome.hazards = std::move(hazards_);
  for (const BufferRec& buffer : program_.buffers()) {
    if (global_areas_[buffer.id] == nullptr) continue;
    if (!buffer.is_param && !buffer.is_workspace) continue;
    TensorData tensor = global_shapes_[buffer.id];
    tensor.bytes = global_areas_[buffer.id]->data;
    (buffer.is_param ? outcome.tensors : outcome.workspaces)
        .emplace(buffer.value->name(), std::move(tensor));
  }
  outcome.stats.ops = steps_;
  outcome.stats.async_ops = static_cast<int64_t>(async_ops_.size());
  outcome.stats.threads = static_cast<int64_t>(threads_.size());
  outcome.stats.blocks = total_blocks_;
  outcome.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  outcome.stats.peak_state_bytes = peak_bytes_;
  outcome.op_executions = std::move(op_executions_);
  return outcome;
}

RunOutcome RunKernel(const Program& program, const Launch& launch,
                     const MachineOptions& options) {
  Machine machine(program, options);
  return machine.Run(launch);
}

}  // namespace kir::check
