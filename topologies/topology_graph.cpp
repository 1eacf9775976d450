#include "topology.hpp"

#include <algorithm>
#include <iterator>

namespace hcsim {
namespace {

// x mod n in [0, n): a place turned round a band of n.
std::int64_t turn(std::int64_t x, std::int64_t n) {
  const std::int64_t m = x % n;
  return m < 0 ? m + n : m;
}

}  // namespace

void TopologyGraph::reserve(std::size_t nodes, std::size_t edges, std::size_t devices) {
  nodes_.reserve(nodes);
  edges_.reserve(edges);
  device_node_.reserve(devices);
  node_of_.reserve(devices);
}

int TopologyGraph::push_device() {
  const int device = static_cast<int>(device_node_.size()), node = static_cast<int>(nodes_.size());
  nodes_.push_back({.kind = TopoNode::Kind::device, .device = device});
  device_node_.push_back(node);
  node_of_.push_back(device);
  return node;
}

int TopologyGraph::add_device(std::string name, int device_index) {
  HCSIM_ASSERT(device_index == static_cast<int>(device_node_.size()), "devices must be added in index order");
  const int node = push_device();
  name_next(std::move(name));
  return node;
}

int TopologyGraph::add_switch(std::string name, bool in_switch_reduction) {
  nodes_.push_back({.kind = TopoNode::Kind::switch_node, .in_switch_reduction = in_switch_reduction});
  name_next(std::move(name));
  return static_cast<int>(nodes_.size()) - 1;
}

int TopologyGraph::add_memory(std::string name, Bytes capacity) {
  nodes_.push_back({.kind = TopoNode::Kind::memory, .media = static_cast<int>(media_.size())});
  media_.push_back({.capacity = capacity});
  name_next(std::move(name));
  return static_cast<int>(nodes_.size()) - 1;
}

void TopologyGraph::name_next(std::string name) {
  const int node = static_cast<int>(nodes_.size()) - 1;
  if (names_.empty() || names_.back().rule || names_.back().first + names_.back().count != node)
    names_.push_back({.first = node, .count = 0, .rule = {}, .names = {}});
  names_.back().names.push_back(std::move(name));
  names_.back().count += 1;
}

int TopologyGraph::add_devices(int count, NodeNamer name) {
  HCSIM_ASSERT(count >= 0 && name, "a run of devices has a count and a rule for names");
  if (count == 0) return -1;
  const int first = static_cast<int>(nodes_.size());
  for (int i = 0; i < count; ++i) push_device();
  names_.push_back({.first = first, .count = count, .rule = std::move(name), .names = {}});
  return first;
}

int TopologyGraph::add_switches(int count, NodeNamer name, bool in_switch_reduction) {
  HCSIM_ASSERT(count >= 0 && name, "a run of switches has a count and a rule for names");
  if (count == 0) return -1;
  const int first = static_cast<int>(nodes_.size());
  nodes_.insert(nodes_.end(), static_cast<std::size_t>(count),
                TopoNode{.kind = TopoNode::Kind::switch_node, .in_switch_reduction = in_switch_reduction});
  names_.push_back({.first = first, .count = count, .rule = std::move(name), .names = {}});
  return first;
}

std::string TopologyGraph::node_name(int node) const {
  HCSIM_ASSERT(node >= 0 && node < static_cast<int>(nodes_.size()), "node out of range");
  // The last run that starts at or before the node holds it: every node is named as added.
  const auto run = std::prev(
      std::upper_bound(names_.begin(), names_.end(), node, [](int v, const NameRun& r) { return v < r.first; }));
  const int i = node - run->first;
  return run->rule ? run->rule(i) : run->names[static_cast<std::size_t>(i)];
}

int TopologyGraph::add_edge(int a, int b, const LinkSpec& link, int lanes, std::string_view link_class) {
  return add_edge(a, b, edge_kind(link, lanes, link_class));
}

const EdgeKind& TopologyGraph::edge_kind(const LinkSpec& link, int lanes, std::string_view link_class) {
  // The numbers first: they tell most kinds apart without comparing names.
  const auto same = [&](const EdgeKind& k) {
    const LinkSpec& x = k.spec;
    return k.lanes == lanes && x.bandwidth == link.bandwidth && x.latency == link.latency &&
           x.efficiency == link.efficiency && x.energy_per_byte == link.energy_per_byte &&
           x.static_power == link.static_power && x.technology == link.technology && x.name == link.name &&
           k.link_class == link_class;
  };
  // A builder adds runs of edges of one kind: the last edge's is tried first.
  if (!edges_.empty() && same(*edges_.back().kind)) return *edges_.back().kind;
  auto k = std::find_if(kinds_->rbegin(), kinds_->rend(), same);
  return k != kinds_->rend() ? *k
                             : kinds_->emplace_back(EdgeKind{.spec = link,
                                                             .lanes = lanes,
                                                             .link_class = std::string(link_class),
                                                             .index = static_cast<int>(kinds_->size())});
}

int TopologyGraph::add_edge(int a, int b, const EdgeKind& kind) {
  HCSIM_ASSERT(a >= 0 && b >= 0 && a < static_cast<int>(nodes_.size()) && b < static_cast<int>(nodes_.size()) && a != b,
               "edge endpoints out of range");
  HCSIM_ASSERT(kind.index >= 0 && static_cast<std::size_t>(kind.index) < kinds_->size() &&
                   &(*kinds_)[static_cast<std::size_t>(kind.index)] == &kind,
               "an edge kind of another graph");
  edges_.push_back({a, b, &kind});
  return static_cast<int>(edges_.size()) - 1;
}

void TopologyGraph::set_memory_performance(int node, Seconds latency, BytesPerSecond bandwidth) {
  auto& n = nodes_.at(static_cast<std::size_t>(node));
  HCSIM_ASSERT(n.kind == TopoNode::Kind::memory, "memory performance set on a non-memory node");
  MemoryMedia& m = media_[static_cast<std::size_t>(n.media)];
  m.latency = latency;
  m.bandwidth = bandwidth;
}

const MemoryMedia& TopologyGraph::media(int node) const {
  const TopoNode& n = nodes_.at(static_cast<std::size_t>(node));
  HCSIM_ASSERT(n.kind == TopoNode::Kind::memory, "media of a node that is not memory");
  return media_[static_cast<std::size_t>(n.media)];
}

void TopologyGraph::set_scale_up_domain(int node, int domain) {
  HCSIM_ASSERT(domain >= 0, "a scale-up domain id is not negative");
  nodes_.at(static_cast<std::size_t>(node)).scale_up_domain = domain;
}

int TopologyGraph::translation_band(int node) const {
  const auto after = std::upper_bound(translation_bands.begin(), translation_bands.end(), node,
                                      [](int n, const TranslationBand& b) { return n < b.first; });
  if (after == translation_bands.begin()) return -1;
  const TranslationBand& b = *(after - 1);
  return node < b.first + b.size ? static_cast<int>(after - 1 - translation_bands.begin()) : -1;
}

int TopologyGraph::translate_node(int node, std::int64_t periods) const {
  const int band = translation_band(node);
  if (band < 0) return node;
  const TranslationBand& b = translation_bands[static_cast<std::size_t>(band)];
  return b.first + static_cast<int>(turn(node - b.first + periods * b.step, b.size));
}

TopologyGraph::EdgePlace TopologyGraph::edge_place(int edge) const {
  const auto after = std::upper_bound(edge_bands.begin(), edge_bands.end(), edge,
                                      [](int e, const EdgeBand& b) { return e < b.first; });
  if (after == edge_bands.begin()) return {};
  const EdgeBand& b = *(after - 1);
  if (edge - b.first >= std::int64_t{b.rows} * b.row_length) return {};
  const auto off = static_cast<std::uint32_t>(edge - b.first), length = static_cast<std::uint32_t>(b.row_length),
             block = static_cast<std::uint32_t>(b.block);
  const std::uint32_t row = off / length, col = off - row * length, place = col % block;
  return {static_cast<int>(after - 1 - edge_bands.begin()), row, col - place, place};
}

TopologyGraph::EdgeTurns TopologyGraph::edge_turns(int band, std::int64_t periods) const {
  const EdgeBand& b = edge_bands.at(static_cast<std::size_t>(band));
  return {periods, static_cast<std::uint32_t>(turn(periods * b.row_step, b.rows)),
          static_cast<std::uint32_t>(turn(periods * b.step, b.block))};
}

int TopologyGraph::translate_edge(int edge, std::int64_t periods) const {
  const EdgePlace p = edge_place(edge);
  return p.band < 0 ? -1 : moved_edge(p, edge_turns(p.band, periods));
}

void TopologyGraph::set_host_index(int node, int index) {
  HCSIM_ASSERT(node >= 0 && node < static_cast<int>(nodes_.size()) && index >= 0, "host index out of range");
  if (host_index_.size() < nodes_.size()) host_index_.resize(nodes_.size(), -1);
  host_index_[static_cast<std::size_t>(node)] = index;
}

void TopologyGraph::set_node_of(int device, int node) { node_of_.at(static_cast<std::size_t>(device)) = node; }

int TopologyGraph::locality_nodes() const {
  if (node_of_.empty()) return 0;
  return *std::max_element(node_of_.begin(), node_of_.end()) + 1;
}

}  // namespace hcsim
