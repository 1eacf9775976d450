#include "workloads/task_graph_merge.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace hcsim {

namespace {

// The translation every device of the map shares, or none.
bool is_translation(std::span<const std::uint32_t> devices) {
  for (std::size_t d = 1; d < devices.size(); ++d)
    if (static_cast<std::int64_t>(devices[d]) - static_cast<std::int64_t>(d) != static_cast<std::int64_t>(devices[0]))
      return false;
  return true;
}

void append(const PlacedGraph& p, std::uint32_t cluster_devices, TaskGraph& out) {
  const TaskGraph& g = *p.graph;
  HCSIM_ASSERT(g.memory_endpoints == 0, "a graph with memory endpoints cannot be placed on a shared cluster");
  HCSIM_ASSERT(p.devices.size() >= g.devices, "a placement with fewer devices than its graph");
  auto at = [&](std::uint32_t d) {
    HCSIM_ASSERT(d < g.devices && p.devices[d] < cluster_devices, "a device outside its placement");
    return p.devices[d];
  };
  const auto task_base = static_cast<TaskId>(out.size());
  const auto group_base = static_cast<std::uint32_t>(out.groups().size());
  for (const auto& grp : g.groups()) {
    std::vector<std::uint32_t> mapped;
    mapped.reserve(grp.size());
    for (std::uint32_t d : grp) mapped.push_back(at(d));
    out.add_group(std::move(mapped));
  }
  if (is_translation(p.devices.first(g.devices)))
    for (std::uint32_t gr = 0; gr < g.groups().size(); ++gr)
      if (const auto* fam = g.group_family(gr)) out.set_group_family(group_base + gr, fam->first, fam->siblings);
  std::vector<std::uint32_t> label;
  label.reserve(g.labels().size());
  for (const auto& l : g.labels()) label.push_back(out.intern_label(l));
  std::vector<TaskId> deps;
  for (TaskId t = 0; t < g.size(); ++t) {
    Task task = g[t];
    switch (task.kind) {
      case TaskKind::compute:
        task.device = at(task.device);
        break;
      case TaskKind::send:
        task.device = at(task.device);
        task.peer = at(task.peer);
        break;
      case TaskKind::collective:
        task.group += group_base;
        break;
    }
    if (task.label < label.size()) task.label = label[task.label];
    deps.clear();
    for (TaskId d : g.deps(t)) deps.push_back(task_base + d);
    out.add(task, deps);
  }
  const auto set_base = static_cast<std::uint32_t>(out.mirror_sets().size());
  for (const auto& m : g.mirror_sets()) {
    if (m.groups.empty()) {
      std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
      pairs.reserve(m.pairs.size());
      for (auto [a, b] : m.pairs) pairs.emplace_back(at(a), at(b));
      out.add_mirror_set(std::move(pairs));
    } else {
      std::vector<std::uint32_t> groups;
      groups.reserve(m.groups.size());
      for (std::uint32_t gr : m.groups) groups.push_back(group_base + gr);
      out.add_group_mirror_set(std::move(groups));
    }
  }
  for (const auto& m : g.mirrors()) out.add_mirror(task_base + m.task, set_base + m.set);
}

}  // namespace

MergedGraph merge_task_graphs(std::span<const PlacedGraph> parts, std::uint32_t cluster_devices) {
  MergedGraph m;
  m.graph.devices = cluster_devices;
  for (const auto& p : parts) {
    m.first_task.push_back(static_cast<TaskId>(m.graph.size()));
    append(p, cluster_devices, m.graph);
  }
  m.first_task.push_back(static_cast<TaskId>(m.graph.size()));
  if (parts.size() > 1) m.graph.part_begin.assign(m.first_task.begin(), m.first_task.end() - 1);
  return m;
}

}  // namespace hcsim
