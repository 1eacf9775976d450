#pragma once
// The lowering input of a test: one device model on every stage and the layers split
// evenly over strategy.pp stages (the caller's layout divides them).
#include "workloads/lowering.hpp"

namespace hcsim::testing {

inline LoweringInput uniform_lowering(const TransformerConfig& c, const StrategySpec& st, const WorkloadSpec& w,
                                      const PipelineSchedule& schedule, const ComputeDevice& dev) {
  LoweringInput in;
  in.model = &c;
  in.strategy = &st;
  in.workload = &w;
  in.schedule = &schedule;
  in.stage_device.assign(static_cast<std::size_t>(st.pp), &dev);
  in.layers_per_stage.assign(static_cast<std::size_t>(st.pp), static_cast<int>(c.layers / st.pp));
  return in;
}

}  // namespace hcsim::testing
