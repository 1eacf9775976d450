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
  HCSIM_ASSERT(task < size_ && set < mirror_sets_.size(), "a mirror names a task or set that does not exist");
  const MirrorSet& m = mirror_sets_[set];
  HCSIM_ASSERT(signatures_[packed(task).signature].kind == (m.groups.empty() ? TaskKind::send : TaskKind::collective) ||
                   m.copies == 0,
               "a send mirrors device pairs and a collective mirrors groups");
  if (m.copies > 0) mirrors_.push_back({task, set});
}

std::size_t TaskGraph::SignatureHash::operator()(const Signature& s) const {
  std::uint64_t w[sizeof(Signature) / 8];
  static_assert(sizeof w == sizeof(Signature));
  std::memcpy(w, &s, sizeof w);
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (std::uint64_t x : w) {
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
  }
  return static_cast<std::size_t>(h ^ (h >> 33));
}

std::uint32_t TaskGraph::intern_signature(const Task& t) {
  if (signature_index_.empty() && !signatures_.empty())
    for (std::size_t i = 0; i < signatures_.size(); ++i)
      signature_index_.emplace(signatures_[i], static_cast<std::uint32_t>(i));
  Signature s;
  std::memset(static_cast<void*>(&s), 0, sizeof s);  // the padding too: signatures compare as bytes
  s.duration = t.duration;
  s.flops = t.flops;
  s.model_flops = t.model_flops;
  s.bytes = t.bytes;
  s.energy = t.energy;
  s.label = t.label;
  s.kind = t.kind;
  s.comm = t.comm;
  s.phase = t.phase;
  s.stream = t.stream;
  s.op = t.op;
  const auto [it, added] = signature_index_.try_emplace(s, static_cast<std::uint32_t>(signatures_.size()));
  if (added) {
    HCSIM_ASSERT(signatures_.size() < std::uint64_t{1} << 32, "more distinct task signatures than 32-bit indices hold");
    signatures_.push_back(s);
  }
  return it->second;
}

TaskId TaskGraph::add(const Task& t, std::span<const TaskId> deps) {
  HCSIM_ASSERT(size_ < (std::uint64_t{1} << 32) - 1, "more tasks than 32-bit ids hold");
  const auto id = static_cast<TaskId>(size_);
  for (TaskId d : deps) HCSIM_ASSERT(d < id, "a task may only depend on tasks added before it");
  if ((size_ >> kBlockBits) == blocks_.size()) blocks_.emplace_back().reserve(std::size_t{1} << kBlockBits);
  blocks_.back().push_back(Packed{t.device, t.peer, t.group, intern_signature(t), t.stage, t.microbatch});
  ++size_;
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  dep_begin_.push_back(static_cast<std::uint32_t>(deps_.size()));
  return id;
}

std::uint32_t TaskGraph::add_group(std::vector<std::uint32_t> devices) {
  groups_.push_back(std::move(devices));
  return static_cast<std::uint32_t>(groups_.size() - 1);
}

void TaskGraph::set_group_family(std::uint32_t group, int first, std::shared_ptr<const std::vector<int>> siblings) {
  HCSIM_ASSERT(group < groups_.size(), "a family for an unknown group");
  if (families_.size() <= group) families_.resize(groups_.size());
  families_[group] = {first, std::move(siblings)};
}

void TaskGraph::shrink_to_fit() {
  deps_.shrink_to_fit();
  dep_begin_.shrink_to_fit();
  mirrors_.shrink_to_fit();
  if (!blocks_.empty()) blocks_.back().shrink_to_fit();
  signature_index_ = {};  // rebuilt on the next add
}

std::uint32_t TaskGraph::intern_label(const std::string& label) {
  for (std::size_t i = labels_.size(); i-- > 0;)
    if (labels_[i] == label) return static_cast<std::uint32_t>(i);
  labels_.push_back(label);
  return static_cast<std::uint32_t>(labels_.size() - 1);
}

}  // namespace hcsim
