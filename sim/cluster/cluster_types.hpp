#pragma once
// Many jobs on one shared cluster (docs/cluster.md): the types the scheduler loop
// (cluster_loop.hpp), the schedulers (scheduler.hpp), the placement (placement.hpp), the
// step oracle (engine_oracle.hpp) and the reports (cluster_report.hpp) share.
//
// The model: jobs arrive, wait in a queue, are placed by a scheduler on whole devices of
// one pool, and advance at one step per contended step time. Whenever the set of running
// jobs changes, the step oracle gives every running job's step time with all of them on
// the shared fabric at once; a job's progress rate is constant between two such events.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/core/units.hpp"

namespace hcsim {

// One pool of identical devices: a contiguous range of the cluster's device numbering,
// whole nodes of `ClusterLayout::gpus_per_node`.
struct ClusterPoolInfo {
  std::string name;    // as in the cluster file
  std::string device;  // the device preset (or type), for reports
  std::uint32_t first_device = 0;
  std::uint32_t devices = 0;
  Watts idle_power{};  // per device while it holds no job (device idle power)
};

// The cluster as the scheduler and the placement see it.
struct ClusterLayout {
  std::vector<ClusterPoolInfo> pools;
  std::uint32_t gpus_per_node = 8;
  // Nodes whose NICs sit under one fabric leaf switch (the placement keeps a job's nodes
  // under as few leaves as it can); 0: the fabric has one leaf, or none.
  std::uint32_t nodes_per_leaf = 0;
  [[nodiscard]] std::uint32_t devices() const {
    std::uint32_t n = 0;
    for (const auto& p : pools) n += p.devices;
    return n;
  }
};

// One job of the job list.
struct JobSpec {
  std::string name;
  Seconds arrival{};
  double steps = 1;                  // work, in training steps of its workload
  int priority = 0;                  // higher is more urgent (priority scheduler)
  std::vector<std::uint32_t> pools;  // pools it may run on (indices, ascending); empty: any
  // Sizes it may run at: multiples of `quantum` in [min_devices, max_devices]. A fixed-size
  // job has min = max; an elastic one is started at any of its sizes and keeps that size
  // until it ends or is preempted.
  std::uint32_t min_devices = 1, max_devices = 1, quantum = 1;
  bool elastic = false;
  std::uint32_t workload = 0;    // index of its workload and strategy in the job list
  Seconds checkpoint_restart{};  // charged once per preemption, when it restarts
};

// Where a running job sits.
struct JobPlacement {
  std::uint32_t pool = 0;
  std::vector<std::uint32_t> devices;  // cluster device ids, ascending
};

// The performance model the loop and the schedulers ask. Implementations cache: the loop
// asks again at every event.
class StepOracle {
 public:
  virtual ~StepOracle() = default;
  // Step time of `job` alone on `devices` devices of `pool` (packed on whole nodes);
  // nullopt when it cannot run there (no layout of that size, or it does not fit in memory).
  virtual std::optional<Seconds> alone(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) = 0;
  // Step time of each of `jobs` with all of them running at once at `placements` (same
  // order) on the shared fabric.
  virtual std::vector<Seconds> together(std::span<const JobSpec* const> jobs,
                                        std::span<const JobPlacement> placements) = 0;
  // Energy of one step alone (devices busy and idle during the step, links).
  virtual Joules step_energy(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) = 0;
};

// ---- What a run of the loop produces (the reports read it) ----

struct JobOutcome {
  std::string name;
  std::uint32_t pool = 0;     // of its last run
  std::uint32_t devices = 0;  // of its last run
  Seconds arrival{}, first_start{}, end{};
  Seconds wait{};        // time queued (arrival to first start, plus after preemptions)
  Seconds run{};         // time holding devices (restart costs included)
  Seconds alone_step{};  // its step time alone at its last placement's size and pool
  double slowdown = 1;   // run time over the time the same steps take alone (>= 1)
  Joules energy{};       // steps x step energy alone, plus idle power while restarting
  std::uint32_t preemptions = 0;
  bool completed = false;  // false: the horizon ended first, or it can run nowhere
  std::string reason;      // why it did not complete
};

// One stretch of a job on its devices at one rate (the Gantt chart's bars).
struct JobSegment {
  std::uint32_t job = 0;
  std::uint32_t pool = 0;
  std::uint32_t first_device = 0, devices = 0;  // the placement's first device and size
  Seconds begin{}, end{};
  Seconds step{};  // contended step time over the stretch (0 while restarting)
};

// The pools' state from `time` until the next sample.
struct PoolSample {
  Seconds time{};
  std::vector<std::uint32_t> allocated;   // per pool: devices held by jobs
  std::vector<std::uint32_t> busy;        // per pool: held by jobs stepping (not restarting)
  std::vector<std::uint32_t> fragmented;  // per pool: free devices on nodes partly held
  std::uint32_t queued = 0;               // jobs waiting
};

struct ClusterResult {
  std::string scheduler;
  std::vector<JobOutcome> jobs;      // job-list order
  std::vector<JobSegment> segments;  // in time order, then job
  std::vector<PoolSample> timeline;  // at every event
  Seconds makespan{};                // last completion (or the horizon)
  Seconds mean_completion{};         // mean of end - arrival over completed jobs
  Seconds p99_completion{};
  std::vector<double> utilisation;       // per pool: device-seconds held / (devices x makespan)
  double device_hours = 0;               // sum over jobs of devices x time held, in hours
  Joules job_energy{};                   // sum over jobs
  Joules idle_energy{};                  // unallocated devices' idle power over the makespan
  std::uint64_t oracle_simulations = 0;  // engine runs the oracle made
  std::uint64_t events = 0;              // scheduler invocations
};

}  // namespace hcsim
