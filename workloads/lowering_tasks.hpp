#pragma once
// The emitter's task constructors (workloads/lowering.cpp), with each device's two streams:
// a compute task follows the device's last compute task; a collective on the communication
// stream follows the last collective of that stream on each of its devices.

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "workloads/items.hpp"
#include "workloads/task_graph.hpp"

namespace hcsim {

inline constexpr TaskId kNoTask = 0xFFFFFFFFu;

class StreamTasks {
 public:
  StreamTasks(TaskGraph& g, std::uint32_t devices);

  // A compute task of `acc` on `device` after `dep` and `dep2` (kNoTask: none) and the
  // device's last compute task; labelled by phase unless `acc` carries a label.
  TaskId compute(std::uint32_t device, const Item& acc, Phase phase, int stage, int microbatch, TaskId dep, TaskId dep2);
  // A collective over `group` after `deps` (kNoTask entries ignored); on the communication
  // stream it also follows that stream's last task on each device of the group.
  TaskId collective(std::uint32_t group, CollectiveOp op, Bytes bytes, CommClass cls, Phase phase, int stage,
                    int microbatch, std::vector<TaskId>& deps, bool comm_stream);
  // A collective on reduction stream k of the group's devices (ZeRO-3 / FSDP: 0 the
  // reduce-scatter stream, 1 hybrid sharding's all-reduce stream): after `deps` and that
  // stream's last task on each device, not after the communication stream's. Its tasks show
  // on the trace's communication lane.
  TaskId reduction(std::uint32_t group, CollectiveOp op, Bytes bytes, CommClass cls, Phase phase, int stage,
                   int microbatch, std::vector<TaskId>& deps, int k);

  // A transfer from `from` to `to` (a device, or a memory endpoint) on the communication lane
  // after `deps` (kNoTask and repeated ids dropped); it waits for no stream's last task.
  TaskId send(std::uint32_t from, std::uint32_t to, Bytes bytes, CommClass cls, Phase phase, int stage, int microbatch,
              std::uint32_t label, std::initializer_list<TaskId> deps);

  [[nodiscard]] TaskId compute_tail(std::uint32_t device) const { return compute_tail_[device]; }
  // The device's next compute task also waits for `id` (a blocking point-to-point send).
  void block_compute_on(std::uint32_t device, TaskId id) { compute_tail_[device] = id; }
  [[nodiscard]] TaskId comm_tail(std::uint32_t device) const { return comm_tail_[device]; }

 private:
  TaskGraph& g_;
  TaskId add_collective(std::uint32_t group, CollectiveOp op, Bytes bytes, CommClass cls, Phase phase, int stage,
                        int microbatch, std::vector<TaskId>& deps, bool comm_lane, std::vector<TaskId>* tails);
  std::vector<TaskId> compute_tail_, comm_tail_;
  std::vector<TaskId> reduce_tail_[2];  // reduction streams, made on first use
  std::uint32_t phase_label_[5];
  std::uint32_t collective_label_;
};

}  // namespace hcsim
