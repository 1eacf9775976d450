#pragma once
// Fast analytical screening of many parallel layouts of one base scenario, for layout
// searches: the base is parsed, its topology built and its collective cost model made
// once; each layout then sets the strategy fields directly (tp, pp, dp, cp, ep, etp, micro-batch,
// schedule, recomputation, ZeRO, sequence parallelism), places its stages in the base's
// pools by device order and splits the layers as the parser does (evenly on one device
// model, by device speed across several), checks the scenario parser's layout rules and
// the memory model (the offload pool's capacity included), and calls analytical_step
// (workloads/analytical.hpp) with
//  - collective costs cached by (group first device, stride, size, op, bytes): exact, since
//    the same devices always cost the same;
//  - chunk cost sums cached by their inputs (AnalyticalCache);
//  - memory evaluated once per distinct stage shape: stages that differ only in the
//    micro-batches they keep in flight are represented by the one keeping the most (the
//    memory model grows with it);
//  - with optimizer state offloaded to a pool, the streams' closed form of the run driver
//    (sim/driver/offload_stream.hpp) on routes found once.
// The step time and the metrics equal run_scenario() in "analytical" mode on the scenario
// of that layout (tests/run/fast_analytical_test.cpp) up to summation order.
//
// A layout of n = tp * pp * dp * cp devices runs on the first n devices of the base cluster
// (a job on part of a machine). `hcsim search` instead builds a cluster of exactly n
// devices; on an nvswitch-cluster the two give the same collective costs (the first n
// devices see the same nodes, leaves and spines); elsewhere make one FastAnalytical per
// device count from a base of that count.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "scenarios/scenario.hpp"

namespace hcsim {

class StarTimes;

struct FastLayout {
  int tp = 1, pp = 1, dp = 1;
  std::int64_t micro_batch = 1;
  std::string_view schedule = "1f1b";  // "gpipe", "1f1b", "interleaved-1f1b"
  int interleave = 1;                  // v; > 1 only with the interleaved schedule
  Recompute recompute = Recompute::none;
  int zero = 0;
  bool sequence_parallel = false;
  int cp = 1;
  std::int64_t cluster_devices = 0;  // for the layout rules: the cluster's devices (0: tp * pp * dp * cp)
  int ep = 1;                        // expert parallelism (MoE models; workloads/layout.hpp)
  int etp = 1;                       // expert tensor parallelism (MoE models; workloads/layout.hpp)
};

struct FastResult {
  LayoutIssue issue = LayoutIssue::none;  // none: a valid layout, the rest is filled
  bool fits = false;                      // every stage within its device's memory
  Bytes peak_memory{};                    // per device, of the stage that needs most
  int peak_memory_stage = 0;
  Seconds step_time{};
  double tokens_per_s = 0, samples_per_s = 0, mfu = 0, hfu = 0;
  double bubble_fraction = 0;  // mean over the devices of bubble / step
  Joules it_energy{}, energy_per_token{};
  Watts average_power{};
  int devices = 0;
  double collective_schedule = 0;  // estimate_collective_schedule of the layout (run.hpp)
  [[nodiscard]] bool valid() const { return issue == LayoutIssue::none; }
};

// `base` with its device pool resized to `devices` and the topology rebuilt for them (the
// layout and the resolved JSON are left as they were): the cluster of a search's device
// budget, when no layout of the base's model fills that budget exactly. Throws
// InputError when the topology cannot hold `devices` or the base has more than one pool.
Scenario resized_cluster(const Scenario& base, int devices);

class FastAnalytical {
 public:
  // `base` must outlive this object; its topology, pools, model, workload, codecs and
  // other strategy settings are those of every layout (its stage_pools are not: stages are
  // placed by device order). `star_times`: collective times of star groups shared with
  // other FastAnalytical objects of bases that differ in their device count alone
  // (CollectiveTimes, sim/driver/collective_times.hpp); it must outlive this object.
  explicit FastAnalytical(const Scenario& base, StarTimes* star_times = nullptr);
  ~FastAnalytical();
  FastAnalytical(const FastAnalytical&) = delete;
  FastAnalytical& operator=(const FastAnalytical&) = delete;

  // What evaluate computes for a valid layout that does not fit in memory: its step time
  // and metrics too (every_layout), or only its memory (fitting_only: a search refuses it
  // without reading them, and costing its step is most of a screen's time).
  enum class Timed { every_layout, fitting_only };
  // Not thread-safe (caches).
  FastResult evaluate(const FastLayout& layout, Timed timed = Timed::every_layout);
  // The memory check's issues for `layout` (run.hpp memory_shortfall), stage by stage, as
  // run_scenario raises them; empty when it fits or is invalid. Formatted on request only:
  // a search screens many layouts that do not fit and reports few of them.
  std::vector<Issue> memory_issues(const FastLayout& layout);
  // The layout rules `layout` breaks (workloads/layout.hpp), with the scenario parser's
  // messages and in its order; empty when it breaks none. The parser checks the even layer
  // split (split = true: check_layer_split) only once the cluster is built, the other rules
  // (check_layout) before.
  std::vector<Issue> layout_issues(const FastLayout& layout, bool split = false);
  [[nodiscard]] std::size_t cached_collectives() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcsim
