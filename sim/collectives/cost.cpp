#include "sim/collectives/cost.hpp"

#include <algorithm>
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

CollectiveCostModel::CollectiveCostModel(const TopologyGraph& g, CostOptions opt)
    : g_(g), opt_(std::move(opt)), router_(g), load_(2 * g.edges().size(), 0.0) {
  register_builtin_collectives();
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
    for (const auto& t : st.transfers) {
      const int a = rank_devices[static_cast<std::size_t>(t.src)], b = rank_devices[static_cast<std::size_t>(t.dst)];
      if (a == b || t.count == 0) continue;
      const Route& r = router_.device_route(a, b);
      HCSIM_ASSERT(r.reachable, "collective between unconnected devices");
      lat = max(lat, r.latency);
      ++moved;
      between += g_.node_of(a) != g_.node_of(b) ? 1 : 0;
      const double bytes = static_cast<double>(t.count) * element_size.value();
      sent_[static_cast<std::size_t>(t.src)] += bytes;
      for (std::size_t i = 0; i < r.edges.size(); ++i) {
        const auto e = static_cast<std::size_t>(r.edges[i]);
        const std::size_t slot = 2 * e + (r.nodes[i] == g_.edges()[e].a ? 0 : 1);
        if (load_[slot] == 0) touched.push_back(slot);
        load_[slot] += bytes;
      }
    }
    Seconds bw{};
    for (std::size_t slot : touched) {
      const auto& e = g_.edges()[slot / 2];
      bw = max(bw, Bytes(load_[slot]) / (e.bandwidth() * e.link.efficiency));
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
  std::map<int, int> per;
  for (int d : ranks) ++per[g_.node_of(d)];
  s.nodes = static_cast<int>(per.size());
  s.per_node = per.begin()->second;
  for (const auto& [node, count] : per)
    if (count != s.per_node) s.per_node = 0;
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
                                                      CollectiveOp op, Bytes per_rank, int ranks) const {
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
  for (const ProtocolCost& p : set.protocols) {
    if (a.simple_only && p.protocol != Protocol::simple && p.protocol != Protocol::direct) continue;
    const int channels = set.channels(p, per_rank, ranks);
    Seconds bw = net.bandwidth_term;
    if (p.channel_bandwidth.value() > 0) bw = max(bw, net.rank_bytes / (p.channel_bandwidth * channels));
    bw /= p.fraction(a.family);
    const Seconds lat = net.latency_term + p.base_latency + p.nvlink_step_latency * (steps - net_steps) +
                        p.net_step_latency * net_steps;
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
                                                 const GroupShape& shape, CollectiveOp op,
                                                 std::int64_t elements) const {
  const Bytes per_rank(static_cast<double>(elements));
  if (a.analytic_only) {
    CollectiveEstimate est = in_network(ranks, elements);
    est.algorithm = a.name;
    if (!std::isfinite(est.time.value())) return est;
    return with_protocol(a, est, op, per_rank, shape.ranks);
  }
  ScheduleRequest req{op, shape, elements, 1, true};
  if (a.pipelined) {
    // c = sqrt(S (D - 1) / (alpha B)) minimises (c + D - 1)(alpha + S / (c B)); alpha, B of
    // the first hop (rank 0 -> rank 1: parent/child in the tree, neighbours on the chain).
    const Route& r = router_.device_route(ranks[0], ranks[1]);
    const int depth = a.depth(shape.ranks);
    const double bytes = static_cast<double>(elements) * a.share(op);
    const double c = std::sqrt(bytes * (depth - 1) / std::max(1e-300, r.latency.value() * r.bottleneck.value()));
    req.chunks = static_cast<int>(std::clamp(std::round(c), 1.0, 256.0));
  }
  const Schedule sc = a.schedule(req);
  CollectiveEstimate est = schedule_time(sc, ranks);
  est.algorithm = a.name;
  est.chunks = req.chunks;
  return with_protocol(a, est, op, per_rank, shape.ranks);
}

CollectiveEstimate CollectiveCostModel::estimate(const std::vector<int>& devices, CollectiveOp op, Bytes per_rank,
                                                 std::string_view algorithm) const {
  auto key = std::make_tuple(devices, static_cast<int>(op), per_rank.value(), std::string(algorithm));
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
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
  if (algorithm == "auto") {
    best.time = Seconds(std::numeric_limits<double>::infinity());
    for (const CollectiveAlgorithm* a : auto_candidates()) {
      if (!a->supports(op, shape) || (a->auto_max_ranks > 0 && n > a->auto_max_ranks)) continue;
      CollectiveEstimate e = evaluate(*a, ranks, shape, op, elements);
      if (e.time < best.time) best = e;
    }
    HCSIM_ASSERT(std::isfinite(best.time.value()), "no algorithm for " + std::string(collective_op_name(op)));
  } else {
    const CollectiveAlgorithm* a = find_collective_algorithm(algorithm);
    if (!a)
      throw InputError("", "unknown collective algorithm \"" + std::string(algorithm) + "\"; " +
                               valid_list(collective_algorithm_names()));
    if (!a->supports(op, shape))
      throw InputError("", fmt::format("collective algorithm \"{}\" does not support {} on this group of {} ranks",
                                       algorithm, collective_op_name(op), n));
    best = evaluate(*a, ranks, shape, op, elements);
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
