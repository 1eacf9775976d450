#include "analytical.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "workloads/items.hpp"

namespace hcsim {

struct AnalyticalCache::Impl {
  // (model, device) by address: the caller keeps both alive and unchanged while the cache lives.
  using Key = std::tuple<std::uintptr_t, std::uintptr_t, int, bool, bool, std::int64_t, int, bool, bool, Recompute, DType, int>;
  std::map<Key, ChunkTotals> chunks;
};

AnalyticalCache::AnalyticalCache() : impl_(std::make_unique<Impl>()) {}
AnalyticalCache::~AnalyticalCache() = default;

namespace {

struct PassCost {
  double compute = 0, comm = 0, flops = 0, model_flops = 0, energy = 0;
};

// The chunk sums of one call: a few distinct (device, layers, embedding, head) shapes,
// looked up locally first, then in the caller's cache, else computed.
class ChunkSource {
 public:
  ChunkSource(const LoweringInput& in, AnalyticalCache* cache) : in_(in), cache_(cache) {}

  const ChunkTotals& get(const ComputeDevice& dev, int layers, bool embedding, bool head) {
    for (const auto& e : local_)
      if (e.dev == &dev && e.layers == layers && e.embedding == embedding && e.head == head) return *e.totals;
    const ChunkTotals* t = nullptr;
    if (cache_) {
      const StrategySpec& st = *in_.strategy;
      const AnalyticalCache::Impl::Key key{reinterpret_cast<std::uintptr_t>(in_.model),
                                           reinterpret_cast<std::uintptr_t>(&dev),
                                           layers,
                                           embedding,
                                           head,
                                           in_.workload->micro_batch,
                                           st.tp,
                                           st.sequence_parallel,
                                           st.flash_attention,
                                           st.recompute,
                                           in_.workload->precision,
                                           st.cp};
      auto& chunks = cache_->impl().chunks;
      auto it = chunks.find(key);
      if (it == chunks.end()) it = chunks.emplace(key, chunk_totals(in_, dev, layers, embedding, head)).first;
      t = &it->second;
    } else {
      own_.push_back(std::make_unique<ChunkTotals>(chunk_totals(in_, dev, layers, embedding, head)));
      t = own_.back().get();
    }
    local_.push_back({&dev, layers, embedding, head, t});
    return *t;
  }

 private:
  struct Entry {
    const ComputeDevice* dev;
    int layers;
    bool embedding, head;
    const ChunkTotals* totals;
  };
  const LoweringInput& in_;
  AnalyticalCache* cache_;
  std::vector<Entry> local_;
  std::vector<std::unique_ptr<ChunkTotals>> own_;
};

// Tensor-parallel collectives of one stage, each op costed once.
class TpCosts {
 public:
  TpCosts(const GroupCostFn& cost, DeviceGroup group) : cost_(cost), group_(group) { t_.fill(-1); }
  PassCost pass(const PassTotals& p, double bytes) {
    PassCost pc{p.t, 0, p.flops, p.model_flops, p.energy};
    for (std::size_t op = 0; op < p.comm.size(); ++op) {
      if (p.comm[op] == 0) continue;
      if (t_[op] < 0) t_[op] = cost_(group_, static_cast<CollectiveOp>(op), bytes);
      pc.comm += p.comm[op] * t_[op];
    }
    return pc;
  }

 private:
  const GroupCostFn& cost_;
  DeviceGroup group_;
  std::array<double, 7> t_{};
};

void add(PassCost& a, const PassCost& b) {
  a.compute += b.compute;
  a.comm += b.comm;
  a.flops += b.flops;
  a.model_flops += b.model_flops;
  a.energy += b.energy;
}

// Gradient collectives of `grads` bytes in buckets of `bucket` bytes; returns (total, last).
std::pair<double, double> grad_reduction(const LoweringInput& in, double grads, const DeviceGroup& dp_group,
                                         const ComputeDevice& dev, const GroupCostFn& cost) {
  const StrategySpec& st = *in.strategy;
  if (st.grad_ranks() <= 1 || grads <= 0) return {0, 0};
  const double bucket = st.overlap_dp ? st.dp_bucket.value() : grads;
  const CollectiveOp plain = st.zero >= 1 ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce;
  auto one = [&](double bytes) {
    if (!st.dp_codec) return cost(dp_group, plain, bytes);
    const double e = dtype_bytes(in.workload->precision);
    const auto elements = static_cast<std::int64_t>(bytes / e);
    const std::int64_t rows = std::min<std::int64_t>(in.model->hidden, std::max<std::int64_t>(1, elements));
    const CodecInput ci{rows, std::max<std::int64_t>(1, elements / rows), e, st.grad_ranks(), st.step};
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

// Ring attention (workloads/items: cp_ring): cp blocks of t/cp each overlapped with one of
// the cp - 1 sends (tau each) to the next context-parallel rank, as the lowering chains them:
// the ring takes t/cp + (cp - 1) max(tau, t/cp), so (cp - 1) max(0, tau - t/cp) is exposed.
double ring_exposed(const PassTotals& p, int cp, const DeviceGroup& pair, const GroupCostFn& cost) {
  double x = 0;
  for (const CpRing& r : p.cp)
    x += r.count * (cp - 1) * std::max(0.0, cost(pair, CollectiveOp::send_recv, r.bytes) - r.t / cp);
  return x;
}

}  // namespace

AnalyticalResult analytical_step(const LoweringInput& in, const CollectiveCostFn& cost) {
  std::vector<int> devices;
  return analytical_step(
      in,
      [&](const DeviceGroup& g, CollectiveOp op, double bytes) {
        devices.resize(static_cast<std::size_t>(g.count));
        for (int k = 0; k < g.count; ++k) devices[static_cast<std::size_t>(k)] = g.first + k * g.stride;
        return cost(devices, op, bytes);
      },
      nullptr);
}

AnalyticalResult analytical_step(const LoweringInput& in, const GroupCostFn& cost, AnalyticalCache* cache) {
  const StrategySpec& st = *in.strategy;
  const int p = st.pp;
  const int v = in.schedule->interleaved() ? st.interleave : 1;
  const double m = static_cast<double>(in.workload->micro_batches(st.dp));
  const double act = static_cast<double>(in.workload->micro_batch * (in.model->seq_len / st.cp) * in.model->hidden) *
                     dtype_bytes(in.workload->precision);
  const double send_bytes = st.scatter_gather || st.sequence_parallel ? act / st.tp : act;
  auto first_device = [&](int stage) { return static_cast<int>(device_index(stage, 0, 0, st.grad_ranks(), st.tp)); };

  AnalyticalResult r;
  r.stages.resize(static_cast<std::size_t>(p));
  std::vector<double> c(static_cast<std::size_t>(p)), bwd(c.size()), grads(c.size());
  ChunkSource chunks(in, cache);
  for (int s = 0; s < p; ++s) {
    TpCosts tp(cost, {first_device(s), 1, st.tp});
    const DeviceGroup cp_pair{first_device(s), st.tp, 2};  // neighbours on the context-parallel ring
    PassCost f, b;
    double cp_f = 0, cp_b = 0;  // exposed ring-attention sends per micro-batch
    for (int ch = 0; ch < v; ++ch) {
      const int vs = ch * p + s;
      const ChunkTotals& ct =
          chunks.get(*in.stage_device[s], chunk_layers(in.layers_per_stage[s], v, ch), vs == 0, vs == p * v - 1);
      add(f, tp.pass(ct.fwd, ct.comm_bytes));
      add(b, tp.pass(ct.bwd, ct.comm_bytes));
      cp_f += ring_exposed(ct.fwd, st.cp, cp_pair, cost);
      cp_b += ring_exposed(ct.bwd, st.cp, cp_pair, cost);
      grads[s] += ct.grad_bytes;
    }
    double pp = 0;
    if (p > 1) {
      const int next = s + 1 < p ? s + 1 : s - 1;
      pp = 2.0 * v * cost({first_device(s), first_device(next) - first_device(s), 2}, CollectiveOp::send_recv, send_bytes);
    }
    auto& a = r.stages[s];
    a.compute_s = m * (f.compute + b.compute);
    a.tp_comm_s = m * (f.comm + b.comm);
    a.cp_comm_s = m * (cp_f + cp_b);
    a.pp_comm_s = m * pp;
    a.flops = m * (f.flops + b.flops);
    a.model_flops = m * (f.model_flops + b.model_flops);
    a.dynamic_energy_j = m * (f.energy + b.energy);
    c[s] = f.compute + f.comm + b.compute + b.comm + pp + cp_f + cp_b;
    bwd[s] = b.compute + b.comm + cp_b;
  }
  const double cmax = *std::max_element(c.begin(), c.end());
  const double csum = std::accumulate(c.begin(), c.end(), 0.0);
  r.pipeline_s = m * cmax + (csum - cmax) / v;

  double drain = 0;  // stage s finishes its last backward this long before stage 0
  for (int s = 0; s < p; ++s) {
    auto& a = r.stages[s];
    const ComputeDevice& dev = *in.stage_device[s];
    const DeviceGroup dp_group{first_device(s), st.tp, st.grad_ranks()};
    const auto [dp_total, dp_last] = grad_reduction(in, grads[s], dp_group, dev, cost);
    a.dp_exposed_s = st.overlap_dp ? std::max(dp_last, dp_total - bwd[s] / v) : dp_total;
    const double e = dtype_bytes(in.workload->precision);
    const Kernel opt = optimizer_kernel(grads[s] / e / (st.zero >= 1 ? st.grad_ranks() : 1), in.workload->precision);
    a.optimizer_s = dev.time(opt).value();
    if (!in.offload_stream_s.empty()) a.offload_s = 2.0 * in.offload_stream_s[static_cast<std::size_t>(s)];
    a.dynamic_energy_j += dev.dynamic_energy(opt).value();
    if (st.zero >= 1 && st.zero <= 2 && st.grad_ranks() > 1) a.optimizer_s += cost(dp_group, CollectiveOp::all_gather, grads[s]);
    if (st.zero >= 3 && st.grad_ranks() > 1) {
      // Parameter gathers run ahead on the communication stream; what they cannot hide
      // behind the pipeline is exposed.
      const double gathers = 2.0 * m * v * cost(dp_group, CollectiveOp::all_gather, grads[s] / v);
      a.dp_exposed_s += std::max(0.0, gathers - r.pipeline_s);
    }
    const double end = r.pipeline_s - drain + a.dp_exposed_s + a.offload_s + a.optimizer_s;
    r.step_time_s = std::max(r.step_time_s, end);
    drain += bwd[s] / v;
  }
  for (int s = 0; s < p; ++s) {
    auto& a = r.stages[s];
    a.bubble_s = std::max(0.0, r.pipeline_s - a.compute_s - a.tp_comm_s - a.cp_comm_s - a.pp_comm_s);
    a.idle_s = std::max(0.0, r.step_time_s - r.pipeline_s - a.dp_exposed_s - a.offload_s - a.optimizer_s);
  }
  return r;
}

}  // namespace hcsim
