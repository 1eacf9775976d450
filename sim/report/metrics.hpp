#pragma once
// Metrics of one simulated training step, computed in one place from the task graph and
// the engine's task start/end times:
//  - time: per device, compute + exposed communication by kind + pipeline bubble + idle
//    = step time (a partition of [0, step]); per stage the mean of its devices; bubble
//    fraction per stage and overall (closed form to compare: (p-1)/(m+p-1) for GPipe and
//    1F1B, Narayanan et al. SC21 §2.2);
//  - work: MFU and HFU (Korthikanti et al. 2022 §6: model FLOPs resp. executed FLOPs over
//    peak x step time), tokens/s, samples/s, time to train N tokens (Narayanan et al.
//    SC21 eq. 4 is the closed-form cross-check: T = 8 N P / (n X));
//  - communication: payload volume per kind, link bytes and utilisation per link class;
//  - memory per device (workloads/memory) by component and by tier (HBM; host DRAM and CXL
//    pool are reported and stay zero until offload places state there);
//  - energy: device dynamic (the device model's energy of each compute task: arithmetic
//    and memory traffic) + device static (idle power x step) + network dynamic (link bytes x
//    energy per byte) + network static (link static power x lanes x step: lasers, SerDes);
//    facility = IT x PUE (The Green Grid 2012); power over time from the timeline.
// Symmetry: a device that ran no task is a replica of a simulated twin and takes its
// twin's per-device figures (apply_twins) before the totals are formed.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "sim/engine/engine.hpp"
#include "workloads/lowering.hpp"
#include "workloads/memory.hpp"

namespace hcsim {

inline constexpr std::size_t kCommClasses = 8;  // indexed by CommClass (0 = none, unused)

// GPT-3's training run, 300 B tokens (Brown et al. 2020 §2.2): the default N of "time to
// train N tokens" until a scenario states its own.
inline constexpr double kDefaultTrainTokens = 300e9;

enum class MemoryTier : std::uint8_t { hbm, host_dram, cxl_pool };
inline constexpr std::size_t kMemoryTiers = 3;
std::string_view memory_tier_name(MemoryTier t);

struct TierUsage {
  double used_bytes = 0;
  double capacity_bytes = 0;
};

struct DeviceMetrics {
  std::uint32_t device = 0;
  int stage = 0;
  int pool = 0;
  bool simulated = true;  // false: a replica of a simulated device (symmetry)
  int twin = -1;          // the simulated device whose figures it carries (itself when simulated)
  double compute_s = 0;
  std::array<double, kCommClasses> exposed_comm_s{};
  double bubble_s = 0, idle_s = 0;
  double flops = 0, model_flops = 0;
  MemoryBreakdown memory;
  double capacity_bytes = 0;
  std::array<TierUsage, kMemoryTiers> tiers{};
  double dynamic_energy_j = 0, static_energy_j = 0;
  double idle_power_w = 0, peak_power_w = 0;
  [[nodiscard]] double exposed_comm_total() const;
  // compute + exposed communication + bubble + idle, summed in that order.
  [[nodiscard]] double accounted_s() const;
  [[nodiscard]] double energy_j() const { return dynamic_energy_j + static_energy_j; }
  [[nodiscard]] double headroom_bytes() const { return capacity_bytes - memory.total().value(); }
};

// Mean over the stage's devices (time), the stage's worst device (memory), sums (energy).
struct StageMetrics {
  int stage = 0;
  int pool = 0;
  int devices = 0;
  int layers = 0;
  double compute_s = 0;
  std::array<double, kCommClasses> exposed_comm_s{};
  double bubble_s = 0, idle_s = 0;
  double bubble_fraction = 0;
  MemoryBreakdown memory;
  double capacity_bytes = 0;
  double energy_j = 0;
};

struct LinkClassMetrics {
  std::string link_class;
  int links = 0;
  double bytes = 0;            // bytes carried, summed over links traversed, both directions
  double dynamic_energy_j = 0;
  double static_energy_j = 0;
  double utilisation = 0;      // bytes / (links x 2 directions x bandwidth x step time)
  double max_utilisation = 0;  // the busiest link of the class
};

struct Metrics {
  double step_time_s = 0;
  double bubble_fraction = 0;
  std::vector<double> stage_bubble_fraction;
  double model_flops = 0, hardware_flops = 0;
  double peak_flops_per_s = 0;  // sum of the devices' peak at the workload precision
  double mfu = 0, hfu = 0;
  double tokens_per_step = 0, samples_per_step = 0;
  double tokens_per_s = 0, samples_per_s = 0;
  double train_tokens = kDefaultTrainTokens;
  double time_to_train_s = 0;
  std::array<double, kCommClasses> comm_bytes{};  // payload: per send, per rank of a collective
  std::vector<DeviceMetrics> devices;
  std::vector<StageMetrics> stages;
  std::vector<LinkClassMetrics> links;
  std::array<TierUsage, kMemoryTiers> tiers{};  // cluster totals
  double device_dynamic_j = 0, device_static_j = 0, network_dynamic_j = 0, network_static_j = 0;
  double it_energy_j = 0, facility_energy_j = 0, energy_per_token_j = 0;
  double average_power_w = 0, peak_power_w = 0;  // IT power
  double power_interval_s = 0;                    // width of one power sample
  std::vector<double> power_w;                    // IT power, mean over each interval
  bool memory_fits = true;
  int simulated_devices = 0;
  std::size_t tasks = 0;
  std::uint64_t activities = 0;
};

struct MetricsOptions {
  double train_tokens = kDefaultTrainTokens;
  int power_samples = 100;
  // twin[d]: the simulated device whose figures device d takes; empty: each replica takes
  // the first simulated device of its pipeline stage (default_twins).
  std::vector<int> twin;
};

Metrics compute_metrics(const Scenario& sc, const TaskGraph& g, const EngineResult& r,
                        const std::vector<StageShape>& shapes, const MetricsOptions& opt = {});

// For a step computed without a timeline (analytical mode): everything else from the
// per-device figures of `partial` -- step_time_s, tasks, activities and, per device,
// simulated, the time breakdown, flops, model_flops and dynamic_energy_j. Power is flat
// (dynamic energy at its mean over the step); link bytes are unknown, so network energy is
// the links' static part only.
Metrics complete_metrics(const Scenario& sc, const Metrics& partial, const std::vector<StageShape>& shapes,
                         const MetricsOptions& opt = {});

// Symmetry. default_twins: d itself when simulated, else the first simulated device of its
// stage (-1 if none). apply_twins copies the per-device time breakdown, work, dynamic
// energy and peak power of twin[d] onto every device d that was not simulated; it leaves
// the totals alone (compute_metrics forms them afterwards).
std::vector<int> default_twins(const Metrics& m);
void apply_twins(Metrics& m, const std::vector<int>& twin);

}  // namespace hcsim
