#include "sim/engine/collective_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

using Pair = std::pair<int, int>;

std::vector<int> as_int(const std::vector<std::uint32_t>& v) { return {v.begin(), v.end()}; }

// A transfer that is a flow: not empty, between two ranks, not a multimem one (a timer).
bool is_flow(const Transfer& t) { return t.count > 0 && t.src != t.dst && !t.multimem; }

// The legs of a flow transfer: (src, dst), or (src, via) and (via, dst) when relayed (PXN).
template <class F>
void for_each_leg(const Transfer& t, F&& f) {
  if (t.via < 0 || t.via == t.src || t.via == t.dst) {
    f(t.src, t.dst);
    return;
  }
  f(t.src, t.via);
  f(t.via, t.dst);
}

bool has_multimem(const Step& st) {
  return std::any_of(st.transfers.begin(), st.transfers.end(),
                     [](const Transfer& t) { return t.multimem && t.count > 0 && t.src != t.dst; });
}

// Sorted distinct (src, dst) rank pairs of a step's flows.
std::vector<Pair> step_pairs(const Step& st) {
  std::vector<Pair> out;
  for (const Transfer& t : st.transfers)
    if (is_flow(t)) for_each_leg(t, [&](int a, int b) { out.emplace_back(a, b); });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Per-pair totals of `steps` (count x repeat), as one step of merged transfers.
// The legs are listed, sorted by pair and summed run by run (a ring's thousand pairs a step
// into a vector, not a tree node each); integer sums, so the order of the additions is moot.
Step merged_step(const std::vector<const Step*>& steps) {
  std::vector<std::pair<Pair, std::int64_t>> legs;
  for (const Step* s : steps)
    for (const Transfer& t : s->transfers)
      if (is_flow(t)) for_each_leg(t, [&](int a, int b) { legs.push_back({{a, b}, t.count * s->repeat}); });
  std::sort(legs.begin(), legs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  Step out;
  for (std::size_t i = 0; i < legs.size();) {
    std::int64_t count = 0;
    std::size_t j = i;
    for (; j < legs.size() && legs[j].first == legs[i].first; ++j) count += legs[j].second;
    out.transfers.push_back({legs[i].first.first, legs[i].first.second, 0, 0, count, false});
    i = j;
  }
  return out;
}

// The per-rank order of a schedule's transfers (already in step order): each rank's sends
// and how many transfers each rank sends or receives in each step.
void index_flow_schedule(FlowSchedule& f, std::uint32_t steps) {
  f.steps = steps;
  const auto n = static_cast<std::size_t>(f.ranks);
  f.send_begin.assign(n + 1, 0);
  for (const auto& x : f.transfers) ++f.send_begin[x.src + 1];
  for (std::size_t r = 1; r <= n; ++r) f.send_begin[r] += f.send_begin[r - 1];
  f.send_index.resize(f.transfers.size());
  std::vector<std::uint32_t> next(f.send_begin.begin(), f.send_begin.end() - 1);
  f.involvement.assign(n * steps, 0);
  for (std::uint32_t i = 0; i < f.transfers.size(); ++i) {
    const auto& x = f.transfers[i];
    f.send_index[next[x.src]++] = i;  // transfers are in step order, so each rank's sends are too
    for (std::uint32_t r : {x.src, x.dst}) {
      auto& c = f.involvement[static_cast<std::size_t>(r) * steps + x.step];
      HCSIM_ASSERT(c < 0xFFFF, "too many transfers of one rank in one step");
      ++c;
    }
  }
}

// The schedule as flows; a step's multimem transfers become one timer per rank (their time on
// an idle network, CollectiveCostModel::multimem_times).
std::shared_ptr<const FlowSchedule> flow_schedule(const Schedule& sc, const CollectiveCostModel& model,
                                                  const std::vector<int>& ranks) {
  auto f = std::make_shared<FlowSchedule>();
  f->ranks = sc.ranks;
  std::uint32_t step = 0;
  std::map<Pair, std::size_t> index;  // (src, dst) -> its flow in this step
  for (const Step& st : sc.steps) {
    HCSIM_ASSERT(st.repeat == 1, "flow mode replays uncompressed schedules");
    // Transfers of one step between the same pair are one flow (the parallel rings of
    // multi_ring share their intra-node hops), as event mode carries one flow per pair.
    index.clear();
    for (const Transfer& t : st.transfers) {
      if (!is_flow(t)) continue;
      // A relayed transfer's two legs run at once, as PXN's relay forwards while it receives.
      for_each_leg(t, [&](int a, int b) {
        const auto [it, fresh] = index.emplace(Pair{a, b}, f->transfers.size());
        if (fresh)
          f->transfers.push_back({static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b), step, 0.0});
        f->transfers[it->second].bytes += static_cast<double>(t.count);
      });
    }
    bool timers = false;
    if (has_multimem(st)) {
      const std::vector<Seconds> busy = model.multimem_times(st, ranks);
      for (std::size_t r = 0; r < busy.size(); ++r) {
        if (busy[r].value() <= 0) continue;
        const auto rank = static_cast<std::uint32_t>(r);
        f->transfers.push_back({rank, rank, step, 0.0, busy[r].value()});
        timers = true;
      }
    }
    if (!index.empty() || timers) ++step;
  }
  index_flow_schedule(*f, step);
  return f;
}

// Flow mode by phases: per phase, a timer on each rank that sends or receives in it, then the
// phase's flows, as two steps of the per-rank order (flow_schedule's): a rank starts its
// phase's timer once its transfers of the phase before have arrived, and its flows once its
// timer has run.
std::shared_ptr<const FlowSchedule> phase_flow_schedule(const std::vector<CoarsePhase>& phases,
                                                        const std::vector<std::uint32_t>& rank_devices) {
  auto f = std::make_shared<FlowSchedule>();
  const auto n = rank_devices.size();
  f->ranks = static_cast<int>(n);
  std::unordered_map<std::uint32_t, std::uint32_t> rank_of;
  for (std::size_t r = 0; r < n; ++r) rank_of.emplace(rank_devices[r], static_cast<std::uint32_t>(r));
  std::uint32_t step = 0;
  std::vector<char> in_phase(n);
  for (std::uint32_t k = 0; k < phases.size(); ++k) {
    const CoarsePhase& ph = phases[k];
    if (ph.timer.value() > 0) {  // a phase without flows (multimem transfers alone): every rank's
      std::fill(in_phase.begin(), in_phase.end(), ph.flows.empty() ? 1 : 0);
      for (const PlannedFlow& fl : ph.flows) in_phase[rank_of.at(fl.src)] = in_phase[rank_of.at(fl.dst)] = 1;
      for (std::uint32_t r = 0; r < n; ++r)
        if (in_phase[r]) f->transfers.push_back({r, r, step, 0.0, ph.timer.value()});
      f->phase_of_step.push_back(k);
      ++step;
    }
    if (ph.flows.empty()) continue;
    for (const PlannedFlow& fl : ph.flows)
      f->transfers.push_back({rank_of.at(fl.src), rank_of.at(fl.dst), step, fl.bytes});
    f->phase_of_step.push_back(k);
    ++step;
  }
  index_flow_schedule(*f, step);
  return f;
}

}  // namespace

int collective_size_bucket(double bytes) {
  return bytes < 2 ? 0 : static_cast<int>(std::floor(std::log2(bytes)));
}

std::string resolve_collective_algorithm(const CollectiveCostModel& model, const std::vector<int>& devices,
                                         CollectiveOp op, Bytes per_rank, std::string_view requested,
                                         const std::vector<int>& siblings) {
  if (op == CollectiveOp::all_to_all && model.options().deepep) {
    // An MoE model's dispatch or combine under strategy.moe_dispatch = "deepep".
    const CollectiveAlgorithm* a = find_collective_algorithm(kDeepepAlgorithm);
    std::vector<int> ranks;
    if (a->supports(op, model.shape_of(devices, ranks))) return a->name;
  }
  if (requested != "auto") {
    const CollectiveAlgorithm* a = find_collective_algorithm(requested);
    if (!a)
      throw InputError("", "unknown collective algorithm \"" + std::string(requested) + "\"; " +
                               valid_list(collective_algorithm_choices()));
    std::vector<int> ranks;
    if (a->supports(op, model.shape_of(devices, ranks))) {
      if (!a->analytic_only && !a->node_switch_reduction) return a->name;
      try {  // in-network reduction needs reducing switches on every path; the model says
        (void)model.estimate(devices, op, per_rank, a->name);
        return a->name;
      } catch (const InputError&) {
      }
    }
  }
  return model.estimate(devices, op, per_rank, "auto", siblings).algorithm;
}

CollectivePlanner::CollectivePlanner(const TopologyGraph& g, std::string algorithm, bool flow_mode, CostOptions cost,
                                     bool flow_phases)
    : g_(g),
      algorithm_(std::move(algorithm)),
      flow_(flow_mode),
      flow_phases_(flow_mode && flow_phases),
      model_(g, std::move(cost)) {}

std::string CollectivePlanner::choose(const std::vector<std::uint32_t>& group, CollectiveOp op, double bytes,
                                      CollectiveFamily family) {
  const int bucket = collective_size_bucket(bytes);
  const bool kin = family.siblings && !family.siblings->empty();
  std::vector<std::uint32_t> first = group;  // the family's first member
  if (kin)
    for (std::uint32_t& d : first) d = static_cast<std::uint32_t>(static_cast<int>(d) + family.first);
  auto key = std::make_tuple(std::move(first), static_cast<int>(op), bucket, kin);
  if (auto it = choice_.find(key); it != choice_.end()) return it->second;
  static const std::vector<int> none;
  const std::string name = resolve_collective_algorithm(
      model_, as_int(std::get<0>(key)), op, Bytes(std::ldexp(1.0, bucket)), algorithm_, kin ? *family.siblings : none);
  return choice_.emplace(std::move(key), name).first->second;
}

const CollectiveExpansion& CollectivePlanner::plan(const std::vector<std::uint32_t>& group, CollectiveOp op,
                                                   double bytes, std::string_view algorithm, CollectiveFamily family) {
  std::string name(algorithm);
  const bool trivial = group.size() < 2 || bytes <= 0;
  if (name.empty() && !trivial) name = choose(group, op, bytes, family);
  auto key = std::make_tuple(group, static_cast<int>(op), bytes, name);
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
  auto p = std::make_unique<CollectiveExpansion>();
  if (!trivial) *p = build(as_int(group), op, bytes, name);
  return *plans_.emplace(std::move(key), std::move(p)).first->second;
}

CollectiveExpansion CollectivePlanner::build(const std::vector<int>& devices, CollectiveOp op, double bytes,
                                        const std::string& algorithm) {
  CollectiveExpansion p;
  p.algorithm = algorithm;
  p.bytes = bytes;
  p.estimate = model_.estimate(devices, op, Bytes(bytes), algorithm);
  const CollectiveAlgorithm* a = find_collective_algorithm(algorithm);
  HCSIM_ASSERT(a != nullptr, "planned an unknown collective algorithm " + algorithm);
  std::vector<int> ranks;
  const GroupShape shape = model_.shape_of(devices, ranks);
  p.rank_devices.assign(ranks.begin(), ranks.end());
  if (a->analytic_only) {
    p.reduction_root = reduction_root(ranks, bytes);
    p.phases.push_back({p.estimate.time, {}});
    return p;
  }
  const int n = static_cast<int>(ranks.size());
  std::int64_t elements = std::llround(bytes);
  if (op == CollectiveOp::all_to_all) elements = (elements + n - 1) / n * n;
  const Schedule sc = a->schedule({op, shape, elements, p.estimate.chunks, !flow_ || flow_phases_,
                                   model_.node_share(shape), model_.block_weights(devices, ranks, op)});
  std::vector<const Step*> all;
  for (const Step& st : sc.steps) all.push_back(&st);
  for (const Transfer& t : merged_step(all).transfers)
    p.pair_bytes.push_back({p.rank_devices[static_cast<std::size_t>(t.src)],
                            p.rank_devices[static_cast<std::size_t>(t.dst)], static_cast<double>(t.count)});
  if (a->node_switch_reduction) {
    std::vector<double> on_edge(g_.edges().size(), 0.0);
    for (const Step& st : sc.steps)
      if (has_multimem(st)) model_.add_multimem_edge_bytes(st, ranks, on_edge);
    for (std::size_t e = 0; e < on_edge.size(); ++e)
      if (on_edge[e] > 0) p.switch_bytes.emplace_back(static_cast<int>(e), on_edge[e]);
  }
  if (flow_phases_) {
    coarse_phases(p, sc, ranks);
    p.flow = phase_flow_schedule(p.phases, p.rank_devices);
    p.phases.clear();
  } else if (flow_) {
    p.flow = flow_schedule(sc, model_, ranks);
  } else {
    coarse_phases(p, sc, ranks);
    // The protocol's base and per-step latency and its bandwidth share (protocol.hpp) are
    // not in the links; a timer before the first phase carries them (flow mode: replay).
    if (!p.phases.empty()) p.phases.front().timer += p.estimate.protocol_term;
  }
  return p;
}

std::optional<std::int64_t> CollectivePlanner::shift(const CollectiveExpansion& base,
                                                     const std::vector<std::uint32_t>& base_group,
                                                     const std::vector<std::uint32_t>& group) const {
  if (flow_ || base.rank_devices.empty() || group.empty() || group.size() != base_group.size()) return std::nullopt;
  const CollectiveAlgorithm* a = find_collective_algorithm(base.algorithm);
  if (!a || a->pipelined || a->analytic_only || a->node_switch_reduction) return std::nullopt;
  const std::int64_t o = std::int64_t{group[0]} - std::int64_t{base_group[0]};
  for (std::size_t i = 0; i < group.size(); ++i)
    if (std::int64_t{group[i]} - std::int64_t{base_group[i]} != o) return std::nullopt;
  // The base group's shape once (a collective has a mirror per other replica).
  auto [at, fresh] = shapes_.try_emplace(base_group);
  if (fresh) at->second.shape = model_.shape_of(as_int(base_group), at->second.ranks);
  const GroupShape& b = at->second.shape;
  // A group whose devices' nodes are the base's moved by one node offset has the base's node
  // counts, and shape_of (ranks stably sorted by node) orders its ranks as the base's: the
  // base's ranks moved by o. Where the base spans several nodes with several devices each,
  // its rails (pxn) are read from routes, and a whole torus has its own order: those groups
  // are shaped in full.
  bool moved = b.torus_dims.empty() && !(b.nodes > 1 && b.per_node > 1);
  const std::int64_t dn =
      std::int64_t{g_.node_of(static_cast<int>(group[0]))} - g_.node_of(static_cast<int>(base_group[0]));
  for (std::size_t i = 1; moved && i < group.size(); ++i)
    moved = std::int64_t{g_.node_of(static_cast<int>(group[i]))} - g_.node_of(static_cast<int>(base_group[i])) == dn;
  std::vector<int>& ranks = scratch_ranks_;
  if (moved) {
    ranks.clear();
    for (int r : at->second.ranks) ranks.push_back(static_cast<int>(r + o));
  } else {
    const GroupShape s = model_.shape_of(as_int(group), ranks);
    if (s.ranks != b.ranks || s.nodes != b.nodes || s.per_node != b.per_node || s.torus_dims != b.torus_dims ||
        s.pxn != b.pxn)
      return std::nullopt;
  }
  if (ranks.size() != base.rank_devices.size()) return std::nullopt;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] - std::int64_t{base.rank_devices[i]} != o) return std::nullopt;
  HCSIM_ASSERT(base.switch_bytes.empty() && base.reduction_root < 0 && !base.flow, "a shifted plan with no flows");
  return o;
}

std::unique_ptr<CollectiveExpansion> CollectivePlanner::shifted(const CollectiveExpansion& base,
                                                                const std::vector<std::uint32_t>& base_group,
                                                                const std::vector<std::uint32_t>& group) const {
  const std::optional<std::int64_t> o = shift(base, base_group, group);
  if (!o) return nullptr;
  auto p = std::make_unique<CollectiveExpansion>(base);
  const auto move = [o](std::uint32_t& d) { d = static_cast<std::uint32_t>(std::int64_t{d} + *o); };
  for (std::uint32_t& d : p->rank_devices) move(d);
  for (CoarsePhase& ph : p->phases)
    for (PlannedFlow& f : ph.flows) {
      move(f.src);
      move(f.dst);
    }
  for (PlannedFlow& f : p->pair_bytes) {
    move(f.src);
    move(f.dst);
  }
  return p;
}

void CollectivePlanner::coarse_phases(CollectiveExpansion& p, const Schedule& sc, const std::vector<int>& ranks) const {
  std::vector<Pair> pairs;
  std::vector<const Step*> cur;
  auto flush = [&] {
    if (cur.empty()) return;
    Schedule phase{sc.op, sc.ranks, sc.elements, {}, sc.root};
    for (const Step* s : cur) phase.steps.push_back(*s);
    Schedule merged{sc.op, sc.ranks, sc.elements, {merged_step(cur)}, sc.root};
    const Seconds t_phase = model_.schedule_time(phase, ranks).time;
    const Seconds t_merged = model_.schedule_time(merged, ranks).time;
    CoarsePhase c{max(Seconds{}, t_phase - t_merged), {}};
    for (const Transfer& t : merged.steps[0].transfers)
      c.flows.push_back({p.rank_devices[static_cast<std::size_t>(t.src)],
                         p.rank_devices[static_cast<std::size_t>(t.dst)], static_cast<double>(t.count)});
    p.phases.push_back(std::move(c));
    cur.clear();
  };
  for (const Step& st : sc.steps) {
    std::vector<Pair> q = step_pairs(st);
    // A step of multimem transfers alone joins the phase before it (its time is in the timer).
    if (q.empty() && !has_multimem(st)) continue;
    const bool joins = !cur.empty() && (std::includes(pairs.begin(), pairs.end(), q.begin(), q.end()) ||
                                        std::includes(q.begin(), q.end(), pairs.begin(), pairs.end()));
    if (!joins) {
      flush();
      pairs.clear();
    }
    std::vector<Pair> u;
    std::set_union(pairs.begin(), pairs.end(), q.begin(), q.end(), std::back_inserter(u));
    pairs = std::move(u);
    cur.push_back(&st);
  }
  flush();
}

// The reducing switch the cost model's in-network estimate uses: every path from a group
// device to it crosses reducing switches only, and 2 x latency + S / bottleneck is least.
int CollectivePlanner::reduction_root(const std::vector<int>& devices, double bytes) const {
  int best = -1;
  double best_t = std::numeric_limits<double>::infinity();
  for (std::size_t root = 0; root < g_.nodes().size(); ++root) {
    if (!g_.nodes()[root].in_switch_reduction) continue;
    Seconds lat{};
    BytesPerSecond bw(std::numeric_limits<double>::infinity());
    bool ok = true;
    for (int d : devices) {
      const Route& r = router().route(g_.device_node(d), static_cast<int>(root));
      ok = r.reachable;
      for (std::size_t i = 1; ok && i + 1 < r.nodes.size(); ++i)
        ok = g_.nodes()[static_cast<std::size_t>(r.nodes[i])].in_switch_reduction;
      if (!ok) break;
      lat = max(lat, r.latency);
      bw = min(bw, r.bottleneck);
    }
    if (!ok) continue;
    const double t = 2 * lat.value() + bytes / bw.value();
    if (t < best_t) {
      best_t = t;
      best = static_cast<int>(root);
    }
  }
  HCSIM_ASSERT(best >= 0, "in-network reduction without a reducing switch");
  return best;
}

void CollectivePlanner::add_timer_bytes(const CollectiveExpansion& p, std::vector<double>& edge_bytes,
                                        double copies) const {
  for (const auto& [e, bytes] : p.switch_bytes) edge_bytes[static_cast<std::size_t>(e)] += bytes * copies;
  if (p.reduction_root >= 0) {
    // Each device's S goes up and its reduced S/n slice comes back (reduce-scatter), then its
    // slice goes up and all S comes down (all-gather): S (n + 1)/n each way (cost.cpp).
    const double n = static_cast<double>(p.rank_devices.size());
    for (std::uint32_t d : p.rank_devices)
      for (int e : router().route(g_.device_node(static_cast<int>(d)), p.reduction_root).edges)
        edge_bytes[static_cast<std::size_t>(e)] += 2 * p.bytes * (n + 1) / n * copies;
  }
}

void CollectivePlanner::add_edge_bytes(const CollectiveExpansion& p, std::vector<double>& edge_bytes, double copies,
                                       std::int64_t offset) const {
  HCSIM_ASSERT(offset == 0 || (p.switch_bytes.empty() && p.reduction_root < 0), "a shifted plan with no flows");
  add_timer_bytes(p, edge_bytes, copies);
  for (const PlannedFlow& f : p.pair_bytes)
    router().for_link_slots(static_cast<int>(f.src + offset), static_cast<int>(f.dst + offset),
                            [&](std::size_t s) { edge_bytes[s / 2] += f.bytes * copies; });
}

}  // namespace hcsim
