#include "sim/report/html_timeline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace hcsim {
namespace {

// Categories: the compute phases, then the communication kinds (CommClass, 0 unused).
constexpr std::size_t kPhases = 5;
constexpr std::size_t kCategories = kPhases + kCommClasses;

std::string_view category_name(std::size_t c) {
  return c < kPhases ? phase_name(static_cast<Phase>(c)) : comm_class_name(static_cast<CommClass>(c - kPhases));
}

std::size_t category(const Task& t) {
  return t.kind == TaskKind::compute ? static_cast<std::size_t>(t.phase) : kPhases + static_cast<std::size_t>(t.comm);
}

}  // namespace

AggregatedTimeline aggregate_timeline(const TaskGraph& g, const EngineResult& r, const Metrics& m,
                                      const TimelineOptions& opt) {
  AggregatedTimeline out;
  const double step = m.step_time.value();
  if (r.start.size() != g.size() || !(step > 0)) return out;
  out.per_stage = m.simulated_devices > opt.max_units;
  // Units: simulated devices, or stages; each unit's devices count for the busy share.
  std::map<int, int> unit_of_key;  // device or stage -> unit index, in increasing order
  std::vector<int> unit(m.devices.size(), -1);
  for (const DeviceMetrics& d : m.devices)
    if (d.simulated) unit_of_key.emplace(out.per_stage ? d.stage : static_cast<int>(d.device), 0);
  int n = 0;
  for (auto& [key, u] : unit_of_key) u = n++;
  std::vector<int> devices(static_cast<std::size_t>(n), 0);
  std::vector<std::string> labels(static_cast<std::size_t>(n));
  for (const DeviceMetrics& d : m.devices) {
    if (!d.simulated) continue;
    const int u = unit_of_key[out.per_stage ? d.stage : static_cast<int>(d.device)];
    unit[d.device] = u;
    ++devices[static_cast<std::size_t>(u)];
    labels[static_cast<std::size_t>(u)] =
        out.per_stage ? fmt::format("stage {}", d.stage) : fmt::format("device {} · stage {}", d.device, d.stage);
  }
  const auto bins = static_cast<std::size_t>(std::max(1, opt.bins));
  const double width = step / static_cast<double>(bins);
  // busy[(unit * 2 + stream) * bins + bin][category]: device seconds
  std::vector<std::array<double, kCategories>> busy(static_cast<std::size_t>(n) * 2 * bins, std::array<double, kCategories>{});
  auto charge = [&](std::uint32_t d, const Task& t, double a, double b) {
    if (g.is_memory(d) || d >= unit.size() || unit[d] < 0 || !(b > a)) return;
    const std::size_t row = static_cast<std::size_t>(unit[d]) * 2 + (t.stream == Stream::compute ? 0 : 1);
    const std::size_t c = category(t);
    const auto first = std::min(bins - 1, static_cast<std::size_t>(std::max(0.0, a / width)));
    const auto last = std::min(bins - 1, static_cast<std::size_t>(std::max(0.0, b / width)));
    for (std::size_t k = first; k <= last; ++k) {
      const double lo = std::max(a, static_cast<double>(k) * width), hi = std::min(b, static_cast<double>(k + 1) * width);
      if (hi > lo) busy[row * bins + k][c] += hi - lo;
    }
  };
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g[id];
    const double a = r.start[id], b = r.end[id];
    if (t.kind == TaskKind::collective) {
      for (std::uint32_t d : g.groups()[t.group]) charge(d, t, a, b);
      continue;
    }
    charge(t.device, t, a, b);
    if (t.kind == TaskKind::send && t.peer != t.device) charge(t.peer, t, a, b);
  }
  for (int u = 0; u < n; ++u)
    for (int stream = 0; stream < 2; ++stream) {
      html::TimelineRow row;
      row.label = labels[static_cast<std::size_t>(u)] + (stream == 0 ? " · compute" : " · comm");
      const std::size_t base = (static_cast<std::size_t>(u) * 2 + static_cast<std::size_t>(stream)) * bins;
      const double capacity = width * devices[static_cast<std::size_t>(u)];
      for (std::size_t k = 0; k < bins; ++k) {
        const auto& b = busy[base + k];
        const auto top = static_cast<std::size_t>(std::max_element(b.begin(), b.end()) - b.begin());
        double sum = 0;
        for (double x : b) sum += x;
        if (!(sum > 0)) continue;
        const double opacity = std::clamp(std::round(10.0 * sum / capacity) / 10.0, 0.1, 1.0);
        const double a = static_cast<double>(k) * width, e = static_cast<double>(k + 1) * width;
        if (!row.spans.empty() && row.spans.back().category == category_name(top) && row.spans.back().opacity == opacity &&
            std::fabs(row.spans.back().b - a) < 1e-9 * step)
          row.spans.back().b = e;
        else
          row.spans.push_back({a, e, category_name(top), opacity});
      }
      out.rows.push_back(std::move(row));
    }
  return out;
}

}  // namespace hcsim
