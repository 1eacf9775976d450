#pragma once
// Progress of a long run on standard error: on a terminal a bar redrawn in place with the
// rate and the time left; otherwise (a log file, CI) a plain line at every tenth of the way
// and at most every 10 s, so logs stay short.

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace hcsim::sweep {

class Progress {
 public:
  // `total` points to run now; `label` opens each line ("sweep").
  Progress(std::string label, std::size_t total, bool enabled, std::FILE* out = stderr);
  void tick(bool ok);  // one more point finished (ok: not infeasible, not error)
  void finish();       // ends the bar with a newline

  [[nodiscard]] double elapsed_s() const;
  // "45s", "1m 20s", "2h 05m"; "--" when unknown
  static std::string format_eta(double seconds);

 private:
  void draw(bool final_line);
  std::string label_;
  std::size_t total_, done_ = 0, not_ok_ = 0;
  bool enabled_, tty_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::size_t last_tenth_ = 0;
};

}  // namespace hcsim::sweep
