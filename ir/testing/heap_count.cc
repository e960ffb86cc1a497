#include "ir/testing/heap_count.h"

#include <atomic>
#include <cstdlib>
#include <new>

#ifndef KIR_SANITIZE
namespace {
std::atomic<int64_t> heap_allocations{0};
}  // namespace

void* operator new(size_t size) {
  heap_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return ::operator new(size); }
// GCC takes free() in a replacement operator delete for a mismatch.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, size_t) noexcept { std::free(memory); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

namespace kir {

#ifdef KIR_SANITIZE
bool HeapCounting() { return false; }
int64_t HeapAllocations() { return 0; }
#else
bool HeapCounting() { return true; }
int64_t HeapAllocations() { return heap_allocations.load(); }
#endif

}  // namespace kir
