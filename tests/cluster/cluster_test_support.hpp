#pragma once
// Runs one registered scheduler on a job list through the scheduler loop, for the tests.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_oracle.hpp"
#include "sim/cluster/cluster_loop.hpp"
#include "sim/cluster/scheduler.hpp"
#include "sim/core/error.hpp"

namespace hcsim::test {

inline ClusterResult run(const std::string& type, const ClusterLayout& l, const std::vector<JobSpec>& jobs,
                         StepOracle& oracle, nlohmann::json params = nlohmann::json::object(),
                         ClusterLoopOptions options = {}) {
  register_builtin_cluster_schedulers();
  Diagnostics diag;
  auto s = cluster_schedulers().build(type, params, "scheduler", diag);
  HCSIM_ASSERT(s != nullptr, "scheduler " + type + " did not build");
  return simulate_cluster(l, jobs, *s, type, oracle, options);
}

// The five-job example (tests/cluster/schedulers_test.cpp works out its times): one pool of
// 16 devices (2 nodes of 8), every step 1 s alone and together.
//   A: arrives 0, 8 devices, 10 steps     D: arrives 3, 8 devices, 20 steps
//   B: arrives 1, 16 devices, 5 steps     E: arrives 4, 4 devices, 2 steps
//   C: arrives 2, 8 devices, 4 steps
inline std::vector<JobSpec> five_jobs() {
  return {job("A", 0, 8, 10), job("B", 1, 16, 5), job("C", 2, 8, 4), job("D", 3, 8, 20), job("E", 4, 4, 2)};
}

inline FakeOracle five_oracle() {
  FakeOracle o;
  for (const char* n : {"A", "B", "C", "D", "E"}) o.set(n, 0, 1.0);
  return o;
}

}  // namespace hcsim::test
