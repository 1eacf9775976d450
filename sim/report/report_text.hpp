#pragma once
// Figures as the human report and the HTML page print them: SI quantities, percentages,
// GiB and durations (long runs in hours or days).
#include <string>

#include <fmt/format.h>

#include "sim/core/quantity.hpp"

namespace hcsim::report_text {

inline std::string si(double v, Dim d) { return format_quantity(v, d); }
inline std::string pct(double x) { return fmt::format("{:.1f} %", 100.0 * x); }
inline std::string gib(double bytes, int decimals) { return fmt::format("{:.{}f}", bytes / 1073741824.0, decimals); }
inline std::string duration(double s) {
  if (s >= 2 * 86400.0) return fmt::format("{:.1f} days", s / 86400.0);
  if (s >= 2 * 3600.0) return fmt::format("{:.1f} h", s / 3600.0);
  return si(s, Dim::time);
}

}  // namespace hcsim::report_text
