// The JSON report (format hcsim-report/2; schema docs/report.schema.json).
#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <string_view>

#include <fmt/format.h>

#include "hcsim/version.hpp"
#include "report.hpp"

namespace hcsim {
namespace {

using nlohmann::json;

json memory_json(const MemoryBreakdown& m, double capacity) {
  return {{"weights_bytes", m.weights.value()},     {"gradients_bytes", m.gradients.value()},
          {"optimizer_bytes", m.optimizer.value()}, {"activations_bytes", m.activations.value()},
          {"buffers_bytes", m.buffers.value()},     {"peak_bytes", m.total().value()},
          {"capacity_bytes", capacity},             {"headroom_bytes", capacity - m.total().value()},
          {"fits", m.total().value() <= capacity}};
}

json tiers_json(const std::array<TierUsage, kMemoryTiers>& tiers) {
  json j = json::object();
  for (std::size_t t = 0; t < kMemoryTiers; ++t)
    j[std::string(memory_tier_name(static_cast<MemoryTier>(t)))] = {{"used_bytes", tiers[t].used.value()},
                                                                     {"capacity_bytes", tiers[t].capacity.value()}};
  return j;
}

template <class Q>
json by_class(const std::array<Q, kCommClasses>& v) {
  json j = json::object();
  for (std::size_t c = 1; c < kCommClasses; ++c) j[std::string(comm_class_name(static_cast<CommClass>(c)))] = v[c].value();
  return j;
}

json breakdown_json(Seconds compute, const std::array<Seconds, kCommClasses>& comm, Seconds bubble, Seconds idle) {
  return {{"compute_s", compute.value()}, {"exposed_comm_s", by_class(comm)}, {"bubble_s", bubble.value()},
          {"idle_s", idle.value()}};
}

json run_json(const Scenario& sc, const Metrics& m) {
  json pools = json::array();
  for (const auto& p : sc.pools)
    pools.push_back({{"name", p.name}, {"type", p.type}, {"preset", p.preset}, {"count", p.count},
                     {"first_device", p.first_device}, {"attach_to", p.attach_to}});
  const auto& st = sc.strategy;
  json strategy = {{"dp", st.dp},
                   {"tp", st.tp},
                   {"pp", st.pp},
                   {"cp", st.cp},
                   {"ep", st.ep},
                   {"schedule", st.schedule},
                   {"interleave", st.interleave},
                   {"micro_batch", sc.workload.micro_batch},
                   {"global_batch", sc.workload.global_batch},
                   {"micro_batches", sc.workload.micro_batches(st.dp)}};
  if (st.etp > 1) strategy["etp"] = st.etp;  // expert tensor parallelism, when used
  return {{"format", kReportFormat},
          {"hcsim_version", kVersion},
          {"scenario", sc.name},
          {"mode", sc.simulation.mode},
          {"devices", sc.device_count()},
          {"simulated_devices", m.simulated_devices},
          {"pools", pools},
          {"strategy", strategy}};
}

json energy_json(const Scenario& sc, const Metrics& m) {
  return {{"device_dynamic_j", m.device_dynamic.value()},
          {"device_static_j", m.device_static.value()},
          {"network_dynamic_j", m.network_dynamic.value()},
          {"network_static_j", m.network_static.value()},
          {"accelerator_j", m.accelerator_energy.value()},
          {"host_j", m.host_energy.value()},
          {"it_j", m.it_energy.value()},
          {"pue", sc.pue},
          {"facility_j", m.facility_energy.value()},
          {"per_token_j", m.energy_per_token.value()},
          {"facility_per_token_j", m.tokens_per_step > 0 ? m.facility_energy.value() / m.tokens_per_step : 0.0},
          {"train_facility_j", m.tokens_per_step > 0 ? m.facility_energy.value() / m.tokens_per_step * m.train_tokens : 0.0},
          {"average_power_w", m.average_power.value()},
          {"peak_power_w", m.peak_power.value()},
          {"facility_average_power_w", m.average_power.value() * sc.pue}};
}

json memory_summary(const Metrics& m) {
  json j = {{"fits", m.memory_fits}, {"tiers", tiers_json(m.tiers)}};
  if (!m.devices.empty()) {
    const DeviceMetrics worst = m.devices[m.devices.least_headroom()];
    j["worst_device"] = worst.device;
    j["worst_stage"] = worst.stage;
    j["peak_bytes"] = worst.memory.total().value();
    j["capacity_bytes"] = worst.capacity.value();
    j["headroom_bytes"] = worst.headroom().value();
  }
  return j;
}

json mean_breakdown(const Metrics& m) {
  Seconds c{}, b{}, i{};
  std::array<Seconds, kCommClasses> x{};
  for (std::size_t k = 0; k < m.devices.size(); ++k) {
    const DeviceMetrics& d = m.devices.shared(k);
    c += d.compute;
    b += d.bubble;
    i += d.idle;
    for (std::size_t k = 0; k < kCommClasses; ++k) x[k] += d.exposed_comm[k];
  }
  const double n = std::max<double>(1.0, static_cast<double>(m.devices.size()));
  for (Seconds& v : x) v /= n;
  return breakdown_json(c / n, x, b / n, i / n);
}

json stages_json(const Scenario& sc, const Metrics& m) {
  json out = json::array();
  for (const auto& s : m.stages) {
    json j = breakdown_json(s.compute, s.exposed_comm, s.bubble, s.idle);
    j["stage"] = s.stage;
    j["pool"] = sc.pools[static_cast<std::size_t>(s.pool)].name;
    j["devices"] = s.devices;
    j["layers"] = s.layers;
    j["bubble_fraction"] = s.bubble_fraction;
    j["memory"] = memory_json(s.memory, s.capacity.value());
    j["energy_j"] = s.energy.value();
    out.push_back(std::move(j));
  }
  return out;
}

json device_json(const Scenario& sc, const DeviceMetrics& d) {
  json j = breakdown_json(d.compute, d.exposed_comm, d.bubble, d.idle);
  j["device"] = d.device;
  j["pool"] = sc.pools[static_cast<std::size_t>(d.pool)].name;
  j["stage"] = d.stage;
  j["simulated"] = d.simulated;
  j["twin"] = d.twin;
  j["flops"] = d.flops.value();
  j["model_flops"] = d.model_flops.value();
  j["memory"] = memory_json(d.memory, d.capacity.value());
  j["memory"]["tiers"] = tiers_json(d.tiers);
  j["energy_j"] = {
      {"dynamic", d.dynamic_energy.value()}, {"static", d.static_energy.value()}, {"total", d.energy().value()}};
  j["idle_power_w"] = d.idle_power.value();
  j["peak_power_w"] = d.peak_power.value();
  return j;
}

json devices_json(const Scenario& sc, const Metrics& m) {
  json out = json::array();
  for (const auto& d : m.devices) out.push_back(device_json(sc, d));
  return out;
}

// `text`, a value that dump(indent) printed at the top level, as the pretty printer prints
// it `spaces` deeper: each line after the first indented by that much more (a dumped string
// escapes its newlines, so every newline of the text is the printer's).
std::string nested(std::string_view text, const std::string& spaces) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (;;) {
    const std::size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return out.append(text);
    out.append(text.substr(0, nl + 1)).append(spaces);
    text.remove_prefix(nl + 1);
  }
}

bool same_quantities(const MemoryBreakdown& a, const MemoryBreakdown& b) {
  return a.weights == b.weights && a.gradients == b.gradients && a.optimizer == b.optimizer &&
         a.activations == b.activations && a.buffers == b.buffers && a.offloaded == b.offloaded;
}

// Whether device_json(a) and device_json(b) differ at most in "device" and "twin", the two
// numbers write_report_json puts into a kept text. Every other field of DeviceMetrics is
// compared: one added to it must be added here (the size check fails).
bool same_but_numbers(const DeviceMetrics& a, const DeviceMetrics& b) {
  static_assert(sizeof(DeviceMetrics) == 24 + 8 * (1 + kCommClasses + 2 + 2 + 6 + 1 + 2 * kMemoryTiers + 4),
                "a field was added to DeviceMetrics: compare it in same_but_numbers");
  static_assert(sizeof(MemoryBreakdown) == 6 * 8, "a field was added to MemoryBreakdown: compare it here");
  bool tiers = true;
  for (std::size_t t = 0; t < kMemoryTiers; ++t)
    tiers = tiers && a.tiers[t].used == b.tiers[t].used && a.tiers[t].capacity == b.tiers[t].capacity;
  return tiers && a.stage == b.stage && a.pool == b.pool && a.simulated == b.simulated && a.compute == b.compute &&
         a.exposed_comm == b.exposed_comm && a.bubble == b.bubble && a.idle == b.idle && a.flops == b.flops &&
         a.model_flops == b.model_flops && same_quantities(a.memory, b.memory) && a.capacity == b.capacity &&
         a.dynamic_energy == b.dynamic_energy && a.static_energy == b.static_energy && a.idle_power == b.idle_power &&
         a.peak_power == b.peak_power;
}

json links_json(const Metrics& m) {
  json links = json::array();
  for (const auto& l : m.links)
    links.push_back({{"class", l.link_class}, {"links", l.links}, {"bytes", l.bytes.value()},
                     {"dynamic_energy_j", l.dynamic_energy.value()}, {"static_energy_j", l.static_energy.value()},
                     {"utilisation", l.utilisation}, {"max_utilisation", l.max_utilisation}});
  return links;
}

}  // namespace

nlohmann::json report_json(const Scenario& sc, const RunOutput& run, bool per_device) {
  const Metrics& m = run.metrics;
  json j = run_json(sc, m);
  if (json moe = moe_json(sc, run); !moe.is_null()) j["strategy"]["moe"] = std::move(moe);
  j["step_time_s"] = m.step_time.value();
  j["bubble_fraction"] = m.bubble_fraction;
  j["stage_bubble_fraction"] = m.stage_bubble_fraction;
  j["tokens_per_step"] = m.tokens_per_step;
  j["samples_per_step"] = m.samples_per_step;
  j["tokens_per_s"] = m.tokens_per_s;
  j["samples_per_s"] = m.samples_per_s;
  j["train_tokens"] = m.train_tokens;
  j["time_to_train_s"] = m.time_to_train.value();
  j["model_flops"] = m.model_flops.value();
  j["hardware_flops"] = m.hardware_flops.value();
  j["peak_flops_per_s"] = m.peak_flops_rate.value();
  j["mfu"] = m.mfu;
  j["hfu"] = m.hfu;
  j["breakdown"] = mean_breakdown(m);
  j["comm_bytes"] = by_class(m.comm_bytes);
  j["memory_fits"] = m.memory_fits;
  j["memory"] = memory_summary(m);
  j["energy"] = energy_json(sc, m);
  std::vector<double> power;
  for (Watts w : m.power) power.push_back(w.value());
  j["power"] = {{"interval_s", m.power_interval.value()}, {"it_w", power}};
  j["links"] = links_json(m);
  j["stages"] = stages_json(sc, m);
  if (per_device) j["per_device"] = devices_json(sc, m);
  if (run.uncompressed) j["compression"] = compression_json(sc, run);
  if (const json o = ocs_json(sc, run); !o.is_null()) j["ocs"] = o;
  j["simulation"] = {{"tasks", m.tasks}, {"activities", m.activities}};
  return j;
}

nlohmann::json report_per_device(const Scenario& sc, const RunOutput& run) { return devices_json(sc, run.metrics); }

void write_report_json(std::ostream& os, const Scenario& sc, const RunOutput& run, const nlohmann::json& report,
                       int indent) {
  HCSIM_ASSERT(report.is_object() && !report.empty() && !report.contains("per_device"),
               "the report to stream per_device into has no per_device of its own");
  const std::string pad(static_cast<std::size_t>(indent), ' '), pad2 = pad + pad;
  const auto& devices = run.metrics.devices;
  // Devices of equal figures (a stage's, a twin's replicas) print alike but for "device" and
  // "twin": the last device printed of each (stage, pool) is kept as text around those two
  // numbers ("device" is the third key, "twin" the last), and a device that
  // same_but_numbers() it reuses the text.
  struct Printed {
    std::optional<DeviceMetrics> d;
    std::string head, middle, tail;  // head, device, middle, twin, tail
  };
  std::map<std::pair<int, int>, Printed> printed;  // by (stage, pool)
  auto print = [&](const DeviceMetrics& d, Printed& p) {
    const std::string text = nested(device_json(sc, d).dump(indent), pad2);
    constexpr std::string_view kDevice = "\"device\": ", kTwin = "\"twin\": ";
    const std::size_t at = text.find(kDevice), twin = text.rfind(kTwin);
    HCSIM_ASSERT(at != std::string::npos && twin != std::string::npos && at < twin, "a device's JSON has its numbers");
    const std::size_t after = text.find_first_not_of("0123456789", at + kDevice.size());
    const std::size_t end = text.find_first_not_of("-0123456789", twin + kTwin.size());
    p = {d, text.substr(0, at + kDevice.size()), text.substr(after, twin + kTwin.size() - after), text.substr(end)};
  };
  bool first = true, streamed = false;
  auto key = [&](const std::string& k) {
    os << (first ? "" : ",\n") << pad << json(k).dump() << ": ";
    first = false;
  };
  auto per_device = [&] {
    key("per_device");
    streamed = true;
    if (devices.empty()) {
      os << "[]";
      return;
    }
    os << "[\n";
    // Gathered into pieces of about 1 MiB: a stream writes a piece of 1 KiB or more (a
    // device's text) with a system call of its own, one a device.
    std::string piece;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const DeviceMetrics d = devices[i];
      Printed& p = printed[{d.stage, d.pool}];
      if (!p.d || !same_but_numbers(d, *p.d)) print(d, p);
      fmt::format_to(std::back_inserter(piece), "{}{}{}{}{}{}{}", i ? ",\n" : "", pad2, p.head, d.device, p.middle,
                     d.twin, p.tail);
      if (piece.size() >= (std::size_t{1} << 20)) {
        os << piece;
        piece.clear();
      }
    }
    os << piece << "\n" << pad << "]";
  };
  os << "{\n";
  // json keeps its members in key order, so per_device goes before the first key after it.
  for (const auto& [k, v] : report.items()) {
    if (!streamed && k > "per_device") per_device();
    key(k);
    os << nested(v.dump(indent), pad);
  }
  if (!streamed) per_device();
  os << "\n}";
}

}  // namespace hcsim
