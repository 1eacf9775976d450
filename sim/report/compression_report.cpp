// The compression section of the report: what the codecs saved against the same step
// without them (bytes per collective kind, exposed communication, step time, energy) and
// what they cost (encode/decode time).
#include <fmt/format.h>

#include "report.hpp"
#include "sim/core/quantity.hpp"

namespace hcsim {
namespace {

std::array<double, kCommClasses> mean_exposed(const Metrics& m) {
  std::array<double, kCommClasses> out{};
  if (m.devices.empty()) return out;
  for (const auto& d : m.devices)
    for (std::size_t c = 0; c < kCommClasses; ++c) out[c] += d.exposed_comm[c].value();
  for (double& x : out) x /= static_cast<double>(m.devices.size());
  return out;
}

}  // namespace

nlohmann::json compression_json(const Scenario& sc, const RunOutput& run) {
  if (!run.uncompressed) return nullptr;
  const Metrics& c = run.metrics;
  const Metrics& u = *run.uncompressed;
  nlohmann::json j;
  j["dp_codec"] = sc.dp_codec ? std::string(sc.dp_codec->type()) : "";
  j["pp_codec"] = sc.pp_codec ? std::string(sc.pp_codec->type()) : "";
  j["codec_time_s"] = run.codec_time.value();
  j["step_time_s"] = {{"compressed", c.step_time.value()}, {"uncompressed", u.step_time.value()}};
  j["it_energy_j"] = {{"compressed", c.it_energy.value()}, {"uncompressed", u.it_energy.value()}};
  const auto ec = mean_exposed(c), eu = mean_exposed(u);
  nlohmann::json kinds = nlohmann::json::object();
  for (std::size_t k = 1; k < kCommClasses; ++k) {
    if (c.comm_bytes[k].value() == 0 && u.comm_bytes[k].value() == 0) continue;
    kinds[std::string(comm_class_name(static_cast<CommClass>(k)))] = {
        {"bytes_compressed", c.comm_bytes[k].value()},   {"bytes_uncompressed", u.comm_bytes[k].value()},
        {"bytes_saved", u.comm_bytes[k].value() - c.comm_bytes[k].value()}, {"exposed_s_compressed", ec[k]},
        {"exposed_s_uncompressed", eu[k]},       {"exposed_s_saved", eu[k] - ec[k]}};
  }
  j["by_kind"] = kinds;
  if (!run.phases.empty()) {
    nlohmann::json phases = nlohmann::json::array();
    for (const auto& ph : run.phases)
      phases.push_back({{"first_step", ph.first_step}, {"steps", ph.steps}, {"step_time_s", ph.step_time.value()},
                        {"it_energy_j", ph.it_energy.value()}});
    j["average"] = {{"steps", sc.strategy.average_steps}, {"mean_step_time_s", run.mean_step_time.value()},
                    {"mean_it_energy_j", run.mean_it_energy.value()}, {"phases", phases}};
  }
  return j;
}

std::string compression_table(const Scenario& sc, const RunOutput& run) {
  if (!run.uncompressed) return {};
  const Metrics& c = run.metrics;
  const Metrics& u = *run.uncompressed;
  std::string out = fmt::format("compression {}{}{}: step {} → {} ({:+.1f} %), energy {} → {}, codec time {}\n",
                                sc.dp_codec ? "dp " + std::string(sc.dp_codec->type()) : "",
                                sc.dp_codec && sc.pp_codec ? ", " : "",
                                sc.pp_codec ? "pp " + std::string(sc.pp_codec->type()) : "",
                                format_quantity(u.step_time.value(), Dim::time), format_quantity(c.step_time.value(), Dim::time),
                                100.0 * (c.step_time.value() / u.step_time.value() - 1.0), format_quantity(u.it_energy.value(), Dim::energy),
                                format_quantity(c.it_energy.value(), Dim::energy), format_quantity(run.codec_time.value(), Dim::time));
  if (!run.phases.empty()) {
    out += fmt::format("  mean over steps 0..{}: step {}, energy {} (", sc.strategy.average_steps - 1,
                       format_quantity(run.mean_step_time.value(), Dim::time), format_quantity(run.mean_it_energy.value(), Dim::energy));
    for (std::size_t i = 0; i < run.phases.size(); ++i)
      out += fmt::format("{}{} steps from {} at {}", i ? "; " : "", run.phases[i].steps, run.phases[i].first_step,
                         format_quantity(run.phases[i].step_time.value(), Dim::time));
    out += ")\n";
  }
  const auto ec = mean_exposed(c), eu = mean_exposed(u);
  for (std::size_t k = 1; k < kCommClasses; ++k) {
    if (c.comm_bytes[k].value() == u.comm_bytes[k].value()) continue;
    out += fmt::format("  {:<6} bytes {} → {} ({:.1f} % saved), exposed {} → {}\n",
                       comm_class_name(static_cast<CommClass>(k)), format_quantity(u.comm_bytes[k].value(), Dim::data),
                       format_quantity(c.comm_bytes[k].value(), Dim::data),
                       u.comm_bytes[k].value() > 0 ? 100.0 * (1.0 - c.comm_bytes[k].value() / u.comm_bytes[k].value()) : 0.0,
                       format_quantity(eu[k], Dim::time), format_quantity(ec[k], Dim::time));
  }
  return out;
}

}  // namespace hcsim
