// What each op does, written from the PTX ISA (the instruction each op is
// documented to be in ir/language.md) and the language reference. The
// passes' effects table is not consulted.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "tools/kir-check/layout.h"
#include "tools/kir-check/machine_internal.h"

namespace kir::check {
namespace {

std::string IndexText(absl::Span<const int64_t> index) {
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

Lane NanLane(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 0x7fffffffu;
    case DType::kF16:
    case DType::kBF16:
      return 0x7fffu;
    default:
      return 0;
  }
}

bool IsSubnormalF32(uint32_t bits) {
  return (bits & 0x7f800000u) == 0 && (bits & 0x007fffffu) != 0;
}

}  // namespace

// ---------------------------------------------------------------------------
// Control flow.

Outcome Machine::EnterControl(Thread& t, const OpRec& rec) {
  switch (rec.kind) {
    case OpKind::kFor: {
      const int64_t lo = static_cast<int64_t>(t.lanes[rec.operand[0]]);
      const int64_t hi = static_cast<int64_t>(t.lanes[rec.operand[1]]);
      const int64_t step = static_cast<int64_t>(t.lanes[rec.operand[2]]);
      if (step <= 0) {
        Fatal(&rec, absl::StrCat("for step is ", step,
                                 " (a non-positive step is unsettled)"));
        return Outcome::kFatal;
      }
      if (lo >= hi) {
        Advance(t);
        return Outcome::kHandled;
      }
      Frame frame;
      frame.region = rec.regions[0].get();
      frame.is_loop = true;
      frame.iv = lo;
      frame.hi = hi;
      frame.step = step;
      frame.instance = ++t.loop_instances;
      t.lanes[frame.region->argument] = static_cast<Lane>(lo);
      t.frames.push_back(frame);
      Normalize(t);
      return Outcome::kHandled;
    }
    case OpKind::kIf: {
      const bool taken = (t.lanes[rec.operand[0]] & 1) != 0;
      const int region = taken ? 0 : 1;
      if (region >= static_cast<int>(rec.regions.size())) {
        Advance(t);
        return Outcome::kHandled;
      }
      Frame frame;
      frame.region = rec.regions[region].get();
      t.frames.push_back(frame);
      Normalize(t);
      return Outcome::kHandled;
    }
    case OpKind::kRole: {
      if (t.warp < rec.int_attr || t.warp >= rec.int_attr2) {
        Advance(t);
        return Outcome::kHandled;
      }
      Frame frame;
      frame.region = rec.regions[0].get();
      t.frames.push_back(frame);
      Normalize(t);
      return Outcome::kHandled;
    }
    case OpKind::kSplitK: {
      Frame frame;
      frame.region = rec.regions[0].get();
      t.frames.push_back(frame);
      Normalize(t);
      return Outcome::kHandled;
    }
    case OpKind::kReturn:
      ExitThread(t);
      return Outcome::kHandled;
    default:
      KIR_UNREACHABLE() << "not a control op";
  }
  return Outcome::kFatal;
}

namespace {

std::string SplitKKey(const Block& block, int dim) {
  std::string key;
  for (int i = 0; i < 3; ++i) {
    if (i != dim) absl::StrAppend(&key, block.id[i], ",");
  }
  return key;
}

}  // namespace

void Machine::ArriveSplitK(Thread& t, const OpRec& rec) {
  const int dim = static_cast<int>(rec.int_attr);
  const Block& block = blocks_[t.block];
  SplitKState& state = splitk_[SplitKKey(block, dim)];
  const int64_t splits = grid_[dim];
  if (state.partials.empty()) {
    state.expected = splits * threads_per_block_;
    state.partials.assign(splits,
                          std::vector<std::vector<Lane>>(threads_per_block_));
  }
  const int split = static_cast<int>(block.id[dim]);
  state.partials[split][t.tid] = t.regs[reg_index_[rec.operand[0]]].lanes;
  state.arrived += 1;
  Release(t, state.accumulated);
  Suspend(t, WaitState::kSplitK);
  if (state.arrived == state.expected) StateChanged();
}

Outcome Machine::PollSplitK(Thread& t) {
  const Frame& frame = t.frames.back();
  const OpRec& rec = *frame.region->owner;
  const int dim = static_cast<int>(rec.int_attr);
  const Block& block = blocks_[t.block];
  SplitKState& state = splitk_[SplitKKey(block, dim)];
  if (state.arrived < state.expected) return Outcome::kBlock;
  Acquire(t, state.accumulated);
  t.wait = WaitState::kNone;
  const int64_t splits = grid_[dim];
  const int split = static_cast<int>(block.id[dim]);
  t.frames.pop_back();
  if (split == splits - 1) {
    // The epilogue, with the partials combined in split order.
    const BufferRec& buffer = program_.buffers()[rec.operand[0]];
    std::vector<Lane>& lanes = t.regs[reg_index_[buffer.id]].lanes;
    const OpKind combine = rec.str_attr == "min"   ? OpKind::kMin
                           : rec.str_attr == "max" ? OpKind::kMax
                                                   : OpKind::kAdd;
    for (size_t e = 0; e < lanes.size(); ++e) {
      Lane value = state.partials[0][t.tid][e];
      for (int64_t s = 1; s < splits; ++s) {
        const LaneResult r = Arithmetic(combine, buffer.dtype, value,
                                        state.partials[s][t.tid][e], 0);
        if (r.error != nullptr) {
          Fatal(&rec, r.error);
          return Outcome::kFatal;
        }
        value = r.value;
      }
      lanes[e] = value;
    }
    Frame epilogue;
    epilogue.region = rec.regions[1].get();
    t.frames.push_back(epilogue);
    Normalize(t);
  } else {
    if (!t.frames.empty()) t.frames.back().pc += 1;
    Normalize(t);
  }
  MakeRunnable(t);
  return Outcome::kHandled;
}

// ---------------------------------------------------------------------------
// Helpers for memory operands.

namespace {

// The shared byte address of element `index` of `buffer`, or -1.
int64_t SharedElement(const BufferRec& buffer,
                      absl::Span<const int64_t> index) {
  const int64_t linear = buffer.shared.LinearOffset(index);
  if (linear < 0) return -1;
  return buffer.shared.Address(linear);
}

}  // namespace

// ---------------------------------------------------------------------------
// Per-thread ops.

int64_t Machine::SharedAddress(Thread& t, const OpRec& rec, int operand) {
  return SharedElement(program_.buffers()[rec.operand[operand]],
                       Indices(t, rec, operand));
}

int64_t Machine::NamedGroup(Thread& t, const OpRec& rec) {
  int64_t newest = -1;
  for (size_t i = 0; i < rec.operand.size(); ++i) {
    int64_t group = static_cast<int64_t>(t.lanes[rec.operand[i]]);
    if (rec.distance[i] > 0) {
      // `%t@k`: the group committed k iterations earlier of the innermost
      // loop around the commit, in this entry of that loop.
      group = -1;
      const Value* token = rec.op->operand(static_cast<int>(i)).value;
      const OpRec* commit = program_.RecordOf(token->defining_op());
      auto history = t.token_history.find(commit);
      int depth = 0;
      for (const Frame& frame : t.frames) {
        if (!frame.is_loop || ++depth != commit->loop_depth) continue;
        if (history == t.token_history.end()) break;
        for (const TokenRecord& record : history->second) {
          if (record.instance == frame.instance &&
              record.iteration == frame.iteration - rec.distance[i])
            group = record.group;
        }
      }
    }
    newest = std::max(newest, group);
  }
  return newest;
}

void Machine::RecordCommit(Thread& t, const OpRec& rec, int64_t group) {
  if (rec.loop_depth == 0) return;
  int depth = 0;
  for (const Frame& frame : t.frames) {
    if (!frame.is_loop || ++depth != rec.loop_depth) continue;
    std::deque<TokenRecord>& history = t.token_history[&rec];
    history.push_back(TokenRecord{frame.instance, frame.iteration, group});
    while (static_cast<int>(history.size()) > program_.max_token_distance() + 1)
      history.pop_front();
  }
}

Outcome Machine::ExecuteThreadOp(Thread& t, const OpRec& rec) {
  const std::vector<BufferRec>& buffers = program_.buffers();
  auto out = [&](int lane, Lane value) {
    t.lanes[rec.result[0] + lane] = value;
  };
  auto in = [&](int operand, int lane) {
    return t.lanes[rec.operand[operand] + lane];
  };
  auto single_issue = [&]() {
    if (!track_) return true;
    Block& block = blocks_[t.block];
    std::string key = absl::StrCat(rec.id, ":");
    for (int64_t iteration : IterationKey(t))
      absl::StrAppend(&key, iteration, ",");
    auto [it, inserted] = block.issued.emplace(key, t.tid);
    if (!inserted) {
      Hazard hazard;
      hazard.kind = HazardKind::kMultipleIssue;
      hazard.op = rec.op;
      hazard.message = absl::StrCat(
          "`", rec.op->mnemonic(), "` is issued by ", DescribeThread(t.index),
          " and by thread ", it->second,
          " of the same block in the same instance: each executing thread "
          "issues its own copy, so it must run in one thread");
      Report(std::move(hazard));
    }
    return true;
  };
  auto mbarrier_at = [&](int operand, int64_t& address) -> MBarrier* {
    const BufferRec& buffer = buffers[rec.operand[operand]];
    const Index index = Indices(t, rec, operand);
    address = SharedElement(buffer, index);
    if (address < 0) {
      Fatal(&rec, absl::StrCat("mbarrier index ", IndexText(index),
                               " is out of bounds of %", buffer.value->name()));
      return nullptr;
    }
    return FindMbarrier(t.block, address);
  };
  // An mbarrier op by a thread: the barrier must be initialized and its
  // init ordered before this use.
  // An mbarrier op by a thread: on an uninitialized barrier it does
  // nothing (reported at the end if the barrier is never initialized: a
  // use racing with the init is reported by the shadow cells instead).
  auto usable = [&](MBarrier* bar, int64_t address) {
    if (bar != nullptr && bar->valid) return true;
    blocks_[t.block].invalid_uses.emplace(address, &rec);
    return false;
  };
  // Releases by this thread must come after its bulk groups' global writes.
  auto check_release = [&]() {
    auto check = [&](AsyncOp* op) {
      if (op->agent != Agent::kTmaStore && op->agent != Agent::kTmaReduce &&
          op->agent != Agent::kBulkStore)
        return;
      const bool complete =
          track_ ? t.sync.happens.Get(op->actor) >= 2 : op->waited_full;
      if (complete) return;
      Hazard hazard;
      hazard.kind = HazardKind::kEarlyRelease;
      hazard.op = rec.op;
      hazard.other = op->rec->op;
      hazard.message = absl::StrCat(
          DescribeThread(t.index), " releases (`", rec.op->mnemonic(),
          "`) before the bulk group holding its ", AgentName(op->agent),
          " completed its writes to global memory (a bulk.wait without "
          "{read} must come first)");
      hazard.note = absl::StrCat("the ", AgentName(op->agent),
                                 " whose writes are not complete");
      Report(std::move(hazard));
    };
    for (AsyncOp* op : t.bulk_open) check(op);
    for (const Group& group : t.bulk_groups) {
      for (AsyncOp* op : group.ops) check(op);
    }
  };

  if (IsArithmetic(rec.kind)) {
    const int operands = static_cast<int>(rec.operand.size());
    for (int lane = 0; lane < rec.result_lanes; ++lane) {
      const Lane a = in(0, lane);
      const Lane b = operands > 1 ? in(1, lane) : 0;
      const Lane c = operands > 2 ? in(2, lane) : 0;
      const LaneResult r = Arithmetic(rec.kind, rec.result_dtype, a, b, c);
      if (r.error != nullptr) {
        Fatal(&rec, absl::StrCat(rec.op->mnemonic(), ": ", r.error));
        return Outcome::kFatal;
      }
      out(lane, r.value);
    }
    return Outcome::kAdvance;
  }

  switch (rec.kind) {
    case OpKind::kConst:
      out(0, rec.constant);
      return Outcome::kAdvance;
    case OpKind::kCmp: {
      const LaneResult r =
          Compare(rec.str_attr, rec.operand_dtype[0], in(0, 0), in(1, 0));
      if (r.error != nullptr) {
        Fatal(&rec, r.error);
        return Outcome::kFatal;
      }
      out(0, r.value);
      return Outcome::kAdvance;
    }
    case OpKind::kSelect: {
      const bool condition = (in(0, 0) & 1) != 0;
      for (int lane = 0; lane < rec.result_lanes; ++lane)
        out(lane, condition ? in(1, lane) : in(2, lane));
      return Outcome::kAdvance;
    }
    case OpKind::kCast:
      for (int lane = 0; lane < rec.result_lanes; ++lane)
        out(lane, Cast(rec.operand_dtype[0], rec.result_dtype, in(0, lane)));
      return Outcome::kAdvance;
    case OpKind::kVecFrom:
      for (int lane = 0; lane < rec.result_lanes; ++lane)
        out(lane, in(lane, 0));
      return Outcome::kAdvance;
    case OpKind::kVecExtract:
      out(0, in(0, static_cast<int>(rec.int_attr)));
      return Outcome::kAdvance;
    case OpKind::kThreadId:
      out(0, static_cast<Lane>(t.xyz[rec.int_attr]));
      return Outcome::kAdvance;
    case OpKind::kBlockId:
      out(0, static_cast<Lane>(blocks_[t.block].id[rec.int_attr]));
      return Outcome::kAdvance;
    case OpKind::kBlockDim:
      out(0, static_cast<Lane>(block_dim_[rec.int_attr]));
      return Outcome::kAdvance;
    case OpKind::kGridDim:
      out(0, static_cast<Lane>(grid_[rec.int_attr]));
      return Outcome::kAdvance;
    case OpKind::kClusterCtaId:
      out(0, static_cast<Lane>(blocks_[t.block].id[rec.int_attr] %
                               cluster_dim_[rec.int_attr]));
      return Outcome::kAdvance;
    case OpKind::kClusterCtaRank:
      out(0, static_cast<Lane>(blocks_[t.block].cluster_rank));
      return Outcome::kAdvance;
    case OpKind::kLaneId:
      out(0, static_cast<Lane>(t.lane));
      return Outcome::kAdvance;
    case OpKind::kWarpId:
      out(0, static_cast<Lane>(t.warp));
      return Outcome::kAdvance;
    case OpKind::kAllocShared:
    case OpKind::kAllocReg:
    case OpKind::kAllocWorkspace:
    case OpKind::kTmaPrefetch:  // a hint: nothing observable
      return Outcome::kAdvance;

    case OpKind::kLoad:
    case OpKind::kStore: {
      const bool is_store = rec.kind == OpKind::kStore;
      const BufferRec& buffer = buffers[rec.operand[0]];
      Index index = Indices(t, rec, 0);
      const int lanes = is_store ? rec.operand_lanes[1] : rec.result_lanes;
      const DType dtype = buffer.dtype;
      auto out_of_bounds = [&](const std::vector<int64_t>& shape) {
        Fatal(&rec, absl::StrCat(
                        rec.op->mnemonic(), " of %", buffer.value->name(),
                        IndexText(index),
                        lanes > 1 ? absl::StrCat(" (", lanes, " lanes)") : "",
                        " is out of bounds of ", IndexText(shape)));
        return Outcome::kFatal;
      };
      if (index.empty()) return out_of_bounds({});
      const int64_t inner = index.back();
      if (buffer.space == MemorySpace::kRegister) {
        const int64_t flat = RegFlat(buffer.id, index);
        if (flat < 0 || inner + lanes > buffer.static_shape.back())
          return out_of_bounds(buffer.static_shape);
        RegState& reg = t.regs[reg_index_[buffer.id]];
        for (int lane = 0; lane < lanes; ++lane) {
          const int64_t e = flat + lane;
          if (track_) {
            if (reg.wgmma_actor[e] != 0 &&
                t.sync.happens.Get(Actor{static_cast<uint32_t>(t.block),
                                         reg.wgmma_actor[e] - 1}) < 2) {
              Hazard hazard;
              hazard.kind = HazardKind::kRegister;
              hazard.op = rec.op;
              hazard.message = absl::StrCat(
                  DescribeThread(t.index), " ", is_store ? "writes" : "reads",
                  " %", buffer.value->name(),
                  " while a wgmma that uses it may still be running (no "
                  "wgmma.wait for it)");
              Report(std::move(hazard));
            }
            reg.touched[e] = 1;
          }
          if (is_store) {
            reg.lanes[e] = in(1, lane);
          } else {
            out(lane, reg.lanes[e]);
          }
        }
        return Outcome::kAdvance;
      }
      AccessCtx ctx = ThreadCtx(t, &rec);
      if (buffer.space == MemorySpace::kShared) {
        const int64_t linear = buffer.shared.LinearOffset(index);
        if (linear < 0 || inner + lanes > buffer.static_shape.back())
          return out_of_bounds(buffer.static_shape);
        MemoryArea& area = SharedArea(t.block);
        for (int lane = 0; lane < lanes; ++lane) {
          const int64_t address = buffer.shared.Address(linear + lane);
          if (is_store) {
            WriteLane(area, address, dtype, in(1, lane), &ctx);
          } else {
            out(lane, ReadLane(area, address, dtype, &ctx));
          }
        }
        return Outcome::kAdvance;
      }
      const TensorData& shape = GlobalShape(buffer.id);
      const int64_t element = shape.Offset(index);
      if (element < 0 || inner + lanes > shape.shape.back())
        return out_of_bounds(shape.shape);
      MemoryArea& area = GlobalArea(buffer.id);
      const int64_t stride = shape.strides.back();
      const int bytes = DTypeBytes(dtype);
      for (int lane = 0; lane < lanes; ++lane) {
        const int64_t address = (element + lane * stride) * bytes;
        if (is_store) {
          WriteLane(area, address, dtype, in(1, lane), &ctx);
        } else {
          out(lane, ReadLane(area, address, dtype, &ctx));
        }
      }
      return Outcome::kAdvance;
    }

    case OpKind::kStoreRemote: {
      // mapa + st.async: the element at the same offset in the peer CTA,
      // written later by the memory system, which then completes the
      // value's bytes on the peer's mbarrier at the same offset.
      const BufferRec& buffer = buffers[rec.operand[0]];
      const Index index = Indices(t, rec, 0);
      const int lanes = rec.operand_lanes[1];
      const int64_t linear = buffer.shared.LinearOffset(index);
      if (index.empty() || linear < 0 ||
          index.back() + lanes > buffer.static_shape.back()) {
        Fatal(&rec, absl::StrCat("store.remote of %", buffer.value->name(),
                                 IndexText(index), " (", lanes,
                                 " lanes) is out of bounds of ",
                                 IndexText(buffer.static_shape)));
        return Outcome::kFatal;
      }
      int64_t bar_address = 0;
      mbarrier_at(2, bar_address);
      if (failed()) return Outcome::kFatal;
      const int64_t rank = static_cast<int64_t>(in(3, 0));
      const int target = ClusterPeer(t, rank);
      if (target < 0) {
        Fatal(&rec, absl::StrCat("store.remote CTA rank ", rank,
                                 " is not in the cluster"));
        return Outcome::kFatal;
      }
      if (!blocks_[target].created) CreateBlock(target);
      // The complete-tx is an access of the peer's mbarrier, which its init
      // must happen before (a cluster barrier after the init).
      TrackMbarrier(t, rec, bar_address, true, true, target);
      AsyncOp& op = NewAsync(Agent::kStoreRemote, &rec, t);
      op.shared_buffer = buffer.id;
      op.shared_address = buffer.shared.Address(linear);
      op.dst_blocks.push_back(target);
      op.mbarrier_address = bar_address;
      op.bytes = int64_t{lanes} * DTypeBytes(buffer.dtype);
      for (int lane = 0; lane < lanes; ++lane) op.staged.push_back(in(1, lane));
      Issue(op);
      return Outcome::kAdvance;
    }

    case OpKind::kAtomic:
    case OpKind::kReduce:
    case OpKind::kSemWait:
    case OpKind::kSemRelease: {
      const BufferRec& buffer = buffers[rec.operand[0]];
      const Index index = Indices(t, rec, 0);
      MemoryArea* area = nullptr;
      int64_t address = -1;
      if (buffer.space == MemorySpace::kShared) {
        area = &SharedArea(t.block);
        address = SharedElement(buffer, index);
      } else if (buffer.space == MemorySpace::kGlobal) {
        area = &GlobalArea(buffer.id);
        address = GlobalOffset(buffer.id, index);
      }
      if (area == nullptr || address < 0) {
        Fatal(&rec,
              absl::StrCat(rec.op->mnemonic(), " of %", buffer.value->name(),
                           IndexText(index), " is out of bounds"));
        return Outcome::kFatal;
      }
      const DType dtype = buffer.dtype;
      const int64_t cell = address / area->granule;
      AccessCtx ctx = ThreadCtx(t, &rec, /*atomic=*/true);
      if (rec.kind == OpKind::kSemWait) {
        const Lane value = ReadLane(*area, address, dtype, &ctx);
        if (LaneToInt(dtype, value) != LaneToInt(dtype, in(1, 0))) {
          return Outcome::kBlock;
        }
        auto sync = area->location_sync.find(cell);
        if (sync != area->location_sync.end()) Acquire(t, sync->second);
        return Outcome::kAdvance;
      }
      if (rec.kind == OpKind::kSemRelease) {
        single_issue();
        check_release();
        WriteLane(*area, address, dtype, in(1, 0), &ctx);
        if (track_) {
          area->location_sync[cell] = t.sync;
          Tick(t);
        }
        StateChanged();
        return Outcome::kAdvance;
      }
      // atomic / red: one read-modify-write.
      const int order = static_cast<int>(rec.int_attr);  // 1 acq 2 rel 3 both
      if (order >= 2) check_release();
      const Lane old = LoadLane(dtype, &area->data[address]);
      const Lane operand = in(1, 0);
      const std::string& op = rec.str_attr;
      Lane value = operand;
      if (op == "add" || op == "min" || op == "max" || op == "and" ||
          op == "or") {
        const OpKind kind = op == "add"   ? OpKind::kAdd
                            : op == "min" ? OpKind::kMin
                            : op == "max" ? OpKind::kMax
                            : op == "and" ? OpKind::kAnd
                                          : OpKind::kOr;
        const LaneResult r = Arithmetic(kind, dtype, old, operand, 0);
        if (r.error != nullptr) {
          Fatal(&rec, r.error);
          return Outcome::kFatal;
        }
        value = r.value;
      }
      WriteLane(*area, address, dtype, value, &ctx);
      if (track_) {
        SyncClock& sync = area->location_sync[cell];
        if (order == 1 || order == 3) {
          t.sync.Join(sync);
        } else {
          t.pending_acquire.Join(sync.happens);
        }
        if (order >= 2) {
          sync.Join(t.sync);
        } else if (t.fence_release != nullptr) {
          sync.happens.Join(*t.fence_release);
        }
        if (order >= 2) Tick(t);
      }
      if (rec.kind == OpKind::kAtomic) out(0, old);
      StateChanged();
      return Outcome::kAdvance;
    }

    case OpKind::kFenceProxyAsync: {
      if (track_) {
        const std::string& space = rec.str_attr;
        const bool shared = space != "global";
        const bool global = space == "global" || space == "all";
        for (VClock* published :
             {shared ? &t.sync.published_shared : nullptr,
              global ? &t.sync.published_global : nullptr}) {
          if (published == nullptr) continue;
          if (options_.fence_model == FenceModel::kPath) {
            published->Join(t.sync.happens);
          } else {
            // The thread's own accesses, and those of its own cp.async
            // copies it has waited for.
            published->Set(t.actor, t.Clock());
            for (const Actor& copy : t.own_cp_async) {
              const uint32_t seen = t.sync.happens.Get(copy);
              if (seen > published->Get(copy)) published->Set(copy, seen);
            }
          }
        }
        Tick(t);
      }
      return Outcome::kAdvance;
    }
    case OpKind::kFenceAcqRel:
      if (track_) {
        t.sync.happens.Join(t.pending_acquire);
        t.pending_acquire.Clear();
        t.fence_release = std::make_unique<VClock>(t.sync.happens);
        Tick(t);
      }
      return Outcome::kAdvance;
    case OpKind::kFenceMbarrierInit:
      // Publishes this thread's own prior inits (PTX: "only applies to the
      // prior mbarrier.init operations executed by the same thread").
      if (track_) {
        t.sync.published_inits.Set(t.actor, t.Clock());
        Tick(t);
      }
      return Outcome::kAdvance;

    case OpKind::kMbarrierInit: {
      single_issue();
      int64_t address = 0;
      mbarrier_at(0, address);
      if (failed()) return Outcome::kFatal;
      TrackMbarrier(t, rec, address, true, false);
      blocks_[t.block].initialized.insert(address);
      MBarrier& bar = blocks_[t.block].mbarriers[address];
      bar = MBarrier();
      bar.valid = true;
      bar.count = rec.int_attr;
      bar.pending = rec.int_attr;
      bar.init.actor = t.actor;
      bar.init.clock = track_ ? t.Clock() : 1;
      bar.init.op = &rec;
      bar.init.thread = t.index;
      StateChanged();
      return Outcome::kAdvance;
    }
    case OpKind::kMbarrierInval: {
      single_issue();
      int64_t address = 0;
      MBarrier* bar = mbarrier_at(0, address);
      if (failed()) return Outcome::kFatal;
      TrackMbarrier(t, rec, address, true, false);
      if (usable(bar, address)) bar->valid = false;
      return Outcome::kAdvance;
    }
    case OpKind::kMbarrierArrive:
    case OpKind::kMbarrierArriveTx:
    case OpKind::kMbarrierArriveRemote: {
      if (rec.kind == OpKind::kMbarrierArriveTx) single_issue();
      int64_t address = 0;
      MBarrier* bar = mbarrier_at(0, address);
      if (failed()) return Outcome::kFatal;
      int target = t.block;
      if (rec.kind == OpKind::kMbarrierArriveRemote) {
        // mapa: the barrier at the same offset in the peer CTA.
        const int64_t rank = static_cast<int64_t>(in(1, 0));
        target = ClusterPeer(t, rank);
        if (target < 0) {
          Fatal(&rec, absl::StrCat("mbarrier.arrive_remote CTA rank ", rank,
                                   " is not in the cluster"));
          return Outcome::kFatal;
        }
        if (!blocks_[target].created) CreateBlock(target);
        if (blocks_[target].finished) {
          Hazard hazard;
          hazard.kind = HazardKind::kMbarrierInit;
          hazard.op = rec.op;
          hazard.message = absl::StrCat(
              DescribeThread(t.index), " arrives on an mbarrier of block ",
              target,
              ", which has exited: its shared memory is gone (a cluster "
              "barrier before exit keeps a CTA's mbarriers alive while peers "
              "may still arrive)");
          Report(std::move(hazard));
          return Outcome::kAdvance;
        }
        bar = FindMbarrier(target, address);
      }
      TrackMbarrier(t, rec, address, true, true, target);
      if (bar == nullptr || !bar->valid) {
        blocks_[target].invalid_uses.emplace(address, &rec);
        return Outcome::kAdvance;
      }
      if (!bar->completion_observed && bar->phase > 0) {
        Hazard hazard;
        hazard.kind = HazardKind::kMbarrierCount;
        hazard.op = rec.op;
        hazard.message = absl::StrCat(
            DescribeThread(t.index), " arrives in phase ", bar->phase,
            " before any wait observed phase ", bar->phase - 1,
            " complete (PTX requires a successful wait on each phase before "
            "an arrive on the next)");
        Report(std::move(hazard));
      }
      if (bar->pending == 0) {
        Hazard hazard;
        hazard.kind = HazardKind::kMbarrierCount;
        hazard.op = rec.op;
        hazard.message = absl::StrCat(
            "more arrivals than the mbarrier's count of ", bar->count,
            " in phase ", bar->phase, " (it waits for tx-count ", bar->tx, ")");
        Report(std::move(hazard));
        return Outcome::kAdvance;
      }
      if (rec.kind == OpKind::kMbarrierArriveTx) {
        bar->tx += rec.int_attr;
        bar->expected_bytes += rec.int_attr;
        bar->last_expect = &rec;
      }
      bar->pending -= 1;
      bar->last_arrive = &rec;
      Release(t, bar->accumulated);
      MaybeCompletePhase(*bar, target, address);
      return Outcome::kAdvance;
    }
    case OpKind::kMbarrierWait: {
      int64_t address = 0;
      MBarrier* bar = mbarrier_at(0, address);
      if (failed()) return Outcome::kFatal;
      TrackMbarrier(t, rec, address, false, true);
      if (!usable(bar, address)) return Outcome::kAdvance;
      const int64_t parity = static_cast<int64_t>(in(1, 0));
      if (parity != 0 && parity != 1) {
        Fatal(&rec, absl::StrCat("mbarrier.wait parity is ", parity,
                                 " (must be 0 or 1)"));
        return Outcome::kFatal;
      }
      // try_wait.parity: true once the phase of that parity, the current
      // one's predecessor, has completed.
      if (bar->phase % 2 == parity) return Outcome::kBlock;
      Acquire(t, bar->completed);
      bar->completion_observed = true;
      return Outcome::kAdvance;
    }

    case OpKind::kCpAsync: {
      const BufferRec& dst = buffers[rec.operand[0]];
      const BufferRec& src = buffers[rec.operand[1]];
      const Index dst_index = Indices(t, rec, 0);
      const Index src_index = Indices(t, rec, 1);
      const int64_t bytes = rec.int_attr;
      const int64_t linear = dst.shared.LinearOffset(dst_index);
      const int64_t element = GlobalShape(src.id).Offset(src_index);
      const int element_bytes = DTypeBytes(src.dtype);
      if (linear < 0 || element < 0 ||
          dst_index.back() + bytes / element_bytes > dst.static_shape.back() ||
          (element + bytes / element_bytes) * element_bytes >
              static_cast<int64_t>(GlobalArea(src.id).data.size())) {
        Fatal(&rec, "cp.async is out of bounds");
        return Outcome::kFatal;
      }
      AsyncOp& op = NewAsync(Agent::kCpAsync, &rec, t);
      op.touches_shared = true;
      op.shared_address = dst.shared.Address(linear);
      op.global_buffer = src.id;
      op.global_offset = element;
      op.bytes = bytes;
      t.cp_async_open.push_back(&op);
      t.own_cp_async.push_back(op.actor);
      Issue(op);
      return Outcome::kAdvance;
    }

    case OpKind::kCpAsyncCommit:
    case OpKind::kBulkCommit: {
      const bool bulk = rec.kind == OpKind::kBulkCommit;
      std::vector<AsyncOp*>& open = bulk ? t.bulk_open : t.cp_async_open;
      std::vector<Group>& groups = bulk ? t.bulk_groups : t.cp_async_groups;
      Group group;
      group.id = next_group_++;
      group.ops = std::move(open);
      open.clear();
      groups.push_back(std::move(group));
      out(0, static_cast<Lane>(groups.back().id));
      RecordCommit(t, rec, groups.back().id);
      return Outcome::kAdvance;
    }

    case OpKind::kCpAsyncWait:
    case OpKind::kBulkWait: {
      const bool bulk = rec.kind == OpKind::kBulkWait;
      const bool full = !bulk || !rec.flag;
      std::vector<Group>& groups = bulk ? t.bulk_groups : t.cp_async_groups;
      const int64_t newest = NamedGroup(t, rec);
      if (newest < 0) return Outcome::kAdvance;  // no such group: no-op
      for (const Group& group : groups) {
        if (group.id > newest) break;
        for (AsyncOp* op : group.ops) {
          if (full ? !op->write_done : !op->read_done) return Outcome::kBlock;
        }
      }
      for (Group& group : groups) {
        if (group.id > newest) break;
        for (AsyncOp* op : group.ops) JoinAsync(t, *op, full);
      }
      if (full) {
        groups.erase(std::remove_if(groups.begin(), groups.end(),
                                    [&](const Group& group) {
                                      return group.id <= newest;
                                    }),
                     groups.end());
      }
      return Outcome::kAdvance;
    }

    case OpKind::kTmaLoad:
    case OpKind::kTmaStore:
    case OpKind::kTmaReduce: {
      single_issue();
      const bool load = rec.kind == OpKind::kTmaLoad;
      const int shared_operand = load ? 0 : 1;
      const int map_operand = load ? 1 : 0;
      const BufferRec& shared = buffers[rec.operand[shared_operand]];
      const TensorMapRec& map = program_.maps()[rec.operand[map_operand]];
      const Index index = Indices(t, rec, shared_operand);
      const int64_t linear = shared.shared.LinearOffset(index);
      int64_t box_elements = 1;
      for (int64_t extent : map.box) box_elements *= extent;
      const int element_bytes = DTypeBytes(map.dtype);
      const int64_t start =
          linear < 0 ? -1 : shared.shared.PlainAddress(linear);
      if (linear < 0 || start + box_elements * element_bytes >
                            shared.shared.base + shared.shared.Bytes()) {
        Fatal(&rec, absl::StrCat("the box of ", box_elements, " elements at %",
                                 shared.value->name(), IndexText(index),
                                 " does not fit in it"));
        return Outcome::kFatal;
      }
      AsyncOp& op =
          NewAsync(load                            ? Agent::kTmaLoad
                   : rec.kind == OpKind::kTmaStore ? Agent::kTmaStore
                                                   : Agent::kTmaReduce,
                   &rec, t);
      op.touches_shared = true;
      op.map = map.id;
      op.coords = Indices(t, rec, map_operand);
      op.shared_address = start;
      op.bytes = box_elements * element_bytes;
      op.reduce_op = rec.str_attr;
      if (load) {
        int64_t address = 0;
        mbarrier_at(2, address);
        if (failed()) return Outcome::kFatal;
        op.mbarrier_address = address;
        if (rec.int_attr != 0) {
          // Multicast: every CTA of the cluster whose rank bit is set.
          for (int b : clusters_[blocks_[t.block].cluster].blocks) {
            if ((rec.int_attr >> blocks_[b].cluster_rank) & 1)
              op.dst_blocks.push_back(b);
          }
        } else {
          op.dst_blocks.push_back(t.block);
        }
        for (int b : op.dst_blocks) {
          if (b != t.block && !blocks_[b].created) CreateBlock(b);
          MBarrier* bar = FindMbarrier(b, address);
          if (!track_ || bar == nullptr || !bar->valid) continue;
          // complete-tx reaches the mbarrier from the copy engine: the init
          // must be published by fence.mbarrier_init (R8).
          if (op.base.published_inits.Get(bar->init.actor) < bar->init.clock) {
            Hazard hazard;
            hazard.kind = HazardKind::kMbarrierInit;
            hazard.op = rec.op;
            hazard.other = bar->init.op->op;
            hazard.message = absl::StrCat(
                "the tma.load completes on an mbarrier whose init by ",
                DescribeThread(bar->init.thread),
                " no fence.mbarrier_init by that thread, before the "
                "synchronization that orders it, made visible to the async "
                "proxy");
            hazard.note = "the mbarrier.init";
            Report(std::move(hazard));
          }
        }
      } else {
        t.bulk_open.push_back(&op);
      }
      Issue(op);
      return Outcome::kAdvance;
    }

    case OpKind::kBulkLoad:
    case OpKind::kBulkStore: {
      single_issue();
      const bool load = rec.kind == OpKind::kBulkLoad;
      const int shared_operand = load ? 0 : 1;
      const int global_operand = load ? 1 : 0;
      const BufferRec& shared = buffers[rec.operand[shared_operand]];
      const BufferRec& global = buffers[rec.operand[global_operand]];
      const Index shared_index = Indices(t, rec, shared_operand);
      const Index global_index = Indices(t, rec, global_operand);
      const int64_t linear = shared.shared.LinearOffset(shared_index);
      const int64_t element = GlobalShape(global.id).Offset(global_index);
      const int64_t bytes = rec.int_attr;
      const int element_bytes = DTypeBytes(global.dtype);
      const int64_t start =
          linear < 0 ? -1 : shared.shared.PlainAddress(linear);
      if (linear < 0 || element < 0 ||
          start + bytes > shared.shared.base + shared.shared.Bytes() ||
          element * element_bytes + bytes >
              static_cast<int64_t>(GlobalArea(global.id).data.size())) {
        Fatal(&rec,
              absl::StrCat("the ", bytes, " bytes of the bulk copy at %",
                           shared.value->name(), IndexText(shared_index),
                           " and %", global.value->name(),
                           IndexText(global_index), " do not fit in them"));
        return Outcome::kFatal;
      }
      AsyncOp& op =
          NewAsync(load ? Agent::kBulkLoad : Agent::kBulkStore, &rec, t);
      op.touches_shared = true;
      op.shared_address = start;
      op.global_buffer = global.id;
      op.global_offset = element;
      op.bytes = bytes;
      if (load) {
        int64_t address = 0;
        mbarrier_at(2, address);
        if (failed()) return Outcome::kFatal;
        op.mbarrier_address = address;
        op.dst_blocks.push_back(t.block);
      } else {
        t.bulk_open.push_back(&op);
      }
      Issue(op);
      return Outcome::kAdvance;
    }

    default:
      break;
  }
  Fatal(&rec, absl::StrCat("kir-check cannot execute `", rec.op->mnemonic(),
                           "` here"));
  return Outcome::kFatal;
}

// ---------------------------------------------------------------------------
// Warp and warpgroup collectives.

Outcome Machine::ExecuteCollective(const OpRec& rec,
                                   const std::vector<int>& lanes) {
  const std::vector<BufferRec>& buffers = program_.buffers();
  Thread& first = *threads_[lanes.front()];
  switch (rec.kind) {
    case OpKind::kElectSync: {
      // One lane, the same for the same active lanes: the first under the
      // reference schedule, a seeded one under the adversarial schedule.
      int leader = lanes.front();
      if (adversarial_) {
        const int pick = static_cast<int>(
            (blocks_[first.block].elected_lane_seed + first.warp * 7919) %
            static_cast<int>(lanes.size()));
        leader = lanes[pick];
      }
      for (int lane : lanes)
        threads_[lane]->lanes[rec.result[0]] = lane == leader ? 1 : 0;
      return Outcome::kAdvance;
    }
    case OpKind::kShflSync: {
      // PTX shfl.sync with the emitter's clamp (c = 0x1f, 0 for up).
      std::vector<Lane> values(32, 0);
      std::vector<bool> present(32, false);
      for (int lane : lanes) {
        const Thread& t = *threads_[lane];
        values[t.lane] = t.lanes[rec.operand[0]];
        present[t.lane] = true;
      }
      const std::string& mode = rec.str_attr;
      for (int lane : lanes) {
        Thread& t = *threads_[lane];
        const int64_t b =
            LaneToInt(rec.operand_dtype[1], t.lanes[rec.operand[1]]);
        const int bval = static_cast<int>(b & 31);
        int source = t.lane;
        if (mode == "idx") {
          source = bval;
        } else if (mode == "up") {
          source = t.lane - bval >= 0 ? t.lane - bval : t.lane;
        } else if (mode == "down") {
          source = t.lane + bval <= 31 ? t.lane + bval : t.lane;
        } else {
          source = t.lane ^ bval;
        }
        if (!present[source]) {
          Fatal(&rec, absl::StrCat("shfl.sync reads lane ", source,
                                   ", which this warp does not have"));
          return Outcome::kFatal;
        }
        t.lanes[rec.result[0]] = values[source];
      }
      return Outcome::kAdvance;
    }
    case OpKind::kLdmatrix:
    case OpKind::kStmatrix: {
      const bool store = rec.kind == OpKind::kStmatrix;
      const BufferRec& buffer = buffers[rec.operand[0]];
      const int count = static_cast<int>(rec.int_attr);
      const bool trans = rec.flag;
      const Index origin = Indices(first, rec, 0);
      const int rank = static_cast<int>(origin.size());
      if (rank < 2) {
        Fatal(&rec, "ldmatrix/stmatrix need a buffer of rank 2 or more");
        return Outcome::kFatal;
      }
      for (int lane : lanes) {
        if (Indices(*threads_[lane], rec, 0) != origin) {
          Fatal(&rec, absl::StrCat(rec.op->mnemonic(),
                                   ": the box origin differs between lanes "
                                   "(it must be the same in every lane)"));
          return Outcome::kFatal;
        }
      }
      const auto [rows, columns] = MatrixBoxExtent(count, trans);
      Index corner = origin;
      corner[rank - 2] += rows - 1;
      corner[rank - 1] += columns - 1;
      if (buffer.shared.LinearOffset(origin) < 0 ||
          buffer.shared.LinearOffset(corner) < 0) {
        Fatal(&rec, absl::StrCat("the ", rows, "x", columns, " box at %",
                                 buffer.value->name(), IndexText(origin),
                                 " is out of bounds of ",
                                 IndexText(buffer.static_shape)));
        return Outcome::kFatal;
      }
      const DType value_dtype = store ? rec.operand_dtype[1] : rec.result_dtype;
      const bool packed = value_dtype == DType::kI32;
      MemoryArea& area = SharedArea(first.block);
      for (int lane_index : lanes) {
        Thread& t = *threads_[lane_index];
        AccessCtx ctx = ThreadCtx(t, &rec);
        for (int e = 0; e < 2 * count; ++e) {
          const auto [row, column] =
              MatrixFragmentElement(count, trans, t.lane, e);
          Index index = origin;
          index[rank - 2] += row;
          index[rank - 1] += column;
          const int64_t address =
              buffer.shared.Address(buffer.shared.LinearOffset(index));
          const int value_lane = packed ? e / 2 : e;
          const int shift = packed ? 16 * (e % 2) : 0;
          if (store) {
            const Lane whole = t.lanes[rec.operand[1] + value_lane];
            const Lane half = (whole >> shift) & 0xffff;
            WriteLane(area, address, buffer.dtype, half, &ctx);
          } else {
            const Lane half = ReadLane(area, address, buffer.dtype, &ctx);
            Lane& out = t.lanes[rec.result[0] + value_lane];
            if (packed) {
              if (e % 2 == 0) out = 0;
              const uint32_t bits = static_cast<uint32_t>(out) |
                                    static_cast<uint32_t>(half << shift);
              out = static_cast<Lane>(
                  static_cast<int64_t>(static_cast<int32_t>(bits)));
            } else {
              out = half;
            }
          }
        }
      }
      return Outcome::kAdvance;
    }
    case OpKind::kWgmmaFence:
      for (int lane : lanes) {
        Thread& t = *threads_[lane];
        t.wgmma_fenced = true;
        if (track_) {
          for (RegState& reg : t.regs)
            std::fill(reg.touched.begin(), reg.touched.end(), 0);
        }
      }
      return Outcome::kAdvance;
    case OpKind::kSetMaxNReg:
      // Register budget only: nothing the interpreter can observe.
      return Outcome::kAdvance;
    case OpKind::kWgmma: {
      if (lanes.size() != 128) {
        Fatal(&rec, "wgmma needs the 128 threads of a warpgroup");
        return Outcome::kFatal;
      }
      const BufferRec& acc = buffers[rec.operand[0]];
      const BufferRec& a = buffers[rec.operand[1]];
      const BufferRec& b = buffers[rec.operand[2]];
      const int n = static_cast<int>(rec.int_attr);
      AsyncOp& op = NewAsync(Agent::kWgmma, &rec, first);
      AsyncOp*& last = last_wgmma_[int64_t{first.block} * 64 + first.tid / 128];
      op.previous = last;
      last = &op;
      for (int lane : lanes) {
        if (lane != first.index && track_) op.base.Join(threads_[lane]->sync);
      }
      op.lanes = lanes;
      op.acc_buffer = acc.id;
      op.a_buffer = a.id;
      op.b_buffer = b.id;
      op.a_in_registers = a.space == MemorySpace::kRegister;
      op.touches_shared = true;
      op.acc_origin = Indices(first, rec, 0);
      op.a_origin = Indices(first, rec, 1);
      op.b_origin = Indices(first, rec, 2);
      // A zero-init predicate (operand 3) decides for the whole warpgroup.
      const bool zero_operand = rec.operand.size() > 3;
      op.zero_init =
          rec.flag || (zero_operand && first.lanes[rec.operand[3]] != 0);
      for (int lane : lanes) {
        Thread& t = *threads_[lane];
        if (Indices(t, rec, 1) != op.a_origin ||
            Indices(t, rec, 2) != op.b_origin ||
            Indices(t, rec, 0) != op.acc_origin ||
            (zero_operand && (t.lanes[rec.operand[3]] != 0) != op.zero_init)) {
          Fatal(&rec, "wgmma operands differ between the warpgroup's threads");
          return Outcome::kFatal;
        }
      }
      // Registers: the accumulator (N/2 elements) and A from registers.
      const int k = 32 / DTypeBytes(a.dtype);
      auto check_registers = [&](Thread& t, const BufferRec& buffer,
                                 const Index& origin, int count) -> bool {
        const int64_t flat = RegFlat(buffer.id, origin);
        if (flat < 0 || origin.back() + count > buffer.static_shape.back()) {
          Fatal(&rec, absl::StrCat("the wgmma fragment of ", count,
                                   " elements at %", buffer.value->name(),
                                   IndexText(origin), " is out of bounds"));
          return false;
        }
        if (!track_) return true;
        RegState& reg = t.regs[reg_index_[buffer.id]];
        for (int j = 0; j < count; ++j) {
          if (reg.touched[flat + j] || !t.wgmma_fenced) {
            Hazard hazard;
            hazard.kind = HazardKind::kRegister;
            hazard.op = rec.op;
            hazard.message = absl::StrCat(
                "the wgmma uses %", buffer.value->name(), " of ",
                DescribeThread(t.index),
                t.wgmma_fenced
                    ? " after that thread accessed it with no wgmma.fence since"
                    : " before any wgmma.fence in that thread");
            Report(std::move(hazard));
            break;
          }
        }
        for (int j = 0; j < count; ++j)
          reg.wgmma_actor[flat + j] = op.actor.local + 1;
        return true;
      };
      for (int lane : lanes) {
        Thread& t = *threads_[lane];
        if (!check_registers(t, acc, op.acc_origin, n / 2))
          return Outcome::kFatal;
        if (op.a_in_registers && !check_registers(t, a, op.a_origin, k / 2))
          return Outcome::kFatal;
        t.wgmma_open.push_back(&op);
      }
      Issue(op);
      return Outcome::kAdvance;
    }
    case OpKind::kWgmmaCommit:
      for (int lane : lanes) {
        Thread& t = *threads_[lane];
        Group group;
        group.id = next_group_;
        group.ops = std::move(t.wgmma_open);
        t.wgmma_open.clear();
        t.wgmma_groups.push_back(std::move(group));
        t.lanes[rec.result[0]] = static_cast<Lane>(next_group_);
        RecordCommit(t, rec, next_group_);
      }
      ++next_group_;
      return Outcome::kAdvance;
    case OpKind::kWgmmaWait: {
      // Each thread's own groups (the warpgroup's, so alike in every lane).
      std::vector<int64_t> newest(lanes.size());
      for (size_t i = 0; i < lanes.size(); ++i) {
        Thread& t = *threads_[lanes[i]];
        newest[i] = NamedGroup(t, rec);
        for (const Group& group : t.wgmma_groups) {
          if (group.id > newest[i]) break;
          for (AsyncOp* op : group.ops) {
            if (!op->write_done) return Outcome::kBlock;
          }
        }
      }
      for (size_t i = 0; i < lanes.size(); ++i) {
        Thread& t = *threads_[lanes[i]];
        for (const Group& group : t.wgmma_groups) {
          if (group.id > newest[i]) break;
          for (AsyncOp* op : group.ops) JoinAsync(t, *op, true);
        }
        const int64_t limit = newest[i];
        t.wgmma_groups.erase(
            std::remove_if(
                t.wgmma_groups.begin(), t.wgmma_groups.end(),
                [&](const Group& group) { return group.id <= limit; }),
            t.wgmma_groups.end());
      }
      return Outcome::kAdvance;
    }
    default:
      break;
  }
  Fatal(&rec, absl::StrCat("kir-check cannot execute `", rec.op->mnemonic(),
                           "` as a collective"));
  return Outcome::kFatal;
}

// ---------------------------------------------------------------------------
// Barriers.

Outcome Machine::ExecuteBarrier(const OpRec& rec,
                                const std::vector<int>& lanes) {
  Thread& first = *threads_[lanes.front()];
  Block& block = blocks_[first.block];
  if (rec.kind == OpKind::kClusterArrive || rec.kind == OpKind::kClusterWait) {
    ClusterState& cluster = clusters_[block.cluster];
    if (rec.kind == OpKind::kClusterArrive) {
      for (int lane : lanes) {
        Thread& t = *threads_[lane];
        if (t.cluster_arrived == cluster.generation) {
          Hazard hazard;
          hazard.kind = HazardKind::kBarrierCount;
          hazard.op = rec.op;
          hazard.message = absl::StrCat(DescribeThread(t.index),
                                        " arrives twice at the cluster barrier "
                                        "without waiting in between");
          Report(std::move(hazard));
          continue;
        }
        t.cluster_arrived = cluster.generation;
        cluster.arrived += 1;
        if (!rec.flag) {
          Release(t, cluster.accumulated);
        }
      }
      MaybeCompleteCluster(cluster);
      return Outcome::kAdvance;
    }
    for (int lane : lanes) {
      Thread& t = *threads_[lane];
      if (t.cluster_arrived < 0) {
        Hazard hazard;
        hazard.kind = HazardKind::kBarrierCount;
        hazard.op = rec.op;
        hazard.message = absl::StrCat(DescribeThread(t.index),
                                      " waits at the cluster barrier without "
                                      "having arrived");
        Report(std::move(hazard));
        continue;
      }
      if (cluster.completed < t.cluster_arrived) return Outcome::kBlock;
    }
    for (int lane : lanes) {
      Thread& t = *threads_[lane];
      Acquire(t, cluster.completed_clock);
      t.cluster_arrived = -1;
    }
    return Outcome::kAdvance;
  }
  const bool wait = rec.kind != OpKind::kBarrierArrive;
  const int id =
      rec.kind == OpKind::kBarrierBlock ? 0 : static_cast<int>(rec.int_attr);
  const int64_t expected =
      rec.kind == OpKind::kBarrierBlock ? threads_per_block_ : rec.int_attr2;
  if (id < 0 || id >= 16) {
    Fatal(&rec, "barrier ids are 0..15");
    return Outcome::kFatal;
  }
  BarrierState& state = block.barriers[id];
  const bool reduces = rec.kind == OpKind::kBarrierRed;
  if (state.arrived.empty()) {
    state.expected = expected;
    state.op = &rec;
  } else if ((state.op->kind == OpKind::kBarrierRed) != reduces ||
             (reduces && state.op->str_attr != rec.str_attr)) {
    // PTX leaves a generation that mixes bar.red with bar.sync or
    // bar.arrive, or two reductions, undefined.
    Hazard hazard;
    hazard.kind = HazardKind::kBarrierCount;
    hazard.op = rec.op;
    hazard.other = state.op->op;
    hazard.message =
        absl::StrCat("barrier ", id, " is reached by `", rec.op->mnemonic(),
                     reduces ? absl::StrCat(" ", rec.str_attr) : std::string(),
                     "` here while a generation of `", state.op->op->mnemonic(),
                     state.op->kind == OpKind::kBarrierRed
                         ? absl::StrCat(" ", state.op->str_attr)
                         : std::string(),
                     "` is in progress");
    hazard.note = "the other use";
    Report(std::move(hazard));
  } else if (state.expected != expected) {
    Hazard hazard;
    hazard.kind = HazardKind::kBarrierCount;
    hazard.op = rec.op;
    hazard.other = state.op->op;
    hazard.message = absl::StrCat("barrier ", id, " is used with ", expected,
                                  " threads here while a generation counting ",
                                  state.expected, " is in progress");
    hazard.note = "the other use";
    Report(std::move(hazard));
  }
  std::vector<int> arrive_only;
  for (int lane : lanes) {
    Thread& t = *threads_[lane];
    if (std::find(state.arrived.begin(), state.arrived.end(), lane) !=
        state.arrived.end()) {
      Hazard hazard;
      hazard.kind = HazardKind::kBarrierCount;
      hazard.op = rec.op;
      hazard.message =
          absl::StrCat(DescribeThread(t.index), " arrives twice at barrier ",
                       id, " in one generation");
      Report(std::move(hazard));
    } else {
      state.arrived.push_back(lane);
      Release(t, state.accumulated);
      if (reduces && t.lanes[rec.operand[0]] != 0) ++state.votes;
    }
    if (wait) {
      state.waiting.push_back(lane);
      state.waiting_ops.push_back(&rec);
      Suspend(t, WaitState::kBarrier);
    } else {
      arrive_only.push_back(lane);
    }
    if (static_cast<int64_t>(state.arrived.size()) >= state.expected) {
      // Generation complete: every waiter acquires every arrival.
      std::vector<int> waiting = std::move(state.waiting);
      std::vector<const OpRec*> waiting_ops = std::move(state.waiting_ops);
      SyncClock accumulated = std::move(state.accumulated);
      const int64_t votes = state.votes;
      const int64_t arrivals = static_cast<int64_t>(state.arrived.size());
      state = BarrierState();
      for (size_t i = 0; i < waiting.size(); ++i) {
        const int w = waiting[i];
        Thread& waiter = *threads_[w];
        const OpRec& at = *waiting_ops[i];
        if (at.kind == OpKind::kBarrierRed) {
          // Every participant receives the reduction over the generation.
          waiter.lanes[at.result[0]] =
              at.str_attr == "popc"  ? IntToLane(DType::kI32, votes)
              : at.str_attr == "and" ? Lane(votes == arrivals ? 1 : 0)
                                     : Lane(votes > 0 ? 1 : 0);
        }
        Acquire(waiter, accumulated);
        waiter.wait = WaitState::kNone;
        Advance(waiter);
        MakeRunnable(waiter);
      }
    }
  }
  for (int lane : arrive_only) {
    Advance(*threads_[lane]);
    MakeRunnable(*threads_[lane]);
  }
  return Outcome::kHandled;
}

// ---------------------------------------------------------------------------
// Async operations: their reads and writes.

void Machine::PerformRead(AsyncOp& op) {
  if (op.read_done) return;
  if (op.previous != nullptr && !op.previous->write_done) {
    PerformWrite(*op.previous);
    if (failed()) return;
  }
  op.read_done = true;
  const std::vector<BufferRec>& buffers = program_.buffers();
  AccessCtx ctx = AgentCtx(op, false);
  switch (op.agent) {
    case Agent::kTmaLoad: {
      const TensorMapRec& map = program_.maps()[op.map];
      const TensorData& tensor = GlobalShape(map.tensor);
      MemoryArea& area = GlobalArea(map.tensor);
      const int rank = static_cast<int>(map.box.size());
      std::vector<int64_t> box_index(rank, 0), global(rank);
      int64_t elements = 1;
      for (int64_t extent : map.box) elements *= extent;
      op.staged.resize(elements);
      for (int64_t e = 0; e < elements; ++e) {
        int64_t rest = e;
        for (int d = rank - 1; d >= 0; --d) {
          box_index[d] = rest % map.box[d];
          rest /= map.box[d];
          global[d] = op.coords[d] + box_index[d];
        }
        const int64_t element = tensor.Offset(global);
        if (element < 0) {
          // Outside the tensor: the map's fill (NaN only for floats).
          op.staged[e] = map.oob_nan ? NanLane(map.dtype) : 0;
        } else {
          op.staged[e] =
              ReadLane(area, element * DTypeBytes(map.dtype), map.dtype, &ctx);
        }
      }
      break;
    }
    case Agent::kTmaStore:
    case Agent::kTmaReduce: {
      const TensorMapRec& map = program_.maps()[op.map];
      const TensorData& tensor = GlobalShape(map.tensor);
      MemoryArea& area = SharedArea(op.block);
      const int rank = static_cast<int>(map.box.size());
      int64_t elements = 1;
      for (int64_t extent : map.box) elements *= extent;
      op.staged.resize(elements);
      op.staged_valid.resize(elements);
      std::vector<int64_t> box_index(rank), global(rank);
      const int element_bytes = DTypeBytes(map.dtype);
      for (int64_t e = 0; e < elements; ++e) {
        int64_t rest = e;
        for (int d = rank - 1; d >= 0; --d) {
          box_index[d] = rest % map.box[d];
          rest /= map.box[d];
          global[d] = op.coords[d] + box_index[d];
        }
        op.staged_valid[e] = tensor.Offset(global) >= 0;
        const int64_t address =
            SwizzleAddress(map.swizzle, op.shared_address + e * element_bytes);
        op.staged[e] = ReadLane(area, address, map.dtype, &ctx);
      }
      break;
    }
    case Agent::kBulkLoad:
    case Agent::kCpAsync:
      op.staged_bytes.resize(op.bytes);
      ReadBytes(GlobalArea(op.global_buffer),
                op.global_offset * DTypeBytes(buffers[op.global_buffer].dtype),
                op.bytes, op.staged_bytes.data(), &ctx);
      break;
    case Agent::kBulkStore:
      op.staged_bytes.resize(op.bytes);
      ReadBytes(SharedArea(op.block), op.shared_address, op.bytes,
                op.staged_bytes.data(), &ctx);
      break;
    case Agent::kWgmma: {
      // D = C + A @ B over one m64nNk16 step: products rounded to f32 (exact
      // for 16-bit inputs within f32's range), summed in k order with one
      // rounding per addition.
      const BufferRec& acc = buffers[op.acc_buffer];
      const BufferRec& a = buffers[op.a_buffer];
      const BufferRec& b = buffers[op.b_buffer];
      const OpRec& rec = *op.rec;
      const int n = static_cast<int>(rec.int_attr);
      const int k = 32 / DTypeBytes(a.dtype);
      const bool a_k_major = rec.str_attr[0] == 'k';
      const bool b_k_major = rec.str_attr[1] == 'k';
      MemoryArea& area = SharedArea(op.block);
      // Element (row, column) of a box at `origin`, from the innermost two
      // dimensions of a shared buffer; -1 when outside it.
      auto box_linear = [](const BufferRec& buffer, const Index& origin,
                           int rows, int columns) -> int64_t {
        const size_t rank = origin.size();
        const std::vector<int64_t>& shape = buffer.shared.shape;
        if (origin[rank - 2] + rows > shape[rank - 2] ||
            origin[rank - 1] + columns > shape[rank - 1])
          return -1;
        return buffer.shared.LinearOffset(origin);
      };
      auto load_box = [&](const BufferRec& buffer, const Index& origin,
                          int rows, int columns, bool transposed,
                          std::vector<float>& out) -> bool {
        // out[i * columns' + j], where (i, j) indexes the operand matrix and
        // the buffer holds it as rows x columns, transposed or not.
        const int64_t base = box_linear(buffer, origin, rows, columns);
        if (base < 0) return false;
        const int64_t pitch = buffer.shared.shape.back() + buffer.shared.pad;
        for (int r = 0; r < rows; ++r) {
          for (int c = 0; c < columns; ++c) {
            const int64_t address = buffer.shared.Address(base + r * pitch + c);
            const float value = LaneToF32(
                buffer.dtype, ReadLane(area, address, buffer.dtype, &ctx));
            out[transposed ? c * rows + r : r * columns + c] = value;
          }
        }
        return true;
      };
      std::vector<float> a_tile(64 * k), b_tile(static_cast<size_t>(n) * k);
      bool ok = true;
      if (op.a_in_registers) {
        for (size_t i = 0; i < op.lanes.size(); ++i) {
          Thread& t = *threads_[op.lanes[i]];
          const int warp = static_cast<int>(i / 32),
                    lane = static_cast<int>(i % 32);
          const int64_t flat = RegFlat(a.id, op.a_origin);
          for (int j = 0; j < k / 2; ++j) {
            const auto [row, column] = WgmmaFragmentElement(warp, lane, j);
            a_tile[row * k + column] =
                LaneToF32(a.dtype, t.regs[reg_index_[a.id]].lanes[flat + j]);
          }
        }
      } else {
        // a_tile[m * k + kk]: [64, K] as stored, or [K, 64] transposed.
        ok = a_k_major ? load_box(a, op.a_origin, 64, k, false, a_tile)
                       : load_box(a, op.a_origin, k, 64, true, a_tile);
      }
      // b_tile[col * k + kk]: [N, K] as stored, or [K, N] transposed.
      ok = ok && (b_k_major ? load_box(b, op.b_origin, n, k, false, b_tile)
                            : load_box(b, op.b_origin, k, n, true, b_tile));
      if (!ok) {
        Fatal(&rec, "a wgmma operand box is out of bounds of its buffer");
        return;
      }
      // Each thread's fragment of D. A product of two 16-bit floats is
      // exact in f32 (at most 22 significant bits), so the f32 multiply is
      // the exact product; the sum is rounded after every addition, in k
      // order, starting from C.
      op.staged.assign(op.lanes.size() * (n / 2), 0);
      for (size_t i = 0; i < op.lanes.size(); ++i) {
        Thread& t = *threads_[op.lanes[i]];
        const int warp = static_cast<int>(i / 32),
                  lane = static_cast<int>(i % 32);
        const int64_t flat = RegFlat(acc.id, op.acc_origin);
        const std::vector<Lane>& regs = t.regs[reg_index_[acc.id]].lanes;
        for (int j = 0; j < n / 2; ++j) {
          const auto [row, column] = WgmmaFragmentElement(warp, lane, j);
          float sum =
              op.zero_init ? 0.0f : LaneToF32(acc.dtype, regs[flat + j]);
          const float* a_row = &a_tile[row * k];
          const float* b_row = &b_tile[column * k];
          for (int kk = 0; kk < k; ++kk) sum += a_row[kk] * b_row[kk];
          op.staged[i * (n / 2) + j] = F32ToLane(acc.dtype, sum);
        }
      }
      break;
    }
    case Agent::kStoreRemote:  // the values were taken at issue
    case Agent::kThread:
      break;
  }
  StateChanged();
}

void Machine::PerformWrite(AsyncOp& op) {
  if (op.write_done) return;
  if (!op.read_done) PerformRead(op);
  if (failed()) return;
  op.write_done = true;
  const std::vector<BufferRec>& buffers = program_.buffers();
  AccessCtx ctx = AgentCtx(op, true);
  switch (op.agent) {
    case Agent::kTmaLoad: {
      const TensorMapRec& map = program_.maps()[op.map];
      const int element_bytes = DTypeBytes(map.dtype);
      for (int b : op.dst_blocks) {
        if (blocks_[b].finished) {
          // A multicast into a peer that did not wait for it.
          ReportPendingAtExit(
              op, absl::StrCat("the multicast tma.load writes the shared "
                               "memory of block ",
                               b,
                               " after it exited (a cluster barrier before "
                               "exit keeps a CTA alive while peers' copies "
                               "may still land in it)"));
          continue;
        }
        MemoryArea& area = SharedArea(b);
        for (size_t e = 0; e < op.staged.size(); ++e) {
          const int64_t address = SwizzleAddress(
              map.swizzle, op.shared_address + e * element_bytes);
          WriteLane(area, address, map.dtype, op.staged[e], &ctx);
        }
      }
      for (int b : op.dst_blocks) {
        if (!blocks_[b].finished)
          CompleteTx(op, b, op.mbarrier_address, op.bytes);
      }
      break;
    }
    case Agent::kTmaStore:
    case Agent::kTmaReduce: {
      const TensorMapRec& map = program_.maps()[op.map];
      const TensorData& tensor = GlobalShape(map.tensor);
      MemoryArea& area = GlobalArea(map.tensor);
      const int rank = static_cast<int>(map.box.size());
      std::vector<int64_t> box_index(rank), global(rank);
      const int element_bytes = DTypeBytes(map.dtype);
      for (size_t e = 0; e < op.staged.size(); ++e) {
        if (!op.staged_valid[e]) continue;  // out of bounds: dropped
        int64_t rest = static_cast<int64_t>(e);
        for (int d = rank - 1; d >= 0; --d) {
          box_index[d] = rest % map.box[d];
          rest /= map.box[d];
          global[d] = op.coords[d] + box_index[d];
        }
        const int64_t address = tensor.Offset(global) * element_bytes;
        Lane value = op.staged[e];
        if (op.agent == Agent::kTmaReduce) {
          // An element-wise relaxed read-modify-write; f32 add flushes
          // subnormal inputs and results to zero (PTX cp.reduce.async.bulk).
          const Lane old = LoadLane(map.dtype, &area.data[address]);
          const OpKind kind = op.reduce_op == "min"   ? OpKind::kMin
                              : op.reduce_op == "max" ? OpKind::kMax
                                                      : OpKind::kAdd;
          Lane x = old, y = value;
          const bool ftz = map.dtype == DType::kF32 && kind == OpKind::kAdd;
          if (ftz) {
            if (IsSubnormalF32(static_cast<uint32_t>(x))) x &= 0x80000000u;
            if (IsSubnormalF32(static_cast<uint32_t>(y))) y &= 0x80000000u;
          }
          const LaneResult r = Arithmetic(kind, map.dtype, x, y, 0);
          value = r.value;
          if (ftz && IsSubnormalF32(static_cast<uint32_t>(value)))
            value &= 0x80000000u;
        }
        WriteLane(area, address, map.dtype, value, &ctx);
      }
      break;
    }
    case Agent::kBulkLoad:
    case Agent::kCpAsync:
      WriteBytes(SharedArea(op.block), op.shared_address, op.bytes,
                 op.staged_bytes.data(), &ctx);
      if (op.agent == Agent::kBulkLoad)
        CompleteTx(op, op.block, op.mbarrier_address, op.bytes);
      break;
    case Agent::kBulkStore:
      WriteBytes(GlobalArea(op.global_buffer),
                 op.global_offset * DTypeBytes(buffers[op.global_buffer].dtype),
                 op.bytes, op.staged_bytes.data(), &ctx);
      break;
    case Agent::kWgmma: {
      const BufferRec& acc = buffers[op.acc_buffer];
      const int n = static_cast<int>(op.rec->int_attr);
      for (size_t i = 0; i < op.lanes.size(); ++i) {
        Thread& t = *threads_[op.lanes[i]];
        const int64_t flat = RegFlat(acc.id, op.acc_origin);
        std::vector<Lane>& regs = t.regs[reg_index_[acc.id]].lanes;
        for (int j = 0; j < n / 2; ++j)
          regs[flat + j] = op.staged[i * (n / 2) + j];
      }
      break;
    }
    case Agent::kStoreRemote: {
      const int target = op.dst_blocks.front();
      if (blocks_[target].finished) {
        ReportPendingAtExit(
            op, absl::StrCat("the store.remote writes the shared memory of "
                             "block ",
                             target,
                             " after it exited (the receiver must wait for "
                             "its mbarrier)"));
        break;
      }
      const DType dtype = buffers[op.shared_buffer].dtype;
      const int bytes = DTypeBytes(dtype);
      MemoryArea& area = SharedArea(target);
      for (size_t lane = 0; lane < op.staged.size(); ++lane) {
        WriteLane(area, op.shared_address + lane * bytes, dtype,
                  op.staged[lane], &ctx);
      }
      CompleteTx(op, target, op.mbarrier_address, op.bytes);
      break;
    }
    case Agent::kThread:
      break;
  }
  std::vector<Lane>().swap(op.staged);
  std::vector<uint8_t>().swap(op.staged_bytes);
  std::vector<uint8_t>().swap(op.staged_valid);
  StateChanged();
}

void Machine::Complete(AsyncOp& op) { PerformWrite(op); }

}  // namespace kir::check
