#include "topologies/routing.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include <fmt/format.h>

namespace hcsim {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::span<const std::pair<int, int>> Router::links_between(int a, int b) const {
  auto la = adj_[static_cast<std::size_t>(a)], lb = adj_[static_cast<std::size_t>(b)];
  if (lb.size() < la.size()) {  // the shorter list: a spine's holds every leaf
    std::swap(la, lb);
    std::swap(a, b);
  }
  const auto first = std::lower_bound(la.begin(), la.end(), std::pair<int, int>{b, -1});
  auto last = first;
  while (last != la.end() && last->first == b) ++last;
  return {first, last};
}

void Router::star_route(int src, int dst, int center, Route& r) const {
  walk_nodes_.assign({src, center, dst});
  walk_edges_.assign({star_edge_[static_cast<std::size_t>(src)], star_edge_[static_cast<std::size_t>(dst)]});
  r.reachable = true;
  r.nodes = keep(walk_nodes_);
  r.edges = keep(walk_edges_);
  sum_links(r);
}

void Router::sum_links(Route& r) const {
  if (no_sums_) return;
  for (std::size_t i = 0; i < r.edges.size(); ++i) {
    const auto& ed = g_.edges()[static_cast<std::size_t>(r.edges[i])];
    r.latency += ed.link().latency;
    const BytesPerSecond bw = ed.effective_bandwidth();
    r.bottleneck = i == 0 ? bw : min(r.bottleneck, bw);
  }
}

const Router::Search& Router::settle(int dst, int src) const {
  auto it = searches_.find(dst);
  if (it == searches_.end()) {
    if (searches_.size() >= max_searches_) {
      searches_.erase(search_order_.front());
      search_order_.erase(search_order_.begin());
    }
    Search s{std::vector<std::int64_t>(g_.nodes().size(), -1), std::vector<char>(g_.nodes().size(), 0), {{0, dst}}};
    s.dist[static_cast<std::size_t>(dst)] = 0;
    it = searches_.emplace(dst, std::move(s)).first;
    search_order_.push_back(dst);
  }
  Search& s = it->second;
  const auto later = std::greater<std::pair<std::int64_t, int>>();
  while (!s.settled[static_cast<std::size_t>(src)] && !s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), later);
    const auto [d, u] = s.heap.back();
    s.heap.pop_back();
    if (s.settled[static_cast<std::size_t>(u)]) continue;
    s.settled[static_cast<std::size_t>(u)] = 1;
    // A path v -> u -> ... -> dst uses u as transit: allowed unless u is a non-forwarding device.
    if (u != dst && !transit(u)) continue;
    for (std::size_t i = adj_.first[static_cast<std::size_t>(u)]; i < adj_.first[static_cast<std::size_t>(u) + 1];
         ++i) {
      const int v = adj_.items[i].first;
      const std::int64_t nd = d + item_weight(i);
      auto& dv = s.dist[static_cast<std::size_t>(v)];
      if (!s.settled[static_cast<std::size_t>(v)] && (dv < 0 || nd < dv)) {
        dv = nd;
        s.heap.emplace_back(nd, v);
        std::push_heap(s.heap.begin(), s.heap.end(), later);
      }
    }
  }
  return s;
}

void Router::trim_tables() const {
  while (!table_order_.empty() && table_entries_ > max_table_entries_) {
    auto old = tables_.find(table_order_.front());
    table_entries_ -= old->second.size();
    tables_.erase(old);
    table_order_.pop_front();
  }
}

const std::vector<std::int64_t>& Router::transit_table(int b) const {
  if (auto it = tables_.find(b); it != tables_.end()) return it->second;
  const int c = component_[static_cast<std::size_t>(b)];
  const auto size = static_cast<std::size_t>(component_size_[static_cast<std::size_t>(c)]);
  std::vector<std::int64_t> dist(size, kUnreached);
  std::vector<char> done(size, 0);
  std::vector<std::pair<std::int64_t, int>> heap{{0, b}};
  const auto later = std::greater<std::pair<std::int64_t, int>>();
  dist[static_cast<std::size_t>(local_[static_cast<std::size_t>(b)])] = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto [d, u] = heap.back();
    heap.pop_back();
    auto& du = done[static_cast<std::size_t>(local_[static_cast<std::size_t>(u)])];
    if (du) continue;
    du = 1;
    for (std::size_t i = adj_.first[static_cast<std::size_t>(u)]; i < adj_.first[static_cast<std::size_t>(u) + 1];
         ++i) {
      const int v = adj_.items[i].first;
      if (!transit(v) || parent_[static_cast<std::size_t>(v)] >= 0) continue;  // core nodes only
      const auto lv = static_cast<std::size_t>(local_[static_cast<std::size_t>(v)]);
      const std::int64_t nd = d + item_weight(i);
      if (!done[lv] && (dist[lv] == kUnreached || nd < dist[lv])) {
        dist[lv] = nd;
        heap.emplace_back(nd, v);
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
  }
  table_entries_ += size;
  table_order_.push_back(b);
  return tables_.emplace(b, std::move(dist)).first->second;
}

const Router::Target& Router::target_of(int dst) const {
  Target& t = target_;
  t.dst = dst;
  t.entries.clear();
  auto add = [&](int b, std::int64_t w) {
    const int q = parent_[static_cast<std::size_t>(b)];
    const int via = q >= 0 ? b : -1;
    const std::int64_t weight = q >= 0 ? parent_weight_[static_cast<std::size_t>(b)] + w : w;
    const int core = q >= 0 ? q : b;
    const int c = component_[static_cast<std::size_t>(b)];
    const std::int64_t* table =
        bipartite_weight_[static_cast<std::size_t>(c)] == kUnreached ? transit_table(core).data() : nullptr;
    for (auto& en : t.entries)
      if (en.core == core && en.via == via) {
        en.weight = std::min(en.weight, weight);
        en.via_weight = std::min(en.via_weight, w);
        return;
      }
    t.entries.push_back({c, core, table, weight, via, w});
  };
  if (transit(dst)) add(dst, 0);
  else
    for (const auto& [b, e] : adj_[static_cast<std::size_t>(dst)])
      if (transit(b)) add(b, weight(e));
  return t;
}

std::int64_t Router::to_dst(int node, const Target& t) const {
  if (node == t.dst) return 0;
  std::int64_t best = kUnreached;
  auto better = [&](std::int64_t d) {
    if (d != kUnreached && (best == kUnreached || d < best)) best = d;
  };
  if (!transit(node)) {
    // A device starts its path: first hop to dst itself or to a transit neighbour.
    for (const auto& [v, e] : adj_[static_cast<std::size_t>(node)]) {
      if (v != t.dst && !transit(v)) continue;
      const std::int64_t dv = to_dst(v, t);
      if (dv != kUnreached) better(dv + weight(e));
    }
    return best;
  }
  const int c = component_[static_cast<std::size_t>(node)];
  // A pendant node reads its parent's row, one edge further.
  const int q = parent_[static_cast<std::size_t>(node)];
  const std::int64_t up = q >= 0 ? parent_weight_[static_cast<std::size_t>(node)] : 0;
  const int from = q >= 0 ? q : node;
  for (const Entry& en : t.entries) {
    if (en.component != c) continue;
    if (en.via == node) {
      better(en.via_weight);
      continue;
    }
    const std::int64_t d = core_distance(from, en.core, en.table);
    if (d != kUnreached) better(d + up + en.weight);
  }
  return best;
}

bool Router::target_hops(int cur, std::int64_t dcur, const Target& t, std::vector<int>& hops) const {
  if (!transit(cur) || parent_[static_cast<std::size_t>(cur)] >= 0) return false;
  const int c = component_[static_cast<std::size_t>(cur)];
  const std::int64_t w = bipartite_weight_[static_cast<std::size_t>(c)];
  if (w == kUnreached) return false;
  // A core neighbour v that is not one of t's core nodes is at least w from each of them,
  // so dist(v) >= w + the least entry weight, and it is a next hop (over an edge of weight w)
  // only when dcur >= 2 w + that weight. Pendant neighbours other than t's vias lead back
  // through cur; devices other than dst end paths.
  std::int64_t least = kUnreached;
  hops.assign(1, t.dst);
  for (const Entry& en : t.entries) {
    if (en.component != c) continue;
    if (least == kUnreached || en.weight < least) least = en.weight;
    hops.push_back(en.core);
    if (en.via >= 0) hops.push_back(en.via);
  }
  if (least != kUnreached && dcur >= 2 * w + least) return false;
  std::sort(hops.begin(), hops.end());
  hops.erase(std::unique(hops.begin(), hops.end()), hops.end());
  return true;
}

std::int64_t Router::shared_distance(int cur, const Target& t) const {
  const int c = component_[static_cast<std::size_t>(cur)];
  const std::int64_t w = bipartite_weight_[static_cast<std::size_t>(c)];
  const auto side = static_cast<signed char>(1 - side_[static_cast<std::size_t>(cur)]);
  std::int64_t shared = kUnreached;
  for (const Entry& en : t.entries) {
    if (en.component != c) continue;
    const std::int64_t d = (side_[static_cast<std::size_t>(en.core)] != side ? w : 2 * w) + en.weight;
    if (shared == kUnreached || d < shared) shared = d;
  }
  return shared;
}

bool Router::closed_run(int cur, const std::vector<int>& hops) const {
  // target_hops() returned false past its closed-form test, so `hops` lists t's nodes (dst,
  // the entries' cores and vias): any of them next to cur may be a next hop of its own.
  for (int v : hops)
    if (v != cur && !links_between(cur, v).empty()) return false;
  return true;
}

template <class Dist>
void Router::walk(int src, int dst, const Dist& dist, Route& r, const Target* t) const {
  r.reachable = true;
  // Built in reused buffers, then copied into the router's blocks (keep).
  std::vector<int>& nodes = walk_nodes_;
  std::vector<int>& edges = walk_edges_;
  nodes.assign(1, src);
  edges.clear();
  const std::uint64_t h = mix((static_cast<std::uint64_t>(src) << 32) ^ static_cast<std::uint64_t>(dst));
  int cur = src, step = 0;
  std::int64_t dcur = dist(src);
  std::vector<std::pair<int, int>>& next = walk_next_;
  std::vector<std::int64_t>& next_dist = walk_next_dist_;
  while (cur != dst) {
    next.clear();
    next_dist.clear();
    const auto consider = [&](int v, int e) {
      if (v != dst && !transit(v)) return;
      const std::int64_t dv = dist(v);
      if (dv != kUnreached && dv + weight(e) == dcur) {
        next.emplace_back(v, e);
        next_dist.push_back(dv);
      }
    };
    if (t && target_hops(cur, dcur, *t, walk_hops_)) {
      // The same candidates in the same (neighbour, edge) order as the whole scan.
      for (int v : walk_hops_)
        for (const auto& link : links_between(cur, v)) consider(v, link.second);
    } else if (const auto [first, last] = core_run_[static_cast<std::size_t>(cur)];
               t != nullptr && first < last && closed_run(cur, walk_hops_)) {
      // A core node of a closed-form component whose neighbours include none of t's nodes:
      // the next hops are its core neighbours (the other side, all at the same distance and
      // over edges of the same weight), the items [first, last), or none.
      const std::int64_t d = shared_distance(cur, *t);
      if (d + kind_weight_[adj_.hop[first] >> 2] == dcur)
        for (std::size_t i = first; i < last; ++i) {
          next.push_back(adj_.items[i]);
          next_dist.push_back(d);
        }
    } else {
      // The whole list, each item's weight and its neighbour's kind read beside it.
      const std::size_t end = adj_.first[static_cast<std::size_t>(cur) + 1];
      for (std::size_t i = adj_.first[static_cast<std::size_t>(cur)]; i < end; ++i) {
        const auto [v, e] = adj_.items[i];
        const std::uint32_t hop = adj_.hop[i];
        if (v != dst && (hop & 1) == 0) continue;
        const std::int64_t dv = dist(v);
        if (dv != kUnreached && dv + kind_weight_[hop >> 2] == dcur) {
          next.emplace_back(v, e);
          next_dist.push_back(dv);
        }
      }
    }
    HCSIM_ASSERT(!next.empty(), "shortest-path table inconsistent");
    const std::size_t k = g_.destination_routing
                              ? static_cast<std::size_t>(g_.host_index(dst)) % next.size()
                              : static_cast<std::size_t>(mix(h + static_cast<std::uint64_t>(step++)) % next.size());
    edges.push_back(next[k].second);
    nodes.push_back(next[k].first);
    cur = next[k].first;
    dcur = next_dist[k];
  }
  r.nodes = keep(nodes);
  r.edges = keep(edges);
  sum_links(r);
}

int Router::restricting_domain(int src, int dst) const {
  const int d = g_.nodes()[static_cast<std::size_t>(src)].scale_up_domain;
  if (d < 0 || d != g_.nodes()[static_cast<std::size_t>(dst)].scale_up_domain) return -1;
  return domain_nodes(static_cast<std::size_t>(d)).size() == g_.nodes().size() ? -1 : d;
}

void Router::domain_route(int src, int dst, int domain, Route& r) const {
  // A star (one switch, each member device joined to it by one link and to no other member):
  // the one path inside the domain, as the search below would find it.
  if (const int center = star_center_[static_cast<std::size_t>(domain)];
      center >= 0 && src != center && dst != center && src != dst) {
    star_route(src, dst, center, r);
    return;
  }
  const std::span<const int> members = domain_nodes(static_cast<std::size_t>(domain));
  const auto local = [&](int v) { return static_cast<std::size_t>(domain_local_[static_cast<std::size_t>(v)]); };
  std::vector<std::int64_t>& dist = domain_dist_;
  std::vector<char>& done = domain_done_;
  std::vector<std::pair<std::int64_t, int>>& heap = domain_heap_;
  dist.assign(members.size(), kUnreached);
  done.assign(members.size(), 0);
  heap.assign(1, {0, dst});
  const auto later = std::greater<std::pair<std::int64_t, int>>();
  dist[local(dst)] = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto [d, u] = heap.back();
    heap.pop_back();
    if (done[local(u)]) continue;
    done[local(u)] = 1;
    if (u != dst && !transit(u)) continue;  // a non-forwarding device ends paths, as in settle()
    for (std::size_t i = adj_.first[static_cast<std::size_t>(u)]; i < adj_.first[static_cast<std::size_t>(u) + 1];
         ++i) {
      const int v = adj_.items[i].first;
      if (g_.nodes()[static_cast<std::size_t>(v)].scale_up_domain != domain) continue;
      const std::int64_t nd = d + item_weight(i);
      auto& dv = dist[local(v)];
      if (!done[local(v)] && (dv == kUnreached || nd < dv)) {
        dv = nd;
        heap.emplace_back(nd, v);
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
  }
  if (dist[local(src)] == kUnreached) return;
  walk(src, dst, [&](int v) {
    return g_.nodes()[static_cast<std::size_t>(v)].scale_up_domain == domain ? dist[local(v)] : kUnreached;
  }, r);
}

void Router::check_scale_up(int src, int dst, const Route& r) const {
  const auto& nodes = g_.nodes();
  const int d = nodes[static_cast<std::size_t>(src)].scale_up_domain;
  if (d < 0 || d != nodes[static_cast<std::size_t>(dst)].scale_up_domain) return;
  HCSIM_ASSERT(r.reachable,
               fmt::format("scale-up domain {} does not connect {} and {}", d, g_.node_name(src), g_.node_name(dst)));
  for (int v : r.nodes)
    HCSIM_ASSERT(nodes[static_cast<std::size_t>(v)].scale_up_domain == d,
                 fmt::format("route {} -> {} leaves scale-up domain {} at {}", g_.node_name(src), g_.node_name(dst), d,
                             g_.node_name(v)));
}

std::uint64_t Router::route_key(int src, int dst) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) | static_cast<std::uint32_t>(dst);
}

std::size_t Router::find_route(std::uint64_t key) const {
  const std::uint32_t* index = route_index_.find(key);
  return index ? *index : kNoRoute;
}

std::span<const int> Router::keep(const std::vector<int>& v) const {
  if (v.empty()) return {};
  if (passing_) return {v.data(), v.size()};
  if (v.size() > kBlockInts - block_used_) {
    blocks_.push_back(std::make_unique_for_overwrite<int[]>(std::max(kBlockInts, v.size())));
    block_used_ = 0;
  }
  int* out = blocks_.back().get() + block_used_;
  std::copy(v.begin(), v.end(), out);
  block_used_ += v.size();
  return {out, v.size()};
}

const Route& Router::add_route(std::uint64_t key, Route r) const {
  route_index_.insert(key, static_cast<std::uint32_t>(routes_.size()));
  routes_.push_back(std::move(r));
  return routes_.back();
}

void Router::find(int src, int dst, Route& r) const {
  if (const int domain = restricting_domain(src, dst); domain >= 0) {
    domain_route(src, dst, domain, r);
  } else if (whole_graph_) {
    // Every node nearer to dst than src is settled once src is, so next hops read final
    // distances (a node not settled is not nearer than src, so never a next hop).
    const Search& s = settle(dst, src);
    const auto dist = [&](int v) {
      const auto i = static_cast<std::size_t>(v);
      return s.settled[i] ? s.dist[i] : kUnreached;
    };
    if (s.settled[static_cast<std::size_t>(src)]) walk(src, dst, dist, r);
  } else {
    trim_tables();
    const Target& t = target_of(dst);
    if (to_dst(src, t) != kUnreached)
      walk(
          src, dst, [&](int v) { return to_dst(v, t); }, r, &t);
  }
  check_scale_up(src, dst, r);
}

const Route& Router::route(int src, int dst) const { return routes_[kept_route(src, dst)]; }

std::size_t Router::kept_route(int src, int dst) const {
  const std::uint64_t key = route_key(src, dst);
  if (const std::size_t hit = find_route(key); hit != kNoRoute) return hit;
  Route r;
  find(src, dst, r);
  add_route(key, std::move(r));
  return routes_.size() - 1;
}

const Route& Router::passing_device_route(int src_device, int dst_device, bool sums) const {
  const int src = g_.device_node(src_device), dst = g_.device_node(dst_device);
  const std::uint64_t key = route_key(src, dst);
  if (const std::size_t hit = find_route(key); hit != kNoRoute) return routes_[hit];
  passing_route_ = Route{};
  passing_ = true;
  no_sums_ = !sums;
  try {
    find(src, dst, passing_route_);
  } catch (...) {
    passing_ = no_sums_ = false;
    throw;
  }
  passing_ = no_sums_ = false;
  return passing_route_;
}

const Route& Router::device_route(int src_device, int dst_device) const {
  return route(g_.device_node(src_device), g_.device_node(dst_device));
}

}  // namespace hcsim
