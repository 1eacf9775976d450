#pragma once
// The collective-algorithm family: a registry keyed by name ("ring", "double_binary_tree",
// ...), filled by register_builtin_collectives(). Each entry says which operations and
// group shapes it serves, builds the Schedule, and carries what the cost model needs to
// know of it (pipeline depth, whether and in which order "auto" tries it); the cost model
// (cost.hpp) evaluates schedules on a topology and "auto" picks the fastest applicable
// one, as NCCL's tuner picks the algorithm of least predicted time (NVIDIA/nccl
// src/graph/tuning.cc). No code outside an entry compares an algorithm's name.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/collectives/protocol.hpp"
#include "sim/collectives/schedule.hpp"
#include "sim/core/registry.hpp"

namespace hcsim {

// What an algorithm may assume about the group, in rank order.
struct GroupShape {
  int ranks = 0;
  int nodes = 1;                // locality nodes (TopologyGraph::node_of) spanned
  int per_node = 0;             // ranks per node when every node has the same number, else 0
  std::vector<int> torus_dims{};  // non-empty when rank = x0 + d0 * (x1 + ...) on a device torus
  // Equal nodes of several ranks where a hop between different local indices of two nodes
  // takes a longer route than one between equal indices (a rail-optimised fabric, whose rails
  // meet only at the spines): node-crossing hops relay to the destination's rail (PXN).
  bool pxn = false;
};

struct ScheduleRequest {
  CollectiveOp op = CollectiveOp::all_reduce;
  GroupShape shape;
  std::int64_t elements = 0;
  int chunks = 1;           // pipeline depth of a pipelined algorithm (tree, chain)
  bool compressed = false;  // see Step::repeat
  // DeepEP dispatch (deepep.hpp): the share of the node-crossing bytes a token set sends once
  // per node instead of once per expert (CostOptions::deepep).
  double node_share = 1;
  // An all-to-all's uneven blocks, per rank in rank order (BlockWeights, schedule.hpp;
  // CostOptions::routing); empty: even.
  std::vector<double> block_weight{};
};

// One stage of a pipelined algorithm: the route from rank `from` to rank `to` carries `share`
// of the buffer over the pipeline.
struct PipelineStage {
  int from = 0, to = 1;
  double share = 1;
};

struct CollectiveAlgorithm {
  std::string name{};
  std::string help{};
  std::string source{};
  ParamTable params{};  // none so far: an algorithm is chosen by name alone
  std::function<bool(CollectiveOp, const GroupShape&)> supports{};
  std::function<Schedule(const ScheduleRequest&)> schedule{};  // empty when analytic_only

  // No rank-level schedule: costed by the cost model's in-switch reduction closed form
  // (cost.hpp); `needs` ends the error when a named one finds no reducing switches.
  bool analytic_only = false;
  std::string needs{};
  // Its schedule has multimem transfers (schedule.hpp): it needs every node's NVSwitch to
  // reduce, and the cost model finds it inapplicable (`needs`) elsewhere.
  bool node_switch_reduction = false;

  // Pipelined: takes ScheduleRequest::chunks. The cost model picks the depth c that
  // minimises (c + D - 1)(alpha + S/(c B)) with D = depth(shape) and S = share x the buffer
  // (the part one pipeline carries), alpha and B of a stage's route: with `stages`, the
  // stage of largest S/B (the slowest) and the largest alpha among them; else one stage,
  // ranks 0 -> 1 carrying share(op, shape).
  bool pipelined = false;
  std::function<int(const GroupShape&)> depth{};
  std::function<double(CollectiveOp, const GroupShape&)> share{};
  std::function<std::vector<PipelineStage>(CollectiveOp, const GroupShape&)> stages{};

  // Candidate of "auto" when set: on equal predicted time the lower priority wins, ties by
  // name. Unset: used only when named. `auto_max_ranks` > 0: "auto" skips larger groups.
  std::optional<int> auto_priority{};
  int auto_max_ranks = 0;

  // How NCCL's protocols apply (protocol.hpp): the fraction table the algorithm follows
  // (nvls: NVLink SHARP's latency and channel limit), whether it runs Simple only (NVLS, as
  // in tuning.cc), and whether NCCL's protocols apply at all (false: the "direct" protocol,
  // for algorithms of non-NCCL fabrics).
  ProtocolFamily family = ProtocolFamily::ring;
  bool simple_only = false;
  bool nccl_protocols = true;
};

using CollectiveAlgorithms = EntryTable<CollectiveAlgorithm>;

// The registry, filled on first use; iterates as (name, entry) in name order.
const CollectiveAlgorithms& collective_algorithms();
// nullptr when unknown.
const CollectiveAlgorithm* find_collective_algorithm(std::string_view name);
std::vector<std::string> collective_algorithm_names();
// "auto" then every registered name: what /simulation/collective_algorithm and --algorithm take.
std::vector<std::string> collective_algorithm_choices();
// The candidates of "auto" in order of preference on equal time (auto_priority, then name).
const std::vector<const CollectiveAlgorithm*>& auto_candidates();
// Idempotent.
void register_builtin_collectives();

}  // namespace hcsim
