#pragma once
// Context parallelism's ring attention in the task graph (workloads/lowering.cpp): block 0
// on the rank's own keys and values, then per step k = 1..cp-1 every rank sends the block it
// holds to the next rank of its cp ring (after its keys and values exist, or after it
// received that block) and computes on the block it received (Liu et al., "Ring Attention
// with Blockwise Transformers", 2023; Megatron-Core's context parallelism runs it so).

#include <cstdint>
#include <vector>

#include "workloads/items.hpp"
#include "workloads/layout.hpp"
#include "workloads/lowering_groups.hpp"
#include "workloads/lowering_tasks.hpp"
#include "workloads/task_graph.hpp"

namespace hcsim {

struct RingAttention {
  StreamTasks& tasks;
  TaskGraph& g;
  GroupCollectives& groups;
  const Layout& layout;
  int cp = 1;  // ring length
  int dp = 1;  // data-parallel ranks built, times cp (the cp ranks of one are consecutive)
  int tp = 1;  // tensor-parallel ranks built
  std::uint32_t send_label = 0;

  // The ring of stage s for one micro-batch: `block` is one step's compute (its phase is the
  // compute tasks'), `pass` the sends' phase, `comm_bytes` one block's bytes. `chain` holds each
  // built rank's last task and gets its last block; `extra` (a second task per rank the
  // first block waits for) is cleared. Under symmetry a rank's receive from a rank not built
  // stands in by its own send of that step (identical ranks, symmetric ring).
  void emit(int s, int microbatch, Phase pass, const Item& block, Bytes comm_bytes, std::vector<TaskId>& chain,
            std::vector<TaskId>& extra) const;
};

}  // namespace hcsim
