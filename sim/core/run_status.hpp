#pragma once
// Where a run stands, for its progress line: the phase and, while the engine simulates,
// the tasks finished and the simulated clock. Kept in memory shared with the forked engine
// process (MAP_SHARED), which writes it as tasks finish, so the parent can read it while it
// waits; lock-free atomics, so writing costs a few nanoseconds a task. Off (nullptr) unless
// a command asks for progress.

#include <atomic>
#include <cstdint>

namespace hcsim {

enum class RunPhase : int { building, simulating, reporting };

struct RunStatus {
  std::atomic<int> phase{static_cast<int>(RunPhase::building)};
  std::atomic<std::uint64_t> tasks_done{0}, tasks_total{0};
  std::atomic<double> sim_time_s{0};
};

// nullptr until enable_run_status().
RunStatus* run_status();

// Maps the shared status (once; before the engine process is forked).
RunStatus* enable_run_status();

inline void set_run_phase(RunPhase p) {
  if (RunStatus* s = run_status()) s->phase.store(static_cast<int>(p), std::memory_order_relaxed);
}

}  // namespace hcsim
