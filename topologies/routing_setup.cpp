// The router's tables, built once per topology graph (routing.hpp): the adjacency, which
// nodes forward, the transit nodes' components and pendants, the components whose core is
// complete bipartite (distances in closed form), the scale-up domains that are stars, and
// each adjacency item's weight and kind beside it.
#include <algorithm>
#include <array>
#include <cmath>

#include "topologies/routing.hpp"

namespace hcsim {
namespace {

constexpr std::size_t kCacheBytes = std::size_t{128} << 20;

}  // namespace

Router::Router(const TopologyGraph& g, bool whole_graph_search)
    : g_(g), whole_graph_(whole_graph_search || g.devices_forward) {
  const std::size_t n = g.nodes().size();
  // Counted, placed in edge order, then each list sorted.
  adj_.first.assign(n + 1, 0);
  for (const auto& ed : g.edges()) {
    ++adj_.first[static_cast<std::size_t>(ed.a) + 1];
    ++adj_.first[static_cast<std::size_t>(ed.b) + 1];
  }
  for (std::size_t u = 0; u < n; ++u) adj_.first[u + 1] += adj_.first[u];
  adj_.items.resize(adj_.first[n]);
  {
    std::vector<std::uint32_t> next(adj_.first.begin(), adj_.first.end() - 1);
    for (std::size_t e = 0; e < g.edges().size(); ++e) {
      const auto& ed = g.edges()[e];
      adj_.items[next[static_cast<std::size_t>(ed.a)]++] = {ed.b, static_cast<int>(e)};
      adj_.items[next[static_cast<std::size_t>(ed.b)]++] = {ed.a, static_cast<int>(e)};
    }
  }
  kind_weight_.reserve(g.edge_kinds().size());
  for (const EdgeKind& k : g.edge_kinds())
    kind_weight_.push_back(static_cast<std::int64_t>(std::llround(k.spec.latency.value() * 1e12)) + 1);
  for (std::size_t u = 0; u < n; ++u) {  // many lists come in order (a builder adds a node's edges in turn)
    const auto from = adj_.items.begin() + static_cast<std::ptrdiff_t>(adj_.first[u]),
               to = adj_.items.begin() + static_cast<std::ptrdiff_t>(adj_.first[u + 1]);
    if (!std::is_sorted(from, to)) std::sort(from, to);
  }
  transit_.resize(n);
  for (std::size_t i = 0; i < n; ++i) transit_[i] = g.devices_forward || g.nodes()[i].kind != TopoNode::Kind::device;
  // The domains' node lists, counted then placed in node order.
  domain_local_.assign(n, -1);
  domain_first_.assign(1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const int d = g.nodes()[i].scale_up_domain;
    if (d < 0) continue;
    if (static_cast<std::size_t>(d) + 2 > domain_first_.size())
      domain_first_.resize(static_cast<std::size_t>(d) + 2, 0);
    domain_local_[i] = static_cast<int>(domain_first_[static_cast<std::size_t>(d) + 1]++);
  }
  for (std::size_t d = 1; d < domain_first_.size(); ++d) domain_first_[d] += domain_first_[d - 1];
  domain_members_.resize(domain_first_.back());
  for (std::size_t i = 0; i < n; ++i)
    if (const int d = g.nodes()[i].scale_up_domain; d >= 0)
      domain_members_[domain_first_[static_cast<std::size_t>(d)] + static_cast<std::size_t>(domain_local_[i])] =
          static_cast<int>(i);
  find_star_domains();
  check_edge_bands();
  edge_turns_.assign(g_.edge_bands.size(), {});
  const std::size_t per_search = 9 * std::max<std::size_t>(1, n);  // dist + settled flag
  max_searches_ = std::max<std::size_t>(64, kCacheBytes / per_search);
  if (whole_graph_) {
    set_hops();
    return;
  }
  // Connected components of the transit nodes alone (switches reach each other through
  // switches only), each node with its index inside its component.
  component_ = FilledArray<int, -1>(n);
  local_ = FilledArray<int, -1>(n);
  std::vector<int> stack;
  for (std::size_t s = 0; s < n; ++s) {
    if (!transit_[s] || component_[s] >= 0) continue;
    const int c = static_cast<int>(component_size_.size());
    component_size_.push_back(0);
    component_.set(s, c);
    stack.push_back(static_cast<int>(s));
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      for (const auto& [v, e] : adj_[static_cast<std::size_t>(u)])
        if (transit(v) && component_[static_cast<std::size_t>(v)] < 0) {
          component_.set(static_cast<std::size_t>(v), c);
          stack.push_back(v);
        }
    }
  }
  // Pendant transit nodes: exactly one distinct transit neighbour, itself with two or more
  // (so of two transit nodes joined only to each other neither is pendant).
  auto sole_transit_neighbour = [&](std::size_t u) {
    int q = -1;
    for (const auto& [v, e] : adj_[u]) {
      if (!transit(v) || v == static_cast<int>(u)) continue;
      if (q >= 0 && v != q) return -2;
      q = v;
    }
    return q;
  };
  parent_ = FilledArray<int, -1>(n);
  parent_weight_ = ZeroArray<std::int64_t>(n);
  for (std::size_t u = 0; u < n; ++u) {
    if (!transit_[u]) continue;
    const int q = sole_transit_neighbour(u);
    if (q < 0 || sole_transit_neighbour(static_cast<std::size_t>(q)) != -2) continue;
    parent_.set(u, q);
    std::int64_t w = -1;
    for (const auto& [v, e] : adj_[u])
      if (v == q && (w < 0 || weight(e) < w)) w = weight(e);
    parent_weight_[u] = w;
  }
  for (std::size_t u = 0; u < n; ++u)
    if (transit_[u] && parent_[u] < 0) local_.set(u, component_size_[static_cast<std::size_t>(component_[u])]++);
  max_table_entries_ = kCacheBytes / sizeof(std::int64_t);
  find_bipartite_cores();
  set_hops();
}

void Router::set_hops() {
  // Each edge's kind read once in edge order: the items name their edges out of order, and a
  // compact array of kinds stays in cache where the edge records do not.
  std::vector<std::uint32_t> kind(g_.edges().size());
  for (std::size_t e = 0; e < kind.size(); ++e) kind[e] = static_cast<std::uint32_t>(g_.edges()[e].kind->index);
  adj_.hop.resize(adj_.items.size());
  for (std::size_t i = 0; i < adj_.items.size(); ++i) {
    const auto v = static_cast<std::size_t>(adj_.items[i].first);
    const bool pendant = !parent_.empty() && parent_[v] >= 0;
    adj_.hop[i] =
        4 * kind[static_cast<std::size_t>(adj_.items[i].second)] + (transit_[v] ? 1U : 0U) + (pendant ? 2U : 0U);
  }
  // Core nodes of closed-form components: their core neighbours' items, when consecutive.
  core_run_ = ZeroArray<CoreRun>(adj_.size());
  if (whole_graph_) return;
  for (std::size_t u = 0; u < adj_.size(); ++u) {
    if (!closed_form(static_cast<int>(u)) || parent_[u] >= 0) continue;
    const std::size_t end = adj_.first[u + 1];
    const auto core = [&](std::size_t i) { return (adj_.hop[i] & 3) == 1; };  // transit, not pendant
    std::size_t first = adj_.first[u];
    while (first < end && !core(first)) ++first;
    std::size_t last = first;
    while (last < end && core(last)) ++last;
    bool one_run = first < last;
    for (std::size_t i = last; one_run && i < end; ++i) one_run = !core(i);
    if (one_run) core_run_[u] = {static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(last)};
  }
}

void Router::find_star_domains() {
  star_center_.assign(domain_first_.size() - 1, -1);
  star_edge_.assign(adj_.size(), -1);
  node_star_.assign(adj_.size(), -1);
  if (whole_graph_) return;  // the reference searches every domain (routing_tables_test.cpp)
  for (std::size_t d = 0; d + 1 < domain_first_.size(); ++d) {
    const std::span<const int> members = domain_nodes(d);
    int center = -1;
    for (int v : members) {
      if (!transit(v)) continue;
      if (center >= 0) {  // a second node that forwards: paths may differ
        center = -1;
        break;
      }
      center = v;
    }
    if (center < 0 || members.size() < 3) continue;
    bool star = true;
    for (int v : members) {
      if (v == center) continue;
      int edge = -1, inside = 0;
      for (const auto& [u, e] : adj_[static_cast<std::size_t>(v)])
        if (g_.nodes()[static_cast<std::size_t>(u)].scale_up_domain == static_cast<int>(d)) {
          ++inside;
          edge = u == center ? e : -1;
        }
      if (inside != 1 || edge < 0) {
        star = false;
        break;
      }
      star_edge_[static_cast<std::size_t>(v)] = edge;
    }
    if (!star) continue;
    star_center_[d] = center;
    // A domain that is the whole graph is not routed as a domain (restricting_domain).
    if (members.size() != adj_.size())
      for (int v : members) node_star_[static_cast<std::size_t>(v)] = static_cast<int>(d);
  }
}

void Router::find_bipartite_cores() {
  const std::size_t n = adj_.size();
  const std::size_t n_comp = component_size_.size();
  const auto core = [&](int v) {
    return transit_[static_cast<std::size_t>(v)] && parent_[static_cast<std::size_t>(v)] < 0;
  };
  // Two-colour each component's core from its first node; any edge inside a colour, or a
  // second weight, and the component keeps its tables.
  std::vector<char> ok(n_comp, 1);
  std::vector<std::int64_t> w(n_comp, kUnreached);
  std::vector<std::array<int, 2>> count(n_comp, {0, 0});
  side_ = FilledArray<signed char, -1>(n);
  std::vector<int> stack;
  for (std::size_t s = 0; s < n; ++s) {
    if (!core(static_cast<int>(s)) || side_[s] >= 0) continue;
    side_.set(s, 0);
    stack.push_back(static_cast<int>(s));
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      const auto c = static_cast<std::size_t>(component_[static_cast<std::size_t>(u)]);
      ++count[c][static_cast<std::size_t>(side_[static_cast<std::size_t>(u)])];
      for (const auto& [v, e] : adj_[static_cast<std::size_t>(u)]) {
        if (!core(v) || v == u) continue;
        const std::int64_t we = weight(e);
        if (w[c] == kUnreached) w[c] = we;
        if (we != w[c]) ok[c] = 0;
        const signed char sv = side_[static_cast<std::size_t>(v)];
        if (sv < 0) {
          side_.set(static_cast<std::size_t>(v), static_cast<signed char>(1 - side_[static_cast<std::size_t>(u)]));
          stack.push_back(v);
        } else if (sv == side_[static_cast<std::size_t>(u)]) {
          ok[c] = 0;
        }
      }
    }
  }
  // Complete: every core node meets every node of the other side (distinct neighbours).
  std::vector<char> seen(n, 0);
  std::vector<int> met;
  for (std::size_t u = 0; u < n; ++u) {
    if (!core(static_cast<int>(u))) continue;
    const auto c = static_cast<std::size_t>(component_[u]);
    if (!ok[c]) continue;
    met.clear();
    for (const auto& [v, e] : adj_[u])
      if (core(v) && v != static_cast<int>(u) && !seen[static_cast<std::size_t>(v)]) {
        seen[static_cast<std::size_t>(v)] = 1;
        met.push_back(v);
      }
    for (int v : met) seen[static_cast<std::size_t>(v)] = 0;
    if (static_cast<int>(met.size()) != count[c][static_cast<std::size_t>(1 - side_[u])]) ok[c] = 0;
  }
  bipartite_weight_.assign(n_comp, kUnreached);
  for (std::size_t c = 0; c < n_comp; ++c)
    if (ok[c]) bipartite_weight_[c] = w[c] == kUnreached ? 0 : w[c];
}

}  // namespace hcsim
