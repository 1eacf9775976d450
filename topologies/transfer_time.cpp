#include "topologies/transfer_time.hpp"

#include "sim/core/error.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace hcsim {

std::vector<int> memory_nodes(const TopologyGraph& g) {
  std::vector<int> out;
  for (std::size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].kind == TopoNode::Kind::memory) out.push_back(static_cast<int>(i));
  return out;
}

namespace {

// A resource: (edge, direction 0 = a->b, 1 = b->a), or (-1 - memory node, 0) for its media.
using Resource = std::pair<int, int>;

std::vector<Resource> resources_of(const TopologyGraph& g, const Route& r, int src, int dst) {
  std::vector<Resource> out;
  for (std::size_t h = 0; h < r.edges.size(); ++h) {
    const int e = r.edges[h];
    out.emplace_back(e, r.nodes[h] == g.edges()[static_cast<std::size_t>(e)].a ? 0 : 1);
  }
  for (int n : {src, dst}) {
    const TopoNode& node = g.nodes()[static_cast<std::size_t>(n)];
    if (node.kind == TopoNode::Kind::memory && g.media(n).bandwidth.value() > 0) out.emplace_back(-1 - n, 0);
  }
  return out;
}

double capacity_of(const TopologyGraph& g, const Resource& res) {
  if (res.first < 0) return g.media(-1 - res.first).bandwidth.value();
  const TopoEdge& e = g.edges()[static_cast<std::size_t>(res.first)];
  return e.effective_bandwidth().value();
}

}  // namespace

Seconds concurrent_transfer_time(const Router& router, const std::vector<NodeTransfer>& transfers) {
  const TopologyGraph& g = router.graph();
  std::map<Resource, double> load;
  std::vector<std::vector<Resource>> path(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const NodeTransfer& t = transfers[i];
    const Route& r = router.route(t.src, t.dst);
    HCSIM_ASSERT(r.reachable || t.src == t.dst, "no route for a transfer");
    path[i] = resources_of(g, r, t.src, t.dst);
    for (const Resource& res : path[i]) load[res] += t.bytes.value();
  }
  double worst = 0;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const NodeTransfer& t = transfers[i];
    double lat = router.route(t.src, t.dst).latency.value();
    for (int n : {t.src, t.dst}) {
      const TopoNode& node = g.nodes()[static_cast<std::size_t>(n)];
      if (node.kind == TopoNode::Kind::memory) lat += g.media(n).latency.value();
    }
    double serial = 0;
    for (const Resource& res : path[i]) serial = std::max(serial, load[res] / capacity_of(g, res));
    worst = std::max(worst, lat + serial);
  }
  return Seconds(worst);
}

}  // namespace hcsim
