// Counts the heap allocations of a test binary (operator new), for tests
// that bound what a hot path allocates. Link kir_heap_count into the test;
// under the sanitizers, which bring their own allocation functions, nothing
// is counted and HeapCounting() is false.
#ifndef KIR_IR_TESTING_HEAP_COUNT_H_
#define KIR_IR_TESTING_HEAP_COUNT_H_

#include <cstdint>

namespace kir {

// Whether allocations are counted in this build.
bool HeapCounting();

// Heap allocations (operator new, new[]) so far in this process.
int64_t HeapAllocations();

}  // namespace kir

#endif  // KIR_IR_TESTING_HEAP_COUNT_H_
