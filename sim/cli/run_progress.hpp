#pragma once
// The progress line of `hcsim run` on standard error: the phase (building, simulating,
// reporting) and, while simulating, the tasks finished and the simulated time, read from
// the shared RunStatus (sim/core/run_status.hpp) by a thread that redraws the line at most
// once a second. On a terminal it appears after 2 s (a short run prints nothing) and is
// erased before the report; `--progress` shows it from the start, on a terminal or not
// (then one line a second). Standard output and every file are those of a run without it.

#include <condition_variable>
#include <mutex>
#include <thread>

namespace hcsim {

class RunProgress {
 public:
  explicit RunProgress(bool forced);
  ~RunProgress();
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;

  // Ends the line (erased on a terminal; off one, "done in ..." when the run `finished`)
  // and the thread. The destructor stops without "done" (the run failed).
  void stop(bool finished = true);

 private:
  void loop(bool forced);
  std::mutex m_;
  std::condition_variable cv_;
  bool stopping_ = false, finished_ = false;
  std::thread thread_;
};

}  // namespace hcsim
