// The router's reads under the translation (routing.hpp, TopologyGraph::translation_bands):
// a pair m periods up read as its translate's route moved (translated), and the
// classes of translates the directed links fall into (link_class).
#include <algorithm>
#include <limits>

#include "topologies/routing.hpp"

namespace hcsim {

Router::Translated Router::translated(int src_device, int dst_device) const {
  const int period = g_.translation_period;
  if (period <= 0 || g_.translation_bands.empty()) return {};
  const int m = std::min(src_device, dst_device) / period;
  if (m == 0 || src_device == dst_device) return {};
  return {base_links(src_device - m * period, dst_device - m * period), m};
}

std::span<const Router::MovableLink> Router::base_links(int src_device, int dst_device) const {
  const std::uint64_t key = route_key(src_device, dst_device);
  if (const BaseSpan* s = base_spans_.find(key)) return {movable_links_.data() + s->first, s->count};
  // Devices are distinct nodes, so each base pair's route is decoded once.
  const Route& r = routes_[kept_route(g_.device_node(src_device), g_.device_node(dst_device))];
  HCSIM_ASSERT(movable_links_.size() + r.edges.size() < std::numeric_limits<std::uint32_t>::max(),
               "more links of base routes than 32 bits count");
  const auto first = static_cast<std::uint32_t>(movable_links_.size());
  for (std::size_t i = 0; i < r.edges.size(); ++i) {
    const int e = r.edges[i];
    movable_links_.push_back(
        {g_.edge_place(e), r.nodes[i], r.nodes[i + 1], e, r.nodes[i] != g_.edges()[static_cast<std::size_t>(e)].a});
  }
  base_spans_.insert(key, {first, static_cast<std::uint32_t>(r.edges.size())});
  return {movable_links_.data() + first, r.edges.size()};
}

std::size_t Router::moved_slot(int from, int to, int edge, std::int64_t periods) const {
  return moved_link({g_.edge_place(edge), from, to, edge, from != g_.edges()[static_cast<std::size_t>(edge)].a},
                    periods);
}

std::size_t Router::moved_off_band(const MovableLink& l, std::int64_t periods) const {
  // In a band the edge moves by arithmetic, its ends in step (check_edge_bands), the moved
  // edge crossed the same way (moved_link); elsewhere it is found between the moved nodes.
  const std::optional<std::size_t> s = find_moved_slot(l.from, l.to, l.edge, periods);
  HCSIM_ASSERT(s.has_value(), "a translated link's nodes are not joined as its translate's are");
  return *s;
}

std::optional<std::size_t> Router::find_moved_slot(int from, int to, int edge, std::int64_t periods) const {
  const int u = g_.translate_node(from, periods), v = g_.translate_node(to, periods);
  const auto there = links_between(u, v);
  std::size_t k = 0;  // the edge's place among parallel edges, the same on both sides
  if (there.size() != 1) {
    const auto here = links_between(from, to);
    while (k < here.size() && here[k].second != edge) ++k;
  }
  if (k >= there.size()) return std::nullopt;
  return directed(there[k].second, u);
}

void Router::check_edge_bands() const {
  // Without a period nothing is moved (translated, link_class), the edge bands unread.
  if (g_.edge_bands.empty() || g_.translation_period <= 0 || g_.translation_bands.empty()) return;
  // Each row's blocks at both ends, the first edge one period up and the last one down: the
  // edge a band gives is the one between the moved nodes, with its node a the translate of
  // the edge's. (Where the period does not divide the devices, a move that wraps past the
  // last period may join no edge; nothing reads such a move.)
  for (const TopologyGraph::EdgeBand& b : g_.edge_bands) {
    HCSIM_ASSERT(
        b.rows > 0 && b.block > 0 && b.row_length % b.block == 0 &&
            static_cast<std::size_t>(b.first) + static_cast<std::size_t>(b.rows) * b.row_length <= g_.edges().size(),
        "an edge band outside the graph's edges");
    for (int r = 0; r < b.rows; ++r)
      for (int c = 0; c < b.row_length; c += b.block) {
        const int head = b.first + r * b.row_length + c;
        for (const auto& [e, periods] :
             {std::pair{head, std::int64_t{1}}, std::pair{head + b.block - 1, std::int64_t{-1}}}) {
          const TopoEdge& ed = g_.edges()[static_cast<std::size_t>(e)];
          const std::optional<std::size_t> by_nodes = find_moved_slot(ed.a, ed.b, e, periods);
          HCSIM_ASSERT(!by_nodes || *by_nodes == 2 * static_cast<std::size_t>(g_.translate_edge(e, periods)),
                       "edge band at edge " + std::to_string(b.first) + ": edge " + std::to_string(e) +
                           " does not move as its nodes do");
        }
      }
  }
}

std::int64_t Router::translation_periods() const {
  const int period = g_.translation_period;
  if (period <= 0 || g_.translation_bands.empty() || g_.device_count() % period != 0) return 0;
  return g_.device_count() / period;
}

std::optional<Router::LinkClass> Router::link_class(std::size_t slot) const {
  const std::int64_t periods = translation_periods();
  if (periods == 0) return std::nullopt;
  const auto edge = static_cast<int>(slot / 2);
  const int a = g_.edges()[slot / 2].a, b = g_.edges()[slot / 2].b;
  const int from = slot % 2 == 0 ? a : b, to = slot % 2 == 0 ? b : a;
  const auto round = [&](int node) {  // the band `node` goes round in M periods, else -1
    const int k = g_.translation_band(node);
    if (k < 0) return -1;
    const TopologyGraph::TranslationBand& band = g_.translation_bands[static_cast<std::size_t>(k)];
    return band.step > 0 && band.size == periods * band.step ? k : -1;
  };
  const int kf = round(from), kt = round(to);
  if (kf == kt) return std::nullopt;  // neither goes round, or both in one band
  const bool from_leads = kt < 0 || (kf >= 0 && kf < kt);
  const TopologyGraph::TranslationBand& band = g_.translation_bands[static_cast<std::size_t>(from_leads ? kf : kt)];
  const std::int64_t w = ((from_leads ? from : to) - band.first) / band.step;
  if (w == 0) return LinkClass{slot, 0};
  return LinkClass{moved_slot(from, to, edge, -w), w};
}

}  // namespace hcsim
