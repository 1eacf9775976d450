#include "sim/collectives/algorithms.hpp"

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

std::map<std::string, CollectiveAlgorithm, std::less<>>& table() {
  static std::map<std::string, CollectiveAlgorithm, std::less<>> t;
  return t;
}

bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

void add(CollectiveAlgorithm a) {
  std::string key = a.name;
  HCSIM_ASSERT(!table().count(key), "collective algorithm registered twice: " + key);
  table().emplace(std::move(key), std::move(a));
}

void add_rings() {
  add({"ring", "ring reduce-scatter / all-gather; all-reduce = both, 2(n-1) steps of S/n",
       "Patarasuk & Yuan, JPDC 2009; NCCL ring", false, false,
       [](CollectiveOp op, const GroupShape&) {
         return op == CollectiveOp::all_reduce || op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather;
       },
       [](const ScheduleRequest& r) { return ring_schedule(r.op, r.shape.ranks, r.elements, r.compressed); }});
  add({"torus", "dimension-ordered rings: reduce-scatter along each torus dimension, all-gather back",
       "TPU all-reduce on 2D/3D tori (Ying et al. 2018, arXiv 1811.06992); Sack & Gropp 2012", false, false,
       [](CollectiveOp op, const GroupShape& s) { return op == CollectiveOp::all_reduce && s.torus_dims.size() >= 2; },
       [](const ScheduleRequest& r) { return torus_schedule(r.op, r.shape.torus_dims, r.elements, r.compressed); }});
  add({"hierarchical", "intra-node reduce-scatter, inter-node ring all-reduce, intra-node all-gather",
       "Jia et al. 2018 (arXiv 1807.11205); Horovod hierarchical all-reduce", false, false,
       [](CollectiveOp op, const GroupShape& s) {
         return op == CollectiveOp::all_reduce && s.nodes > 1 && s.per_node > 1;
       },
       [](const ScheduleRequest& r) {
         return hierarchical_schedule(r.op, r.shape.nodes, r.shape.per_node, r.elements, r.compressed);
       }});
  add({"multi_ring", "one ring per rank of a node (NCCL channels), each on 1/per_node of the buffer and leaving "
       "the node through a different NIC",
       "NCCL rings over multiple channels (NVIDIA/nccl src/graph/rings.cc)", false, false,
       [](CollectiveOp op, const GroupShape& s) {
         return op == CollectiveOp::all_reduce && s.nodes > 1 && s.per_node > 1;
       },
       [](const ScheduleRequest& r) {
         return multi_ring_schedule(r.op, r.shape.nodes, r.shape.per_node, r.elements, r.compressed);
       }});
}

void add_trees() {
  add({"double_binary_tree", "two complementary pipelined binary trees, each with half the data",
       "Sanders, Speck & Traeff, Parallel Computing 35(12) 2009; NCCL 2.4 trees", true, false,
       [](CollectiveOp op, const GroupShape&) {
         return op == CollectiveOp::all_reduce || op == CollectiveOp::broadcast || op == CollectiveOp::reduce;
       },
       [](const ScheduleRequest& r) { return double_binary_tree_schedule(r.op, r.shape.ranks, r.elements, r.chunks); }});
  add({"halving_doubling", "recursive halving reduce-scatter + recursive doubling all-gather (log2 n steps each)",
       "Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005", false, false,
       [](CollectiveOp op, const GroupShape& s) {
         return op == CollectiveOp::all_reduce ||
                ((op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather) && is_power_of_two(s.ranks));
       },
       [](const ScheduleRequest& r) { return halving_doubling_schedule(r.op, r.shape.ranks, r.elements); }});
  add({"chain", "pipelined chain (a ring cut open) for broadcast and reduce", "NCCL ring broadcast / reduce", true,
       false,
       [](CollectiveOp op, const GroupShape&) { return op == CollectiveOp::broadcast || op == CollectiveOp::reduce; },
       [](const ScheduleRequest& r) { return chain_schedule(r.op, r.shape.ranks, r.elements, r.chunks); }});
}

void add_others() {
  add({"pairwise", "pairwise-exchange all-to-all: partners swap blocks, n-1 steps (n = 2^k) or n",
       "Thakur, Rabenseifner & Gropp 2005 (pairwise exchange)", false, false,
       [](CollectiveOp op, const GroupShape&) { return op == CollectiveOp::all_to_all; },
       [](const ScheduleRequest& r) {
         return pairwise_all_to_all_schedule(r.shape.ranks, r.elements, r.compressed);
       }});
  add({"direct", "one point-to-point transfer (send/recv between two ranks)", "", false, false,
       [](CollectiveOp op, const GroupShape& s) { return op == CollectiveOp::send_recv && s.ranks == 2; },
       [](const ScheduleRequest& r) { return send_recv_schedule(r.elements); }});
  add({"in_network", "reduction in switches (NVLink SHARP / InfiniBand SHARP): up once, down once",
       "Graham et al., COMHPC 2016 (SHARP); NVIDIA NVLink SHARP (NVSwitch gen3)", false, true,
       [](CollectiveOp op, const GroupShape&) { return op == CollectiveOp::all_reduce; }, {}});
}

}  // namespace

const std::map<std::string, CollectiveAlgorithm, std::less<>>& collective_algorithms() {
  register_builtin_collectives();
  return table();
}

const CollectiveAlgorithm* find_collective_algorithm(std::string_view name) {
  const auto& t = collective_algorithms();
  auto it = t.find(name);
  return it == t.end() ? nullptr : &it->second;
}

std::vector<std::string> collective_algorithm_names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : collective_algorithms()) out.push_back(k);
  return out;
}

void register_builtin_collectives() {
  static bool done = false;
  if (done) return;
  done = true;
  add_rings();
  add_trees();
  add_others();
}

}  // namespace hcsim
