#pragma once
// A step oracle for the scheduler tests: step times set by hand, no engine.
//
// alone(job, pool, n): the step set for (job name, pool), scaled by `scaling(n)` when set
// (else the same at every size); nullopt when none is set. together(): each job's alone
// step at its placement's size, times `shared_slowdown` when more than one job runs (so
// a test can check contention), and counts its calls. step_energy(): alone step x devices
// x `watts_per_device`, or the value set for (job name, pool).

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/cluster_types.hpp"

namespace hcsim::test {

class FakeOracle : public StepOracle {
 public:
  // The job `name` steps in `step` seconds on `pool`.
  FakeOracle& set(const std::string& name, std::uint32_t pool, double step) {
    steps_[{name, pool}] = step;
    return *this;
  }
  FakeOracle& set_energy(const std::string& name, std::uint32_t pool, double joules) {
    energy_[{name, pool}] = joules;
    return *this;
  }

  std::optional<Seconds> alone(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) override {
    auto it = steps_.find({job.name, pool});
    if (it == steps_.end()) return std::nullopt;
    return Seconds(it->second * (scaling ? scaling(devices) : 1.0));
  }

  std::vector<Seconds> together(std::span<const JobSpec* const> jobs,
                                std::span<const JobPlacement> placements) override {
    ++together_calls;
    std::vector<Seconds> out;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const auto n = static_cast<std::uint32_t>(placements[i].devices.size());
      out.push_back(*alone(*jobs[i], placements[i].pool, n) * (jobs.size() > 1 ? shared_slowdown : 1.0));
    }
    return out;
  }

  Joules step_energy(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) override {
    auto it = energy_.find({job.name, pool});
    if (it != energy_.end()) return Joules(it->second);
    return Joules(alone(job, pool, devices)->value() * devices * watts_per_device);
  }

  std::function<double(std::uint32_t)> scaling;  // step multiplier at a size; unset: 1
  double shared_slowdown = 1.0;
  double watts_per_device = 100.0;
  int together_calls = 0;

 private:
  std::map<std::pair<std::string, std::uint32_t>, double> steps_;
  std::map<std::pair<std::string, std::uint32_t>, double> energy_;
};

// One pool per entry of `devices`, named "p0", "p1", ..., consecutive device ids, idle
// power `idle_watts` per device.
inline ClusterLayout layout(std::vector<std::uint32_t> devices, std::uint32_t gpus_per_node = 8,
                            std::uint32_t nodes_per_leaf = 0, double idle_watts = 50) {
  ClusterLayout l;
  l.gpus_per_node = gpus_per_node;
  l.nodes_per_leaf = nodes_per_leaf;
  std::uint32_t first = 0;
  for (std::size_t p = 0; p < devices.size(); ++p) {
    l.pools.push_back({.name = "p" + std::to_string(p),
                       .device = "fake",
                       .first_device = first,
                       .devices = devices[p],
                       .idle_power = Watts(idle_watts)});
    first += devices[p];
  }
  return l;
}

// A fixed-size job.
inline JobSpec job(std::string name, double arrival, std::uint32_t devices, double steps, int priority = 0,
                   double checkpoint_restart = 0) {
  JobSpec j;
  j.name = std::move(name);
  j.arrival = Seconds(arrival);
  j.steps = steps;
  j.priority = priority;
  j.min_devices = j.max_devices = devices;
  j.checkpoint_restart = Seconds(checkpoint_restart);
  return j;
}

}  // namespace hcsim::test
