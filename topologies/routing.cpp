#include "topologies/routing.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace hcsim {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Router::Router(const TopologyGraph& g) : g_(g), adj_(g.nodes().size()) {
  for (std::size_t e = 0; e < g.edges().size(); ++e) {
    const auto& ed = g.edges()[e];
    adj_[static_cast<std::size_t>(ed.a)].emplace_back(ed.b, static_cast<int>(e));
    adj_[static_cast<std::size_t>(ed.b)].emplace_back(ed.a, static_cast<int>(e));
    weight_.push_back(static_cast<std::int64_t>(std::llround(ed.link.latency.value() * 1e12)) + 1);
  }
  for (auto& a : adj_) std::sort(a.begin(), a.end());
  const std::size_t per_search = 9 * std::max<std::size_t>(1, g.nodes().size());  // dist + settled flag
  max_searches_ = std::max<std::size_t>(64, (std::size_t{128} << 20) / per_search);
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
    const bool transit_ok = u == dst || g_.devices_forward ||
                            g_.nodes()[static_cast<std::size_t>(u)].kind != TopoNode::Kind::device;
    if (!transit_ok) continue;
    for (const auto& [v, e] : adj_[static_cast<std::size_t>(u)]) {
      const std::int64_t nd = d + weight_[static_cast<std::size_t>(e)];
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

const Route& Router::route(int src, int dst) const {
  auto key = std::make_pair(src, dst);
  if (auto it = routes_.find(key); it != routes_.end()) return it->second;
  Route r;
  // Every node nearer to dst than src is settled once src is, so next hops read final distances.
  const Search& search = settle(dst, src);
  const auto& dist = search.dist;
  if (search.settled[static_cast<std::size_t>(src)]) {
    r.reachable = true;
    r.nodes.push_back(src);
    const std::uint64_t h = mix((static_cast<std::uint64_t>(src) << 32) ^ static_cast<std::uint64_t>(dst));
    int cur = src, step = 0;
    while (cur != dst) {
      std::vector<std::pair<int, int>> next;
      for (const auto& [v, e] : adj_[static_cast<std::size_t>(cur)]) {
        const bool transit_ok = v == dst || g_.devices_forward ||
                                g_.nodes()[static_cast<std::size_t>(v)].kind != TopoNode::Kind::device;
        const auto dv = dist[static_cast<std::size_t>(v)];
        if (transit_ok && search.settled[static_cast<std::size_t>(v)] &&
            dv + weight_[static_cast<std::size_t>(e)] == dist[static_cast<std::size_t>(cur)])
          next.emplace_back(v, e);
      }
      HCSIM_ASSERT(!next.empty(), "shortest-path table inconsistent");
      const auto& [v, e] = next[static_cast<std::size_t>(mix(h + static_cast<std::uint64_t>(step++)) % next.size())];
      r.edges.push_back(e);
      r.nodes.push_back(v);
      cur = v;
    }
    for (std::size_t i = 0; i < r.edges.size(); ++i) {
      const auto& ed = g_.edges()[static_cast<std::size_t>(r.edges[i])];
      r.latency += ed.link.latency;
      const BytesPerSecond bw = ed.bandwidth() * ed.link.efficiency;
      r.bottleneck = i == 0 ? bw : min(r.bottleneck, bw);
    }
  }
  return routes_.emplace(key, std::move(r)).first->second;
}

const Route& Router::device_route(int src_device, int dst_device) const {
  return route(g_.device_node(src_device), g_.device_node(dst_device));
}

}  // namespace hcsim
