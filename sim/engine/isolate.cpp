// SimGrid keeps one engine per process (a second one inherits the first's clock and locked
// configuration), so each simulation runs in a forked child that streams its results back
// through a pipe. The parent is left untouched and may simulate again.
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine_internal.hpp"
#include "sim/core/fd_io.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/core/run_status.hpp"

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

// The child's first byte says how it ended: the result follows kResult; kFailed is followed
// by the length and text of the error that stopped it (an InputError's issues as JSON, or
// an internal error's one line), which the parent throws again, so a failure in the engine is
// reported once, by the parent, with its message.
constexpr char kResult = 'R', kFailed = 'E';

int child_fd = -1;

[[noreturn]] void child_fail(const std::string& what, bool input) {
  const char tag = kFailed;
  const char kind = input ? 'I' : 'B';
  const std::uint64_t n = what.size();
  (void)(write_all(child_fd, &tag, 1) && write_all(child_fd, &kind, 1) && write_all(child_fd, &n, sizeof n) &&
         write_all(child_fd, what.data(), what.size()));
  ::_exit(4);
}

// An exception escaping a SimGrid actor or a noexcept path ends in std::terminate: the child
// reports it like any other failure instead of aborting.
[[noreturn]] void child_terminate() { child_fail(terminate_message("the simulation engine terminated"), false); }

EngineResult simulate_isolated(const TopologyGraph& topo, const TaskGraph& graph, const EngineOptions& opt) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
#ifdef __GLIBC__
  // The child shares every resident page of this process: what the lowering freed goes back
  // to the system first, or the engine process carries it.
  malloc_trim(0);
#endif
  pid_t pid = fork_child();  // tracked: an interrupt of the parent ends it
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    child_fd = fds[1];
    std::set_terminate(child_terminate);
    auto send = [&](const EngineResult& r) {
      bool ok = write_all(fds[1], &kResult, 1) && write_vec(fds[1], r.end) && write_vec(fds[1], r.edge_bytes) &&
                write_all(fds[1], &r.makespan, sizeof r.makespan) &&
                write_all(fds[1], &r.activities, sizeof r.activities);
      ::close(fds[1]);
      std::fflush(nullptr);
      ::_exit(ok ? 0 : 3);  // no teardown: the parent has the result
    };
    try {
      engine::simulate_in_process(topo, graph, opt, send);
    } catch (const InputError& e) {
      nlohmann::json issues = nlohmann::json::array();
      for (const Issue& i : e.issues()) issues.push_back({i.path, i.message});
      child_fail(issues.dump(), true);
    } catch (const std::exception& e) {
      child_fail(e.what(), false);
    }
    ::_exit(3);  // not reached: send() exits
  }
  ::close(fds[1]);
  EngineResult r;
  char tag = 0, kind = 0;
  bool ok = read_all(fds[0], &tag, 1);
  std::string failure;
  if (ok && tag == kFailed) {
    std::uint64_t n = 0;
    ok = read_all(fds[0], &kind, 1) && read_all(fds[0], &n, sizeof n) && n < (1u << 20);
    if (ok) failure.resize(n);
    ok = ok && read_all(fds[0], failure.data(), n);
  } else if (ok) {
    ok = tag == kResult && read_vec(fds[0], r.end) && read_vec(fds[0], r.edge_bytes) &&
         read_all(fds[0], &r.makespan, sizeof r.makespan) && read_all(fds[0], &r.activities, sizeof r.activities);
  }
  ::close(fds[0]);
  int status = 0;
  forget_child(pid);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (tag == kFailed && ok) {
    if (kind == 'I') {
      std::vector<Issue> issues;
      for (const auto& i : nlohmann::json::parse(failure)) issues.push_back({i.at(0), i.at(1)});
      throw InputError(issues);
    }
    throw InternalError(failure);
  }
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw InternalError("internal error (a bug, please report): the simulation engine process failed (status " +
                        std::to_string(status) + ")");
  return r;
}

}  // namespace

EngineResult simulate(const TopologyGraph& topo, const TaskGraph& graph, const EngineOptions& opt) {
  if (RunStatus* s = run_status()) {
    s->tasks_done.store(0);
    s->tasks_total.store(graph.size());
    s->sim_time_s.store(0);
    s->phase.store(static_cast<int>(RunPhase::simulating));
  }
  EngineResult r = opt.isolate ? simulate_isolated(topo, graph, opt) : engine::simulate_in_process(topo, graph, opt);
  // The engine keeps each task's end only: a task starts when its last dependency ends (the
  // replay starts it at that very clock reading), at 0 without dependencies. Derived here,
  // so the engine process holds 8 bytes a task less.
  r.start.assign(graph.size(), 0.0);
  for (TaskId t = 0; t < graph.size(); ++t)
    for (TaskId d : graph.deps(t)) r.start[t] = std::max(r.start[t], r.end[d]);
  set_run_phase(RunPhase::reporting);  // what follows a simulation is its metrics
  return r;
}

}  // namespace hcsim
