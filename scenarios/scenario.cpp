// What a parsed scenario answers (scenario.hpp): its device count, the pool of a device,
// its pipeline schedule, the layout request its rules are checked on, its pools' spans of
// devices; and the registration of every builtin model the parser resolves against.
#include <algorithm>
#include <map>
#include <memory>

#include "models/link/link.hpp"
#include "scenario.hpp"
#include "workloads/stage_layout.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim {

void register_builtins() {
  register_builtin_compute_devices();
  register_builtin_links();
  register_builtin_topologies();
  register_builtin_transformers();
  register_builtin_schedules();
}

int Scenario::device_count() const {
  int n = 0;
  for (const auto& p : pools)
    if (p.attach_to.empty()) n += p.count;
  return n;
}

const DevicePool& Scenario::pool_of_device(int device) const {
  for (const auto& p : pools)
    if (p.attach_to.empty() && device >= p.first_device && device < p.first_device + p.count) return p;
  HCSIM_ASSERT(false, "device index out of range");
  return pools.front();
}

const PipelineSchedule& Scenario::schedule() const {
  static std::map<std::pair<std::string, bool>, std::unique_ptr<PipelineSchedule>> cache;
  auto& s = cache[{strategy.schedule, strategy.moe_a2a_overlap}];
  if (!s) s = make_schedule(strategy.schedule, strategy.moe_a2a_overlap, "/strategy/schedule");
  return *s;
}

LayoutRequest layout_request(const Scenario& sc) {
  LayoutRequest r;
  r.model = &sc.model;
  r.layout = sc.layout();
  r.devices = sc.device_count();
  r.interleaved = pipeline_schedules().find(sc.strategy.schedule) && sc.schedule().interleaved();
  r.interleave = sc.strategy.interleave;
  if (pipeline_schedules().find(sc.strategy.schedule)) {
    r.chunks = sc.schedule().placement(sc.strategy.pp, sc.strategy.interleave).layer_chunks();
    r.schedule = sc.strategy.schedule;
    r.needs = sc.schedule().needs();
  }
  r.global_batch = sc.workload.global_batch;
  r.micro_batch = sc.workload.micro_batch;
  r.layers_per_stage = &sc.strategy.layers_per_stage;
  r.sequence_parallel = sc.strategy.sequence_parallel;
  r.zero = sc.strategy.zero;
  r.moe_a2a_overlap = sc.strategy.moe_a2a_overlap;
  r.recompute = sc.strategy.recompute;
  r.uniform_stages = std::all_of(sc.stage_pool.begin(), sc.stage_pool.end(),
                                 [&](int p) { return same_device_model(sc.pools[p], sc.pools[sc.stage_pool[0]]); });
  return r;
}

bool same_device_model(const DevicePool& a, const DevicePool& b) {
  return a.preset == b.preset && a.params == b.params;
}

std::vector<PoolSpan> compute_pool_spans(const Scenario& sc, std::vector<int>* index) {
  std::vector<PoolSpan> out;
  for (std::size_t k = 0; k < sc.pools.size(); ++k)
    if (sc.pools[k].attach_to.empty()) {
      out.push_back({sc.pools[k].name, sc.pools[k].first_device, sc.pools[k].count});
      if (index) index->push_back(static_cast<int>(k));
    }
  return out;
}

}  // namespace hcsim
