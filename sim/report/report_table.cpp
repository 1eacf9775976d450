#include <algorithm>

#include <fmt/format.h>

#include "report.hpp"
#include "sim/core/quantity.hpp"

namespace hcsim {
namespace {

std::string si(double v, Dim d) { return format_quantity(v, d); }
std::string gib(double b) { return fmt::format("{:.1f}", b / 1073741824.0); }
std::string pct(double x) { return fmt::format("{:.1f} %", 100.0 * x); }

std::string strategy_line(const Scenario& sc) {
  const auto& st = sc.strategy;
  std::string sched = st.schedule == "interleaved-1f1b" ? fmt::format("interleaved 1F1B (v = {})", st.interleave)
                      : st.schedule == "1f1b"           ? "1F1B"
                                                        : "GPipe";
  std::string line = fmt::format("TP {} · PP {} {} · DP {} · micro-batch {} · batch {}", st.tp, st.pp, sched, st.dp,
                                 sc.workload.micro_batch, sc.workload.global_batch);
  if (st.sequence_parallel) line += " · sequence parallel";
  if (st.recompute != Recompute::none) line += fmt::format(" · {} recompute", recompute_name(st.recompute));
  if (st.zero > 0) line += fmt::format(" · ZeRO-{}", st.zero);
  return line;
}

}  // namespace

std::string report_table(const Scenario& sc, const RunOutput& run) {
  const Metrics& m = run.metrics;
  std::string out;
  std::string pools;
  for (const auto& p : sc.pools)
    pools += fmt::format("{}{} × {}", pools.empty() ? "" : " + ", p.count, p.preset.empty() ? p.type : p.preset);
  const std::string model = sc.model_preset.empty() ? sc.model.family : sc.model_preset;
  out += fmt::format("{} on {} ({})\n", model, pools, sc.topology.description);
  out += strategy_line(sc) + "\n\n";

  DeviceMetrics avg;
  int n = 0;
  for (const auto& d : m.devices) {
    if (!d.simulated) continue;
    ++n;
    avg.compute_s += d.compute_s;
    avg.bubble_s += d.bubble_s;
    avg.idle_s += d.idle_s;
    for (std::size_t c = 0; c < kCommClasses; ++c) avg.exposed_comm_s[c] += d.exposed_comm_s[c];
  }
  const double step = m.step_time_s;
  auto row = [&](const std::string& label, double t) {
    out += fmt::format("  {:<12}{:>10}   {:>7}\n", label, si(t, Dim::time), pct(step > 0 ? t / step : 0));
  };
  out += fmt::format("step time   {:>10}   tokens/s {:.4g}   MFU {}   HFU {}\n", si(step, Dim::time), m.tokens_per_s,
                     pct(m.mfu), pct(m.hfu));
  if (n > 0) {
    row("compute", avg.compute_s / n);
    for (std::size_t c = 1; c < kCommClasses; ++c)
      if (avg.exposed_comm_s[c] > 0)
        row("exposed " + std::string(comm_class_name(static_cast<CommClass>(c))), avg.exposed_comm_s[c] / n);
    row("bubble", avg.bubble_s / n);
    if (avg.idle_s > 0) row("idle", avg.idle_s / n);
  }
  if (sc.strategy.pp > 1) {
    out += "  bubble per stage:";
    for (double b : m.stage_bubble_fraction) out += fmt::format(" {:.3f}", b);
    out += "\n";
  }
  const DeviceMetrics* worst = nullptr;
  for (const auto& d : m.devices)
    if (!worst || d.memory.total().value() / d.capacity_bytes > worst->memory.total().value() / worst->capacity_bytes)
      worst = &d;
  if (worst) {
    const auto& mem = worst->memory;
    out += fmt::format("memory/device {} of {} GiB, {}   weights {} · grads {} · optimizer {} · activations {} · "
                       "buffers {} (stage {})\n",
                       gib(mem.total().value()), gib(worst->capacity_bytes), m.memory_fits ? "fits" : "DOES NOT FIT",
                       gib(mem.weights.value()), gib(mem.gradients.value()), gib(mem.optimizer.value()),
                       gib(mem.activations.value()), gib(mem.buffers.value()), worst->stage);
  }
  out += fmt::format("energy/step {}   devices {} · idle {} · network {} · {:.3g} J/token · facility (PUE {:.2f}) {}\n",
                     si(m.it_energy_j, Dim::energy), si(m.device_dynamic_j, Dim::energy),
                     si(m.device_static_j, Dim::energy), si(m.network_dynamic_j + m.network_static_j, Dim::energy),
                     m.energy_per_token_j, sc.pue, si(m.facility_energy_j, Dim::energy));
  if (sc.strategy.pp > 1 || sc.pools.size() > 1) {
    out += "\nstage  pool          layers   compute      comm     bubble   memory GiB\n";
    for (int s = 0; s < sc.strategy.pp; ++s) {
      double c = 0, cm = 0, b = 0, mem = 0;
      int k = 0;
      for (const auto& d : m.devices)
        if (d.stage == s && d.simulated) {
          ++k;
          c += d.compute_s;
          cm += d.exposed_comm_total();
          b += d.bubble_s;
          mem = std::max(mem, d.memory.total().value());
        }
      if (k == 0) continue;
      out += fmt::format("{:>5}  {:<12} {:>7} {:>9} {:>9} {:>10} {:>12}\n", s, sc.pools[sc.stage_pool[s]].name,
                         sc.layers_per_stage[s], si(c / k, Dim::time), si(cm / k, Dim::time), si(b / k, Dim::time),
                         gib(mem));
    }
  }
  out += fmt::format("\nsimulated in {:.3g} s ({} mode, {} tasks, {} engine activities)\n", run.wall_s,
                     sc.simulation.mode, m.tasks, m.activities);
  return out;
}

}  // namespace hcsim
