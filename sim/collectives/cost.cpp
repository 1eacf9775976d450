#include "sim/collectives/cost.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

namespace hcsim {

double busbw_factor(CollectiveOp op, int n) {
  const double k = n;
  switch (op) {
    case CollectiveOp::all_reduce: return 2.0 * (k - 1) / k;
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather:
    case CollectiveOp::all_to_all: return (k - 1) / k;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
    case CollectiveOp::send_recv: return 1.0;
  }
  return 1.0;
}

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t x) {
  h ^= x + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  return h;
}

std::uint64_t mix(std::uint64_t h, const std::vector<int>& v) {
  h = mix(h, v.size());
  for (int x : v) h = mix(h, static_cast<std::uint32_t>(x));
  return h;
}

}  // namespace

std::size_t CollectiveCostModel::KeyHash::operator()(const MemoKey& k) const {
  std::uint64_t h = mix(0, std::get<0>(k));
  h = mix(h, static_cast<std::uint64_t>(std::get<1>(k)));
  h = mix(h, std::bit_cast<std::uint64_t>(std::get<2>(k)));
  h = mix(h, std::hash<std::string>{}(std::get<3>(k)));
  return static_cast<std::size_t>(mix(h, static_cast<std::uint64_t>(std::get<4>(k))));
}

std::size_t CollectiveCostModel::KeyHash::operator()(const AloneKey& k) const {
  std::uint64_t h = mix(0, std::get<0>(k));
  h = mix(h, static_cast<std::uint64_t>(std::get<1>(k)));
  return static_cast<std::size_t>(mix(h, static_cast<std::uint64_t>(std::get<2>(k))));
}

CollectiveCostModel::CollectiveCostModel(const TopologyGraph& g, CostOptions opt)
    : g_(g), opt_(std::move(opt)), router_(g), step_loads_(g, router_) {
  register_builtin_collectives();
  std::vector<char> center(g.nodes().size(), 0);
  for (int d = 0; d < router_.domains(); ++d)
    if (const int c = router_.star_center(d); c >= 0) center[static_cast<std::size_t>(c)] = 1;
  for (std::size_t n = 0; n < g.nodes().size() && !fabric_reduces_; ++n)
    fabric_reduces_ = g.nodes()[n].in_switch_reduction && !center[n];
}

std::optional<CollectiveCostModel::StarGroup> CollectiveCostModel::star_group(const std::vector<int>& devices,
                                                                              const std::vector<int>& siblings) const {
  if (devices.empty() || fabric_reduces_ || !g_.torus_dims.empty() ||
      static_cast<int>(devices.size()) >= g_.device_count())
    return std::nullopt;
  const int home = router_.device_star(devices.front());
  if (home < 0) return std::nullopt;
  const TopoEdge& link = g_.edges()[static_cast<std::size_t>(router_.star_edge(devices.front()))];
  StarGroup k{static_cast<int>(devices.size()), link.effective_bandwidth().value(), link.link().latency.value(),
              g_.nodes()[static_cast<std::size_t>(router_.star_center(home))].in_switch_reduction};
  for (const int d : devices) {
    const TopoEdge& e = g_.edges()[static_cast<std::size_t>(router_.star_edge(d))];
    if (router_.device_star(d) != home || e.effective_bandwidth().value() != k.bandwidth ||
        e.link().latency.value() != k.latency)
      return std::nullopt;
  }
  if (!siblings.empty() && !step_loads_.disjoint_stars(devices, siblings)) return std::nullopt;
  return k;
}

void CollectiveCostModel::charge(const Route& r, std::size_t from, std::size_t to, double bytes,
                                 std::vector<std::size_t>& touched, std::vector<std::size_t>* owned) const {
  // Sized on first use: where the step shapes (StepLoads) answer every step, never.
  if (load_.empty()) load_ = ZeroArray<double>(2 * g_.edges().size());
  for (std::size_t i = from; i < to; ++i) {
    const std::size_t slot = router_.link_slot(r, i);
    if (load_[slot] == 0) touched.push_back(slot);
    load_[slot] += bytes;
    if (owned) owned->push_back(slot);
  }
}

bool CollectiveCostModel::nodes_reduce(const std::vector<int>& ranks, const GroupShape& shape) const {
  if (shape.per_node < 2) return false;
  for (int nd = 0; nd < shape.nodes; ++nd) {
    const auto first = static_cast<std::size_t>(nd * shape.per_node);
    if (reducing_switch(g_, router_.device_route(ranks[first], ranks[first + 1])) < 0) return false;
  }
  return true;
}

void CollectiveCostModel::route_step(std::vector<std::size_t>& touched, Seconds& lat, int& between) const {
  step_loads_.for_hops(
      step_key_, siblings_,
      [&](int from, int to, std::uint32_t i, bool own) {
        const Route& r = router_.device_route(from, to);
        HCSIM_ASSERT(r.reachable || !own, "collective between unconnected devices");
        charge(r, 0, r.edges.size(), step_bytes_[i], touched, nullptr);
        return r.latency;
      },
      lat, between);
}

CollectiveEstimate CollectiveCostModel::schedule_time(const Schedule& sc, const std::vector<int>& rank_devices,
                                                      Bytes element_size) const {
  HCSIM_ASSERT(static_cast<int>(rank_devices.size()) == sc.ranks, "one device per rank");
  CollectiveEstimate est;
  std::vector<std::size_t> touched;
  sent_.assign(static_cast<std::size_t>(sc.ranks), 0.0);
  for (const auto& st : sc.steps) {
    Seconds lat{};
    int moved = 0, between = 0;
    multimem_.clear();
    step_key_.assign(1, siblings_id_);
    step_bytes_.clear();
    for (const auto& t : st.transfers) {
      const int a = rank_devices[static_cast<std::size_t>(t.src)], b = rank_devices[static_cast<std::size_t>(t.dst)];
      if (a == b || t.count == 0) continue;
      ++moved;
      const double bytes = static_cast<double>(t.count) * element_size.value();
      sent_[static_cast<std::size_t>(t.src)] += bytes;
      if (t.multimem) {
        multimem_.push_back(&t);
        continue;
      }
      const int v = t.via >= 0 ? rank_devices[static_cast<std::size_t>(t.via)] : b;
      step_key_.insert(step_key_.end(), {a, v, b});
      step_bytes_.push_back(bytes);
    }
    Seconds bw{};
    StepLoads::StepTime known;
    if (opt_.reuse_step_shapes && multimem_.empty() && step_loads_.time(step_key_, siblings_, step_bytes_, known)) {
      lat = known.latency;
      bw = known.bandwidth;
      between = known.between;
    } else {
      route_step(touched, lat, between);
      if (!multimem_.empty() && !charge_multimem(multimem_, rank_devices, element_size, touched, lat, nullptr)) {
        for (std::size_t slot : touched) load_[slot] = 0;
        est.time = Seconds(std::numeric_limits<double>::infinity());
        return est;
      }
    }
    for (std::size_t slot : touched) {
      const auto& e = g_.edges()[slot / 2];
      bw = max(bw, Bytes(load_[slot]) / e.effective_bandwidth());
      load_[slot] = 0;
    }
    touched.clear();
    double most = 0;
    for (double& x : sent_) {
      most = std::max(most, x);
      x = 0;
    }
    est.latency_term += (lat + opt_.step_overhead) * static_cast<double>(st.repeat);
    est.bandwidth_term += bw * static_cast<double>(st.repeat);
    est.rank_bytes += Bytes(most * st.repeat);
    if (moved > 0) est.net_steps += static_cast<double>(between) / moved * st.repeat;
    est.steps += st.repeat;
  }
  est.time = est.latency_term + est.bandwidth_term;
  return est;
}

double CollectiveCostModel::node_share(const GroupShape& shape) const {
  if (!opt_.deepep || (shape.nodes > 1 && shape.per_node == 0)) return 1;
  return deepep_node_share(*opt_.deepep, shape.nodes);
}

std::vector<double> CollectiveCostModel::block_weights(const std::vector<int>& devices, const std::vector<int>& ranks,
                                                       CollectiveOp op) const {
  if (op != CollectiveOp::all_to_all || !opt_.routing) return {};
  const std::vector<double> by_expert_rank = rank_block_weights(*opt_.routing, static_cast<int>(devices.size()));
  if (by_expert_rank.empty()) return {};
  std::vector<double> w(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r)
    w[r] =
        by_expert_rank[static_cast<std::size_t>(std::find(devices.begin(), devices.end(), ranks[r]) - devices.begin())];
  return w;
}

GroupShape CollectiveCostModel::shape_of(const std::vector<int>& devices, std::vector<int>& ranks) const {
  GroupShape s;
  s.ranks = static_cast<int>(devices.size());
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  HCSIM_ASSERT(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "a group lists a device twice");
  const bool whole_torus = !g_.torus_dims.empty() && s.ranks == g_.device_count();
  if (whole_torus) {
    ranks = sorted;
    s.torus_dims = g_.torus_dims;
  } else {
    ranks = devices;
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) { return g_.node_of(a) < g_.node_of(b); });
  }
  // Devices per node: the runs of the ranks' nodes in order (ranks sorted by node but for a
  // whole torus, whose nodes are sorted here).
  std::vector<int> nodes(ranks.size());
  std::transform(ranks.begin(), ranks.end(), nodes.begin(), [&](int d) { return g_.node_of(d); });
  if (!std::is_sorted(nodes.begin(), nodes.end())) std::sort(nodes.begin(), nodes.end());
  s.nodes = 0;
  s.per_node = -1;
  for (std::size_t i = 0, j = 0; i < nodes.size(); i = j) {
    while (j < nodes.size() && nodes[j] == nodes[i]) ++j;
    ++s.nodes;
    const auto count = static_cast<int>(j - i);
    s.per_node = s.per_node < 0 || s.per_node == count ? count : 0;
  }
  s.per_node = std::max(s.per_node, 0);
  if (s.nodes > 1 && s.per_node > 1) {
    // Rails: node 0's local 0 -> node 1's local 1 against node 0's local 1 -> the same.
    const auto far = static_cast<std::size_t>(s.per_node + 1);
    s.pxn = router_.device_route(ranks[0], ranks[far]).edges.size() >
            router_.device_route(ranks[1], ranks[far]).edges.size();
  }
  return s;
}

CollectiveEstimate CollectiveCostModel::in_network(const std::vector<int>& ranks, std::int64_t elements) const {
  CollectiveEstimate best;
  best.time = Seconds(std::numeric_limits<double>::infinity());
  for (std::size_t root = 0; root < g_.nodes().size(); ++root) {
    if (!g_.nodes()[root].in_switch_reduction) continue;
    Seconds lat{};
    BytesPerSecond bw(std::numeric_limits<double>::infinity());
    bool ok = true;
    for (int d : ranks) {
      const Route& r = router_.route(g_.device_node(d), static_cast<int>(root));
      for (std::size_t i = 1; ok && i + 1 < r.nodes.size(); ++i)
        ok = g_.nodes()[static_cast<std::size_t>(r.nodes[i])].in_switch_reduction;
      if (!ok || !r.reachable) { ok = false; break; }
      lat = max(lat, r.latency);
      bw = min(bw, r.bottleneck);
    }
    if (!ok) continue;
    // NVLink SHARP as NCCL's NVLS runs it: a reduce-scatter by multimem loads (the switch
    // reads each GPU's S and returns the reduced S/n slice to its owner) and an all-gather by
    // multimem stores (each GPU's S/n slice, multicast back to all): each device link carries
    // S + S/n = S (n + 1)/n each way [D], so busbw = 2(n - 1)/(n + 1) B, level with the ring
    // at n = 3 and ahead of it beyond.
    // On one node this is NCCL's NVLS: its multimem traffic gets nvls_efficiency x (channels -
    // 1)/channels of the links (tuning.cc); across nodes (SHARP in the fabric) the links' own.
    bool one_node = true;
    for (int d : ranks) one_node = one_node && g_.node_of(d) == g_.node_of(ranks[0]);
    if (one_node) bw = bw * opt_.protocols.nvls.bandwidth_share();
    const double n = static_cast<double>(ranks.size());
    const Seconds t = lat * 2.0 + opt_.step_overhead * 2.0 + Bytes(static_cast<double>(elements) * (n + 1) / n) / bw;
    if (t < best.time) {
      best.time = t;
      best.latency_term = lat * 2.0 + opt_.step_overhead * 2.0;
      best.bandwidth_term = t - best.latency_term;
      best.steps = 2;
      best.net_steps = 0;
      for (int d : ranks) best.net_steps = g_.node_of(d) != g_.node_of(ranks[0]) ? 2.0 : best.net_steps;
    }
  }
  return best;
}

CollectiveEstimate CollectiveCostModel::with_protocol(const CollectiveAlgorithm& a, const CollectiveEstimate& net,
                                                      CollectiveOp op, Bytes per_rank, const GroupShape& shape) const {
  const int ranks = shape.ranks;
  // Pipelined algorithms pay the protocol's step latency once per level of the pipeline
  // (NCCL's tree: 2 log2(nodes) network hops), not once per chunk.
  const int pipeline_steps = a.pipelined ? (op == CollectiveOp::all_reduce ? 2 : 1) * (net.chunks - 1) : 0;
  const double steps = net.steps - pipeline_steps;
  const double net_steps = net.steps > 0 ? net.net_steps * steps / net.steps : 0;
  CollectiveEstimate best = net;
  best.time = Seconds(std::numeric_limits<double>::infinity());
  // A device torus (TPU ICI) runs its own collectives, not NCCL's: no protocol costs there.
  // Nor on a send-receive: the step's point-to-point sends (pipeline stages, context-parallel
  // ring steps) are the engine's send tasks, costed by their route alone in every mode.
  const ProtocolSet ideal = ProtocolSet::ideal();
  const bool nccl = a.nccl_protocols && g_.torus_dims.empty() && op != CollectiveOp::send_recv;
  const ProtocolSet& set = nccl ? opt_.protocols : ideal;
  // NVLink SHARP (NVLS on one node, NVLS_TREE across nodes; in_network across nodes is SHARP
  // in the fabric, costed as Simple): tuning.cc's latency once, not per step, and on several
  // nodes its busbw limit per channel; the links' share is in the network time already.
  const bool nvls = a.family == ProtocolFamily::nvls && (shape.nodes == 1 || !a.analytic_only);
  for (const ProtocolCost& p : set.protocols) {
    if (a.simple_only && p.protocol != Protocol::simple && p.protocol != Protocol::direct) continue;
    int channels = 0;
    Seconds bw = net.bandwidth_term, lat{};
    if (nvls) {
      const NvlsCost& v = set.nvls;
      channels = std::max(1, v.channels);
      const BytesPerSecond cap = v.tree_channel_limit(shape.nodes);
      if (shape.nodes > 1 && cap.value() > 0) bw = max(bw, per_rank * busbw_factor(op, ranks) / (cap * channels));
      lat = net.latency_term + (shape.nodes > 1 ? v.tree_latency(shape.nodes) : v.latency);
    } else {
      channels = set.channels(p, per_rank, ranks);
      if (p.channel_bandwidth.value() > 0) bw = max(bw, net.rank_bytes / (p.channel_bandwidth * channels));
      bw /= p.fraction(a.family);
      lat = net.latency_term + p.base_latency + p.nvlink_step_latency * (steps - net_steps) +
            p.net_step_latency * net_steps;
    }
    if (lat + bw < best.time) {
      best.time = lat + bw;
      best.latency_term = lat;
      best.bandwidth_term = bw;
      best.protocol = std::string(protocol_name(p.protocol));
      best.channels = channels;
    }
  }
  HCSIM_ASSERT(std::isfinite(best.time.value()), "no protocol for collective algorithm " + a.name);
  best.protocol_term = max(Seconds{}, best.time - net.time);
  return best;
}

CollectiveEstimate CollectiveCostModel::evaluate(const CollectiveAlgorithm& a, const std::vector<int>& ranks,
                                                 const GroupShape& shape, CollectiveOp op, std::int64_t elements,
                                                 const std::vector<double>& weight) const {
  const Bytes per_rank(static_cast<double>(elements));
  if (a.analytic_only) {
    CollectiveEstimate est = in_network(ranks, elements);
    est.algorithm = a.name;
    if (!std::isfinite(est.time.value())) return est;
    return with_protocol(a, est, op, per_rank, shape);
  }
  if (a.node_switch_reduction && !nodes_reduce(ranks, shape)) {
    CollectiveEstimate none;
    none.algorithm = a.name;
    none.time = Seconds(std::numeric_limits<double>::infinity());
    return none;
  }
  ScheduleRequest req{op, shape, elements, 1, true, node_share(shape), weight};
  if (a.pipelined) {
    // c = sqrt(S (D - 1) / (alpha B)) minimises (c + D - 1)(alpha + S / (c B)); S, B of the
    // slowest stage, alpha the largest (by default one stage, rank 0 -> rank 1: parent/child
    // in the tree, neighbours on the chain).
    const std::vector<PipelineStage> stages =
        a.stages ? a.stages(op, shape) : std::vector<PipelineStage>{{0, 1, a.share(op, shape)}};
    double bytes = 0, alpha = 0, bw = 1;
    for (const PipelineStage& st : stages) {
      const Route& r =
          router_.device_route(ranks[static_cast<std::size_t>(st.from)], ranks[static_cast<std::size_t>(st.to)]);
      const double b = static_cast<double>(elements) * st.share;
      if (bytes == 0 || b / r.bottleneck.value() > bytes / bw) {
        bytes = b;
        bw = r.bottleneck.value();
      }
      alpha = std::max(alpha, r.latency.value());
    }
    const int depth = a.depth(shape);
    const double c = std::sqrt(bytes * (depth - 1) / std::max(1e-300, alpha * bw));
    req.chunks = static_cast<int>(std::clamp(std::round(c), 1.0, 256.0));
  }
  const Schedule sc = a.schedule(req);
  CollectiveEstimate est = schedule_time(sc, ranks);
  est.algorithm = a.name;
  est.chunks = req.chunks;
  if (!std::isfinite(est.time.value())) return est;
  return with_protocol(a, est, op, per_rank, shape);
}

CollectiveEstimate CollectiveCostModel::estimate(const std::vector<int>& devices, CollectiveOp op, Bytes per_rank,
                                                 std::string_view algorithm,
                                                 const std::vector<int>& siblings) const {
  if (const int period = g_.translation_period; period > 0 && !devices.empty()) {
    int low = *std::min_element(devices.begin(), devices.end());
    if (!siblings.empty()) low += std::min(0, *std::min_element(siblings.begin(), siblings.end()));
    if (const int shift = low / period * period; shift > 0) {
      std::vector<int> moved(devices);
      for (int& d : moved) d -= shift;
      return estimate(moved, op, per_rank, algorithm, siblings);
    }
  }
  const int siblings_id = step_loads_.siblings_id(siblings);
  auto key = std::make_tuple(devices, static_cast<int>(op), per_rank.value(), std::string(algorithm), siblings_id);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  struct Scope {  // the siblings load the links for this call only
    const std::vector<int>*& slot;
    int& id;
    ~Scope() {
      slot = nullptr;
      id = 0;
    }
  } scope{siblings_, siblings_id_};
  CollectiveEstimate best;
  const int n = static_cast<int>(devices.size());
  if (n < 2 || per_rank.value() <= 0) {
    best.algorithm = std::string(algorithm);
    return memo_.emplace(key, best).first->second;
  }
  std::vector<int> ranks;
  const GroupShape shape = shape_of(devices, ranks);
  std::int64_t elements = std::llround(per_rank.value());
  if (op == CollectiveOp::all_to_all) elements = (elements + n - 1) / n * n;
  const std::vector<double> weight = block_weights(devices, ranks, op);
  if (algorithm == "auto") {
    best.time = Seconds(std::numeric_limits<double>::infinity());
    // With siblings: their transfers only add load, so a candidate's time alone bounds its
    // time with them from below; candidates are costed with them in order of their time
    // alone, until that bound reaches the best so far.
    auto [slot, fresh] = alone_.try_emplace(std::make_tuple(devices, static_cast<int>(op), elements));
    std::vector<std::pair<double, const CollectiveAlgorithm*>>& order = slot->second;
    if (siblings.empty() || fresh) {
      order.clear();
      for (const CollectiveAlgorithm* a : auto_candidates()) {
        if (!a->supports(op, shape) || (a->auto_max_ranks > 0 && n > a->auto_max_ranks)) continue;
        CollectiveEstimate e = evaluate(*a, ranks, shape, op, elements, weight);
        if (e.time < best.time) best = e;
        if (std::isfinite(e.time.value())) order.emplace_back(e.time.value(), a);
      }
      std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    }
    if (!siblings.empty()) {
      siblings_ = &siblings;
      siblings_id_ = siblings_id;
      best = CollectiveEstimate{};
      best.time = Seconds(std::numeric_limits<double>::infinity());
      for (const auto& [alone, a] : order) {
        if (alone >= best.time.value()) break;
        CollectiveEstimate e = evaluate(*a, ranks, shape, op, elements, weight);
        if (e.time < best.time) best = e;
      }
    }
    HCSIM_ASSERT(std::isfinite(best.time.value()), "no algorithm for " + std::string(collective_op_name(op)));
  } else {
    if (!siblings.empty()) {
      siblings_ = &siblings;
      siblings_id_ = siblings_id;
    }
    const CollectiveAlgorithm* a = find_collective_algorithm(algorithm);
    if (!a)
      throw InputError("", "unknown collective algorithm \"" + std::string(algorithm) + "\"; " +
                               valid_list(collective_algorithm_names()));
    if (!a->supports(op, shape))
      throw InputError("", fmt::format("collective algorithm \"{}\" does not support {} on this group of {} ranks",
                                       algorithm, collective_op_name(op), n));
    best = evaluate(*a, ranks, shape, op, elements, weight);
    if (!std::isfinite(best.time.value()))
      throw InputError("", fmt::format("collective algorithm \"{}\" {}", a->name, a->needs));
  }
  best.algbw = per_rank / best.time;
  best.busbw = best.algbw * busbw_factor(op, n);
  return memo_.emplace(key, best).first->second;
}

Seconds collective_time(const TopologyGraph& g, const std::vector<int>& devices, CollectiveOp op, Bytes per_rank,
                        std::string_view algorithm) {
  return CollectiveCostModel(g).estimate(devices, op, per_rank, algorithm).time;
}

}  // namespace hcsim
