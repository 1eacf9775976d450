#include "run_progress.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include "sim/core/run_status.hpp"
#include "sim/sweep/progress.hpp"

namespace hcsim {
namespace {

constexpr auto kFirstLine = std::chrono::seconds(2);  // on a terminal, without --progress
constexpr auto kEvery = std::chrono::seconds(1);

std::string status_text(const RunStatus& s, double elapsed) {
  const std::string took = sweep::Progress::format_eta(elapsed) + " elapsed";
  switch (static_cast<RunPhase>(s.phase.load())) {
    case RunPhase::building: return "building the step, " + took;
    case RunPhase::reporting: return "reporting, " + took;
    case RunPhase::simulating: break;
  }
  const std::uint64_t done = s.tasks_done.load(), total = s.tasks_total.load();
  const double pct = total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0;
  return fmt::format("simulating, {}/{} tasks ({:.0f} %), {:.4g} s simulated, {}", done, total, pct,
                     s.sim_time_s.load(), took);
}

}  // namespace

RunProgress::RunProgress(bool forced) {
  if (!forced && ::isatty(2) == 0) return;
  if (enable_run_status() == nullptr) return;
  set_run_phase(RunPhase::building);
  thread_ = std::thread([this, forced] { loop(forced); });
}

RunProgress::~RunProgress() { stop(false); }

void RunProgress::stop(bool finished) {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(m_);
    stopping_ = true;
    finished_ = finished;
  }
  cv_.notify_all();
  thread_.join();
}

void RunProgress::loop(bool forced) {
  // Interrupts go to the main thread, whose handler ends the engine process.
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &block, nullptr);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  sweep::StatusLine line("run");
  auto next = start + (forced ? std::chrono::steady_clock::duration::zero() : kFirstLine);
  std::unique_lock<std::mutex> lock(m_);
  while (!cv_.wait_until(lock, next, [this] { return stopping_; })) {
    line.show(status_text(*run_status(), elapsed()));
    next += kEvery;
  }
  if (line.tty()) line.end(false);
  else if (finished_) line.show("done in " + sweep::Progress::format_eta(elapsed()));
}

}  // namespace hcsim
