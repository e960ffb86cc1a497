// The effects table: for every op kind, what it reads and writes, through
// which proxy, how it completes, and which threads must execute it. Passes,
// the verifier, the emitter and the interpreter read these facts from here
// and nowhere else.
#ifndef KIR_IR_EFFECTS_H_
#define KIR_IR_EFFECTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace kir {

enum class Proxy { kGeneric, kAsync };
enum class Completion { kImmediate, kMbarrier, kBulkGroup, kWgmmaGroup,
                        kCpAsyncGroup };
enum class AccessMode { kRead, kWrite, kReadWrite };

// Who must execute an op.
enum class ExecClass {
  kPerThread,            // any thread, independently
  kWarpCollective,       // `.aligned` over a warp: all 32 lanes together
  kWarpgroupCollective,  // `.aligned` over a warpgroup (wgmma, setmaxnreg)
  kParticipants,         // barriers: every participating thread
  kSingleIssue,          // exactly one thread issues it
};

const char* ProxyName(Proxy proxy);
const char* CompletionName(Completion completion);
const char* AccessModeName(AccessMode mode);
const char* ExecClassName(ExecClass exec);

// How the threads executing one instance split the accessed box.
enum class Distribution {
  kPerThread,   // each executing thread touches its own box at its origin
  kIssuer,      // the (single) issuing thread's op touches the whole box
  kFragment,    // the box is shared out among the collective's lanes
};

// One memory access of one op.
struct MemoryEffect {
  int operand = -1;           // the operand slot holding the buffer
  const Value* buffer = nullptr;
  MemorySpace space = MemorySpace::kGlobal;
  AccessMode mode = AccessMode::kRead;
  Proxy proxy = Proxy::kGeneric;
  Completion completion = Completion::kImmediate;
  Distribution distribution = Distribution::kPerThread;
  // The box touched: origin is the operand's index tuple (outermost first;
  // empty for whole-buffer accesses), extent its size per dimension.
  std::vector<const Value*> origin;
  std::vector<int64_t> extent;
  bool whole_buffer = false;  // raw PTX and unindexed operands
};

// Per-kind facts.
struct OpFacts {
  ExecClass exec = ExecClass::kPerThread;
  Completion completion = Completion::kImmediate;
  bool has_side_effects = false;  // must not be removed even if unused
};

const OpFacts& FactsOf(OpKind kind);
// Every memory access `op` performs, in operand order.
std::vector<MemoryEffect> MemoryEffectsOf(const Op& op);

}  // namespace kir

#endif  // KIR_IR_EFFECTS_H_
