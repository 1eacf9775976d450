#include "sim/core/huge_pages.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace hcsim {
namespace {

std::uintptr_t page_floor(std::uintptr_t a) { return a & ~(kHugePageBytes - 1); }
std::uintptr_t page_ceil(std::uintptr_t a) { return page_floor(a + kHugePageBytes - 1); }

bool advise(std::uintptr_t first, std::uintptr_t last) {
  return last > first && madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) == 0;
}

// The main arena's heap (brk), which serves the blocks below malloc's mmap threshold: its
// break when last seen. The heap grows by at least kHeapGrowth at a time (M_TOP_PAD), and
// each growth is marked by the first allocation that sees it, while malloc has touched
// only the headers at its ends; the marked ranges join into one mapping. Where the heap was
// trimmed, the break seen is lowered, so that growing back marks the memory again.
constexpr int kHeapGrowth = 64 << 20;
constexpr std::uintptr_t kBasePage = 4096;  // the break is marked up to its 4 KiB page
std::atomic<std::uintptr_t> heap_seen{0};

void advise_heap_growth() {
  const auto top = reinterpret_cast<std::uintptr_t>(sbrk(0));  // glibc's cached break: no system call
  std::uintptr_t seen = heap_seen.load(std::memory_order_relaxed);
  if (top == static_cast<std::uintptr_t>(-1) || top == seen) return;
  if (top < seen) {  // trimmed (free, malloc_trim): growing back maps fresh memory, marked from here
    heap_seen.compare_exchange_strong(seen, top, std::memory_order_relaxed);
    return;
  }
  if (seen == 0) mallopt(M_TOP_PAD, kHeapGrowth);  // the first call
  if (heap_seen.compare_exchange_strong(seen, top, std::memory_order_relaxed))
    advise(page_floor(seen == 0 ? top : seen), (top + kBasePage - 1) & ~(kBasePage - 1));
}

}  // namespace

std::size_t advise_huge_pages(void* p, std::size_t n) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = page_ceil(begin), last = page_floor(begin + n);
  if (p == nullptr || !advise(first, last)) return 0;
  return last - first;
}

void* allocate_on_huge_pages(std::size_t n) {
  if (n == 0) n = 1;
  void* p;
  while ((p = std::malloc(n)) == nullptr) {
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) throw std::bad_alloc();
    h();
  }
  if (n >= kHugePageThreshold)
    advise_huge_pages(p, n);
  else
    advise_heap_growth();
  return p;
}

}  // namespace hcsim
