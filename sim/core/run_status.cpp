#include "run_status.hpp"

#include <sys/mman.h>

#include <new>

namespace hcsim {
namespace {
std::atomic<RunStatus*> status{nullptr};
static_assert(std::atomic<double>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free,
              "the status is shared between processes: its atomics must not need a lock");
}  // namespace

RunStatus* run_status() { return status.load(std::memory_order_relaxed); }

RunStatus* enable_run_status() {
  if (RunStatus* s = status.load()) return s;
  void* m = ::mmap(nullptr, sizeof(RunStatus), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;  // no progress figures, the run itself is unaffected
  RunStatus* s = new (m) RunStatus();
  status.store(s);
  return s;
}

}  // namespace hcsim
