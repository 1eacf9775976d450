#include "sim/driver/fast_analytical.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "sim/collectives/cost.hpp"
#include "sim/driver/collective_times.hpp"
#include "sim/driver/offload_stream.hpp"
#include "sim/driver/run.hpp"
#include "workloads/analytical.hpp"
#include "workloads/stage_layout.hpp"

namespace hcsim {
namespace {

// A compute pool of the base cluster, with the figures of its device.
struct Pool {
  const ComputeDevice* device = nullptr;
  double peak = 0, capacity = 0, idle_w = 0;
  double headroom_w = 0;  // TDP - idle: the dynamic range the hosts' load is measured against
  int kind = 0;   // pools of one device model share a kind
  int index = 0;  // in Scenario::pools
};

}  // namespace

struct FastAnalytical::Impl {
  Impl(const Scenario& b, StarTimes* star_times)
      : base(b),
        model(b.topology, scenario_cost_options(b)),
        cache(),
        costs(model, b.simulation.collective_algorithm, star_times) {
    std::vector<int> index;  // attached PIM stacks are folded into their pool's device
    spans = compute_pool_spans(b, &index);
    for (const int k : index) {
      const DevicePool& p = b.pools[static_cast<std::size_t>(k)];
      Pool q;
      q.device = p.device.get();
      q.peak = p.device->peak(b.workload.precision).value();
      q.capacity = p.device->memory_capacity().value();
      q.idle_w = p.device->idle_power().value();
      q.headroom_w = (p.device->max_power() - p.device->idle_power()).value();
      q.kind = static_cast<int>(pools.size());
      for (const Pool& o : pools)  // the parser's test of uniform stages
        if (same_device_model(b.pools[static_cast<std::size_t>(o.index)], p)) {
          q.kind = o.kind;
          break;
        }
      q.index = k;
      pools.push_back(q);
    }
    if (pools.empty()) throw InputError("/cluster/pools", "a layout search needs a pool of compute devices", b.file);
    strategy = b.strategy;
    in.model = &b.model;
    in.strategy = &strategy;
    in.workload = &workload;
    workload = b.workload;
    for (const TopoEdge& ed : b.topology.edges())
      network_static_w += (ed.link().static_power * static_cast<double>(ed.lanes())).value();
    if (b.strategy.offload == Offload::pool) router = std::make_unique<Router>(b.topology);
  }

  const PipelineSchedule* schedule(std::string_view name) {
    for (const auto& [n, s] : schedules)
      if (n == name) return s.get();
    if (!pipeline_schedules().find(name)) return nullptr;
    schedules.emplace_back(std::string(name), make_schedule(name, base.strategy.moe_a2a_overlap, "/strategy/schedule"));
    return schedules.back().second.get();
  }

  [[nodiscard]] const Pool& stage_pool(int s) const { return pools[static_cast<std::size_t>(placed[static_cast<std::size_t>(s)])]; }
  LayoutRequest request(const FastLayout& l);
  LayoutIssue configure(const FastLayout& l);
  void memory(FastResult& r);
  [[nodiscard]] std::vector<Issue> memory_issues() const;
  void metrics(const AnalyticalResult& a, FastResult& r) const;

  const Scenario& base;
  CollectiveCostModel model;
  AnalyticalCache cache;
  CollectiveTimes costs;
  std::vector<std::pair<std::string, std::unique_ptr<PipelineSchedule>>> schedules;
  StrategySpec strategy;
  WorkloadSpec workload;
  LoweringInput in;
  std::vector<PoolSpan> spans;  // the compute pools in device order
  std::vector<Pool> pools;      // the same, with their device's figures
  std::vector<int> placed;      // the layout's pool (index in `pools`) per stage
  bool uniform = true;          // every stage on the same device model
  double network_static_w = 0;  // the links' static power (energy.cpp: link_energy)
  std::unique_ptr<Router> router;  // offload to a pool: the streams' routes
  std::vector<Bytes> offloaded;    // offload to a pool: the state per device of each stage
  GroupCostFn cost_fn = [this](const DeviceGroup& g, CollectiveOp op, Bytes bytes) { return costs(g, op, bytes); };
};

// The layout rules (workloads/layout.hpp) for `l` on the first tp * pp * dp * cp devices of
// the base cluster, stages placed by device order.
LayoutRequest FastAnalytical::Impl::request(const FastLayout& l) {
  LayoutRequest r;
  r.model = &base.model;
  r.layout = {l.dp, l.tp, l.pp, l.cp, l.ep, l.etp};
  r.sequence_parallel = l.sequence_parallel;
  r.zero = l.zero;
  r.moe_a2a_overlap = base.strategy.moe_a2a_overlap;
  r.recompute = l.recompute;
  r.devices = l.cluster_devices > 0 ? l.cluster_devices : r.layout.devices();
  r.interleaved = in.schedule && in.schedule->interleaved();
  r.interleave = l.interleave;
  if (in.schedule) {
    r.chunks = in.schedule->placement(l.pp, l.interleave).layer_chunks();
    r.schedule = in.schedule->type();
    r.needs = in.schedule->needs();
  }
  r.global_batch = base.workload.global_batch;
  r.micro_batch = l.micro_batch;
  r.layers_per_stage = &base.strategy.layers_per_stage;
  r.pools = &spans;
  // Uniform stages (layers split evenly) when the stages' pools hold one device model.
  r.uniform_stages = true;
  const int kind = pools.front().kind;
  for (int s = 0; s < l.pp && r.uniform_stages; ++s) {
    const int p = pool_index(spans, r.layout.first_device(s));
    r.uniform_stages = p < 0 || pools[static_cast<std::size_t>(p)].kind == kind;
  }
  return r;
}

// Fills the strategy, workload and lowering input of `l`; the first rule it breaks.
LayoutIssue FastAnalytical::Impl::configure(const FastLayout& l) {
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.cp < 1 || l.ep < 1 || l.etp < 1 || l.micro_batch < 1 || l.interleave < 1)
    return LayoutIssue::degrees;
  if (static_cast<std::int64_t>(l.tp) * l.pp * l.dp * l.cp > base.device_count()) return LayoutIssue::too_many_devices;
  if (l.zero < 0 || l.zero > 3) return LayoutIssue::zero;
  in.schedule = schedule(l.schedule);
  if (!in.schedule) return LayoutIssue::schedule;
  const LayoutRequest req = request(l);
  if (const LayoutIssue i = first_layout_issue(req); i != LayoutIssue::none) return i;
  strategy.tp = l.tp;
  strategy.pp = l.pp;
  strategy.dp = l.dp;
  strategy.cp = l.cp;
  strategy.ep = l.ep;
  strategy.etp = l.etp;
  if (strategy.schedule != l.schedule) strategy.schedule.assign(l.schedule);
  strategy.interleave = l.interleave;
  strategy.recompute = l.recompute;
  strategy.zero = l.zero;
  strategy.sequence_parallel = l.sequence_parallel;
  workload.micro_batch = l.micro_batch;
  placed = stage_pools(req.layout, spans);
  uniform = req.uniform_stages;
  in.stage_device.clear();
  for (int s = 0; s < l.pp; ++s) in.stage_device.push_back(stage_pool(s).device);
  const auto& given = base.strategy.layers_per_stage;
  if (!given.empty())
    in.layers_per_stage.assign(given.begin(), given.end());
  else if (uniform)
    in.layers_per_stage.assign(static_cast<std::size_t>(l.pp), static_cast<int>(base.model.layers / l.pp));
  else  // by device speed, as the parser
    in.layers_per_stage =
        balance_layers(base.model, strategy, workload, in.stage_device, in.schedule->placement(l.pp, l.interleave));
  return LayoutIssue::none;
}

// Per-device memory of the stage that needs most. Stages of the same (layers, embedding,
// head) on the same device model differ only in the micro-batches they keep, and need more
// with more, so each such class is evaluated once, at its largest in-flight count (all of
// them when the optimizer state is offloaded: the pool check needs each stage's state).
void FastAnalytical::Impl::memory(FastResult& r) {
  const int p = strategy.pp;
  const std::vector<StageShape> shapes = stage_shapes(in);  // run_scenario's shapes
  const bool offload = router != nullptr;
  const bool same = uniform && !offload && !base.model.is_moe() && std::all_of(in.layers_per_stage.begin(), in.layers_per_stage.end(),
                                                       [&](int x) { return x == in.layers_per_stage[0]; });
  StageShape interior{-1, 0, false, false, -1};
  r.fits = true;
  offloaded.assign(static_cast<std::size_t>(p), Bytes());
  auto check = [&](const StageShape& sh) {
    const MemoryBreakdown m = stage_memory(base.model, strategy, workload, sh);
    const Bytes need = m.total();
    offloaded[static_cast<std::size_t>(sh.stage)] = m.offloaded;
    if (need.value() > stage_pool(sh.stage).capacity) r.fits = false;
    if (need > r.peak_memory || r.peak_memory == Bytes{}) {
      r.peak_memory = need;
      r.peak_memory_stage = sh.stage;
    }
  };
  for (const StageShape& sh : shapes) {
    if (same && sh.stage > 0 && sh.stage < p - 1) {
      if (sh.in_flight > interior.in_flight) interior = sh;
    } else {
      check(sh);
    }
  }
  if (interior.stage >= 0) check(interior);
  if (offload && r.fits) r.fits = !pool_shortfall(base.topology, strategy.layout(), offloaded);
}

// run_scenario's memory check: the stages that do not fit, else the pool's shortfall.
// Stages of one shape (their index aside) on one pool need the same, so each such class is
// evaluated and its shortfall written once.
std::vector<Issue> FastAnalytical::Impl::memory_issues() const {
  struct Class {
    StageShape shape;
    int pool = 0;
    Bytes offloaded{};
    std::optional<std::string> why;  // stage_shortfall
  };
  std::vector<Class> seen;
  std::vector<Issue> out;
  std::vector<Bytes> state;
  const int n = strategy.layout().per_stage();
  for (const StageShape& sh : stage_shapes(in)) {
    const Pool& pool = stage_pool(sh.stage);
    auto c = std::find_if(seen.begin(), seen.end(), [&](const Class& k) {
      const StageShape& o = k.shape;
      return k.pool == pool.index && o.layers == sh.layers && o.has_embedding == sh.has_embedding &&
             o.has_head == sh.has_head && o.in_flight == sh.in_flight && o.moe_layers == sh.moe_layers &&
             o.chunks == sh.chunks;
    });
    if (c == seen.end()) {
      const MemoryBreakdown m = stage_memory(base.model, strategy, workload, sh);
      c = seen.insert(seen.end(), {sh, pool.index, m.offloaded,
                                   stage_shortfall(base.model, strategy, workload, sh, Bytes(pool.capacity), &m)});
    }
    state.push_back(c->offloaded);
    if (c->why)
      out.push_back(memory_shortfall(sh.stage, sh.stage * n, (sh.stage + 1) * n - 1,
                                     base.pools[static_cast<std::size_t>(pool.index)].name, *c->why));
  }
  if (out.empty() && router)
    if (auto issue = pool_shortfall(base.topology, strategy.layout(), state)) out.push_back(*issue);
  return out;
}

// run.cpp's analytical metrics, summed per stage (dp * cp * tp identical devices each).
void FastAnalytical::Impl::metrics(const AnalyticalResult& a, FastResult& r) const {
  const double per_stage = strategy.layout().per_stage();
  const double step = a.step_time.value();
  double model_flops = 0, flops = 0, dynamic = 0, bubble = 0, idle_w = 0, peak = 0, headroom = 0;
  for (std::size_t s = 0; s < a.stages.size(); ++s) {
    const AnalyticalStage& st = a.stages[s];
    model_flops += per_stage * st.model_flops.value();
    flops += per_stage * st.flops.value();
    dynamic += per_stage * st.dynamic_energy.value();
    bubble += per_stage * st.bubble.value();
    idle_w += per_stage * stage_pool(static_cast<int>(s)).idle_w;
    peak += per_stage * stage_pool(static_cast<int>(s)).peak;
    headroom += per_stage * stage_pool(static_cast<int>(s)).headroom_w;
  }
  r.step_time = Seconds(step);
  const double devices = per_stage * strategy.pp;
  const double tokens = static_cast<double>(workload.global_batch * base.model.seq_len);
  if (step > 0) {
    r.mfu = model_flops / (step * peak);
    r.hfu = flops / (step * peak);
    r.tokens_per_s = tokens / step;
    r.samples_per_s = static_cast<double>(workload.global_batch) / step;
  }
  r.bubble_fraction = step > 0 ? bubble / devices / step : 0;
  const Joules hosts = base.node_power ? host_energy(*base.node_power, static_cast<std::int64_t>(devices),
                                                    Joules(dynamic), Watts(headroom), Seconds(step))
                                      : Joules{};
  r.it_energy = Joules(dynamic + idle_w * step + network_static_w * step) + hosts;
  r.energy_per_token = tokens > 0 ? r.it_energy / tokens : Joules{};
  r.average_power = step > 0 ? r.it_energy / Seconds(step) : Watts{};
}

Scenario resized_cluster(const Scenario& base, int devices) {
  if (base.pools.size() != 1)
    throw InputError("/cluster/pools", "resizing a cluster needs a base scenario with exactly one pool", base.file);
  Scenario s = base;
  s.pools[0].count = devices;
  Diagnostics diag;
  s.topology = build_topology(base.resolved.at("cluster").at("topology"), devices, "/cluster/topology", diag);
  if (!diag.ok()) throw InputError(diag.issues(), base.file);
  return s;
}

FastAnalytical::FastAnalytical(const Scenario& base, StarTimes* star_times)
    : impl_(std::make_unique<Impl>(base, star_times)) {}
FastAnalytical::~FastAnalytical() = default;

FastResult FastAnalytical::evaluate(const FastLayout& l, Timed timed) {
  FastResult r;
  r.issue = impl_->configure(l);
  if (r.issue != LayoutIssue::none) return r;
  r.devices = static_cast<int>(impl_->strategy.layout().devices());
  r.collective_schedule = estimate_collective_schedule(impl_->strategy, impl_->base.simulation.symmetry);
  impl_->memory(r);
  if (!r.fits && timed == Timed::fitting_only) return r;
  if (impl_->router)  // the closed form reads only the stream times (the endpoints are the emitter's)
    impl_->in.offload_stream.assign(
        static_cast<std::size_t>(l.pp),
        offload_stream_time(impl_->base.topology, *impl_->router, impl_->strategy.layout(), impl_->offloaded));
  impl_->metrics(analytical_step(impl_->in, impl_->cost_fn, &impl_->cache), r);
  return r;
}

std::vector<Issue> FastAnalytical::memory_issues(const FastLayout& l) {
  if (impl_->configure(l) != LayoutIssue::none) return {};
  return impl_->memory_issues();
}

std::vector<Issue> FastAnalytical::layout_issues(const FastLayout& l, bool split) {
  std::vector<Issue> out;
  impl_->in.schedule = impl_->schedule(l.schedule);
  if (!impl_->in.schedule) return out;
  const LayoutRequest r = impl_->request(l);
  const LayoutSink sink = [&](LayoutIssue, std::string_view path, const std::function<std::string()>& message) {
    out.push_back({std::string(path), message()});
    return true;
  };
  if (split)
    check_layer_split(r, sink);
  else
    check_layout(r, sink);
  return out;
}

std::size_t FastAnalytical::cached_collectives() const { return impl_->costs.size(); }

}  // namespace hcsim
