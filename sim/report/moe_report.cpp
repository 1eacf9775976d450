// The mixture-of-experts section of the report: how the routing loads the ranks of an
// expert-parallel group (workloads/transformer.hpp: moe_load) and what that costs against
// the same step with even routing (RunOutput::balanced).
#include <fmt/format.h>

#include "report.hpp"
#include "sim/core/quantity.hpp"

namespace hcsim {

nlohmann::json moe_json(const Scenario& sc, const RunOutput& run) {
  if (!sc.model.is_moe()) return nullptr;
  const MoeLoad load = moe_load(sc.model.moe, sc.strategy.ep);
  const Seconds balanced = run.balanced ? run.balanced->step_time : run.metrics.step_time;
  return {{"experts", sc.model.moe.experts},
          {"top_k", sc.model.moe.top_k},
          {"moe_layers", sc.model.moe_layers(0, sc.model.layers)},
          {"rank_share", load.rank_share},
          {"busiest_rank_load", load.load},
          {"dropped_fraction", load.dropped},
          {"balanced_step_time_s", balanced.value()},
          {"imbalance_cost_s", (run.metrics.step_time - balanced).value()}};
}

std::string moe_table(const Scenario& sc, const RunOutput& run) {
  if (!sc.model.is_moe() || !run.balanced) return {};
  const MoeLoad load = moe_load(sc.model.moe, sc.strategy.ep);
  const Seconds step = run.metrics.step_time, even = run.balanced->step_time;
  return fmt::format("expert routing: busiest of {} expert ranks takes {:.3g}x the even share{}; step {} against {} "
                     "with even routing ({:+.1f} %)\n",
                     load.rank_share.size(), load.load,
                     load.dropped > 0 ? fmt::format(", {:.3g} % of routed tokens dropped", 100 * load.dropped) : "",
                     format_quantity(step.value(), Dim::time), format_quantity(even.value(), Dim::time),
                     100.0 * (step.value() / even.value() - 1.0));
}

}  // namespace hcsim
