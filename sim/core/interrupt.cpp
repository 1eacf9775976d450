#include "interrupt.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace hcsim {
namespace {

// Fixed storage, lock-free atomics: read by a signal handler. A sweep runs at most 1,024
// workers, each with at most one engine process of its own (tracked in its own copy).
constexpr std::size_t kSlots = 1100;
std::array<std::atomic<pid_t>, kSlots> children{};

// The temporary file: `temp_ready` is cleared while the path is rewritten, so the handler
// never reads a half-copied name.
constexpr std::size_t kPathMax = 4096;
char temp_path[kPathMax];
std::atomic<bool> temp_ready{false};

void track(pid_t pid) {
  for (auto& slot : children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
  // Table full: the child still dies with its parent (PR_SET_PDEATHSIG), it is only not reaped.
}

}  // namespace

pid_t fork_child() {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &block, &old);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (auto& slot : children) slot.store(0);
    temp_ready.store(false);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the parent died before the line above took effect
  } else if (pid > 0) {
    track(pid);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return pid;
}

void forget_child(pid_t pid) {
  if (pid <= 0) return;
  for (auto& slot : children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void kill_children() noexcept {
  for (auto& slot : children)
    if (const pid_t pid = slot.load(); pid > 0) ::kill(pid, SIGKILL);
  for (auto& slot : children)
    if (const pid_t pid = slot.exchange(0); pid > 0)
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
}

void set_temp_file(const std::string& path) {
  temp_ready.store(false);
  if (path.empty() || path.size() >= kPathMax) return;
  std::memcpy(temp_path, path.c_str(), path.size() + 1);
  temp_ready.store(true);
}

void remove_temp_file() noexcept {
  if (temp_ready.exchange(false)) ::unlink(temp_path);
}

}  // namespace hcsim
