#pragma once
// The Pareto-front plot of `hcsim search`: scripts/plot_pareto.py run with the system
// Python (/usr/bin/python3 and Debian's python3-matplotlib). Without matplotlib the plot
// is skipped with a message; the CSV it would draw is written either way.

#include <string>

namespace hcsim::sweep {

struct PlotOutcome {
  bool written = false;
  std::string message;  // why not, or where
};

// Draws `csv` (columns devices, step_time_s, energy_per_token_j, on_front, label) to `png`.
// The script is looked up in $HCSIM_SCRIPTS_DIR, else in the source tree's scripts/.
PlotOutcome plot_pareto(const std::string& csv, const std::string& png);

}  // namespace hcsim::sweep
