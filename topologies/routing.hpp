#pragma once
// Deterministic shortest-path routing on a TopologyGraph, shared by the collective cost
// model and the engine's flow mode.
//
// A route is a minimum-latency path (Dijkstra; each edge weighs its latency in whole
// picoseconds plus one, so that among equal latencies fewer hops win and a node's NVLink
// switch is preferred over its InfiniBand leaf). Where several next hops are equally good
// (the spines of a fat-tree, the two ways round an even torus ring), one is chosen by a
// hash of (source, destination), like ECMP in Ethernet fabrics, so different pairs spread
// over the spines while one pair always takes the same path; or, on a graph with
// destination_routing (an InfiniBand fat-tree), the (destination mod k)-th of the k, as a
// subnet manager's fat-tree routing does (D-mod-k), the destination numbered by its host
// index (TopologyGraph::host_index: its NIC's place among the fabric's hosts, so a leaf's
// hosts take its uplinks one each). Devices carry
// transit traffic only when the graph says so (TopologyGraph::devices_forward, e.g. a
// torus); otherwise routes pass through switches only.
//   latency    = sum of edge latencies along the path
//   bottleneck = min over edges of lanes x bandwidth x efficiency
//
// Invariant: a route between two nodes of one scale-up domain (TopoNode::scale_up_domain:
// the GPUs and NVSwitch of one board, a torus's chips) passes through that domain's nodes
// only, so two GPUs of a node talk over NVLink even where a NIC they share would be
// shorter (nvswitch-cluster with fewer NICs than GPUs: GPU -> NIC attachment -> GPU costs
// nothing on the attachment). Such pairs are routed by a Dijkstra over the domain's nodes
// (a board: a few nodes); a domain that is the whole graph needs no restriction. Every
// route is checked against the invariant before it is returned; one that breaks it (a
// builder declared a domain its nodes do not connect) is an internal error.
//
// How distances are found (the routes are the same either way): when devices do not
// forward, every intermediate node of a path is a switch or memory node ("transit" node),
// so the distance from a node to a destination is the least, over the destination's
// transit neighbours b, of dist_transit(node, b) + w(b, dst), with dist_transit from one
// Dijkstra per b over the transit nodes alone (a cluster's fabric: hundreds of nodes, not
// the tens of thousands of devices) shared by every destination behind b. A transit node
// whose only transit neighbour is q (a NIC hanging off its leaf, one per GPU on a
// rail-optimised fabric) is "pendant": no shortest path passes through it, so the tables
// cover the other ("core") transit nodes only, and a pendant p's distances are read
// through q: dist(p, x) = w(p, q) + dist(q, x), dist(x, p) = dist(x, q) + w(q, p). The
// tables then number the leaves, not the NICs, and each Dijkstra spans the switches alone.
// A core whose nodes form a complete bipartite graph with every edge of one weight w (a
// two-tier Clos: every leaf joined to every spine, by links of one latency) needs no table:
// the distance between two of its nodes is 0, w (opposite sides) or 2 w (one side), so
// routing there costs no Dijkstra and no memory per destination, and grows with the routes
// asked for, not with the leaves times the routes.
// When devices forward, a resumable Dijkstra from each destination over the whole graph.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/key_table.hpp"
#include "sim/core/zero_array.hpp"
#include "topologies/topology.hpp"

namespace hcsim {

struct Route {
  bool reachable = false;
  // Views into the Router's storage, valid as long as the Router that returned the route.
  std::span<const int> edges;  // edge indices from source to destination
  std::span<const int> nodes;  // node indices, source first, destination last
  Seconds latency{};
  BytesPerSecond bottleneck{};  // effective (efficiency applied); zero for an empty route

  [[nodiscard]] int hops() const { return static_cast<int>(edges.size()); }
};

class Router {
 public:
  // `whole_graph_search`: always use the per-destination Dijkstra over the whole graph, and
  // the search over a scale-up domain for every domain (the reference the transit tables,
  // their closed forms and the star domains are checked against); the routes are identical.
  explicit Router(const TopologyGraph& g, bool whole_graph_search = false);
  // Routes view the router's own storage: a router moves, it is not copied.
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;
  Router(Router&&) = default;
  // Route between graph nodes. Cached; the Router is not thread-safe.
  [[nodiscard]] const Route& route(int src_node, int dst_node) const;
  // Route between global device indices.
  [[nodiscard]] const Route& device_route(int src_device, int dst_device) const;
  // The same route, not cached when it is not already: its lists then live in the router's
  // scratch buffers, valid until the next call on this router. For routes read once and
  // dropped (a step's links, found once per shape of the step: step_loads.hpp), where
  // caching a million of them costs more than finding them. `sums`: false leaves a route
  // found afresh without its latency and bottleneck (zero), for callers that read its links
  // only (a sibling's translate of a step's transfer); a cached route has them.
  [[nodiscard]] const Route& passing_device_route(int src_device, int dst_device, bool sums = true) const;
  [[nodiscard]] const TopologyGraph& graph() const { return g_; }
  // The directed link (2 x edge, + 1 when crossed from b to a) of r's i-th hop, read from a
  // compact per-edge array rather than the graph's edge records.
  [[nodiscard]] std::size_t link_slot(const Route& r, std::size_t i) const { return directed(r.edges[i], r.nodes[i]); }
  // The scale-up domain of device `device` when it is a star that is not the whole graph
  // (its routes are member, center, member: star_route), else -1; its count of domains; and
  // the edge joining a star's member device to the center.
  [[nodiscard]] int device_star(int device) const {
    return node_star_[static_cast<std::size_t>(g_.device_node(device))];
  }
  [[nodiscard]] int domains() const { return static_cast<int>(domain_first_.size()) - 1; }
  [[nodiscard]] int star_edge(int device) const { return star_edge_[static_cast<std::size_t>(g_.device_node(device))]; }
  [[nodiscard]] int star_center(int domain) const { return star_center_[static_cast<std::size_t>(domain)]; }
  // Calls f(directed link) for each link of the route between two devices, in order
  // (link_slot); two members of one star domain (device_star) are read from their edges to
  // the center, as star_route() routes them, without looking the route up. On a graph with
  // translation bands (TopologyGraph::translation_bands), a pair m periods up is read from
  // the route of the pair m periods down, moved (translated): neither routed nor kept.
  // f must not call this router. `keep` false: a pair neither in one star nor translated is
  // routed without being kept (passing_device_route, its sums skipped).
  template <class F>
  void for_link_slots(int src_device, int dst_device, F&& f, bool keep = true) const {
    const auto a = static_cast<std::size_t>(g_.device_node(src_device)),
               b = static_cast<std::size_t>(g_.device_node(dst_device));
    if (const int d = node_star_[a]; d >= 0 && d == node_star_[b] && a != b) {
      f(directed(star_edge_[a], static_cast<int>(a)));
      f(directed(star_edge_[b], star_center_[static_cast<std::size_t>(d)]));
      return;
    }
    if (const Translated t = translated(src_device, dst_device); t.periods != 0) {
      for (const MovableLink& l : t.links) f(moved_link(l, t.periods));
      return;
    }
    const Route& r = keep ? device_route(src_device, dst_device) : passing_device_route(src_device, dst_device, false);
    for (std::size_t i = 0; i < r.edges.size(); ++i) f(link_slot(r, i));
  }
  // device_route(src, dst).latency, summed over the links for_link_slots reads in route
  // order (the same sum): where the pair is a translate, neither routed nor kept.
  [[nodiscard]] Seconds device_latency(int src_device, int dst_device) const {
    Seconds sum{};
    for_link_slots(src_device, dst_device, [&](std::size_t s) { sum += g_.edges()[s / 2].link().latency; });
    return sum;
  }
  // Classes of directed links under the translation (TopologyGraph::translation_bands), whose
  // M = devices / period translates (translation_periods; 0 where the graph declares no
  // bands or the period does not divide the devices) map routes onto routes: a link with an
  // end in a band that goes round in M periods (the band's size is M x its step; of two such
  // ends, the one in the band listed first) is the translate, `window` periods up, of the
  // link `canon` whose such end lies in the band's first step (window = that end's place in
  // the band / step). The link m periods up from a link of window w < M - m has its class
  // and window w + m. Empty where neither end goes round, or both ends lie in one band.
  struct LinkClass {
    std::size_t canon = 0;
    std::int64_t window = 0;
  };
  [[nodiscard]] std::optional<LinkClass> link_class(std::size_t slot) const;
  [[nodiscard]] std::int64_t translation_periods() const;
  // Whether distances towards transit node `node` are in closed form (its component's core
  // is complete bipartite with one edge weight) rather than read from a Dijkstra table.
  [[nodiscard]] bool closed_form(int node) const {
    if (whole_graph_ || !transit(node)) return false;
    return bipartite_weight_[static_cast<std::size_t>(component_[static_cast<std::size_t>(node)])] != kUnreached;
  }

 private:
  static constexpr std::int64_t kUnreached = -1;

  // Dijkstra from one destination, run only as far as the sources asked about need
  // (resumable); searches are kept up to ~128 MB (at least 64), oldest dropped first.
  struct Search {
    std::vector<std::int64_t> dist;  // -1: not reached
    std::vector<char> settled;
    std::vector<std::pair<std::int64_t, int>> heap;  // min-heap on (dist, node)
  };
  const Search& settle(int dst, int src) const;

  // Distance from every core transit node of b's component to core transit node b
  // (kUnreached outside it), indexed by local_[node]. Tables are kept up to ~128 MB, oldest
  // dropped first, by trim_tables() only, so the tables of one route stay valid while it
  // is built.
  const std::vector<std::int64_t>& transit_table(int b) const;
  void trim_tables() const;
  // The destination as seen from the transit nodes: its transit neighbours with the
  // weight of their edge into dst (dst itself with 0 when it is a transit node). A pendant
  // neighbour p is read through its parent's table: weight = w(parent, p) + w(p, dst), and
  // p itself (via) is at via_weight = w(p, dst).
  struct Entry {
    int component;
    int core;                   // the core node whose distances are read
    const std::int64_t* table;  // its table; null where the component is in closed form
    std::int64_t weight;
    int via = -1;
    std::int64_t via_weight = 0;
  };
  struct Target {
    int dst;
    std::vector<Entry> entries;
  };
  // Built in target_, valid until the next call.
  const Target& target_of(int dst) const;
  mutable Target target_;
  // Distance from `node` to the target over transit intermediates (kUnreached if none).
  std::int64_t to_dst(int node, const Target& t) const;
  [[nodiscard]] bool transit(int node) const { return transit_[static_cast<std::size_t>(node)] != 0; }

  // The shortest-path walk from src to dst with ECMP choice, given distances to dst. With
  // the target (closed-form cores), a hop from a core node near it looks only at the
  // target's nodes among its neighbours (a spine meets every leaf; two of them may be next).
  template <class Dist>
  void walk(int src, int dst, const Dist& dist, Route& r, const Target* t = nullptr) const;
  // The neighbours of core node `cur` that can be its next hop towards t at distance dcur,
  // when that set is within t's own nodes; false when every neighbour must be looked at.
  bool target_hops(int cur, std::int64_t dcur, const Target& t, std::vector<int>& hops) const;

  // The domain both nodes belong to when it is not the whole graph, else -1.
  [[nodiscard]] int restricting_domain(int src, int dst) const;
  // Least-latency route from src to dst through the nodes of `domain` only.
  void domain_route(int src, int dst, int domain, Route& r) const;
  // Scale-up domains that are stars: one forwarding node (the center, e.g. a node's NVSwitch)
  // and member devices joined to it by one link each and to no other member; the route
  // between two of their devices is device, center, device (star_route).
  void find_star_domains();
  void star_route(int src, int dst, int center, Route& r) const;
  // r's latency (sum over its links) and bottleneck (least effective bandwidth) from r.edges.
  void sum_links(Route& r) const;
  // Internal error when r joins two nodes of one scale-up domain but leaves it.
  void check_scale_up(int src, int dst, const Route& r) const;

  const TopologyGraph& g_;
  bool whole_graph_ = false;
  // node -> (neighbour, edge), sorted; all nodes' lists in one array (a million-device graph
  // has millions of short lists).
  struct Adjacency {
    std::vector<std::uint32_t> first;  // node u's list: items[first[u], first[u + 1]) (2 x edges < 2^32)
    std::vector<std::pair<int, int>> items;
    // Per item, beside it for the walk's scan: its edge's kind (TopologyGraph::edge_kinds)
    // times 4, plus 1 when the neighbour forwards (transit) and 2 when it is a pendant
    // transit node; the weight is kind_weight_[hop >> 2].
    std::vector<std::uint32_t> hop;
    [[nodiscard]] std::span<const std::pair<int, int>> operator[](std::size_t u) const {
      return {items.data() + first[u], items.data() + first[u + 1]};
    }
    [[nodiscard]] std::size_t size() const { return first.empty() ? 0 : first.size() - 1; }
  };
  Adjacency adj_;
  // An edge's weight: its latency in picoseconds, plus 1 (a hop costs even at no latency),
  // one per edge kind (TopologyGraph::edge_kinds).
  std::vector<std::int64_t> kind_weight_;
  [[nodiscard]] std::int64_t weight(int e) const {
    return kind_weight_[static_cast<std::size_t>(g_.edges()[static_cast<std::size_t>(e)].kind->index)];
  }
  // The weight of adjacency item i's edge, read beside the item (set_hops: after construction).
  [[nodiscard]] std::int64_t item_weight(std::size_t i) const { return kind_weight_[adj_.hop[i] >> 2]; }
  // The directed link of edge e left from node `from`: 2 e, + 1 when `from` is its node b.
  [[nodiscard]] std::size_t directed(int e, int from) const {
    const auto i = static_cast<std::size_t>(e);
    return 2 * i + (from == g_.edges()[i].a ? 0 : 1);
  }
  std::vector<char> transit_;                          // per node: may carry others' traffic
  // Per node, written for transit nodes only (-1 or 0 elsewhere, on pages never touched where
  // the devices of a large cluster lie together: sim/core/zero_array.hpp).
  FilledArray<int, -1> component_, local_;  // transit nodes: component; core ones: index in it
  std::vector<int> component_size_;         // core transit nodes per component
  FilledArray<int, -1> parent_;             // pendant transit node -> its sole transit neighbour
  ZeroArray<std::int64_t> parent_weight_;   // pendant -> least weight of its edges to the parent
  // Per component: the edge weight w of a complete bipartite core (distances in closed
  // form), or kUnreached when its distances need tables; per core node: its side (0/1).
  std::vector<std::int64_t> bipartite_weight_;
  FilledArray<signed char, -1> side_;
  // Distance between two core nodes of one component.
  [[nodiscard]] std::int64_t core_distance(int from, int to, const std::int64_t* table) const {
    if (table) return table[static_cast<std::size_t>(local_[static_cast<std::size_t>(from)])];
    if (from == to) return 0;
    const std::int64_t w = bipartite_weight_[static_cast<std::size_t>(component_[static_cast<std::size_t>(from)])];
    return side_[static_cast<std::size_t>(from)] != side_[static_cast<std::size_t>(to)] ? w : 2 * w;
  }
  void find_bipartite_cores();
  void set_hops();  // adj_.hop and core_run_
  // Per node: a closed-form core node's core neighbours as items [first, last) of its list
  // when they are consecutive there, else {0, 0}.
  struct CoreRun {
    std::uint32_t first = 0, last = 0;
  };
  ZeroArray<CoreRun> core_run_;
  // The items of the shorter of a's and b's lists that join them (their edges, ascending).
  [[nodiscard]] std::span<const std::pair<int, int>> links_between(int a, int b) const;
  // The distance to t of every core neighbour of core node cur (closed form) that is not one
  // of t's core nodes.
  [[nodiscard]] std::int64_t shared_distance(int cur, const Target& t) const;
  // Whether none of t's nodes listed in `hops` (target_hops) is next to cur.
  [[nodiscard]] bool closed_run(int cur, const std::vector<int>& hops) const;
  // Scale-up domain d -> its nodes, ascending: domain_members_[domain_first_[d], domain_first_[d + 1]).
  std::vector<std::uint32_t> domain_first_;
  std::vector<int> domain_members_;
  [[nodiscard]] std::span<const int> domain_nodes(std::size_t d) const {
    return {domain_members_.data() + domain_first_[d], domain_first_[d + 1] - domain_first_[d]};
  }
  std::vector<int> domain_local_;               // node -> index in its domain's list (-1: none)
  std::vector<int> star_center_;                // domain -> its center when a star, else -1
  std::vector<int> star_edge_;                  // a star's member device -> its edge to the center
  std::vector<int> node_star_;                  // node -> its star domain (not the whole graph), else -1
  std::size_t max_searches_ = 64;
  mutable std::map<int, Search> searches_;
  mutable std::vector<int> search_order_;
  std::size_t max_table_entries_ = 0;
  mutable std::unordered_map<int, std::vector<std::int64_t>> tables_;
  mutable std::deque<int> table_order_;
  mutable std::size_t table_entries_ = 0;
  // Routes by (src << 32 | dst): their indices in routes_ (stable storage).
  static std::uint64_t route_key(int src, int dst);  // src << 32 | dst
  static constexpr std::size_t kNoRoute = ~std::size_t{0};
  std::size_t find_route(std::uint64_t key) const;  // the index in routes_, or kNoRoute
  // The index in routes_ of the route src -> dst, found and kept where it is not yet.
  std::size_t kept_route(int src, int dst) const;
  // The route src -> dst found afresh (every kind of search; checked against the scale-up
  // invariant), its lists kept (keep) unless passing_.
  void find(int src, int dst, Route& r) const;
  mutable bool passing_ = false;  // keep() leaves the lists in walk()'s buffers
  mutable bool no_sums_ = false;  // sum_links() leaves the route's sums at zero
  mutable Route passing_route_;
  const Route& add_route(std::uint64_t key, Route r) const;
  mutable KeyTable<std::uint32_t> route_index_;
  // walk()'s candidate next hops and the route it builds, reused.
  mutable std::vector<std::pair<int, int>> walk_next_;
  mutable std::vector<std::int64_t> walk_next_dist_;
  mutable std::vector<int> walk_nodes_, walk_edges_, walk_hops_;
  // domain_route()'s Dijkstra over a domain's nodes, reused.
  mutable std::vector<std::int64_t> domain_dist_;
  mutable std::vector<char> domain_done_;
  mutable std::vector<std::pair<std::int64_t, int>> domain_heap_;
  mutable std::deque<Route> routes_;
  // The routes' node and edge lists, packed in blocks that never move (a route's views stay
  // valid as more are added): two allocations per route were most of a route's cost.
  static constexpr std::size_t kBlockInts = std::size_t{1} << 18;
  mutable std::vector<std::unique_ptr<int[]>> blocks_;
  mutable std::size_t block_used_ = kBlockInts;
  std::span<const int> keep(const std::vector<int>& v) const;
  // A base route's links as for_link_slots moves them: each link's edge with its place in
  // its band (TopologyGraph::edge_place) and the nodes it is crossed between, decoded once
  // per base pair (base_links; a route is moved once per mirror pair that reads it: some
  // hundred times each at 131,072 GPUs).
  struct MovableLink {
    TopologyGraph::EdgePlace place;
    int from = 0, to = 0, edge = 0;
    bool reversed = false;  // crossed from the edge's node b to its node a
  };
  // The links of the route src -> dst's translate m = min / period periods down, and m (the
  // links, moved m periods up, are the route's); m = 0 where the graph declares no bands, the
  // pair lies in the first period or src = dst: the route is then read as it is.
  struct Translated {
    std::span<const MovableLink> links;
    std::int64_t periods = 0;
  };
  [[nodiscard]] Translated translated(int src_device, int dst_device) const;
  // The links of the kept route between two devices of the first period (translated's base
  // pair), decoded on the pair's first read into movable_links_ and found after through a
  // table keyed by the device pair: some thousand entries that stay in cache, where each of
  // translated's reads (some 700,000 at 131,072 GPUs) looked the route up among all kept
  // routes and then its links.
  std::span<const MovableLink> base_links(int src_device, int dst_device) const;
  struct BaseSpan {
    std::uint32_t first = 0, count = 0;  // movable_links_[first, first + count)
  };
  mutable KeyTable<BaseSpan> base_spans_;  // by (src device << 32 | dst device)
  // The directed link l moved `periods` periods (as moved_slot): by arithmetic in its edge's
  // band, each band's turns kept while the periods stay the same; else found between the
  // moved nodes (moved_off_band).
  [[nodiscard]] std::size_t moved_link(const MovableLink& l, std::int64_t periods) const {
    if (l.place.band < 0) return moved_off_band(l, periods);
    TopologyGraph::EdgeTurns& t = edge_turns_[static_cast<std::size_t>(l.place.band)];
    if (t.periods != periods) t = g_.edge_turns(l.place.band, periods);
    return 2 * static_cast<std::size_t>(g_.moved_edge(l.place, t)) + (l.reversed ? 1 : 0);
  }
  [[nodiscard]] std::size_t moved_off_band(const MovableLink& l, std::int64_t periods) const;
  mutable std::vector<TopologyGraph::EdgeTurns> edge_turns_;  // moved_link: each edge band's last turns
  mutable std::vector<MovableLink> movable_links_;
  // The directed link `edge` crossed from `from` to `to`, moved `periods` periods: the edge
  // between the moved nodes at the same place among their parallel edges.
  [[nodiscard]] std::size_t moved_slot(int from, int to, int edge, std::int64_t periods) const;
  // The same found between the moved nodes (an edge in no band; the check of the bands), or
  // nothing where the moved nodes are not joined as the edge's are.
  [[nodiscard]] std::optional<std::size_t> find_moved_slot(int from, int to, int edge, std::int64_t periods) const;
  // Internal error where a declared edge band (TopologyGraph::edge_bands) moves an edge other
  // than its nodes do, read at each row's block ends.
  void check_edge_bands() const;
};

}  // namespace hcsim
