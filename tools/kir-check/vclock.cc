#include "tools/kir-check/vclock.h"

#include <algorithm>

namespace kir::check {

VClock::Segment& VClock::SegmentFor(uint32_t block) {
  for (Segment& segment : segments_) {
    if (segment.block == block) return segment;
  }
  segments_.push_back(Segment{block, {}});
  return segments_.back();
}

void VClock::Set(Actor actor, uint32_t clock) {
  Segment& segment = SegmentFor(actor.block);
  if (segment.clocks.size() <= actor.local)
    segment.clocks.resize(actor.local + 1, 0);
  segment.clocks[actor.local] = clock;
}

void VClock::Join(const VClock& other) {
  for (const Segment& theirs : other.segments_) {
    Segment& mine = SegmentFor(theirs.block);
    if (mine.clocks.size() < theirs.clocks.size())
      mine.clocks.resize(theirs.clocks.size(), 0);
    uint32_t* out = mine.clocks.data();
    const uint32_t* in = theirs.clocks.data();
    for (size_t i = 0; i < theirs.clocks.size(); ++i)
      out[i] = std::max(out[i], in[i]);
  }
}

int64_t VClock::Bytes() const {
  int64_t bytes = 0;
  for (const Segment& segment : segments_)
    bytes += sizeof(Segment) + segment.clocks.capacity() * sizeof(uint32_t);
  return bytes;
}

}  // namespace kir::check
