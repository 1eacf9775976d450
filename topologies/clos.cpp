#include "topologies/clos.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace hcsim {

int clos_down_ports(int radix, double oversubscription) {
  return std::clamp(static_cast<int>(std::floor(radix * oversubscription / (1.0 + oversubscription))), 1, radix - 1);
}

ClosSummary clos_shape(const std::vector<int>& group_sizes, const ClosOptions& o) {
  HCSIM_ASSERT(o.radix >= 2 && o.oversubscription >= 1.0, "Clos sizing out of range");
  ClosSummary s;
  s.down = clos_down_ports(o.radix, o.oversubscription);
  s.up = o.radix - s.down;
  for (int n : group_sizes) s.leaves += (n + s.down - 1) / s.down;
  if (s.leaves <= 1) return s;
  s.spines = s.up;
  s.logical_spines = s.leaves > o.radix;
  return s;
}

ClosSummary add_two_tier_clos(TopologyGraph& g, const std::vector<ClosEndpoint>& endpoints, const ClosOptions& o) {
  std::map<int, std::vector<int>> by_group;  // ordered: deterministic leaf numbering
  for (const auto& e : endpoints) by_group[e.group].push_back(e.node);
  std::vector<int> sizes;
  for (const auto& [group, nodes] : by_group) sizes.push_back(static_cast<int>(nodes.size()));
  const ClosSummary s = clos_shape(sizes, o);
  const bool rails = by_group.size() > 1;
  const std::string cls_end = link_class_of(o.endpoint_link, "scale-out");
  const std::string cls_sw = link_class_of(o.switch_link, "scale-out");
  std::vector<int> leaves;
  for (const auto& [group, nodes] : by_group) {
    const int n_leaves = (static_cast<int>(nodes.size()) + s.down - 1) / s.down;
    const int first = static_cast<int>(leaves.size());
    for (int l = 0; l < n_leaves; ++l) {
      std::string name = o.prefix + (rails ? "rail" + std::to_string(group) + "/" : "") + "leaf" + std::to_string(l);
      leaves.push_back(g.add_switch(std::move(name), o.in_switch_reduction));
    }
    const EdgeKind& to_leaf = g.edge_kind(o.endpoint_link, 1, cls_end);  // a group has nodes
    for (std::size_t j = 0; j < nodes.size(); ++j) {
      g.add_edge(nodes[j], leaves[static_cast<std::size_t>(first) + j / static_cast<std::size_t>(s.down)], to_leaf);
      g.set_host_index(nodes[j], static_cast<int>(j));  // the plane's hosts, leaf by leaf in port order
    }
  }
  HCSIM_ASSERT(static_cast<int>(leaves.size()) == s.leaves, "Clos leaves as counted");
  for (int sp = 0; sp < s.spines; ++sp) {
    const int spine = g.add_switch(o.prefix + "spine" + std::to_string(sp), o.in_switch_reduction);
    const EdgeKind* up = leaves.empty() ? nullptr : &g.edge_kind(o.switch_link, 1, cls_sw);
    for (int leaf : leaves) g.add_edge(leaf, spine, *up);
  }
  return s;
}

}  // namespace hcsim
