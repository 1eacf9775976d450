// SimGrid keeps one engine per process (a second one inherits the first's clock and locked
// configuration), so each simulation runs in a forked child that streams its results back
// through a pipe. The parent is left untouched and may simulate again.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "engine_internal.hpp"
#include "sim/core/fd_io.hpp"

namespace hcsim {
namespace {

template <class T>
bool write_vec(int fd, const std::vector<T>& v) {
  const std::uint64_t n = v.size();
  return write_all(fd, &n, sizeof n) && write_all(fd, v.data(), n * sizeof(T));
}

template <class T>
bool read_vec(int fd, std::vector<T>& v) {
  std::uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n)) return false;
  v.resize(n);
  return read_all(fd, v.data(), n * sizeof(T));
}

}  // namespace

EngineResult simulate(const TopologyGraph& topo, const TaskGraph& graph, const EngineOptions& opt) {
  if (!opt.isolate) return engine::simulate_in_process(topo, graph, opt);
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    auto send = [&](const EngineResult& r) {
      bool ok = write_vec(fds[1], r.start) && write_vec(fds[1], r.end) && write_vec(fds[1], r.edge_bytes) &&
                write_all(fds[1], &r.makespan, sizeof r.makespan) &&
                write_all(fds[1], &r.activities, sizeof r.activities);
      ::close(fds[1]);
      std::fflush(nullptr);
      ::_exit(ok ? 0 : 3);  // no teardown: the parent has the result
    };
    engine::simulate_in_process(topo, graph, opt, send);
    ::_exit(3);  // not reached: send() exits
  }
  ::close(fds[1]);
  EngineResult r;
  bool ok = read_vec(fds[0], r.start) && read_vec(fds[0], r.end) && read_vec(fds[0], r.edge_bytes) &&
            read_all(fds[0], &r.makespan, sizeof r.makespan) && read_all(fds[0], &r.activities, sizeof r.activities);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the simulation engine process failed (status " + std::to_string(status) + ")");
  return r;
}

}  // namespace hcsim
