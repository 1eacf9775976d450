#pragma once
// Analytical, topology-aware cost of a collective (alpha-beta model per step).
//
// A schedule's time is the sum over its steps of
//   step time = max over transfers of path latency
//             + max over directed links of (bytes crossing the link in the step)
//                                           / (lanes x bandwidth x efficiency)
// with each transfer's path from the Router (minimum latency, ECMP among equals). When
// no two transfers of a step share a link this is exactly "latency + bytes / bottleneck
// bandwidth" per transfer (Hockney; Thakur, Rabenseifner & Gropp 2005); when they do, the
// shared link's load counts, so an oversubscribed uplink or an all-to-all is slower.
// NCCL's protocols (protocol.hpp) then add a base latency, a per-step latency and the
// channel limit, and divide the bandwidth part by the protocol's fraction; "auto" keeps
// the algorithm x protocol of least time, with NCCL's channel count for the size.
// Closed forms it reproduces with the ideal protocol (tests/collectives/cost_test.cpp;
// with NCCL's, tests/collectives/protocol_test.cpp):
//   ring all-reduce       2(n-1)/n * S/B + 2(n-1) * alpha
//   multi-ring AG / RS    (n-1) * (alpha + S/(n g B_nic)), g rings (one per NIC rail)
//   torus (dims d_k)      sum_k 2(d_k - 1) * (alpha + S / (B * prod_{i<=k} d_i))
//   in-network reduction  2 * alpha_to_root + S (n + 1) / (n B)   (NVLS: reduce-scatter by
//                         multimem loads, all-gather by multimem stores)
//   NVLS tree, one piece  2 (alpha_nv + S/B_nv) + 2(N-1)(alpha_net + S/(g N B_nic)); c pieces
//                         overlap their stages (tests/collectives/nvls_tree_test.cpp)
//   DeepEP all-to-all     (N-1)(alpha_net + (S/N)(D/k)/B_nic) + (g-1)(alpha_nv + S/(g B_nv)), N = 2^j
//                         nodes of g, D/k its node share (deepep.hpp; tests/collectives/deepep_test.cpp)
// Multimem transfers (schedule.hpp) load the links as the switch moves them: a load-reduce
// sends each source's slice and the destination's own up, the sum down once; a store sends
// the slice up once and down to every member. NCCL's NVLS share of the NVLink (protocol.hpp)
// counts their bytes as bytes / share.
// Algorithm "auto" evaluates every registered algorithm with an auto_priority that
// supports the operation and group -- among them those NCCL itself chooses among (ring,
// double binary tree, in-network reduction as CollNet/NVLS, the NVLS tree), torus rings on
// a torus and the hierarchical all-reduce across nodes -- and keeps the fastest, as NCCL's tuner does
// (src/graph/tuning.cc); on equal time the lower priority wins (auto_candidates()).
// Halving-doubling (an MPI algorithm) has none: it is used only when named. Pipelined
// algorithms (tree, chain) use the pipeline depth c that minimises
// (c + D - 1)(alpha + S/(c B)), i.e. c = sqrt(S (D - 1) / (alpha B)), clamped to [1, 256],
// with D and the share of the buffer S from the algorithm's entry.
// Ring-like algorithms are evaluated on compressed schedules (one step per ring phase,
// Step::repeat), exact up to one element per step.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/deepep.hpp"
#include "sim/collectives/protocol.hpp"
#include "sim/collectives/step_loads.hpp"
#include "topologies/routing.hpp"

namespace hcsim {

struct CollectiveEstimate {
  Seconds time{};
  std::string algorithm;      // the one used (chosen by "auto" or forced)
  std::string protocol = "direct";  // LL, LL128, Simple (protocol.hpp) or direct
  int channels = 1;           // NCCL channels the protocol runs on
  int steps = 0;              // steps of the schedule (uncompressed count)
  int chunks = 1;             // pipeline depth used (tree, chain)
  Seconds latency_term{};     // base latency + per step (path latency + protocol step latency)
  Seconds bandwidth_term{};   // link load (or channel limit) over the protocol's fraction
  // What the protocol adds to the network schedule's time (the engine runs it as a timer
  // before the collective's flows): time - (schedule latency + schedule link load).
  Seconds protocol_term{};
  double net_steps = 0;       // steps weighted by their share of transfers between nodes
  Bytes rank_bytes{};         // sum over steps of the most bytes one rank sends
  BytesPerSecond algbw{};     // per_rank / time (nccl-tests "algbw")
  BytesPerSecond busbw{};     // algbw x busbw_factor (nccl-tests "busbw")
};

struct CostOptions {
  Seconds step_overhead{};  // fixed software cost added to every step (0: links' latencies only)
  ProtocolSet protocols = ProtocolSet::nccl();  // ProtocolSet::ideal(): the schedule's time alone
  // Set: the run's all-to-alls are an MoE model's dispatches and combines (its only ones),
  // run as DeepEP's ("deepep", deepep.hpp) with this routing's deduplication
  // (strategy.moe_dispatch = "deepep").
  std::optional<TokenRouting> deepep{};
  // Set: the run's all-to-alls are an MoE model's dispatches and combines over its expert
  // groups (its only ones), their blocks sized by this routing's distribution
  // (rank_block_weights, deepep.hpp: each rank receives its experts' share of the tokens).
  std::optional<TokenRouting> routing{};
  // Each step's links found once per shape of the step and reused for other bytes
  // (step_loads.hpp); false: every transfer of every step routed and charged afresh, the
  // reference the reuse is checked against. The answers are the same, to the bit.
  bool reuse_step_shapes = true;
};

// SM contention (docs/models.md, "SM contention"): the thread blocks, one an SM, that a
// collective of estimate `est` over `devices` holds on each of them while it runs: 0 for a
// protocol that is not NCCL's ("direct"); on one node NCCL's channels (est.channels);
// across nodes two per NIC the ranks on the first rank's node use, at most est.channels
// (NCCL's search finds about one ring per NIC and runs each on two channels,
// src/graph/connect.cc).
template <class Devices>
int held_channels(const TopologyGraph& topo, const Devices& devices, const CollectiveEstimate& est) {
  if (est.protocol == "direct" || devices.size() <= 1) return 0;
  if (est.net_steps <= 0) return est.channels;
  const int node = topo.node_of(static_cast<int>(devices[0]));
  int nics[64];
  int n = 0;
  for (const auto d : devices) {
    if (topo.node_of(static_cast<int>(d)) != node) continue;
    const int nic = topo.host_index(topo.device_node(static_cast<int>(d)));
    if (std::find(nics, nics + n, nic) == nics + n && n < 64) nics[n++] = nic;
  }
  return std::min(est.channels, 2 * n);
}

// nccl-tests bus-bandwidth factor (doc/PERFORMANCE.md; formulas.md §6): all-reduce
// 2(n-1)/n, reduce-scatter / all-gather / all-to-all (n-1)/n, broadcast / reduce /
// send-recv 1.
double busbw_factor(CollectiveOp op, int n);

class CollectiveCostModel {
 public:
  explicit CollectiveCostModel(const TopologyGraph& g, CostOptions opt = {});

  // `devices`: global device indices of the group, distinct. `per_rank`: each rank's
  // buffer (all-reduce: the vector; all-gather: the gathered output; reduce-scatter: the
  // input; all-to-all: the whole send buffer; send-recv: the message). `algorithm`:
  // "auto" or a registered name. Unknown or inapplicable names throw InputError.
  // `siblings`: offsets o != 0 such that the group translated by o (device d + o for each d)
  // runs the same collective at the same time -- the symmetric replicas of a layout (the
  // other tensor-parallel ranks' data-parallel groups, the other shards' replica groups).
  // Their transfers load the links as the group's own do, so a NIC that several of them
  // share divides its bandwidth among them (schedule steps; in-network reduction ignores them).
  // On a graph with a translation_period the group and its siblings are first moved down by
  // the largest multiple of it below them: the translates of a group cost once.
  [[nodiscard]] CollectiveEstimate estimate(const std::vector<int>& devices, CollectiveOp op, Bytes per_rank,
                                            std::string_view algorithm = "auto",
                                            const std::vector<int>& siblings = {}) const;

  // Exact time of a schedule whose rank r runs on device rank_devices[r]; one element =
  // `element_size`. Honours Step::repeat.
  [[nodiscard]] CollectiveEstimate schedule_time(const Schedule& sc, const std::vector<int>& rank_devices,
                                                 Bytes element_size = Bytes(1)) const;

  // Rank order the model uses for `devices` (node-contiguous, as NCCL builds its rings;
  // device order on a whole torus) and the shape it then presents to algorithms.
  [[nodiscard]] GroupShape shape_of(const std::vector<int>& devices, std::vector<int>& rank_devices) const;

  // What a collective over `devices` depends on when they lie in one star scale-up domain
  // (routes member, center, member: a node's NVSwitch) whose member links are alike, the
  // group is not the whole graph, the graph is no torus and reduces in no switch but at
  // star centers, and the siblings' translates each lie in a star domain of their own
  // (StepLoads::disjoint_stars: they load none of the group's links): then every cost path
  // reads the group's count and those links alone, so any cost model of the same options
  // gives such a group with equal StarGroup the same estimate. None otherwise.
  struct StarGroup {
    int count = 0;
    double bandwidth = 0, latency = 0;  // a member link's effective bandwidth and latency
    bool center_reduces = false;        // the center's in-switch reduction (NVLink SHARP)
    bool operator==(const StarGroup&) const = default;
  };
  [[nodiscard]] std::optional<StarGroup> star_group(const std::vector<int>& devices,
                                                    const std::vector<int>& siblings) const;

  [[nodiscard]] const Router& router() const { return router_; }
  // Step shapes held for reuse (CostOptions::reuse_step_shapes; step_loads.hpp).
  [[nodiscard]] std::size_t step_shapes() const { return step_loads_.size(); }
  [[nodiscard]] const CostOptions& options() const { return opt_; }
  [[nodiscard]] const TopologyGraph& graph() const { return g_; }
  // ScheduleRequest::node_share for a group of this shape: the DeepEP deduplication of
  // CostOptions::deepep (1 without it, or on groups of unequal nodes).
  [[nodiscard]] double node_share(const GroupShape& shape) const;
  // ScheduleRequest::block_weight for `op` over `devices` (in expert-rank order), given in
  // the rank order `ranks` of shape_of: the routing's uneven blocks of an all-to-all under
  // CostOptions::routing; empty otherwise.
  [[nodiscard]] std::vector<double> block_weights(const std::vector<int>& devices, const std::vector<int>& ranks,
                                                  CollectiveOp op) const;

  // Per rank, the time the step's multimem transfers (schedule.hpp) keep that rank's links to
  // its switch busy on an idle network: the largest latency of its routes plus its busiest
  // link's multimem load (zero for a rank without any). The engine's flow mode runs them as
  // timers.
  [[nodiscard]] std::vector<Seconds> multimem_times(const Step& st, const std::vector<int>& rank_devices,
                                                    Bytes element_size = Bytes(1)) const;
  // Adds the bytes the step's multimem transfers put on each edge (both directions, times
  // Step::repeat) to `edge_bytes`, indexed by edge.
  void add_multimem_edge_bytes(const Step& st, const std::vector<int>& rank_devices, std::vector<double>& edge_bytes,
                               Bytes element_size = Bytes(1)) const;

 private:
  struct MultimemOwner {
    Seconds latency{};
    std::vector<std::size_t> slots;  // directed links its multimem traffic loads
  };
  using MultimemOwners = std::vector<MultimemOwner>;
  // Adds `bytes` to the directed links r.edges[from, to) (load_), noting new ones in `touched`
  // and every one in `owned`.
  void charge(const Route& r, std::size_t from, std::size_t to, double bytes, std::vector<std::size_t>& touched,
              std::vector<std::size_t>* owned) const;
  // Charges multimem transfers as the switch moves them (schedule.hpp); false when a route has
  // no reducing switch.
  bool charge_multimem(const std::vector<const Transfer*>& mm, const std::vector<int>& rank_devices,
                       Bytes element_size, std::vector<std::size_t>& touched, Seconds& lat,
                       MultimemOwners* owners) const;
  // Routes the transfers of step_key_ (and the siblings') and charges step_bytes_ to load_;
  // the largest path latency into `lat`, the transfers between nodes added to `between`.
  void route_step(std::vector<std::size_t>& touched, Seconds& lat, int& between) const;
  // charge_multimem on the step's multimem transfers.
  bool load_multimem(const Step& st, const std::vector<int>& rank_devices, Bytes element_size,
                     std::vector<std::size_t>& touched, MultimemOwners* owners) const;
  // Index in r.nodes of the first reducing switch the route crosses; -1: none.
  static int reducing_switch(const TopologyGraph& g, const Route& r);
  // Whether the route between the first two ranks of every node crosses a reducing switch.
  bool nodes_reduce(const std::vector<int>& ranks, const GroupShape& shape) const;
  CollectiveEstimate evaluate(const CollectiveAlgorithm& a, const std::vector<int>& ranks, const GroupShape& shape,
                              CollectiveOp op, std::int64_t elements, const std::vector<double>& weight) const;
  CollectiveEstimate in_network(const std::vector<int>& ranks, std::int64_t elements) const;
  // The network estimate `net` under the least-time protocol the algorithm allows.
  CollectiveEstimate with_protocol(const CollectiveAlgorithm& a, const CollectiveEstimate& net, CollectiveOp op,
                                   Bytes per_rank, const GroupShape& shape) const;

  const TopologyGraph& g_;
  CostOptions opt_;
  Router router_;
  mutable ZeroArray<double> load_;    // per directed link, zero between steps (sized by charge)
  mutable std::vector<double> sent_;  // per rank, reused between steps
  mutable std::vector<const Transfer*> multimem_;  // a step's multimem transfers, reused
  mutable const std::vector<int>* siblings_ = nullptr;  // of the estimate() under way
  mutable int siblings_id_ = 0;                         // theirs in step_loads_ (0: none)
  mutable StepLoads step_loads_;
  bool fabric_reduces_ = false;             // a switch other than a star's center reduces in network
  mutable std::vector<int> step_key_;       // a step's StepLoads key, reused
  mutable std::vector<double> step_bytes_;  // its transfers' bytes, reused
  // (devices, op, bytes, algorithm, siblings' id in step_loads_)
  using MemoKey = std::tuple<std::vector<int>, int, double, std::string, int>;
  using AloneKey = std::tuple<std::vector<int>, int, std::int64_t>;
  struct KeyHash {  // hashed, not ordered: neither map is iterated
    std::size_t operator()(const MemoKey& k) const;
    std::size_t operator()(const AloneKey& k) const;
  };
  mutable std::unordered_map<MemoKey, CollectiveEstimate, KeyHash> memo_;
  // "auto" with siblings: the candidates' times alone, ascending (the same group recurs with
  // other sibling sets).
  mutable std::unordered_map<AloneKey, std::vector<std::pair<double, const CollectiveAlgorithm*>>, KeyHash> alone_;
};

// One-shot convenience: builds a CollectiveCostModel (and its route cache) per call.
Seconds collective_time(const TopologyGraph& g, const std::vector<int>& devices, CollectiveOp op, Bytes per_rank,
                        std::string_view algorithm = "auto");

}  // namespace hcsim
