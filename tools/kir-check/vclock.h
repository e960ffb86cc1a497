// Vector clocks for the happens-before relation between the launch's
// actors: its threads and the asynchronous operations they issue (each TMA
// copy, bulk copy, cp.async and wgmma is an actor of its own, ordered after
// its issue and before whoever observes its completion).
//
// Actors are numbered per block (threads 0..T-1, then the block's async
// operations), so a clock is stored as one dense segment per block it has
// heard of: a thread that never synchronizes with another block carries one
// segment.
#ifndef KIR_TOOLS_KIR_CHECK_VCLOCK_H_
#define KIR_TOOLS_KIR_CHECK_VCLOCK_H_

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace kir::check {

struct Actor {
  uint32_t block = 0;
  uint32_t local = 0;
  bool operator==(const Actor& other) const {
    return block == other.block && local == other.local;
  }
};

class VClock {
 public:
  uint32_t Get(Actor actor) const {
    for (const Segment& segment : segments_) {
      if (segment.block == actor.block) {
        return actor.local < segment.clocks.size() ? segment.clocks[actor.local]
                                                   : 0;
      }
    }
    return 0;
  }
  void Set(Actor actor, uint32_t clock);
  void Join(const VClock& other);
  bool Empty() const { return segments_.empty(); }
  void Clear() { segments_.clear(); }
  // Bytes held, for the memory statistics.
  int64_t Bytes() const;

 private:
  struct Segment {
    uint32_t block;
    std::vector<uint32_t> clocks;
  };
  Segment& SegmentFor(uint32_t block);
  absl::InlinedVector<Segment, 1> segments_;
};

// What a synchronization edge carries: the happens-before clock and, per
// memory space, how far each actor's generic-proxy accesses have been made
// visible to the async proxy by proxy fences (`fence.proxy.async`), and
// each thread's mbarrier inits by `fence.mbarrier_init`. An async access by
// thread u of data that actor t wrote through the generic proxy at clock c
// is fenced when u's `published_*[t] >= c`.
struct SyncClock {
  VClock happens;
  VClock published_shared;
  VClock published_global;
  VClock published_inits;

  void Join(const SyncClock& other) {
    happens.Join(other.happens);
    published_shared.Join(other.published_shared);
    published_global.Join(other.published_global);
    published_inits.Join(other.published_inits);
  }
  int64_t Bytes() const {
    return happens.Bytes() + published_shared.Bytes() +
           published_global.Bytes() + published_inits.Bytes();
  }
};

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_VCLOCK_H_
