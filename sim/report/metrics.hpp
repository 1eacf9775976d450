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
// twin's per-device figures (it is in the twin's class of the DeviceTable) before the
// totals are formed.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "sim/engine/engine.hpp"
#include "workloads/lowering.hpp"
#include "workloads/memory.hpp"

namespace hcsim {

inline constexpr std::size_t kCommClasses = 9;  // indexed by CommClass (0 = none, unused)

// GPT-3's training run, 300 B tokens (Brown et al. 2020 §2.2): the default N of "time to
// train N tokens" until a scenario states its own.
inline constexpr double kDefaultTrainTokens = 300e9;

enum class MemoryTier : std::uint8_t { hbm, host_dram, cxl_pool };
inline constexpr std::size_t kMemoryTiers = 3;
std::string_view memory_tier_name(MemoryTier t);

struct TierUsage {
  Bytes used{};
  Bytes capacity{};
};

struct DeviceMetrics {
  std::uint32_t device = 0;
  int stage = 0;
  int pool = 0;
  bool simulated = true;  // false: a replica of a simulated device (symmetry)
  int twin = -1;          // the simulated device whose figures it carries (itself when simulated)
  Seconds compute{};
  std::array<Seconds, kCommClasses> exposed_comm{};
  Seconds bubble{}, idle{};
  Flops flops{}, model_flops{};
  MemoryBreakdown memory;
  Bytes capacity{};
  std::array<TierUsage, kMemoryTiers> tiers{};
  Joules dynamic_energy{}, static_energy{};
  Watts idle_power{}, peak_power{};
  [[nodiscard]] Seconds exposed_comm_total() const;
  // compute + exposed communication + bubble + idle, summed in that order.
  [[nodiscard]] Seconds accounted() const;
  [[nodiscard]] Joules energy() const { return dynamic_energy + static_energy; }
  [[nodiscard]] Bytes headroom() const { return capacity - memory.total(); }
};

// The per-device figures of a step, held once per class of devices that share them: a
// simulated device and the replicas that take its figures (symmetry), or in analytical mode
// a stage's devices. Device d reads as its class's figures with its own number and, for a
// replica, simulated false, its twin and the twin's peak power over its own idle power.
// A million devices in a few classes take 4 bytes each, not a DeviceMetrics each.
class DeviceTable {
 public:
  class iterator {
   public:
    using value_type = DeviceMetrics;
    using difference_type = std::ptrdiff_t;
    iterator(const DeviceTable* t, std::size_t d) : t_(t), d_(d) {}
    DeviceMetrics operator*() const { return (*t_)[d_]; }
    iterator& operator++() {
      ++d_;
      return *this;
    }
    bool operator==(const iterator& o) const { return d_ == o.d_; }

   private:
    const DeviceTable* t_;
    std::size_t d_;
  };

  // Appends device size() in a class of its own holding `dm` (its number set).
  void push_back(DeviceMetrics dm);
  // class_of.size() devices, device d in class class_of[d]; figures[c] names the class's first
  // device (a member, simulated or not), the others its replicas.
  void assign(std::vector<DeviceMetrics> figures, std::vector<std::uint32_t> class_of);
  // Appends `count` devices in one class holding `dm`, each of them simulated (its own twin).
  void append_class(DeviceMetrics dm, std::size_t count);

  [[nodiscard]] std::size_t size() const { return class_of_.size(); }
  [[nodiscard]] bool empty() const { return class_of_.empty(); }
  [[nodiscard]] DeviceMetrics operator[](std::size_t d) const;
  [[nodiscard]] iterator begin() const { return {this, 0}; }
  [[nodiscard]] iterator end() const { return {this, size()}; }
  // What every member of d's class shares, read in place: all but device, simulated, twin
  // and peak power (operator[] gives those).
  [[nodiscard]] const DeviceMetrics& shared(std::size_t d) const { return classes_[class_of_[d]].figures; }
  // The first device of least memory headroom (0 when empty).
  [[nodiscard]] std::size_t least_headroom() const;
  [[nodiscard]] bool simulated(std::size_t d) const;
  [[nodiscard]] int twin(std::size_t d) const;
  // The classes, to set a figure of all their members at once; the class's first device
  // is figures(c).device.
  [[nodiscard]] std::size_t classes() const { return classes_.size(); }
  [[nodiscard]] DeviceMetrics& figures(std::size_t c) { return classes_[c].figures; }
  [[nodiscard]] const DeviceMetrics& figures(std::size_t c) const { return classes_[c].figures; }
  [[nodiscard]] std::size_t class_of(std::size_t d) const { return class_of_[d]; }
  // The figures of simulated device d, which holds its class alone or with its replicas.
  [[nodiscard]] DeviceMetrics& own(std::size_t d);

 private:
  struct Class {
    DeviceMetrics figures;
    bool all_simulated = false;  // every member simulated; else the first alone, the others its replicas
  };
  std::vector<Class> classes_;
  std::vector<std::uint32_t> class_of_;
};

// Mean over the stage's devices (time), the stage's worst device (memory), sums (energy).
struct StageMetrics {
  int stage = 0;
  int pool = 0;
  int devices = 0;
  int layers = 0;
  Seconds compute{};
  std::array<Seconds, kCommClasses> exposed_comm{};
  Seconds bubble{}, idle{};
  double bubble_fraction = 0;
  MemoryBreakdown memory;
  Bytes capacity{};
  Joules energy{};
};

struct LinkClassMetrics {
  std::string link_class;
  int links = 0;
  Bytes bytes{};               // bytes carried, summed over links traversed, both directions
  Joules dynamic_energy{};
  Joules static_energy{};
  double utilisation = 0;      // bytes / (links x 2 directions x bandwidth x step time)
  double max_utilisation = 0;  // the busiest link of the class
};

struct Metrics {
  Seconds step_time{};
  double bubble_fraction = 0;
  std::vector<double> stage_bubble_fraction;
  Flops model_flops{}, hardware_flops{};
  FlopsPerSecond peak_flops_rate{};  // sum of the devices' peak at the workload precision
  double mfu = 0, hfu = 0;
  double tokens_per_step = 0, samples_per_step = 0;
  double tokens_per_s = 0, samples_per_s = 0;
  double train_tokens = kDefaultTrainTokens;
  Seconds time_to_train{};
  std::array<Bytes, kCommClasses> comm_bytes{};  // payload: per send, per rank of a collective
  DeviceTable devices;
  std::vector<StageMetrics> stages;
  std::vector<LinkClassMetrics> links;
  std::array<TierUsage, kMemoryTiers> tiers{};  // cluster totals
  Joules device_dynamic{}, device_static{}, network_dynamic{}, network_static{};
  Joules host_energy{};  // the servers beside their accelerators (cluster.node_power); 0 without it
  Joules accelerator_energy{};  // devices and links
  Joules it_energy{}, facility_energy{}, energy_per_token{};  // IT: accelerators, links and hosts
  Watts average_power{}, peak_power{};  // IT power
  Seconds power_interval{};             // width of one power sample
  std::vector<Watts> power;             // IT power, mean over each interval
  bool memory_fits = true;
  int simulated_devices = 0;
  std::size_t tasks = 0;
  std::uint64_t activities = 0;
};

struct MetricsOptions {
  double train_tokens = kDefaultTrainTokens;
  int power_samples = 100;
  // false: neither the power curve nor peak power (device or total) is computed -- they stay
  // empty and zero -- for callers that read neither (the search's confirmations).
  bool power_curve = true;
  // twin[d]: the simulated device of d's stage whose figures device d takes when d ran no
  // compute task; empty: each such replica takes the first simulated device of its stage.
  std::vector<int> twin;
};

Metrics compute_metrics(const Scenario& sc, const TaskGraph& g, const EngineResult& r,
                        const std::vector<StageShape>& shapes, const MetricsOptions& opt = {});

// For a step computed without a timeline (analytical mode): everything else from the
// per-device figures of `partial` -- step_time, tasks, activities and, per device,
// simulated, the time breakdown, flops, model_flops and dynamic_energy. Power is flat
// (dynamic energy at its mean over the step); link bytes are unknown, so network energy is
// the links' static part only.
Metrics complete_metrics(const Scenario& sc, Metrics partial, const std::vector<StageShape>& shapes,
                         const MetricsOptions& opt = {});

}  // namespace hcsim
