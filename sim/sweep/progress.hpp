#pragma once
// Progress of a long run on standard error: on a terminal a line redrawn in place;
// otherwise (a log file, CI) plain lines. `Progress` counts sweep points (a bar with the
// rate and the time left; off a terminal a line at every tenth of the way and at most every
// 10 s, so logs stay short); `StatusLine` is the drawing both it and a single run's
// progress line (sim/cli/run_progress.cpp) use.

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace hcsim::sweep {

class StatusLine {
 public:
  explicit StatusLine(std::string label, std::FILE* out = stderr);
  // "label: text": on a terminal over the previous line, otherwise on a line of its own.
  void show(const std::string& text);
  // On a terminal: ends the line drawn with a newline (keep) or erases it (!keep).
  void end(bool keep);
  [[nodiscard]] bool tty() const { return tty_; }

 private:
  std::string label_;
  std::FILE* out_;
  bool tty_, drawn_ = false;
};

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
  StatusLine line_;
  std::size_t total_, done_ = 0, not_ok_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::size_t last_tenth_ = 0;
};

}  // namespace hcsim::sweep
