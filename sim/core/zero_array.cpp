#include "sim/core/zero_array.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace hcsim::zero_array_detail {
namespace {

// From here on an array is mapped on its own pages; below, calloc's heap serves it (a
// mapping costs a system call and at least one page).
constexpr std::size_t kMapped = std::size_t{256} << 10;

}  // namespace

void* allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (bytes < kMapped) {
    void* p = std::calloc(1, bytes);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, bytes, MADV_NOHUGEPAGE);  // advice only: where refused, pages are as the system gives them
  return p;
}

void release(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kMapped)
    std::free(p);
  else
    munmap(p, bytes);
}

}  // namespace hcsim::zero_array_detail
