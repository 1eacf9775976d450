#include "progress.hpp"

#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

namespace hcsim::sweep {

StatusLine::StatusLine(std::string label, std::FILE* out)
    : label_(std::move(label)), out_(out), tty_(::isatty(::fileno(out)) != 0) {}

void StatusLine::show(const std::string& text) {
  if (tty_) fmt::print(out_, "\r{}: {}\x1b[K", label_, text);
  else fmt::print(out_, "{}: {}\n", label_, text);
  drawn_ = true;
  std::fflush(out_);
}

void StatusLine::end(bool keep) {
  if (!tty_ || !drawn_) return;
  std::fputs(keep ? "\n" : "\r\x1b[K", out_);
  drawn_ = false;
  std::fflush(out_);
}

Progress::Progress(std::string label, std::size_t total, bool enabled, std::FILE* out)
    : line_(std::move(label), out),
      total_(total),
      enabled_(enabled && total > 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::format_eta(double s) {
  if (!std::isfinite(s) || s < 0) return "--";
  const auto t = static_cast<long>(std::lround(s));
  if (t >= 3600) return fmt::format("{}h {:02}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m {:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

void Progress::tick(bool ok) {
  ++done_;
  if (!ok) ++not_ok_;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  const std::size_t tenth = done_ * 10 / total_;
  if (line_.tty() ? since >= 0.1 || done_ == total_ : tenth > last_tenth_ || since >= 10.0) {
    last_tenth_ = tenth;
    last_draw_ = now;
    draw(!line_.tty() && done_ == total_);
  }
}

void Progress::draw(bool final_line) {
  const double t = elapsed_s();
  const double rate = t > 0 ? static_cast<double>(done_) / t : 0;
  const double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : NAN;
  const std::string counts = fmt::format("{}/{} points ({} not ok)  {:.1f} points/s  {}", done_, total_, not_ok_, rate,
                                         final_line ? fmt::format("in {}", format_eta(t)) : "ETA " + format_eta(eta));
  if (!line_.tty()) {
    line_.show(counts);
  } else {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * done_ / std::max<std::size_t>(total_, 1));
    line_.show(fmt::format("[{}{}] {}", std::string(static_cast<std::size_t>(filled), '#'),
                           std::string(static_cast<std::size_t>(kWidth - filled), '.'), counts));
  }
}

void Progress::finish() {
  if (!enabled_) return;
  if (line_.tty()) {
    draw(true);
    line_.end(true);
  }
}

}  // namespace hcsim::sweep
