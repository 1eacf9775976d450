#pragma once
// The step of a 4-layer GPT (h 1024, 16 heads, V 1024, s 512) on the test device, for the
// step-plan tests: the caller sets the strategy and the batch, then make()s the schedule.
#include <memory>

#include "../support/test_device.hpp"
#include "../support/test_lowering.hpp"
#include "model_configs.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim::test {

struct StepSetup {
  TransformerConfig c = gpt_config(4, 1024, 16, 1024, 512);
  StrategySpec st;
  WorkloadSpec w;
  testing::TestDevice dev;
  std::unique_ptr<PipelineSchedule> sched;
  StepSetup() { register_builtin_schedules(); }
  void make() { sched = pipeline_schedules().get(st.schedule, "").make(Params()); }
  [[nodiscard]] LoweringInput input() const { return testing::uniform_lowering(c, st, w, *sched, dev); }
};

}  // namespace hcsim::test
