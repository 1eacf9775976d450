// Node-aware collectives: the hierarchical all-reduce (intra-node reduce-scatter, inter-node
// all-reduce, intra-node all-gather), the hierarchical all-to-all (inside the node, then one
// rail across) and NCCL-style parallel rings for all-reduce, reduce-scatter and all-gather
// (see schedule.hpp).
#include "sim/collectives/ring_phase.hpp"
#include "sim/core/error.hpp"

namespace hcsim {

Schedule hierarchical_schedule(CollectiveOp op, int nodes, int per_node, std::int64_t elements, bool compressed) {
  HCSIM_ASSERT(op == CollectiveOp::all_reduce, "hierarchical schedule supports all-reduce only");
  HCSIM_ASSERT(nodes >= 1 && per_node >= 1, "hierarchical schedule needs nodes and ranks per node");
  Schedule sc{op, nodes * per_node, elements, {}, 0};
  std::vector<RingJob> intra, inter;
  for (int nd = 0; nd < nodes; ++nd) {
    RingJob j{{}, 0, elements};
    for (int l = 0; l < per_node; ++l) j.members.push_back(nd * per_node + l);
    intra.push_back(std::move(j));
  }
  for (int l = 0; l < per_node; ++l) {
    RingJob j{{}, ring_chunk_offset(intra[0], l), ring_chunk_size(intra[0], l)};
    for (int nd = 0; nd < nodes; ++nd) j.members.push_back(nd * per_node + l);
    inter.push_back(std::move(j));
  }
  append_ring_phase(sc.steps, intra, true, compressed);
  append_ring_phase(sc.steps, inter, true, compressed);
  append_ring_phase(sc.steps, inter, false, compressed);
  append_ring_phase(sc.steps, intra, false, compressed);
  return sc;
}

Schedule hierarchical_all_to_all_schedule(int nodes, int per_node, std::int64_t elements, bool compressed,
                                          const std::vector<double>& weight) {
  const int n = nodes * per_node, g = per_node;
  HCSIM_ASSERT(nodes >= 1 && per_node >= 1 && elements % n == 0, "all-to-all needs a buffer of n equal blocks");
  HCSIM_ASSERT(weight.empty() || weight.size() == static_cast<std::size_t>(n), "a block weight per rank");
  Schedule sc{CollectiveOp::all_to_all, n, elements, {}, 0};
  const std::int64_t b = elements / n;
  if (b == 0) return sc;
  const BlockWeights w{weight};  // each block sized for its final destination
  // Inside each node: local rank i hands local rank j every block bound for local index j of
  // any node c (its block c g + j), into j's block c g + i, which j hands to i in the same
  // swap. Then rank (a, j) holds in blocks c g .. c g + g - 1 what node a sends to (c, j).
  append_pairwise(sc.steps, g, compressed, [&](Step& st, int i, int j) {
    for (int a = 0; a < nodes; ++a)
      for (int c = 0; c < nodes; ++c)
        st.transfers.push_back({a * g + i, a * g + j, (c * g + j) * b, (c * g + i) * b, w.block(b, c * g + j), false});
  });
  // Across nodes, on rail j: (a, j) sends those g blocks to (c, j) as one message, where they
  // land in blocks a g .. a g + g - 1, the places of their sources (a, 0 .. g - 1).
  append_pairwise(sc.steps, nodes, compressed, [&](Step& st, int a, int c) {
    for (int j = 0; j < g; ++j)
      st.transfers.push_back({a * g + j, c * g + j, c * g * b, a * g * b, g * w.block(b, c * g + j), false});
  });
  return sc;
}

Schedule multi_ring_schedule(CollectiveOp op, int nodes, int per_node, std::int64_t elements, bool compressed,
                             bool pxn) {
  HCSIM_ASSERT(op == CollectiveOp::all_reduce || op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather,
               "multi-ring schedule supports all-reduce, reduce-scatter and all-gather only");
  HCSIM_ASSERT(nodes >= 1 && per_node >= 1, "multi-ring schedule needs nodes and ranks per node");
  const int n = nodes * per_node;
  Schedule sc{op, n, elements, {}, 0};
  std::vector<RingJob> rings;
  for (int j = 0; j < per_node; ++j) {
    RingJob ring{{}, chunk_offset(elements, per_node, j), chunk_size(elements, per_node, j)};
    ring.members.reserve(static_cast<std::size_t>(n));
    for (int nd = 0; nd < nodes; ++nd)
      for (int l = 0; l < per_node; ++l) ring.members.push_back(nd * per_node + (j + l) % per_node);
    if (op != CollectiveOp::all_reduce)
      // Rank r's result (reduce-scatter) or contribution (all-gather) is chunk r of n; ring j
      // carries slice j of per_node slices of it, at r's place in the ring.
      for (int r : ring.members) {
        const std::int64_t off = chunk_offset(elements, n, r), size = chunk_size(elements, n, r);
        ring.chunks.emplace_back(off + chunk_offset(size, per_node, j), chunk_size(size, per_node, j));
      }
    rings.push_back(std::move(ring));
  }
  if (op != CollectiveOp::all_gather) append_ring_phase(sc.steps, rings, true, compressed);
  if (op != CollectiveOp::reduce_scatter) append_ring_phase(sc.steps, rings, false, compressed);
  if (pxn) relay_across_rails(sc, per_node);
  return sc;
}

void relay_across_rails(Schedule& sc, int per_node) {
  for (Step& st : sc.steps)
    for (Transfer& t : st.transfers)
      if (t.src / per_node != t.dst / per_node && t.src % per_node != t.dst % per_node)
        t.via = t.src / per_node * per_node + t.dst % per_node;
}

}  // namespace hcsim
