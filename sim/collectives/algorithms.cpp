#include "sim/collectives/algorithms.hpp"

#include <algorithm>

#include "sim/collectives/deepep.hpp"
#include "sim/core/error.hpp"

namespace hcsim {
namespace {

CollectiveAlgorithms& table() {
  static CollectiveAlgorithms t("collective algorithm", &CollectiveAlgorithm::name);
  return t;
}

bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

void add(CollectiveAlgorithm a) {
  HCSIM_ASSERT(a.supports && (a.analytic_only || a.schedule), "collective algorithm without a schedule: " + a.name);
  HCSIM_ASSERT(!a.pipelined || (a.depth && (a.share || a.stages)), "pipelined collective algorithm without a depth: " + a.name);
  table().add(std::move(a));
}

void add_rings() {
  add({.name = "ring",
       .help = "ring reduce-scatter / all-gather; all-reduce = both, 2(n-1) steps of S/n",
       .source = "Patarasuk & Yuan, JPDC 2009; NCCL ring",
       .supports = [](CollectiveOp op, const GroupShape&) {
         return op == CollectiveOp::all_reduce || op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather;
       },
       .schedule = [](const ScheduleRequest& r) { return ring_schedule(r.op, r.shape.ranks, r.elements, r.compressed); },
       .auto_priority = 10});
  add({.name = "multi_ring",
       .help = "one ring per rank of a node (NCCL channels), each on 1/per_node of the buffer (all-reduce) or of "
               "every rank's chunk (reduce-scatter, all-gather) and leaving the node through a different NIC",
       .source = "NCCL rings over multiple channels (NVIDIA/nccl src/graph/rings.cc); PXN on rail-optimised fabrics "
                 "(NCCL 2.12, src/graph/paths.cc)",
       .supports = [](CollectiveOp op, const GroupShape& s) {
         return (op == CollectiveOp::all_reduce || op == CollectiveOp::reduce_scatter ||
                 op == CollectiveOp::all_gather) &&
                s.nodes > 1 && s.per_node > 1;
       },
       .schedule = [](const ScheduleRequest& r) {
         return multi_ring_schedule(r.op, r.shape.nodes, r.shape.per_node, r.elements, r.compressed, r.shape.pxn);
       },
       .auto_priority = 20});
  add({.name = "hierarchical",
       .help = "all-reduce: intra-node reduce-scatter, inter-node ring all-reduce, intra-node all-gather; "
               "all-to-all: pairwise inside the node, then pairwise across nodes on one rail per GPU",
       .source = "Jia et al. 2018 (arXiv 1807.11205); Horovod hierarchical all-reduce; hierarchical all-to-all as "
                 "in Tutel (Hwang et al., MLSys 2023, §3.3) and DeepSpeed-MoE",
       .supports = [](CollectiveOp op, const GroupShape& s) {
         return (op == CollectiveOp::all_reduce || op == CollectiveOp::all_to_all) && s.nodes > 1 && s.per_node > 1;
       },
       .schedule = [](const ScheduleRequest& r) {
         if (r.op == CollectiveOp::all_to_all)
           return hierarchical_all_to_all_schedule(r.shape.nodes, r.shape.per_node, r.elements, r.compressed,
                                                   r.block_weight);
         return hierarchical_schedule(r.op, r.shape.nodes, r.shape.per_node, r.elements, r.compressed);
       },
       .auto_priority = 30});
  add({.name = "torus",
       .help = "dimension-ordered rings: reduce-scatter along each torus dimension, all-gather back",
       .source = "TPU all-reduce on 2D/3D tori (Ying et al. 2018, arXiv 1811.06992); Sack & Gropp 2012",
       .supports = [](CollectiveOp op, const GroupShape& s) {
         return op == CollectiveOp::all_reduce && s.torus_dims.size() >= 2;
       },
       .schedule = [](const ScheduleRequest& r) {
         return torus_schedule(r.op, r.shape.torus_dims, r.elements, r.compressed);
       },
       .auto_priority = 40,
       .nccl_protocols = false});
  add({.name = "torus_all_dims",
       .help = "rings on every torus dimension at once: 2d parts, each reduced dimension by dimension in its own "
               "order and direction, so every link of the torus carries traffic in every phase",
       .source = "multi-dimensional (bucket) all-reduce, Sack & Gropp PPoPP 2012; TPU v4 (Jouppi et al. ISCA 2023)",
       .supports = [](CollectiveOp op, const GroupShape& s) {
         return op == CollectiveOp::all_reduce && s.torus_dims.size() >= 2;
       },
       .schedule = [](const ScheduleRequest& r) {
         return torus_all_dims_schedule(r.op, r.shape.torus_dims, r.elements, r.compressed);
       },
       .auto_priority = 41,
       .nccl_protocols = false});
}

void add_trees() {
  // Two trees, each carrying half of an all-reduce; a pipeline runs down the tree's depth.
  add({.name = "double_binary_tree",
       .help = "two complementary pipelined binary trees, each with half the data",
       .source = "Sanders, Speck & Traeff, Parallel Computing 35(12) 2009; NCCL 2.4 trees",
       .supports =
           [](CollectiveOp op, const GroupShape&) {
             return op == CollectiveOp::all_reduce || op == CollectiveOp::broadcast || op == CollectiveOp::reduce;
           },
       .schedule =
           [](const ScheduleRequest& r) {
             return double_binary_tree_schedule(r.op, r.shape.ranks, r.elements, r.chunks, r.compressed);
           },
       .pipelined = true,
       .depth = [](const GroupShape& s) { return double_binary_tree_height(s.ranks); },
       .share = [](CollectiveOp op, const GroupShape&) { return op == CollectiveOp::all_reduce ? 0.5 : 1.0; },
       .auto_priority = 50,
       .family = ProtocolFamily::tree});
  // "auto" tries it on groups of at most 256 ranks only: its schedule has n - 1 + c steps
  // of up to n transfers, the costliest to evaluate.
  add({.name = "chain",
       .help = "pipelined chain (a ring cut open) for broadcast and reduce",
       .source = "NCCL ring broadcast / reduce",
       .supports = [](CollectiveOp op, const GroupShape&) {
         return op == CollectiveOp::broadcast || op == CollectiveOp::reduce;
       },
       .schedule = [](const ScheduleRequest& r) { return chain_schedule(r.op, r.shape.ranks, r.elements, r.chunks); },
       .pipelined = true,
       .depth = [](const GroupShape& s) { return s.ranks - 1; },
       .share = [](CollectiveOp, const GroupShape&) { return 1.0; },
       .auto_priority = 70,
       .auto_max_ranks = 256});
  // An MPI algorithm, not among NCCL's: used only when named.
  add({.name = "halving_doubling",
       .help = "recursive halving reduce-scatter + recursive doubling all-gather (log2 n steps each)",
       .source = "Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005",
       .supports = [](CollectiveOp op, const GroupShape& s) {
         return op == CollectiveOp::all_reduce ||
                ((op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather) && is_power_of_two(s.ranks));
       },
       .schedule = [](const ScheduleRequest& r) { return halving_doubling_schedule(r.op, r.shape.ranks, r.elements); }});
}

void add_others() {
  add({.name = "in_network",
       .help = "reduction in switches (NVLink SHARP / InfiniBand SHARP): up once, down once",
       .source = "Graham et al., COMHPC 2016 (SHARP); NVIDIA NVLink SHARP (NVSwitch gen3)",
       .supports = [](CollectiveOp op, const GroupShape&) { return op == CollectiveOp::all_reduce; },
       .analytic_only = true,
       .needs = "needs switches with in-network reduction (nvswitch_reduction / fabric_reduction) on every path "
                "of the group",
       .auto_priority = 60,
       .family = ProtocolFamily::nvls,
       .simple_only = true});
  // NCCL's NVLS_TREE. Two stages: each GPU's NVLink carries (g + 1)/g of a piece (its S/c up
  // and S/(c g) down, then the reverse); each NIC, on its rail's double binary tree over the
  // nodes, the piece's 1/g slice each way on 2 nodes and up to twice that on more (an interior
  // rank of one tree: two children's halves and its parent's, and its own half as a leaf of
  // the other). "auto" tries it up to 256 ranks: its schedule has chunks + 2D + 1 steps of up
  // to 2N g^2 transfers.
  add({.name = "nvls_tree",
       .help = "NVLink SHARP reduce-scatter in each node, all-reduce of each GPU's slice among the GPUs of its rail "
               "(every NIC used) on a double binary tree over the nodes, NVLink SHARP all-gather; pipelined",
       .source = "NCCL NVLS_TREE (NVIDIA/nccl src/device/all_reduce.h, src/graph/connect.cc, src/graph/tuning.cc)",
       .supports = [](CollectiveOp op, const GroupShape& s) {
         return op == CollectiveOp::all_reduce && s.nodes > 1 && s.per_node > 1;
       },
       .schedule = [](const ScheduleRequest& r) {
         return nvls_tree_schedule(r.op, r.shape.nodes, r.shape.per_node, r.elements, r.chunks);
       },
       .needs = "needs NVSwitches with in-network reduction (nvswitch_reduction) in every node",
       .node_switch_reduction = true,
       .pipelined = true,
       .depth = [](const GroupShape& s) { return 2 * double_binary_tree_height(s.nodes) + 2; },
       .stages = [](CollectiveOp, const GroupShape& s) {
         const double g = s.per_node;
         return std::vector<PipelineStage>{{0, 1, (g + 1) / g}, {0, s.per_node, (s.nodes == 2 ? 1 : 2) / g}};
       },
       .auto_priority = 65,
       .auto_max_ranks = 256,
       .family = ProtocolFamily::nvls,
       .simple_only = true});
  add({.name = "pairwise",
       .help = "pairwise-exchange all-to-all: partners swap blocks, n-1 steps (n = 2^k) or n; where rails meet only "
               "at the spines, a block for another node's other rail is relayed over NVLink to the sender's GPU on "
               "that rail (PXN)",
       .source = "Thakur, Rabenseifner & Gropp 2005 (pairwise exchange); NCCL 2.12 PXN (NCCL_P2P_PXN_LEVEL)",
       .supports = [](CollectiveOp op, const GroupShape&) { return op == CollectiveOp::all_to_all; },
       .schedule =
           [](const ScheduleRequest& r) {
             Schedule sc = pairwise_all_to_all_schedule(r.shape.ranks, r.elements, r.compressed, r.block_weight);
             if (r.shape.pxn && r.shape.per_node > 1) relay_across_rails(sc, r.shape.per_node);
             return sc;
           },
       .auto_priority = 80});
  // Used only when named, or for an MoE model's dispatch and combine under
  // strategy.moe_dispatch = "deepep" (CostOptions::deepep), whose routing sets node_share.
  add({.name = std::string(kDeepepAlgorithm),
       .help = "MoE dispatch / combine all-to-all: pairwise across nodes on one rail per GPU, each token sent once "
               "per destination node, then pairwise inside the node on NVLink forwarding its expert copies",
       .source = "DeepSeek-V3 report (arXiv 2412.19437) §3.2.2; deepseek-ai/DeepEP",
       .supports = [](CollectiveOp op, const GroupShape& s) {
         return op == CollectiveOp::all_to_all && (s.nodes == 1 || s.per_node > 0);
       },
       .schedule = [](const ScheduleRequest& r) {
         const bool one = r.shape.nodes == 1;
         return deepep_all_to_all_schedule(r.shape.nodes, one ? r.shape.ranks : r.shape.per_node, r.elements,
                                           r.node_share, r.compressed, r.block_weight);
       }});
  add({.name = "direct",
       .help = "one point-to-point transfer (send/recv between two ranks)",
       .supports = [](CollectiveOp op, const GroupShape& s) { return op == CollectiveOp::send_recv && s.ranks == 2; },
       .schedule = [](const ScheduleRequest& r) { return send_recv_schedule(r.elements); },
       .auto_priority = 90});
}

}  // namespace

const CollectiveAlgorithms& collective_algorithms() {
  register_builtin_collectives();
  return table();
}

const CollectiveAlgorithm* find_collective_algorithm(std::string_view name) {
  return collective_algorithms().find(name);
}

std::vector<std::string> collective_algorithm_names() { return collective_algorithms().names(); }

std::vector<std::string> collective_algorithm_choices() {
  std::vector<std::string> out{"auto"};
  for (const auto& n : collective_algorithm_names()) out.push_back(n);
  return out;
}

const std::vector<const CollectiveAlgorithm*>& auto_candidates() {
  static const std::vector<const CollectiveAlgorithm*> order = [] {
    std::vector<const CollectiveAlgorithm*> out;
    for (const auto& [name, a] : collective_algorithms())
      if (a.auto_priority) out.push_back(&a);
    std::stable_sort(out.begin(), out.end(), [](const CollectiveAlgorithm* x, const CollectiveAlgorithm* y) {
      return *x->auto_priority < *y->auto_priority;  // entries come in name order: ties stay by name
    });
    return out;
  }();
  return order;
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
