#include "analytical.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "workloads/items.hpp"

namespace hcsim {
namespace {

struct PassCost {
  double compute = 0, comm = 0, flops = 0, model_flops = 0, energy = 0;
};

PassCost sum_items(const std::vector<Item>& items, const std::vector<int>& tp_group, const CollectiveCostFn& cost) {
  PassCost pc;
  for (const Item& it : items) {
    if (it.kind == Item::Kind::compute) {
      pc.compute += it.t;
      pc.flops += it.flops;
      pc.model_flops += it.model_flops;
      pc.energy += it.energy;
    } else if (it.kind == Item::Kind::tp_comm) {
      pc.comm += cost(tp_group, it.op, it.comm_bytes);
    }
  }
  return pc;
}

// Gradient collectives of `grads` bytes in buckets of `bucket` bytes; returns (total, last).
std::pair<double, double> grad_reduction(const LoweringInput& in, double grads, const std::vector<int>& dp_group,
                                         const ComputeDevice& dev, const CollectiveCostFn& cost) {
  const StrategySpec& st = *in.strategy;
  if (st.dp <= 1 || grads <= 0) return {0, 0};
  const double bucket = st.overlap_dp ? st.dp_bucket.value() : grads;
  const CollectiveOp plain = st.zero >= 1 ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce;
  auto one = [&](double bytes) {
    if (!st.dp_codec) return cost(dp_group, plain, bytes);
    const double e = dtype_bytes(in.workload->precision);
    const auto elements = static_cast<std::int64_t>(bytes / e);
    const std::int64_t rows = std::min<std::int64_t>(in.model->hidden, std::max<std::int64_t>(1, elements));
    const CodecInput ci{rows, std::max<std::int64_t>(1, elements / rows), e, st.dp, st.step};
    const CodecCost cc = st.zero >= 1
                             ? cost_for_in_place_allreduce(*st.dp_codec, ci, st.dp_on_incompatible, "/strategy/compression/dp")
                             : st.dp_codec->cost(ci);
    if (!cc.compressed) return cost(dp_group, plain, bytes);
    double t = dev.time(memory_kernel(KernelKind::codec, cc.encode_memory_traffic, cc.encode_flops, DType::fp32)).value() +
               dev.time(memory_kernel(KernelKind::codec, cc.decode_memory_traffic, cc.decode_flops, DType::fp32)).value();
    for (const auto& ph : cc.plan.phases) {
      const CollectiveOp op = ph.op == WireOp::all_gather   ? CollectiveOp::all_gather
                              : ph.op == WireOp::all_to_all ? CollectiveOp::all_to_all
                                                            : plain;
      t += cost(dp_group, op, ph.buffer.value());
    }
    return t;
  };
  const double full = std::floor(grads / bucket);
  const double rest = grads - full * bucket;
  const double t_full = full > 0 ? one(bucket) : 0.0;
  const double t_rest = rest > 0 ? one(rest) : 0.0;
  return {full * t_full + t_rest, rest > 0 ? t_rest : t_full};
}

}  // namespace

AnalyticalResult analytical_step(const LoweringInput& in, const CollectiveCostFn& cost) {
  const StrategySpec& st = *in.strategy;
  const int p = st.pp;
  const int v = in.schedule->interleaved() ? st.interleave : 1;
  const double m = static_cast<double>(in.workload->micro_batches(st.dp));
  const double act = static_cast<double>(in.workload->micro_batch * in.model->seq_len * in.model->hidden) *
                     dtype_bytes(in.workload->precision);
  const double send_bytes = st.scatter_gather || st.sequence_parallel ? act / st.tp : act;

  AnalyticalResult r;
  r.stages.resize(static_cast<std::size_t>(p));
  std::vector<double> c(static_cast<std::size_t>(p)), bwd(c.size()), grads(c.size());
  for (int s = 0; s < p; ++s) {
    std::vector<int> tp_group;
    for (int t = 0; t < st.tp; ++t) tp_group.push_back(static_cast<int>(device_index(s, 0, t, st.dp, st.tp)));
    PassCost f, b;
    for (int ch = 0; ch < v; ++ch) {
      const int vs = ch * p + s;
      const ChunkItems ci = build_chunk_items(in, *in.stage_device[s], chunk_layers(in.layers_per_stage[s], v, ch),
                                              vs == 0, vs == p * v - 1);
      const PassCost cf = sum_items(ci.fwd, tp_group, cost), cb = sum_items(ci.bwd, tp_group, cost);
      f.compute += cf.compute; f.comm += cf.comm; f.flops += cf.flops; f.model_flops += cf.model_flops; f.energy += cf.energy;
      b.compute += cb.compute; b.comm += cb.comm; b.flops += cb.flops; b.model_flops += cb.model_flops; b.energy += cb.energy;
      grads[s] += ci.grad_bytes;
    }
    double pp = 0;
    if (p > 1) {
      const int next = s + 1 < p ? s + 1 : s - 1;
      const std::vector<int> pair{static_cast<int>(device_index(s, 0, 0, st.dp, st.tp)),
                                  static_cast<int>(device_index(next, 0, 0, st.dp, st.tp))};
      pp = 2.0 * v * cost(pair, CollectiveOp::send_recv, send_bytes);
    }
    auto& a = r.stages[s];
    a.compute_s = m * (f.compute + b.compute);
    a.tp_comm_s = m * (f.comm + b.comm);
    a.pp_comm_s = m * pp;
    a.flops = m * (f.flops + b.flops);
    a.model_flops = m * (f.model_flops + b.model_flops);
    a.dynamic_energy_j = m * (f.energy + b.energy);
    c[s] = f.compute + f.comm + b.compute + b.comm + pp;
    bwd[s] = b.compute + b.comm;
  }
  const double cmax = *std::max_element(c.begin(), c.end());
  const double csum = std::accumulate(c.begin(), c.end(), 0.0);
  r.pipeline_s = m * cmax + (csum - cmax) / v;

  double drain = 0;  // stage s finishes its last backward this long before stage 0
  for (int s = 0; s < p; ++s) {
    auto& a = r.stages[s];
    const ComputeDevice& dev = *in.stage_device[s];
    std::vector<int> dp_group;
    for (int d = 0; d < st.dp; ++d) dp_group.push_back(static_cast<int>(device_index(s, d, 0, st.dp, st.tp)));
    const auto [dp_total, dp_last] = grad_reduction(in, grads[s], dp_group, dev, cost);
    a.dp_exposed_s = st.overlap_dp ? std::max(dp_last, dp_total - bwd[s] / v) : dp_total;
    const double e = dtype_bytes(in.workload->precision);
    const Kernel opt = optimizer_kernel(grads[s] / e / (st.zero >= 1 ? st.dp : 1), in.workload->precision);
    a.optimizer_s = dev.time(opt).value();
    a.dynamic_energy_j += dev.dynamic_energy(opt).value();
    if (st.zero >= 1 && st.zero <= 2 && st.dp > 1) a.optimizer_s += cost(dp_group, CollectiveOp::all_gather, grads[s]);
    if (st.zero >= 3 && st.dp > 1) {
      // Parameter gathers run ahead on the communication stream; what they cannot hide
      // behind the pipeline is exposed.
      const double gathers = 2.0 * m * v * cost(dp_group, CollectiveOp::all_gather, grads[s] / v);
      a.dp_exposed_s += std::max(0.0, gathers - r.pipeline_s);
    }
    const double end = r.pipeline_s - drain + a.dp_exposed_s + a.optimizer_s;
    r.step_time_s = std::max(r.step_time_s, end);
    drain += bwd[s] / v;
  }
  for (int s = 0; s < p; ++s) {
    auto& a = r.stages[s];
    a.bubble_s = std::max(0.0, r.pipeline_s - a.compute_s - a.tp_comm_s - a.pp_comm_s);
    a.idle_s = std::max(0.0, r.step_time_s - r.pipeline_s - a.dp_exposed_s - a.optimizer_s);
  }
  return r;
}

}  // namespace hcsim
