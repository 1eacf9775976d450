#include "worker_pool.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/core/fd_io.hpp"
#include "sim/core/interrupt.hpp"

namespace hcsim::sweep {
namespace {

struct Worker {
  pid_t pid = -1;
  int cmd = -1;  // parent writes job indices
  int res = -1;  // parent reads results
  std::optional<std::size_t> job;
};

[[noreturn]] void worker_main(int cmd, int res, const JobFn& job) {
  std::uint64_t index = 0;
  while (read_all(cmd, &index, sizeof index)) {
    std::string out;
    try {
      out = job(static_cast<std::size_t>(index));
    } catch (...) {
      ::_exit(4);  // the parent reports the job as crashed
    }
    const std::uint64_t n = out.size();
    if (!write_all(res, &n, sizeof n) || !write_all(res, out.data(), out.size())) ::_exit(5);
#ifdef __GLIBC__
    // What the job freed goes back to the system: the next job (and the engine process it
    // forks, which shares this one's pages) starts from the worker's own few megabytes, not
    // from the largest job's heap so far.
    malloc_trim(0);
#endif
  }
  ::_exit(0);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

Worker spawn(std::vector<Worker>& all, const JobFn& job) {
  int cmd[2], res[2];
  if (::pipe(cmd) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe(res) != 0) {
    ::close(cmd[0]);
    ::close(cmd[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::fflush(nullptr);
  const pid_t pid = fork_child();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Only this worker's own ends stay open, so each worker sees EOF when the parent is done.
    for (auto& w : all) {
      close_fd(w.cmd);
      close_fd(w.res);
    }
    ::close(cmd[1]);
    ::close(res[0]);
    worker_main(cmd[0], res[1], job);
  }
  ::close(cmd[0]);
  ::close(res[1]);
  return Worker{pid, cmd[1], res[0], std::nullopt};
}

std::string exit_reason(pid_t pid) {
  int status = 0;
  forget_child(pid);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFSIGNALED(status)) return fmt::format("worker process killed by signal {} ({})", WTERMSIG(status),
                                              strsignal(WTERMSIG(status)));
  return fmt::format("worker process exited with status {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

// SIGPIPE would kill the parent when it writes to a worker that just died; ignore it here.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &sa, &old_);
  }
  ~IgnoreSigpipe() { ::sigaction(SIGPIPE, &old_, nullptr); }

 private:
  struct sigaction old_ {};
};

// The parent's side: the workers, the next job to hand out, the jobs in flight. The
// destructor lets every worker go and reaps it, also when `done` throws.
class Pool {
 public:
  Pool(const std::vector<std::size_t>& jobs, const JobFn& job) : jobs_(jobs), job_(job) {}
  ~Pool() {
    for (auto& w : workers_) {
      close_fd(w.cmd);
      close_fd(w.res);
    }
    for (auto& w : workers_)
      if (w.pid > 0) {
        forget_child(w.pid);
        while (::waitpid(w.pid, nullptr, 0) < 0 && errno == EINTR) {}
      }
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  void start(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) workers_.push_back(spawn(workers_, job_));
    for (auto& w : workers_) feed(w);
  }
  [[nodiscard]] bool busy() const { return busy_ > 0; }

  // Waits for finished jobs and hands out the next ones.
  void collect(const ResultFn& done, const CrashFn& crashed) {
    std::vector<pollfd> fds;
    for (const auto& w : workers_) fds.push_back({w.job ? w.res : -1, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) return;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    for (std::size_t i = 0; i < workers_.size(); ++i)
      if (workers_[i].job && fds[i].revents != 0) finish(workers_[i], done, crashed);
  }

 private:
  const std::vector<std::size_t>& jobs_;
  const JobFn& job_;
  std::vector<Worker> workers_;
  std::size_t next_ = 0, busy_ = 0;

  // Gives worker `w` the next job, or lets it go when none is left. A worker found dead
  // while idle is replaced.
  void feed(Worker& w) {
    if (next_ >= jobs_.size()) {
      close_fd(w.cmd);
      return;
    }
    for (int attempt = 0; attempt < 3; ++attempt) {
      const std::uint64_t index = jobs_[next_];
      if (write_all(w.cmd, &index, sizeof index)) {
        w.job = jobs_[next_++];
        ++busy_;
        return;
      }
      replace(w);
    }
    throw std::runtime_error("sweep workers die before taking a job");
  }

  std::string replace(Worker& w) {
    close_fd(w.cmd);
    close_fd(w.res);
    std::string why = exit_reason(w.pid);
    w = Worker{};
    w = spawn(workers_, job_);
    return why;
  }

  void finish(Worker& w, const ResultFn& done, const CrashFn& crashed) {
    const std::size_t index = *w.job;
    w.job.reset();
    --busy_;
    std::uint64_t len = 0;
    std::string out;
    bool ok = read_all(w.res, &len, sizeof len);
    if (ok) {
      out.resize(len);
      ok = read_all(w.res, out.data(), len);
    }
    if (!ok) out = crashed(index, replace(w));
    done(index, std::move(out));
    feed(w);
  }
};

}  // namespace

void run_forked(const std::vector<std::size_t>& jobs, int workers, const JobFn& job, const ResultFn& done,
                const CrashFn& crashed) {
  if (jobs.empty()) return;
  IgnoreSigpipe guard;
  Pool pool(jobs, job);
  pool.start(std::min<std::size_t>(static_cast<std::size_t>(std::max(workers, 1)), jobs.size()));
  while (pool.busy()) pool.collect(done, crashed);
}

}  // namespace hcsim::sweep
