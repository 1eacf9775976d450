#include "workloads/lowering_tasks.hpp"

#include <algorithm>
#include <span>
#include <utility>

#include "sim/core/error.hpp"

namespace hcsim {

StreamTasks::StreamTasks(TaskGraph& g, std::uint32_t devices)
    : g_(g),
      compute_tail_(devices, kNoTask),
      comm_tail_(devices, kNoTask),
      phase_label_{g.intern_label("forward"), g.intern_label("backward"), g.intern_label("recompute"),
                   g.intern_label("optimizer"), g.intern_label("other")},
      collective_label_(g.intern_label("collective")) {}

TaskId StreamTasks::compute(std::uint32_t device, const Item& acc, Phase phase, int s, int mb, TaskId dep, TaskId dep2) {
  Task t;
  t.kind = TaskKind::compute;
  t.phase = phase;
  t.device = device;
  t.stage = static_cast<std::uint16_t>(s);
  t.microbatch = static_cast<std::uint16_t>(mb);
  t.duration = acc.t;
  t.flops = acc.flops;
  t.model_flops = acc.model_flops;
  t.bytes = acc.bytes;
  t.energy = acc.energy;
  t.label = acc.label != kNoTask ? acc.label : phase_label_[static_cast<int>(phase)];
  TaskId deps[3];
  std::size_t n = 0;
  for (TaskId d : {dep, dep2, compute_tail_[device]})
    if (d != kNoTask && std::find(deps, deps + n, d) == deps + n) deps[n++] = d;
  TaskId id = g_.add(t, std::span<const TaskId>(deps, n));
  compute_tail_[device] = id;
  return id;
}

TaskId StreamTasks::send(std::uint32_t from, std::uint32_t to, Bytes bytes, CommClass cls, Phase phase, int s, int mb,
                         std::uint32_t label, std::initializer_list<TaskId> deps) {
  Task t;
  t.kind = TaskKind::send;
  t.comm = cls;
  t.phase = phase;
  t.stream = Stream::comm;
  t.device = from;
  t.peer = to;
  t.bytes = bytes;
  t.stage = static_cast<std::uint16_t>(s);
  t.microbatch = static_cast<std::uint16_t>(mb);
  t.label = label;
  HCSIM_ASSERT(deps.size() <= 4, "a send after more than four tasks");
  TaskId ids[4];
  std::size_t n = 0;
  for (TaskId d : deps)
    if (d != kNoTask && std::find(ids, ids + n, d) == ids + n) ids[n++] = d;
  return g_.add(t, std::span<const TaskId>(ids, n));
}

TaskId StreamTasks::collective(std::uint32_t group, CollectiveOp op, Bytes bytes, CommClass cls, Phase phase, int s,
                             int mb, std::vector<TaskId>& deps, bool comm_stream) {
  return add_collective(group, op, bytes, cls, phase, s, mb, deps, comm_stream, comm_stream ? &comm_tail_ : nullptr);
}

TaskId StreamTasks::reduction(std::uint32_t group, CollectiveOp op, Bytes bytes, CommClass cls, Phase phase, int s,
                              int mb, std::vector<TaskId>& deps, int k) {
  std::vector<TaskId>& tails = reduce_tail_[k];
  if (tails.empty()) tails.assign(comm_tail_.size(), kNoTask);
  return add_collective(group, op, bytes, cls, phase, s, mb, deps, true, &tails);
}

TaskId StreamTasks::add_collective(std::uint32_t group, CollectiveOp op, Bytes bytes, CommClass cls, Phase phase, int s,
                                   int mb, std::vector<TaskId>& deps, bool comm_lane, std::vector<TaskId>* tails) {
  Task t;
  t.kind = TaskKind::collective;
  t.comm = cls;
  t.op = op;
  t.phase = phase;
  t.stream = comm_lane ? Stream::comm : Stream::compute;
  t.group = group;
  t.device = g_.groups()[group].front();
  t.bytes = bytes;
  t.stage = static_cast<std::uint16_t>(s);
  t.microbatch = static_cast<std::uint16_t>(mb);
  t.label = collective_label_;
  // The task's id, known before it is added: each member's tail is read and replaced in one
  // pass over the group (a data-parallel group holds a thousand devices at frontier scale).
  const auto id = static_cast<TaskId>(g_.size());
  if (tails)  // a group's devices mostly share their last task: each run of one is listed once
    for (std::uint32_t d : g_.groups()[group]) {
      const TaskId last = std::exchange((*tails)[d], id);
      if (last != kNoTask && last != id && (deps.empty() || deps.back() != last)) deps.push_back(last);
    }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  deps.erase(std::remove(deps.begin(), deps.end(), kNoTask), deps.end());
  const TaskId added = g_.add(t, deps);
  HCSIM_ASSERT(added == id, "a task added with another id than the graph's next");
  return id;
}

}  // namespace hcsim
