// Named barrier ids for the passes that insert barriers (insert-syncs,
// plan-shared-memory).
#ifndef KIR_PASSES_BARRIER_IDS_H_
#define KIR_PASSES_BARRIER_IDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "ir/ir.h"

namespace kir {

// Named barrier ids (1..15) of a kernel: which are taken, by which thread
// count, inside which role. Allocates an id for a role's barrier, reusing
// one only that role uses with the same count.
class BarrierIdAllocator {
 public:
  explicit BarrierIdAllocator(const Kernel& kernel);
  // An id for a barrier of `threads` threads inside `role` (null: outside
  // roles); nullopt when all 15 are taken.
  std::optional<int> Allocate(const Op* role, int threads);

 private:
  struct Use {
    std::set<const Op*> roles;
    std::set<int64_t> counts;
  };
  std::map<int, Use> uses_;
};

}  // namespace kir

#endif  // KIR_PASSES_BARRIER_IDS_H_
