#pragma once
// The task graph a workload lowers to and the engine replays: per-device compute tasks
// (with their cost already computed by the device model of the device they run on),
// point-to-point sends, and collectives over device groups, with explicit dependencies.
// Stream order (compute stream, communication stream per device) is expressed as
// dependencies, so the engine needs no notion of streams to be correct.
// Compact layout: 4-byte ids, dependencies in one CSR array, no per-task heap allocation.

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/collectives/schedule.hpp"
#include "sim/core/units.hpp"

namespace hcsim {

using TaskId = std::uint32_t;

enum class TaskKind : std::uint8_t { compute, send, collective };
// Which parallelism a communication serves (report breakdown by kind).
enum class CommClass : std::uint8_t { none, tp, sp, pp, dp, zero, offload, cp, ep };
enum class Phase : std::uint8_t { forward, backward, recompute, optimizer, other };
enum class Stream : std::uint8_t { compute, comm };

std::string_view comm_class_name(CommClass c);
std::string_view phase_name(Phase p);

struct Task {
  TaskKind kind = TaskKind::compute;
  CommClass comm = CommClass::none;
  Phase phase = Phase::other;
  Stream stream = Stream::compute;
  CollectiveOp op = CollectiveOp::all_reduce;
  std::uint32_t device = 0;      // compute: where it runs; send: source
  std::uint32_t peer = 0;        // send: destination
  std::uint32_t group = 0;       // collective: index into TaskGraph::groups()
  std::uint16_t stage = 0;       // pipeline stage (report)
  std::uint16_t microbatch = 0;  // micro-batch (report)
  std::uint32_t label = 0;       // index into TaskGraph::labels()
  Seconds duration{};            // compute: time on its device
  Flops flops{};                 // compute: arithmetic work executed (hardware FLOPs)
  Flops model_flops{};           // compute: work the model needs (no recomputation), for MFU
  Bytes bytes{};                 // compute: memory traffic; send/collective: payload per rank
  Joules energy{};               // compute: dynamic energy on its device
};

class TaskGraph {
 public:
  TaskId add(const Task& t, std::span<const TaskId> deps);
  TaskId add(const Task& t, std::initializer_list<TaskId> deps) {
    return add(t, std::span<const TaskId>(deps.begin(), deps.size()));
  }
  std::uint32_t add_group(std::vector<std::uint32_t> devices);
  // A group's family: the translates of it (device d + o) that run the same collective at
  // the same time, the layout's symmetric replicas (workloads/layout.hpp, DeviceGroup::sib).
  // `first` is the offset of the family's first member from this group (<= 0), `siblings`
  // the other members' offsets from that first one. "auto" chooses one algorithm per family,
  // on the first member with the others' traffic on the links (sim/engine/collective_plan.hpp),
  // so every member runs the same one, with symmetry or without.
  struct GroupFamily {
    int first = 0;
    std::vector<int> siblings;
  };
  // `first`: the family's first member's offset from the group; `siblings`: the others'
  // offsets from the first (DeviceGroup::sibling_offsets of the first member).
  void set_group_family(std::uint32_t group, int first, std::vector<int> siblings);
  // Null: the group has no family (it is alone, or the lowering did not say).
  [[nodiscard]] const GroupFamily* group_family(std::uint32_t group) const {
    return group < families_.size() && !families_[group].siblings.empty() ? &families_[group] : nullptr;
  }
  std::uint32_t intern_label(const std::string& label);

  [[nodiscard]] std::size_t size() const { return tasks_.size(); }
  [[nodiscard]] const Task& operator[](TaskId id) const { return tasks_[id]; }
  [[nodiscard]] Task& operator[](TaskId id) { return tasks_[id]; }
  [[nodiscard]] const std::vector<Task>& tasks() const { return tasks_; }
  [[nodiscard]] std::span<const TaskId> deps(TaskId id) const {
    return {deps_.data() + dep_begin_[id], deps_.data() + dep_begin_[id + 1]};
  }
  [[nodiscard]] const std::vector<std::vector<std::uint32_t>>& groups() const { return groups_; }
  [[nodiscard]] const std::vector<std::string>& labels() const { return labels_; }
  [[nodiscard]] std::size_t dependency_count() const { return deps_.size(); }

  // Symmetry: a send or collective that also stands for identical ones among the ranks
  // that were not built. A mirror set lists those once for all the tasks that share them:
  // for a send, the (src, dst) device pairs of the identical sends; for a collective, the
  // groups of the identical collectives. The engine charges a mirror's bytes to the routes
  // of its set without simulating it, once per distinct set (sim/engine/replay.cpp), so
  // mirrors cost O(tasks + distinct sets x ranks), not O(tasks x ranks).
  struct MirrorSet {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;  // a send's
    std::vector<std::uint32_t> groups;                           // a collective's
    double copies = 0;  // payloads per mirrored byte: the pairs, or the groups' sizes summed
  };
  struct Mirror {
    TaskId task;
    std::uint32_t set;
  };
  std::uint32_t add_mirror_set(std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs);
  std::uint32_t add_group_mirror_set(std::vector<std::uint32_t> groups);
  // `task` (a send for a pair set, a collective for a group set) also stands for its set;
  // an empty set adds nothing.
  void add_mirror(TaskId task, std::uint32_t set);
  [[nodiscard]] const std::vector<Mirror>& mirrors() const { return mirrors_; }
  [[nodiscard]] const std::vector<MirrorSet>& mirror_sets() const { return mirror_sets_; }

  std::uint32_t devices = 0;  // number of devices the graph spans
  // Graphs merged into one (workloads/task_graph_merge.hpp): the first task of each part,
  // ascending; empty for one graph. Parts are jobs that run side by side, each with its own
  // symmetry mirrors: the engine counts one part's mirrors on the links another's flows cross.
  std::vector<TaskId> part_begin;
  [[nodiscard]] std::uint32_t part_of(TaskId t) const;
  // Memory endpoints (optimizer-state offload): a send's device or peer >= devices names
  // memory endpoint (index - devices), the topology's memory nodes in node order.
  std::uint32_t memory_endpoints = 0;
  [[nodiscard]] bool is_memory(std::uint32_t endpoint) const { return memory_endpoints > 0 && endpoint >= devices; }

 private:
  std::vector<Task> tasks_;
  std::vector<std::uint32_t> dep_begin_{0};
  std::vector<TaskId> deps_;
  std::vector<std::vector<std::uint32_t>> groups_;
  std::vector<GroupFamily> families_;  // by group; may be shorter than groups_
  std::vector<std::string> labels_;
  std::vector<MirrorSet> mirror_sets_;
  std::vector<Mirror> mirrors_;
};

}  // namespace hcsim
