// The optical-circuit-switch section of the report: a torus rewired between phases of a
// job (cluster.topology.ocs_phases; TPU v4, Jouppi et al., ISCA 2023): each phase's wiring,
// steps and step time, the reconfigurations and their time, and the mean step over the job,
// (sum of phase step x steps + reconfigurations x reconfiguration time) / steps.
#include <fmt/format.h>

#include "report.hpp"
#include "sim/core/quantity.hpp"
#include "topologies/torus.hpp"

namespace hcsim {

nlohmann::json ocs_json(const Scenario& sc, const RunOutput& run) {
  if (sc.topology.ocs_phases.empty() || run.phases.empty()) return nullptr;
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& ph : run.phases)
    phases.push_back({{"first_step", ph.first_step}, {"steps", ph.steps}, {"dims", ph.dims},
                      {"step_time_s", ph.step_time.value()}, {"it_energy_j", ph.it_energy.value()}});
  return {{"steps", sc.strategy.average_steps},
          {"reconfiguration_time_s", sc.topology.reconfiguration_time.value()},
          {"reconfigurations", run.reconfigurations},
          {"total_reconfiguration_time_s", run.reconfiguration_time.value()},
          {"reconfiguration_energy_j", run.reconfiguration_energy.value()},
          {"mean_step_time_s", run.mean_step_time.value()},
          {"mean_it_energy_j", run.mean_it_energy.value()},
          {"phases", phases}};
}

std::string ocs_table(const Scenario& sc, const RunOutput& run) {
  if (sc.topology.ocs_phases.empty() || run.phases.empty()) return {};
  std::string out = fmt::format("\noptical circuit switches: steps 0..{}, mean step {}, energy {}\n",
                                sc.strategy.average_steps - 1, format_quantity(run.mean_step_time.value(), Dim::time),
                                format_quantity(run.mean_it_energy.value(), Dim::energy));
  out += fmt::format("  {} reconfiguration{} x {} = {}, devices idle: {}\n", run.reconfigurations,
                     run.reconfigurations == 1 ? "" : "s",
                     format_quantity(sc.topology.reconfiguration_time.value(), Dim::time),
                     format_quantity(run.reconfiguration_time.value(), Dim::time),
                     format_quantity(run.reconfiguration_energy.value(), Dim::energy));
  for (const auto& ph : run.phases)
    out += fmt::format("  {:<10} {} steps from {}: step {}, energy {}\n", torus_dims_text(ph.dims), ph.steps,
                       ph.first_step, format_quantity(ph.step_time.value(), Dim::time),
                       format_quantity(ph.it_energy.value(), Dim::energy));
  return out;
}

}  // namespace hcsim
