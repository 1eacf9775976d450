#pragma once
// The topology family: a builder turns a topology description into a TopologyGraph of
// devices, switches and memory pools joined by full-duplex links. The graph is the one
// description of the network: graph analysis (topologies/analysis) reads it with
// Boost.Graph, the collective cost model reads it for paths, and the engine builds
// SimGrid hosts, routers and links from it. Topologies know nothing of SimGrid.

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/link/link.hpp"
#include "sim/core/registry.hpp"

namespace hcsim {

// The media behind a memory node (a CXL pool's DRAM).
struct MemoryMedia {
  Bytes capacity{};            // pool capacity
  Seconds latency{};           // media access latency behind the last link
  BytesPerSecond bandwidth{};  // media bandwidth (0: bounded by links only)
};

// 16 bytes: a million-device cluster holds over a million of them. A node's name is not
// kept here: the graph gives it (TopologyGraph::node_name), most from a rule per run of
// nodes, so a builder writes no string per device.
struct TopoNode {
  enum class Kind : std::uint8_t { device, switch_node, memory };
  Kind kind = Kind::device;
  bool in_switch_reduction = false;  // switch can reduce in network (NVLink SHARP)
  int device = -1;                   // global device index for Kind::device, else -1
  // Scale-up domain (the GPUs and NVSwitch of one board, a torus's chips): nodes of one
  // domain share an id >= 0; -1 for nodes of none (NIC attachments, leaves, spines, memory).
  int scale_up_domain = -1;
  int media = -1;  // Kind::memory: its MemoryMedia (TopologyGraph::media), else -1
};
static_assert(sizeof(TopoNode) == 16, "a topology node stays small");

// What an edge is made of: its per-lane link spec, its lane count and its report class. A
// graph holds its few distinct kinds once (a million-GPU fabric has millions of edges and a
// handful of kinds), and each edge points to one: 16 bytes an edge.
struct EdgeKind {
  LinkSpec spec;
  int lanes = 1;           // parallel lanes aggregated into the edge
  std::string link_class;  // report grouping, e.g. "nvlink", "infiniband", "ici"
  int index = 0;           // the kind's position among its graph's (TopologyGraph::edge_kinds)
};

struct TopoEdge {
  int a = -1, b = -1;              // node indices; the edge is full duplex (one link each way)
  const EdgeKind* kind = nullptr;  // owned by the graph

  [[nodiscard]] const LinkSpec& link() const { return kind->spec; }  // per lane
  [[nodiscard]] int lanes() const { return kind->lanes; }
  [[nodiscard]] const std::string& link_class() const { return kind->link_class; }
  [[nodiscard]] BytesPerSecond bandwidth() const { return kind->spec.bandwidth * static_cast<double>(kind->lanes); }
  // What one direction carries: the lanes' bandwidth times the link's protocol efficiency
  // (the rate every cost path and the engine's link give a flow alone on it).
  [[nodiscard]] BytesPerSecond effective_bandwidth() const { return bandwidth() * kind->spec.efficiency; }
};
static_assert(sizeof(TopoEdge) == 16, "a topology edge stays small");

class TopologyGraph {
 public:
  // Room for this many nodes, edges and devices in all (a builder that knows them spares the
  // graph's arrays their regrowth: a million devices copy hundreds of megabytes each time).
  void reserve(std::size_t nodes, std::size_t edges, std::size_t devices);
  int add_device(std::string name, int device_index);
  int add_switch(std::string name, bool in_switch_reduction = false);
  int add_memory(std::string name, Bytes capacity);
  // The i-th of a run of nodes (0-based) -> its name.
  using NodeNamer = std::function<std::string(int i)>;
  // `count` devices with the next device indices, or `count` switches, one after another;
  // node first + i is named name(i). Returns the first's node index (-1 for count 0). A
  // builder of a large fabric adds its devices and per-board switches this way: one rule,
  // where add_device keeps a string each.
  int add_devices(int count, NodeNamer name);
  int add_switches(int count, NodeNamer name, bool in_switch_reduction = false);
  // A node's name, e.g. "node3/gpu5", "rail2/leaf0" (messages, tests).
  [[nodiscard]] std::string node_name(int node) const;
  int add_edge(int a, int b, const LinkSpec& link, int lanes, std::string_view link_class);
  // The graph's kind for a link, lane count and report class: found among its kinds (the
  // last edge's first) or added. A builder adding a run of edges of one kind takes it once
  // and passes it to add_edge(a, b, kind), sparing each edge the comparison of the link's
  // name and class (a million-GPU fabric has millions of edges).
  const EdgeKind& edge_kind(const LinkSpec& link, int lanes, std::string_view link_class);
  int add_edge(int a, int b, const EdgeKind& kind);  // kind: one of this graph's (edge_kind)
  void set_memory_performance(int node, Seconds latency, BytesPerSecond bandwidth);
  // Puts `node` in scale-up domain `domain` (>= 0). The routing invariant (routing.hpp):
  // traffic between two nodes of one domain stays on the domain's nodes, e.g. two GPUs of a
  // node talk over their NVSwitch, never through a NIC they share. A builder declares a
  // domain only where its nodes connect every pair of its members.
  void set_scale_up_domain(int node, int domain);

  [[nodiscard]] const std::vector<TopoNode>& nodes() const { return nodes_; }
  [[nodiscard]] const std::vector<TopoEdge>& edges() const { return edges_; }
  // Every kind an edge of this graph (or of a copy sharing its kinds) points to, by index.
  [[nodiscard]] const std::deque<EdgeKind>& edge_kinds() const { return *kinds_; }
  // The media of memory node `node` (Kind::memory).
  [[nodiscard]] const MemoryMedia& media(int node) const;
  [[nodiscard]] int device_count() const { return static_cast<int>(device_node_.size()); }
  [[nodiscard]] int device_node(int device) const { return device_node_.at(static_cast<std::size_t>(device)); }
  // Devices that share a first-level switch or board (e.g. one NVSwitch node): the
  // "node" used by hierarchical collectives. Same size for every device of a node.
  [[nodiscard]] int node_of(int device) const { return node_of_.at(static_cast<std::size_t>(device)); }
  void set_node_of(int device, int node);
  [[nodiscard]] int locality_nodes() const;
  // D-mod-k's destination index (destination_routing, routing.hpp): the position of the host
  // port a node is reached through among the fabric's hosts, leaf by leaf in port order, as a
  // subnet manager numbers them (OpenSM's ftree routing walks the hosts that way); the node's
  // own index where a builder set none. GPUs behind one shared NIC share its index.
  void set_host_index(int node, int index);
  [[nodiscard]] int host_index(int node) const {
    const auto i = static_cast<std::size_t>(node);
    return i < host_index_.size() && host_index_[i] >= 0 ? host_index_[i] : node;
  }

  std::string description;  // human summary, e.g. "16 nodes x 8 GPUs, NVSwitch inside, HDR IB fat-tree"
  // Whether devices forward traffic for others (a torus's chips route, as TPU ICI does);
  // when false, routes pass through switches only and devices are endpoints.
  bool devices_forward = false;
  // How a switch picks among equally short next hops (a leaf's uplinks to the spines): by
  // destination, the (destination mod k)-th (InfiniBand subnet managers' fat-tree routing,
  // "D-mod-k": non-blocking for the shift permutations of ring collectives, Zahavi et al.,
  // Hot Interconnects 2010), or by a hash of (source, destination) (Ethernet ECMP, where
  // flows may collide on one uplink).
  bool destination_routing = false;
  // Devices the fabric repeats after (0: none declared): shifting every device of a group by
  // a multiple of it maps the group's routes onto routes of the same links' kinds, edge for
  // edge, so a collective costs the same (CollectiveCostModel::estimate reuses it). A builder
  // declares it where its wiring and routing make that so (nvswitch_cluster.cpp).
  int translation_period = 0;
  // Where a builder declares a translation_period, how its nodes move when every device moves
  // by one period: node n of a band [first, first + size) goes to first + (n - first + step)
  // mod size (devices by the period, a node's NVSwitch and NICs with it, leaves to the next
  // leaves of their rail, spines turned as D-mod-k's choice turns); a node in no band stays.
  // The route between two devices shifted by m periods is then the route between them with
  // every node moved m times and each edge taken between the moved nodes (Router::
  // for_link_slots reads mirror routes that way). A builder declares bands only with a
  // period; tests/topologies/nvswitch_cluster_test.cpp checks them against the router.
  struct TranslationBand {
    int first = 0, size = 0, step = 0;
  };
  std::vector<TranslationBand> translation_bands;  // ascending by first, disjoint
  [[nodiscard]] int translate_node(int node, std::int64_t periods) const;
  [[nodiscard]] int translation_band(int node) const;  // index of node's band, -1: none
  // How edges move with the nodes, where a builder laid them out in bands: `rows` rows of
  // `row_length` edges from edge `first`, each row cut into blocks of `block` edges; one period
  // turns the rows by row_step (row r to (r + row_step) mod rows) and moves an edge within its
  // block by `step` (place i to (i + step) mod block). A period thus takes edge (a, b) to the
  // edge (translate_node(a), translate_node(b)), its node a to the translate of a: the
  // router reads a mirror route's links from its translate's by arithmetic, with no search
  // (Router::moved_slot), and checks each band against the nodes' moves when it is built.
  // An edge in no band is found between the moved nodes.
  struct EdgeBand {
    int first = 0;
    int rows = 1, row_length = 0, row_step = 0;
    int block = 0, step = 0;
  };
  std::vector<EdgeBand> edge_bands;  // ascending by first, disjoint
  // The edge `edge` moves to in `periods` periods, or -1 where it lies in no band.
  [[nodiscard]] int translate_edge(int edge, std::int64_t periods) const;
  // A band's two turns for one number of periods: its rows' (by row_step) and its places'
  // in a block (by step).
  struct EdgeTurns {
    std::int64_t periods = std::numeric_limits<std::int64_t>::min();  // none taken yet
    std::uint32_t rows = 0, places = 0;
  };
  // An edge's place in its band: the band (-1: none), the edge's row, the start of its block
  // in the row and its place in the block. A caller moving one edge many times (a base
  // route's links, Router::base_links) finds the place once.
  struct EdgePlace {
    int band = -1;
    std::uint32_t row = 0, block_start = 0, place = 0;
  };
  [[nodiscard]] EdgePlace edge_place(int edge) const;
  // Band `band`'s turns for `periods` periods: a caller moving many edges by one number of
  // periods (a mirror route's links) turns each band once, not once an edge.
  [[nodiscard]] EdgeTurns edge_turns(int band, std::int64_t periods) const;
  // The edge at place p (band >= 0) moved by its band's turns t: translate_edge by t.periods.
  // Its row turned, its place in its block turned (a band holds fewer than 2^31 edges).
  [[nodiscard]] int moved_edge(const EdgePlace& p, const EdgeTurns& t) const {
    const EdgeBand& b = edge_bands[static_cast<std::size_t>(p.band)];
    const auto rows = static_cast<std::uint32_t>(b.rows), block = static_cast<std::uint32_t>(b.block);
    std::uint32_t r = p.row + t.rows, q = p.place + t.places;
    if (r >= rows) r -= rows;
    if (q >= block) q -= block;
    return b.first + static_cast<int>(r * static_cast<std::uint32_t>(b.row_length) + p.block_start + q);
  }
  // Optical circuit switch reconfiguration time of a reconfigurable fabric (TPU v4: ~10 s);
  // zero when the fabric is not reconfigurable.
  Seconds reconfiguration_time{};
  // A reconfigurable torus's wiring per phase of a job (torus `ocs_phases`): from step
  // `from_step` on, the optical circuit switches wire the devices as `dims` (same device
  // count). Steps increase; before the first phase the wiring is `torus_dims`. Empty when
  // the wiring is static.
  struct OcsPhase {
    std::int64_t from_step = 0;
    std::vector<int> dims;
  };
  std::vector<OcsPhase> ocs_phases;
  // Sizes of a device torus whose device index is x0 + d0 * (x1 + d1 * ...); empty when
  // the devices do not form one (used by dimension-ordered collectives).
  std::vector<int> torus_dims;

 private:
  std::vector<TopoNode> nodes_;
  // Node names by run of nodes, ascending by first node: a rule (add_devices, add_switches)
  // or strings, one per node (add_device, add_switch, add_memory; consecutive ones join).
  struct NameRun {
    int first = 0, count = 0;
    NodeNamer rule;                  // empty: `names` holds them
    std::vector<std::string> names;  // where there is no rule
  };
  std::vector<NameRun> names_;
  void name_next(std::string name);  // the node just added
  int push_device();                 // a device node with the next device index; its node index
  std::vector<TopoEdge> edges_;
  std::vector<MemoryMedia> media_;  // of the memory nodes, by TopoNode::media
  // The distinct edge kinds the edges point to. Shared by copies of the graph (a deque keeps
  // its elements in place as it grows), so a copy's edges stay valid.
  std::shared_ptr<std::deque<EdgeKind>> kinds_ = std::make_shared<std::deque<EdgeKind>>();
  std::vector<int> device_node_;
  std::vector<int> node_of_;
  std::vector<int> host_index_;  // per node; -1: none set
};

struct TopologyContext {
  int devices = 0;      // total devices to place, in pool order
  std::string path;     // JSON pointer of the topology object, for messages
  Diagnostics* diag = nullptr;
  // Resolves a link description found in the topology's params (see resolve_link).
  std::function<LinkSpec(const nlohmann::json& desc, const std::string& path)> link;
};

class Topology {
 public:
  virtual ~Topology() = default;
  [[nodiscard]] virtual std::string_view type() const = 0;
  // Builds the graph for ctx.devices devices; reports impossible shapes to ctx.diag.
  [[nodiscard]] virtual TopologyGraph build(const TopologyContext& ctx) const = 0;
};

Registry<Topology>& topologies();
void register_builtin_topologies();

}  // namespace hcsim

namespace hcsim {

// Resolves a link description in a topology's params through ctx.link, or through
// resolve_link into ctx.diag when the caller gave no resolver.
LinkSpec topology_link(const TopologyContext& ctx, const nlohmann::json& desc, const std::string& path);

// Convenience for tools and tests: resolves {"type": ..., params} against topologies() and
// builds it for `devices` devices; problems go to `diag` (the graph is empty then).
TopologyGraph build_topology(const nlohmann::json& desc, int devices, const std::string& path, Diagnostics& diag);

// Report grouping of a link by its technology and name: "nvlink", "pcie", "infiniband",
// "ethernet", "optical", "cxl", else `fallback`.
std::string link_class_of(const LinkSpec& link, const std::string& fallback);

}  // namespace hcsim
