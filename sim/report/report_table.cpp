// The human report: where the time, the memory and the energy went, in 100 columns.
#include <algorithm>

#include <fmt/format.h>

#include "report.hpp"
#include "sim/core/quantity.hpp"
#include "sim/report/report_text.hpp"

namespace hcsim {
namespace {

using report_text::duration;
using report_text::pct;
using report_text::si;
std::string gib1(double b) { return report_text::gib(b, 1); }

std::string strategy_line(const Scenario& sc) {
  const auto& st = sc.strategy;
  // The schedule as its registry names it; an interleaved one with its chunks per device.
  std::string sched(sc.schedule().type());
  if (sc.schedule().interleaved()) sched += fmt::format(" (v = {})", st.interleave);
  std::string line = fmt::format("TP {} · PP {} {} · DP {} · micro-batch {} · batch {}", st.tp, st.pp, sched, st.dp,
                                 sc.workload.micro_batch, sc.workload.global_batch);
  if (st.cp > 1) line += fmt::format(" · CP {}", st.cp);
  if (st.sequence_parallel) line += " · sequence parallel";
  if (st.recompute != Recompute::none) line += fmt::format(" · {} recompute", recompute_name(st.recompute));
  if (st.zero > 0) line += fmt::format(" · ZeRO-{}", st.zero);
  return line;
}

// Terminal columns of UTF-8 text: its code points (no wide characters are written here).
std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Words of `text` joined into lines of at most `width` columns, continuation lines indented.
std::string wrap(const std::string& text, std::size_t width) {
  std::string out, line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t next = text.find(' ', pos);
    if (next == std::string::npos) next = text.size();
    const std::string word = text.substr(pos, next - pos);
    pos = next + 1;
    if (!line.empty() && columns(line) + 1 + columns(word) > width) {
      out += line + "\n";
      line = "  ";
    } else if (!line.empty()) {
      line += ' ';
    }
    line += word;
  }
  return out + line + "\n";
}

std::string table_header(const Scenario& sc) {
  std::string pools;
  for (const auto& p : sc.pools)
    pools += fmt::format("{}{} × {}{}", pools.empty() ? "" : p.attach_to.empty() ? " + " : " with ", p.count,
                         p.preset.empty() ? p.type : p.preset, p.attach_to.empty() ? "" : " attached");
  const std::string model = sc.model_preset.empty() ? sc.model.family : sc.model_preset;
  return wrap(fmt::format("{} on {} ({})", model, pools, sc.topology.description), 100) +
         wrap(strategy_line(sc), 100) + "\n";
}

// 222,677 for large counts, 4 significant digits below 1000.
std::string count(double x) {
  if (!(x >= 1000)) return fmt::format("{:.4g}", x);
  std::string digits = fmt::format("{:.0f}", x), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// 300B, 1.5T: token counts.
std::string tokens(double x) {
  const char* suffix[] = {"", "K", "M", "B", "T"};
  int k = 0;
  while (x >= 1000 && k < 4) x /= 1000, ++k;
  return fmt::format("{:.4g}{}", x, suffix[k]);
}

std::string time_section(const Scenario& sc, const Metrics& m) {
  const double step = m.step_time.value();
  const double n = std::max<double>(1.0, static_cast<double>(m.devices.size()));
  DeviceMetrics avg;
  for (std::size_t k = 0; k < m.devices.size(); ++k) {
    const DeviceMetrics& d = m.devices.shared(k);
    avg.compute += d.compute / n;
    avg.bubble += d.bubble / n;
    avg.idle += d.idle / n;
    for (std::size_t c = 0; c < kCommClasses; ++c) avg.exposed_comm[c] += d.exposed_comm[c] / n;
  }
  std::string out = fmt::format("step time   {:>10}   tokens/s {}   samples/s {}   MFU {}   HFU {}\n",
                                si(step, Dim::time), count(m.tokens_per_s), count(m.samples_per_s), pct(m.mfu),
                                pct(m.hfu));
  std::vector<std::pair<std::string, double>> rows{{"compute", avg.compute.value()}};
  for (std::size_t c = 1; c < kCommClasses; ++c)
    if (avg.exposed_comm[c].value() > 0)
      rows.emplace_back("exposed " + std::string(comm_class_name(static_cast<CommClass>(c))), avg.exposed_comm[c].value());
  rows.emplace_back("bubble", avg.bubble.value());
  if (avg.idle.value() > 0) rows.emplace_back("idle", avg.idle.value());
  std::size_t width = 12;  // labels up to 11 characters keep the usual layout
  for (const auto& [label, t] : rows) width = std::max(width, label.size() + 1);
  for (const auto& [label, t] : rows)
    out += fmt::format("  {:<{}}{:>10}   {:>7}\n", label, width, si(t, Dim::time),
                       pct(step > 0 ? t / step : 0));
  if (sc.strategy.pp > 1) {
    out += "  bubble per stage:";
    for (std::size_t s = 0; s < m.stage_bubble_fraction.size(); ++s) {
      if (s == 8 && m.stage_bubble_fraction.size() > 10) {
        out += fmt::format(" … {:.3f}", m.stage_bubble_fraction.back());
        break;
      }
      out += fmt::format(" {:.3f}", m.stage_bubble_fraction[s]);
    }
    out += "\n";
  }
  const double train_j = m.tokens_per_step > 0 ? m.facility_energy.value() / m.tokens_per_step * m.train_tokens : 0.0;
  out += fmt::format("time to train {} tokens: {} · {:.4g} MWh facility energy\n", tokens(m.train_tokens),
                     duration(m.time_to_train.value()), train_j / 3.6e9);
  return out;
}

std::string memory_section(const Metrics& m) {
  if (m.devices.empty()) return "";
  const DeviceMetrics worst = m.devices[m.devices.least_headroom()];
  const auto& mem = worst.memory;
  std::string out =
      fmt::format("memory/device {} of {} GiB HBM, {} (stage {}, device {})\n", gib1(mem.total().value()),
                  gib1(worst.capacity.value()), m.memory_fits ? "fits" : "DOES NOT FIT", worst.stage, worst.device);
  out += fmt::format("  weights {} · grads {} · optimizer {} · activations {} · buffers {} GiB\n",
                     gib1(mem.weights.value()), gib1(mem.gradients.value()), gib1(mem.optimizer.value()),
                     gib1(mem.activations.value()), gib1(mem.buffers.value()));
  const auto& host = m.tiers[static_cast<std::size_t>(MemoryTier::host_dram)];
  const auto& cxl = m.tiers[static_cast<std::size_t>(MemoryTier::cxl_pool)];
  if (host.capacity.value() > 0 || host.used.value() > 0 || cxl.capacity.value() > 0 || cxl.used.value() > 0)
    out += fmt::format("  host DRAM {} of {} GiB · CXL pool {} of {} GiB (cluster)\n", gib1(host.used.value()),
                       gib1(host.capacity.value()), gib1(cxl.used.value()), gib1(cxl.capacity.value()));
  return out;
}

std::string energy_section(const Scenario& sc, const Metrics& m) {
  std::string out = fmt::format("energy/step {} IT · {:.3g} J/token · facility (PUE {:.2f}) {}\n",
                                si(m.it_energy.value(), Dim::energy), m.energy_per_token.value(), sc.pue,
                                si(m.facility_energy.value(), Dim::energy));
  out += fmt::format("  devices {} dynamic · {} idle   network {} dynamic · {} static\n",
                     si(m.device_dynamic.value(), Dim::energy), si(m.device_static.value(), Dim::energy),
                     si(m.network_dynamic.value(), Dim::energy), si(m.network_static.value(), Dim::energy));
  if (sc.node_power)
    out += fmt::format("  hosts {} ({}: CPUs, DRAM, NICs, switches, fans) · accelerators and links {}\n",
                       si(m.host_energy.value(), Dim::energy),
                       sc.node_power->preset.empty() ? std::string("node_power") : sc.node_power->preset,
                       si(m.accelerator_energy.value(), Dim::energy));
  out += fmt::format("power       average {} · peak {} (IT) · facility {}\n", si(m.average_power.value(), Dim::power),
                     si(m.peak_power.value(), Dim::power), si(m.average_power.value() * sc.pue, Dim::power));
  for (const auto& l : m.links)
    out += fmt::format("  {:<12} {:>5} links  {:>10} moved  utilisation {} (busiest {})  {}\n", l.link_class, l.links,
                       si(l.bytes.value(), Dim::data), pct(l.utilisation), pct(l.max_utilisation),
                       si(l.dynamic_energy.value() + l.static_energy.value(), Dim::energy));
  return out;
}

std::string stage_section(const Scenario& sc, const Metrics& m) {
  if (sc.strategy.pp <= 1 && sc.pools.size() <= 1) return "";
  std::string out = "\nstage  pool          layers    compute       comm     bubble   memory GiB   headroom GiB\n";
  for (const auto& s : m.stages) {
    Seconds comm{};
    for (Seconds x : s.exposed_comm) comm += x;
    out += fmt::format("{:>5}  {:<12} {:>7} {:>10} {:>10} {:>10} {:>12} {:>14}\n", s.stage,
                       sc.pools[static_cast<std::size_t>(s.pool)].name, s.layers, si(s.compute.value(), Dim::time),
                       si(comm.value(), Dim::time), si(s.bubble.value(), Dim::time), gib1(s.memory.total().value()),
                       gib1(s.capacity.value() - s.memory.total().value()));
  }
  return out;
}

}  // namespace

std::string report_table(const Scenario& sc, const RunOutput& run) {
  const Metrics& m = run.metrics;
  std::string out = table_header(sc) + time_section(sc, m) + memory_section(m) + energy_section(sc, m) +
                    stage_section(sc, m) + moe_table(sc, run) + compression_table(sc, run) +
                    ocs_table(sc, run);
  std::string sym;
  if (m.simulated_devices < static_cast<int>(m.devices.size()))
    sym = fmt::format(", {} of {} devices simulated, the others replicas", m.simulated_devices, m.devices.size());
  out += "\n" + wrap(fmt::format("simulated in {:.3g} s ({} mode, {} tasks, {} engine activities{})", run.wall_s,
                                 sc.simulation.mode, m.tasks, m.activities, sym),
                     100);
  return out;
}

}  // namespace hcsim
