#include "topologies/analysis.hpp"

#include <algorithm>
#include <limits>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <boost/graph/visitors.hpp>

namespace hcsim {
namespace {

using HopGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// Arcs leaving a device are usable only from the BFS source, unless devices forward.
struct TransitFilter {
  const TopologyGraph* g = nullptr;
  const HopGraph* h = nullptr;
  int source = -1;
  template <class Edge>
  bool operator()(const Edge& e) const {
    const auto u = static_cast<int>(boost::source(e, *h));
    return u == source || g->devices_forward ||
           g->nodes()[static_cast<std::size_t>(u)].kind != TopoNode::Kind::device;
  }
};

HopGraph hop_graph(const TopologyGraph& g) {
  HopGraph h(g.nodes().size());
  for (const auto& e : g.edges()) {
    boost::add_edge(static_cast<std::size_t>(e.a), static_cast<std::size_t>(e.b), h);
    boost::add_edge(static_cast<std::size_t>(e.b), static_cast<std::size_t>(e.a), h);
  }
  return h;
}

void hop_statistics(const TopologyGraph& g, const AnalysisOptions& opt, TopologyAnalysis& out) {
  const int n = g.device_count();
  const HopGraph h = hop_graph(g);
  std::vector<int> sources;
  out.sampled = n > opt.max_exact_devices;
  const int count = out.sampled ? opt.sample_sources : n;
  for (int i = 0; i < count; ++i) sources.push_back(static_cast<int>(static_cast<std::int64_t>(i) * n / count));
  double hop_sum = 0;
  for (int src_dev : sources) {
    const int src = g.device_node(src_dev);
    std::vector<int> dist(g.nodes().size(), -1);
    dist[static_cast<std::size_t>(src)] = 0;
    boost::filtered_graph<HopGraph, TransitFilter> fg(h, TransitFilter{&g, &h, src});
    boost::breadth_first_search(
        fg, static_cast<std::size_t>(src),
        boost::visitor(boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge()))));
    for (int d = 0; d < n; ++d) {
      if (d == src_dev) continue;
      const int hops = dist[static_cast<std::size_t>(g.device_node(d))];
      if (hops < 0) { ++out.unreachable_pairs; continue; }
      if (static_cast<int>(out.hop_histogram.size()) <= hops) out.hop_histogram.resize(static_cast<std::size_t>(hops) + 1, 0);
      ++out.hop_histogram[static_cast<std::size_t>(hops)];
      ++out.pairs_counted;
      hop_sum += hops;
      out.diameter = std::max(out.diameter, hops);
    }
  }
  out.mean_hops = out.pairs_counted ? hop_sum / static_cast<double>(out.pairs_counted) : 0.0;
}

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, double,
                    boost::property<boost::edge_residual_capacity_t, double,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

void add_arc(FlowGraph& f, std::size_t u, std::size_t v, double cap) {
  auto cap_map = boost::get(boost::edge_capacity, f);
  auto rev_map = boost::get(boost::edge_reverse, f);
  auto e = boost::add_edge(u, v, f).first;
  auto r = boost::add_edge(v, u, f).first;
  cap_map[e] = cap;
  cap_map[r] = 0;
  rev_map[e] = r;
  rev_map[r] = e;
}

}  // namespace

BytesPerSecond cut_bandwidth(const TopologyGraph& g, const std::vector<int>& a, const std::vector<int>& b) {
  const std::size_t nodes = g.nodes().size();
  FlowGraph f(nodes + 2);
  const std::size_t s = nodes, t = nodes + 1;
  double total = 0;
  for (const auto& e : g.edges()) {
    const double c = e.bandwidth().value();
    total += c;
    add_arc(f, static_cast<std::size_t>(e.a), static_cast<std::size_t>(e.b), c);
    add_arc(f, static_cast<std::size_t>(e.b), static_cast<std::size_t>(e.a), c);
  }
  const double inf = 2 * total + 1;
  for (int d : a) add_arc(f, s, static_cast<std::size_t>(g.device_node(d)), inf);
  for (int d : b) add_arc(f, static_cast<std::size_t>(g.device_node(d)), t, inf);
  return BytesPerSecond(boost::push_relabel_max_flow(f, s, t));
}

TopologyAnalysis analyse_topology(const TopologyGraph& g, const AnalysisOptions& opt) {
  TopologyAnalysis out;
  out.devices = g.device_count();
  for (const auto& nd : g.nodes()) {
    out.switches += nd.kind == TopoNode::Kind::switch_node ? 1 : 0;
    out.memories += nd.kind == TopoNode::Kind::memory ? 1 : 0;
  }
  out.links = static_cast<int>(g.edges().size());
  for (const auto& e : g.edges()) out.lanes += e.lanes();
  if (out.devices < 2) return out;
  hop_statistics(g, opt, out);
  const int n = out.devices;
  std::vector<int> blocks;
  for (int b = n / 2; b >= 1 && static_cast<int>(blocks.size()) < opt.max_bisection_cuts; --b)
    if (n % (2 * b) == 0 || b == n / 2) blocks.push_back(b);
  double best = std::numeric_limits<double>::infinity();
  for (int b : blocks) {
    std::vector<int> a, c;
    for (int i = 0; i < n; ++i) ((i / b) % 2 == 0 && (b != n / 2 || i < b) ? a : c).push_back(i);
    best = std::min(best, cut_bandwidth(g, a, c).value());
    ++out.bisection_cuts_tried;
  }
  out.bisection_bandwidth = BytesPerSecond(best);
  out.bisection_method = "min over " + std::to_string(out.bisection_cuts_tried) +
                         " balanced device bisections of the max-flow between the halves (raw link bandwidth)";
  return out;
}

}  // namespace hcsim
