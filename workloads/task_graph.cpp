#include "task_graph.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace hcsim {

std::string_view comm_class_name(CommClass c) {
  switch (c) {
    case CommClass::none: return "none";
    case CommClass::tp: return "tp";
    case CommClass::sp: return "sp";
    case CommClass::pp: return "pp";
    case CommClass::dp: return "dp";
    case CommClass::zero: return "zero";
    case CommClass::offload: return "offload";
    case CommClass::cp: return "cp";
    case CommClass::ep: return "ep";
  }
  return "?";
}

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::recompute: return "recompute";
    case Phase::optimizer: return "optimizer";
    case Phase::other: return "other";
  }
  return "?";
}

std::uint32_t TaskGraph::part_of(TaskId t) const {
  const auto it = std::upper_bound(part_begin.begin(), part_begin.end(), t);
  return it == part_begin.begin() ? 0 : static_cast<std::uint32_t>(it - part_begin.begin() - 1);
}

std::uint32_t TaskGraph::add_mirror_set(std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs) {
  MirrorSet m;
  m.copies = static_cast<double>(pairs.size());
  m.pairs = std::move(pairs);
  mirror_sets_.push_back(std::move(m));
  return static_cast<std::uint32_t>(mirror_sets_.size() - 1);
}

std::uint32_t TaskGraph::add_group_mirror_set(std::vector<std::uint32_t> groups) {
  MirrorSet m;
  for (std::uint32_t gr : groups) {
    HCSIM_ASSERT(gr < groups_.size(), "a mirror set names a group that does not exist");
    m.copies += static_cast<double>(groups_[gr].size());
  }
  m.groups = std::move(groups);
  mirror_sets_.push_back(std::move(m));
  return static_cast<std::uint32_t>(mirror_sets_.size() - 1);
}

void TaskGraph::add_mirror(TaskId task, std::uint32_t set) {
  HCSIM_ASSERT(task < tasks_.size() && set < mirror_sets_.size(), "a mirror names a task or set that does not exist");
  const MirrorSet& m = mirror_sets_[set];
  HCSIM_ASSERT(tasks_[task].kind == (m.groups.empty() ? TaskKind::send : TaskKind::collective) || m.copies == 0,
               "a send mirrors device pairs and a collective mirrors groups");
  if (m.copies > 0) mirrors_.push_back({task, set});
}

TaskId TaskGraph::add(const Task& t, std::span<const TaskId> deps) {
  const auto id = static_cast<TaskId>(tasks_.size());
  for (TaskId d : deps) HCSIM_ASSERT(d < id, "a task may only depend on tasks added before it");
  tasks_.push_back(t);
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  dep_begin_.push_back(static_cast<std::uint32_t>(deps_.size()));
  return id;
}

std::uint32_t TaskGraph::add_group(std::vector<std::uint32_t> devices) {
  groups_.push_back(std::move(devices));
  return static_cast<std::uint32_t>(groups_.size() - 1);
}

void TaskGraph::set_group_family(std::uint32_t group, int first, std::vector<int> siblings) {
  HCSIM_ASSERT(group < groups_.size(), "a family for an unknown group");
  if (families_.size() <= group) families_.resize(groups_.size());
  families_[group] = {first, std::move(siblings)};
}

std::uint32_t TaskGraph::intern_label(const std::string& label) {
  for (std::size_t i = labels_.size(); i-- > 0;)
    if (labels_[i] == label) return static_cast<std::uint32_t>(i);
  labels_.push_back(label);
  return static_cast<std::uint32_t>(labels_.size() - 1);
}

}  // namespace hcsim
