#include "analytical.hpp"

#include <algorithm>
#include <array>
#include <numeric>

namespace hcsim {
namespace {

struct PassCost {
  Seconds compute{}, comm{};
  Flops flops{}, model_flops{};
  Joules energy{};
};

// Tensor-parallel collectives of one stage, each op costed once.
class TpCosts {
 public:
  TpCosts(const GroupCostFn& cost, DeviceGroup group) : cost_(cost), group_(group) { t_.fill(Seconds(-1)); }
  PassCost pass(const PassTotals& p, Bytes bytes) {
    PassCost pc{p.t, Seconds{}, p.flops, p.model_flops, p.energy};
    for (std::size_t op = 0; op < p.comm.size(); ++op)
      if (p.comm[op] > 0) pc.comm += p.comm[op] * time(static_cast<CollectiveOp>(op), bytes);
    // A collective beside a compute item shows only where it outlasts it.
    for (const HiddenComm& h : p.hidden) pc.comm += h.count * max(Seconds{}, time(h.op, bytes) - h.t);
    return pc;
  }

 private:
  Seconds time(CollectiveOp op, Bytes bytes) {
    Seconds& t = t_[static_cast<std::size_t>(op)];
    if (t < Seconds{}) t = cost_(group_, op, bytes);
    return t;
  }

  const GroupCostFn& cost_;
  DeviceGroup group_;
  std::array<Seconds, 7> t_{};
};

void add(PassCost& a, const PassCost& b) {
  a.compute += b.compute;
  a.comm += b.comm;
  a.flops += b.flops;
  a.model_flops += b.model_flops;
  a.energy += b.energy;
}

// One gradient reduction of the plan: its collectives over the replica group, and its
// codec's encode and decode.
Seconds reduction_time(const GradReduction& r, const DeviceGroup& group, const GroupCostFn& cost) {
  Seconds t = r.codec.compressed ? r.codec.encode.t + r.codec.decode.t : Seconds{};
  for (const GradReduction::Phase& ph : r.phases) t += cost(group, ph.op, ph.bytes);
  return t;
}

// Ring attention (workloads/items: cp_ring): cp blocks of t/cp each overlapped with one of
// the cp - 1 sends (tau each) to the next context-parallel rank, as the lowering chains them:
// the ring takes t/cp + (cp - 1) max(tau, t/cp), so (cp - 1) max(0, tau - t/cp) is exposed.
// Every rank waits for its predecessor's block, so the slowest hop sets tau. (A ring that
// crosses a node edge is outside this form: the engine pipelines the slow hop's transfers
// across layers, docs/architecture.md.)
Seconds ring_exposed(const PassTotals& p, const Layout& lay, int stage, const GroupCostFn& cost) {
  const int cp = lay.cp;
  Seconds x{};
  for (const CpRing& r : p.cp) {
    Seconds tau{};
    for (int k = 0; k < cp; ++k) tau = max(tau, cost(lay.context_hop(stage, k), CollectiveOp::send_recv, r.bytes));
    x += r.count * (cp - 1) * max(Seconds{}, tau - r.t / cp);
  }
  return x;
}

}  // namespace

AnalyticalResult analytical_step(const LoweringInput& in, const CollectiveCostFn& cost) {
  std::vector<int> devices;
  return analytical_step(
      in,
      [&](const DeviceGroup& g, CollectiveOp op, Bytes bytes) {
        g.devices(devices);
        return cost(devices, op, bytes);
      },
      nullptr);
}

AnalyticalResult analytical_step(const LoweringInput& in, const GroupCostFn& cost, AnalyticalCache* cache) {
  const StrategySpec& st = *in.strategy;
  const StepPlan plan = build_step_plan(in, PlanDetail::totals, cache);
  const Layout& lay = plan.layout;
  const int p = lay.pp;
  const int v = plan.v;
  const double m = plan.m;

  AnalyticalResult r;
  r.stages.resize(static_cast<std::size_t>(p));
  std::vector<Seconds> c(static_cast<std::size_t>(p)), bwd(c.size()), gathers(c.size());
  Seconds first_gather{};
  Seconds fill_pp{};  // interleaved: pipeline sends on the fill and drain
  for (int s = 0; s < p; ++s) {
    const StagePlan& sp = plan.stages[static_cast<std::size_t>(s)];
    TpCosts tp(cost, lay.tensor_group(s));
    const DeviceGroup replicas = lay.replica_group(s);
    PassCost f, b;
    Seconds cp_f{}, cp_b{};  // exposed ring-attention sends per micro-batch
    for (int ch = 0; ch < v; ++ch) {
      const ChunkTotals& ct = *sp.totals[static_cast<std::size_t>(ch)];
      add(f, tp.pass(ct.fwd, ct.comm_bytes));
      add(b, tp.pass(ct.bwd, ct.comm_bytes));
      cp_f += ring_exposed(ct.fwd, lay, s, cost);
      cp_b += ring_exposed(ct.bwd, lay, s, cost);
      if (sp.gather_per_pass) {
        const Seconds g = cost(replicas, CollectiveOp::all_gather, ct.grad_bytes);
        gathers[static_cast<std::size_t>(s)] += 2.0 * m * g;  // before each forward and each backward
        if (s == 0 && ch == 0) first_gather = g;
      }
    }
    Seconds pp{};
    if (p > 1) {
      // Per micro-batch and chunk: one send forward, one backward; with a codec each is
      // encoded here and decoded on the receiver (the receiver's decode counted there).
      const int next = s + 1 < p ? s + 1 : s - 1;
      const Seconds codec = sp.send_codec.compressed ? sp.send_codec.encode.t + sp.send_codec.decode.t : Seconds{};
      const Seconds hop = cost(lay.pipeline_pair(s, next), CollectiveOp::send_recv, sp.send_bytes) + codec;
      // Interleaved: in the steady state a device works on its other chunks while a chunk's
      // output travels, so the sends show only on the fill and the drain: one forward and
      // one backward hop per stage boundary.
      pp = v > 1 ? Seconds{} : 2.0 * hop;
      fill_pp += v > 1 && s + 1 < p ? 2.0 * hop : Seconds{};
    }
    auto& a = r.stages[static_cast<std::size_t>(s)];
    a.compute = m * (f.compute + b.compute);
    a.tp_comm = m * (f.comm + b.comm);
    a.cp_comm = m * (cp_f + cp_b);
    a.pp_comm = m * pp;
    a.flops = m * (f.flops + b.flops);
    a.model_flops = m * (f.model_flops + b.model_flops);
    a.dynamic_energy = m * (f.energy + b.energy);
    c[static_cast<std::size_t>(s)] = f.compute + f.comm + b.compute + b.comm + pp + cp_f + cp_b;
    bwd[static_cast<std::size_t>(s)] = b.compute + b.comm + cp_b;
  }
  const Seconds cmax = *std::max_element(c.begin(), c.end());
  const Seconds csum = std::accumulate(c.begin(), c.end(), Seconds{});
  r.pipeline = m * cmax + (csum - cmax) / v + fill_pp;
  if (v > 1)
    for (auto& a : r.stages) a.pp_comm = fill_pp;

  // ZeRO-3: the latest start of each stage's last backward pass set by its gathers, and the
  // backward passes of the later stages it waits for (see analytical.hpp).
  std::vector<Seconds> gather_bound(static_cast<std::size_t>(p) + 1);
  for (int s = p - 1; s >= 0; --s) {
    const auto k = static_cast<std::size_t>(s);
    gather_bound[k] = gathers[k] > Seconds{} ? max(gathers[k], gather_bound[k + 1]) + bwd[k] / v : Seconds{};
  }

  Seconds drain{};  // stage s finishes its last backward this long before stage 0
  for (int s = 0; s < p; ++s) {
    auto& a = r.stages[static_cast<std::size_t>(s)];
    const StagePlan& sp = plan.stages[static_cast<std::size_t>(s)];
    const DeviceGroup replicas = lay.replica_group(s);
    Seconds dp_total{}, dp_last{};
    for (const BucketPoint& bp : sp.buckets) {
      dp_last = reduction_time(bp.reduction, replicas, cost);
      dp_total += bp.repeat * dp_last;
    }
    a.dp_exposed = st.overlap_dp ? max(dp_last, dp_total - bwd[static_cast<std::size_t>(s)] / v) : dp_total;
    a.optimizer = sp.optimizer.t;
    if (!in.offload_stream.empty()) a.offload = 2.0 * in.offload_stream[static_cast<std::size_t>(s)];
    a.dynamic_energy += sp.optimizer.energy;
    if (sp.zero_gather_bytes > Bytes{}) a.optimizer += cost(replicas, CollectiveOp::all_gather, sp.zero_gather_bytes);
    // ZeRO-3's gathers delay the stage's last backward pass; the delay is exposed.
    const Seconds last_backward = r.pipeline - drain;
    const Seconds zero3 = max(first_gather, gather_bound[static_cast<std::size_t>(s)] - last_backward);
    a.dp_exposed += max(Seconds{}, zero3);
    r.step_time = max(r.step_time, last_backward + a.dp_exposed + a.offload + a.optimizer);
    drain += bwd[static_cast<std::size_t>(s)] / v;
  }
  for (int s = 0; s < p; ++s) {
    auto& a = r.stages[static_cast<std::size_t>(s)];
    a.bubble = max(Seconds{}, r.pipeline - a.compute - a.tp_comm - a.cp_comm - a.pp_comm);
    a.idle = max(Seconds{}, r.step_time - r.pipeline - a.dp_exposed - a.offload - a.optimizer);
  }
  return r;
}

}  // namespace hcsim
