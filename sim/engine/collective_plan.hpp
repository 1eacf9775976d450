#pragma once
// How the engine expands one collective onto the network: which algorithm runs it, and
// the point-to-point flows (and analytical timers) that replay it. Pure code, no SimGrid:
// the engine (collective_replay.cpp) turns a plan into activities, and `hcsim collective`
// reads the same plans to print the algorithm and the bytes each link carries.
//
// Choice. "auto" asks the collective cost model (sim/collectives/cost.hpp) for the
// algorithm of least predicted time on this group and topology, as NCCL's tuner does
// (NVIDIA/nccl src/graph/tuning.cc); the choice is made once per (group, op, size bucket),
// a bucket being [2^k, 2^(k+1)) bytes, evaluated at 2^k. A group with a family (its
// translates that run the same collective at the same time: the layout's symmetric
// replicas, TaskGraph::GroupFamily) takes the family's choice, made on its first member with
// the other members' transfers on the links, as the analytical mode costs it: every member
// runs the same algorithm, with symmetry or without. (Chosen member by member on an idle
// network, a group whose translates cross different switches -- expert groups of 8 nodes on
// leaves of 20 -- could pick an algorithm that only its own placement favours and that its
// siblings' traffic then slows down.) A named algorithm is used for the
// collectives it supports on that group; the others fall back to "auto" (a workload mixes
// all-reduce, all-gather, reduce-scatter and sends, and no algorithm serves them all).
//
// Flow mode. The algorithm's schedule, uncompressed, as one flow per transfer, ordered per
// rank: rank r starts its sends of step k once every transfer of an earlier step that r
// sends or receives has arrived. A rank therefore runs its steps in order, as one NCCL
// channel does, and no global barrier exists: on an idle network each step of a
// symmetric schedule still takes its latency plus its bandwidth term, and collectives that
// share links slow each other flow by flow.
//
// Event mode. The schedule (compressed where the algorithm allows, Step::repeat) is cut
// into phases: consecutive steps join a phase while the set of (sender, receiver) pairs of
// one contains the other's (a ring's reduce-scatter and all-gather, the fill, steady state
// and drain of a pipelined tree or chain); a new set of pairs (the next torus dimension,
// the inter-node ring of the hierarchical algorithm, each halving-doubling step) starts a
// new phase. A phase runs as
//     a timer of  T_phase - T_merged,  then one flow per pair carrying the phase's bytes,
// where T_phase is the cost model's time of the phase's steps and T_merged that of the
// merged flows alone on an idle network (path latency + most-loaded link). T_phase >=
// T_merged always (a sum of per-step maxima bounds the maximum of the sums), so on an
// idle network the phase takes exactly the cost model's time, and under contention its
// flows slow down as the bytes really on the links say. For a ring this is one phase: a
// timer of (2(n-1) - 1) alpha, then one flow per ring edge of 2(n-1)/n S.
// Flow mode by phases (simulation.flow_schedule "phases", for groups of thousands of
// ranks, where a ring's 2(n-1) steps of n transfers each are O(n^2) flows): event mode's
// phases, in the flow mode's per-rank order -- per phase a timer of T_phase - T_merged on
// each rank that sends or receives in it, then the phase's flows, as two steps of the
// per-rank order (a phase of multimem transfers alone: a timer on every rank). Every flow
// is in the network model, with symmetry or without: a ring all-reduce is n timers and n
// flows. On an idle network it takes event mode's time.
// In-network reduction (no rank-level schedule) is a timer of the cost model's time in both
// modes; its bytes (S up and S down each device's path to the reducing switch) are counted
// on the links but do not contend. So are a schedule's multimem transfers (NVLink SHARP inside
// a node, schedule.hpp): no device-to-device flow can carry them (the switch reduces or
// multicasts), so they are timers of the cost model's time, per rank and step in flow mode
// (multimem_times) and inside the phase's timer in event mode, and their bytes are counted
// on the NVLinks; the other transfers of the schedule are flows as usual.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/collectives/cost.hpp"

namespace hcsim {

// `bytes` from device `src` to device `dst` (global device indices).
struct PlannedFlow {
  std::uint32_t src = 0, dst = 0;
  double bytes = 0;
};

struct CoarsePhase {
  Seconds timer{};                 // T_phase - T_merged
  std::vector<PlannedFlow> flows;  // one per pair, the phase's bytes
};

// Flow mode: the uncompressed schedule's transfers with their per-rank order.
struct FlowSchedule {
  struct Xfer {
    std::uint32_t src = 0, dst = 0;  // ranks
    std::uint32_t step = 0;          // steps without transfers removed
    double bytes = 0;
    // > 0: no flow but a timer of this many seconds on rank src (= dst): the rank's multimem
    // transfers of the step (NVLink SHARP), CollectiveCostModel::multimem_times.
    double timer = 0;
  };
  int ranks = 0;
  std::uint32_t steps = 0;
  std::vector<Xfer> transfers;                // by step
  std::vector<std::uint32_t> send_begin;      // CSR over sender rank: send_index[send_begin[r] ..)
  std::vector<std::uint32_t> send_index;      //   indices into transfers, by step
  std::vector<std::uint16_t> involvement;     // [r * steps + s]: transfers of step s that r sends or receives
  // By phases only (phase_flow_schedule): the phase of each step (its timer step and its
  // flow step share one); empty for a schedule by steps.
  std::vector<std::uint32_t> phase_of_step;
};

struct CollectiveExpansion {
  std::string algorithm;
  double bytes = 0;                         // per-rank buffer (nccl-tests convention)
  CollectiveEstimate estimate;              // the cost model on an idle network
  std::vector<std::uint32_t> rank_devices;  // device of each rank of the schedule
  std::vector<CoarsePhase> phases;          // event mode, and in-network reduction in both modes
  std::shared_ptr<const FlowSchedule> flow; // flow mode (null for in-network reduction)
  std::vector<PlannedFlow> pair_bytes;      // every byte the collective sends, summed per device pair
  // Bytes of its multimem transfers (NVLink SHARP, no flows) per topology edge: (edge, bytes).
  std::vector<std::pair<int, double>> switch_bytes;
  int reduction_root = -1;                  // in-network reduction: the reducing switch (graph node)
};

// A group's family (see the header comment): its first member's offset from the group and
// the other members' offsets from that first one (none: the group chooses alone).
struct CollectiveFamily {
  int first = 0;
  const std::vector<int>* siblings = nullptr;
};

class CollectivePlanner {
 public:
  // `algorithm`: "auto" or a registered name; `flow_mode`: plans for the flow mode.
  // `cost`: the cost model's options (ProtocolSet::ideal() for the network schedule alone).
  // `flow_phases` (flow mode only): plans by phases (see the header comment).
  CollectivePlanner(const TopologyGraph& g, std::string algorithm, bool flow_mode, CostOptions cost = {},
                    bool flow_phases = false);

  // The algorithm that runs this collective (see the header comment).
  [[nodiscard]] std::string choose(const std::vector<std::uint32_t>& group, CollectiveOp op, double bytes,
                                   CollectiveFamily family = {});
  // The plan for `algorithm` (empty: choose()). Cached per (group, op, bytes, algorithm);
  // the reference stays valid for the planner's lifetime. Groups of one rank or empty
  // buffers get an empty plan.
  const CollectiveExpansion& plan(const std::vector<std::uint32_t>& group, CollectiveOp op, double bytes,
                                  std::string_view algorithm = {}, CollectiveFamily family = {});

  // The plan plan() would build for `group` with base's algorithm and bytes, taken from
  // `base` (the plan of `base_group`) where it is base shifted: in event mode, for an
  // algorithm whose schedule is a function of the group's shape alone (not pipelined, no
  // multimem transfers, not analytic), when group is base_group shifted by one offset o and
  // the cost model shapes it alike (its ranks the base's shifted by o, an equal GroupShape).
  // Its devices and flows are then base's shifted by o, exactly; its timers and estimate are
  // base's, not its own (for a mirror's flows, which are read for their links and bytes:
  // collective_replay.hpp). Null where it is not such a shift.
  [[nodiscard]] std::unique_ptr<CollectiveExpansion> shifted(const CollectiveExpansion& base,
                                                             const std::vector<std::uint32_t>& base_group,
                                                             const std::vector<std::uint32_t>& group) const;
  // The offset o of shifted() without the copy: the mirror's plan is base with o added to
  // every device (nullopt where shifted() gives none).
  [[nodiscard]] std::optional<std::int64_t> shift(const CollectiveExpansion& base,
                                                  const std::vector<std::uint32_t>& base_group,
                                                  const std::vector<std::uint32_t>& group) const;

  // Bytes the plan puts on each topology edge (both directions summed), times `copies`,
  // added to `edge_bytes`; with `offset`, those of the plan shifted by it (shift()).
  void add_edge_bytes(const CollectiveExpansion& p, std::vector<double>& edge_bytes, double copies = 1,
                      std::int64_t offset = 0) const;
  // Those of them no flow carries (in-network reduction, multimem transfers): what the engine
  // charges itself when the collective starts.
  void add_timer_bytes(const CollectiveExpansion& p, std::vector<double>& edge_bytes, double copies = 1) const;

  [[nodiscard]] const CollectiveCostModel& model() const { return model_; }
  [[nodiscard]] const Router& router() const { return model_.router(); }
  [[nodiscard]] bool flow_mode() const { return flow_; }
  [[nodiscard]] bool flow_phases() const { return flow_phases_; }
  [[nodiscard]] const std::string& algorithm() const { return algorithm_; }

 private:
  CollectiveExpansion build(const std::vector<int>& devices, CollectiveOp op, double bytes, const std::string& algorithm);
  void coarse_phases(CollectiveExpansion& p, const Schedule& sc, const std::vector<int>& ranks) const;
  int reduction_root(const std::vector<int>& devices, double bytes) const;

  const TopologyGraph& g_;
  std::string algorithm_;
  bool flow_;
  bool flow_phases_;  // flow mode by phases
  CollectiveCostModel model_;
  std::map<std::tuple<std::vector<std::uint32_t>, int, int, bool>, std::string> choice_;  // (group, op, bucket, family)
  std::map<std::tuple<std::vector<std::uint32_t>, int, double, std::string>, std::unique_ptr<CollectiveExpansion>> plans_;
  struct GroupShapeOf {
    GroupShape shape;
    std::vector<int> ranks;  // CollectiveCostModel::shape_of's rank order
  };
  mutable std::map<std::vector<std::uint32_t>, GroupShapeOf> shapes_;  // shift(): by base group
  mutable std::vector<int> scratch_ranks_;                             // shift(): a mirror group's rank order
};

// Size bucket of the algorithm choice: k with 2^k <= bytes < 2^(k+1) (0 below 2 bytes).
int collective_size_bucket(double bytes);

// The algorithm `requested` ("auto" or a name) resolves to for one collective: "deepep" for an
// all-to-all when the model's options set CostOptions::deepep (an MoE dispatch or combine) and
// the group has nodes of equal size; else the named one where it supports the operation on
// this group (and, for in_network, where the switches can reduce), else the cost model's
// choice, with the `siblings`' traffic on the links (CollectiveCostModel::estimate). Throws
// InputError for an unknown name.
std::string resolve_collective_algorithm(const CollectiveCostModel& model, const std::vector<int>& devices,
                                         CollectiveOp op, Bytes per_rank, std::string_view requested,
                                         const std::vector<int>& siblings = {});

}  // namespace hcsim
