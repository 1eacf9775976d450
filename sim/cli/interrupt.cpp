#include "interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>

#include "sim/core/interrupt.hpp"

namespace hcsim {
namespace {

// Two buffers, so the message can be replaced while a handler may read the other one.
constexpr std::size_t kMessageMax = 8192;
char messages[2][kMessageMax];
std::atomic<int> current{-1};
pid_t main_pid = 0;
std::string program = "hcsim";

const char kDefault[] = "hcsim: interrupted; nothing was written — rerun the same command to start again\n";

void write_stderr(const char* s) noexcept {
  std::size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = ::write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Async-signal-safe only: kill, waitpid, unlink, write, _exit.
void on_signal(int sig) {
  kill_children();
  remove_temp_file();
  if (::getpid() == main_pid) {
    const int m = current.load();
    write_stderr(m < 0 ? kDefault : messages[m]);
  }
  ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_handlers(const char* argv0) {
  main_pid = ::getpid();
  if (argv0 != nullptr && *argv0 != '\0') program = argv0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

void set_interrupt_message(const std::string& line) {
  const int next = current.load() == 0 ? 1 : 0;
  const std::size_t n = std::min(line.size(), kMessageMax - 2);
  std::memcpy(messages[next], line.data(), n);
  messages[next][n] = '\n';
  messages[next][n + 1] = '\0';
  current.store(next);
}

const std::string& program_name() { return program; }

std::string shell_word(const std::string& w) {
  bool plain = !w.empty();
  for (char c : w)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./=:,@%+-", c) != nullptr)) plain = false;
  if (plain) return w;
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace hcsim
