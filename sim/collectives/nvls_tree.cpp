// NVLS tree all-reduce across nodes (schedule.hpp), the schedule of NCCL's NVLS_TREE
// (NVIDIA/nccl src/device/all_reduce.h): inside a node, NVLink SHARP reduce-scatters by
// multimem loads and all-gathers by multimem stores; between nodes, the GPUs of one local
// index (one rail, each on its own NIC) all-reduce their slice; the pieces of a pipelined
// buffer are at different stages at once.
#include <vector>

#include "sim/collectives/schedule.hpp"
#include "sim/core/error.hpp"

namespace hcsim {
namespace {

// Adds `from`'s transfers into steps[at], steps[at + 1], ...
void overlay(std::vector<Step>& steps, std::size_t at, const std::vector<Step>& from) {
  for (std::size_t i = 0; i < from.size(); ++i) {
    auto& to = steps[at + i].transfers;
    to.insert(to.end(), from[i].transfers.begin(), from[i].transfers.end());
  }
}

}  // namespace

Schedule nvls_tree_schedule(CollectiveOp op, int nodes, int per_node, std::int64_t elements, int chunks) {
  HCSIM_ASSERT(op == CollectiveOp::all_reduce, "NVLS tree schedule supports all-reduce only");
  HCSIM_ASSERT(nodes >= 1 && per_node >= 1 && chunks >= 1, "NVLS tree schedule needs nodes, ranks and chunks");
  const int g = per_node;
  Schedule sc{op, nodes * g, elements, {}, 0};
  const int net_steps = 2 * double_binary_tree_height(nodes);
  sc.steps.resize(static_cast<std::size_t>(chunks + net_steps + 1));
  for (int k = 0; k < chunks; ++k) {
    const std::int64_t piece = chunk_offset(elements, chunks, k), size = chunk_size(elements, chunks, k);
    auto& scatter = sc.steps[static_cast<std::size_t>(k)].transfers;
    auto& gather = sc.steps[static_cast<std::size_t>(k + net_steps + 1)].transfers;
    std::vector<Step> net(static_cast<std::size_t>(net_steps));
    for (int l = 0; l < g; ++l) {
      const std::int64_t off = piece + chunk_offset(size, g, l), cnt = chunk_size(size, g, l);
      if (cnt == 0) continue;
      for (int nd = 0; nd < nodes; ++nd)
        for (int i = 0; i < g; ++i) {
          if (i == l) continue;
          scatter.push_back({nd * g + i, nd * g + l, off, off, cnt, true, true});
          gather.push_back({nd * g + l, nd * g + i, off, off, cnt, false, true});
        }
      // The rail's tree, one piece: its ranks are nodes; slice l is at `off` of every buffer.
      const Schedule rail = double_binary_tree_schedule(CollectiveOp::all_reduce, nodes, cnt, 1);
      HCSIM_ASSERT(rail.steps.size() == net.size(), "a rail's tree of another height");
      for (std::size_t s = 0; s < rail.steps.size(); ++s)
        for (Transfer t : rail.steps[s].transfers) {
          t.src = t.src * g + l;
          t.dst = t.dst * g + l;
          t.src_offset += off;
          t.dst_offset += off;
          net[s].transfers.push_back(t);
        }
    }
    overlay(sc.steps, static_cast<std::size_t>(k + 1), net);
  }
  return sc;
}

}  // namespace hcsim
