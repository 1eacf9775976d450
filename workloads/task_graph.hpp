#pragma once
// The task graph a workload lowers to and the engine replays: per-device compute tasks
// (with their cost already computed by the device model of the device they run on),
// point-to-point sends, and collectives over device groups, with explicit dependencies.
// Stream order (compute stream, communication stream per device) is expressed as
// dependencies, so the engine needs no notion of streams to be correct.
// Compact layout: 4-byte ids, dependencies in one CSR array, no per-task heap allocation.
// A task is stored in 20 bytes: its device, peer, group, stage and micro-batch, and the index
// of its signature (kind, classes, operation, label, duration, FLOPs, bytes, energy) in a
// table of the distinct signatures the graph holds, since the tasks of one layer's pass
// repeat the same signature over every micro-batch. The stored tasks live in
// blocks of 32,768, so a growing graph is never copied. `operator[]` and
// `tasks()` give each task back as a `Task` value, every field bit for bit as added.

#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
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
    std::shared_ptr<const std::vector<int>> siblings;  // shared by the groups of one shape (SiblingLists)
  };
  // `first`: the family's first member's offset from the group; `siblings`: the others'
  // offsets from the first (DeviceGroup::sibling_offsets of the first member).
  void set_group_family(std::uint32_t group, int first, std::shared_ptr<const std::vector<int>> siblings);
  // Null: the group has no family (it is alone, or the lowering did not say).
  [[nodiscard]] const GroupFamily* group_family(std::uint32_t group) const {
    return group < families_.size() && families_[group].siblings && !families_[group].siblings->empty()
               ? &families_[group]
               : nullptr;
  }
  std::uint32_t intern_label(const std::string& label);
  // Gives back what the dependency and mirror lists reserved beyond their size (up to half of
  // them, as vectors grow by doubling), and the signatures' look-up table: for a graph that is
  // complete (a lowered step), before it is simulated. Adding to it afterwards still works.
  void shrink_to_fit();

  [[nodiscard]] std::size_t size() const { return size_; }
  // The task as added (a value: the graph stores it packed).
  [[nodiscard]] Task operator[](TaskId id) const { return unpack(packed(id)); }
  // Every task in id order, each a value as operator[] gives it.
  class TaskRange {
   public:
    class iterator {
     public:
      using iterator_category = std::input_iterator_tag;
      using value_type = Task;
      using difference_type = std::ptrdiff_t;
      iterator(const TaskGraph* g, TaskId id) : g_(g), id_(id) {}
      Task operator*() const { return (*g_)[id_]; }
      iterator& operator++() {
        ++id_;
        return *this;
      }
      bool operator==(const iterator& o) const { return id_ == o.id_; }

     private:
      const TaskGraph* g_;
      TaskId id_;
    };
    explicit TaskRange(const TaskGraph* g) : g_(g) {}
    [[nodiscard]] iterator begin() const { return {g_, 0}; }
    [[nodiscard]] iterator end() const { return {g_, static_cast<TaskId>(g_->size())}; }

   private:
    const TaskGraph* g_;
  };
  [[nodiscard]] TaskRange tasks() const { return TaskRange(this); }
  // Distinct signatures the graph holds (tasks share them; see the storage note above).
  [[nodiscard]] std::size_t signature_count() const { return signatures_.size(); }
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
  // A task as stored: its devices, group and place in the pipeline, and the index of its
  // signature (kind, class, phase, stream, operation, label and cost), which the tasks of one
  // operation share over every micro-batch.
  struct Packed {
    std::uint32_t device, peer, group, signature;
    std::uint16_t stage, microbatch;
  };
  static_assert(sizeof(Packed) == 20);
  struct Signature {  // compared and hashed as bytes: every byte is set (intern_signature)
    Seconds duration;
    Flops flops, model_flops;
    Bytes bytes;
    Joules energy;
    std::uint32_t label;
    TaskKind kind;
    CommClass comm;
    Phase phase;
    Stream stream;
    CollectiveOp op;
    std::uint8_t zero[3];
  };
  static_assert(sizeof(Signature) == 56);
  struct SignatureHash {
    std::size_t operator()(const Signature& s) const;
  };
  struct SignatureEqual {
    bool operator()(const Signature& a, const Signature& b) const {
      return std::memcmp(&a, &b, sizeof(Signature)) == 0;
    }
  };
  static constexpr unsigned kBlockBits = 15;  // 32,768 tasks (640 KiB) a block
  [[nodiscard]] const Packed& packed(TaskId id) const {
    return blocks_[id >> kBlockBits][id & ((1u << kBlockBits) - 1)];
  }
  [[nodiscard]] Task unpack(const Packed& p) const {
    const Signature& c = signatures_[p.signature];
    Task t;
    t.kind = c.kind;
    t.comm = c.comm;
    t.phase = c.phase;
    t.stream = c.stream;
    t.op = c.op;
    t.device = p.device;
    t.peer = p.peer;
    t.group = p.group;
    t.stage = p.stage;
    t.microbatch = p.microbatch;
    t.label = c.label;
    t.duration = c.duration;
    t.flops = c.flops;
    t.model_flops = c.model_flops;
    t.bytes = c.bytes;
    t.energy = c.energy;
    return t;
  }
  std::uint32_t intern_signature(const Task& t);

  // Each block reserved whole when started, so growing never copies the graph (only a last
  // block trimmed by shrink_to_fit() moves, alone, when added to).
  std::vector<std::vector<Packed>> blocks_;
  std::size_t size_ = 0;
  std::vector<Signature> signatures_;
  std::unordered_map<Signature, std::uint32_t, SignatureHash, SignatureEqual> signature_index_;
  std::vector<std::uint32_t> dep_begin_{0};
  std::vector<TaskId> deps_;
  std::vector<std::vector<std::uint32_t>> groups_;
  std::vector<GroupFamily> families_;  // by group; may be shorter than groups_
  std::vector<std::string> labels_;
  std::vector<MirrorSet> mirror_sets_;
  std::vector<Mirror> mirrors_;
};

}  // namespace hcsim
