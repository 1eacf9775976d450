#include "analytical.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>

#include "sim/core/error.hpp"
#include "workloads/contended_pass.hpp"

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
  TpCosts(const GroupCostFn& cost, DeviceGroup group, const Contention* contention = nullptr)
      : cost_(cost), group_(group), contention_(contention) {
    t_.fill(Seconds(-1));
  }
  // A unit's compute and tensor-parallel collectives (ZeRO-3 / FSDP).
  Seconds busy(const UnitTotals& u, Bytes bytes) { return u.t + comm(u.comm, u.hidden, bytes); }
  PassCost pass(const PassTotals& p, Bytes bytes) {
    return {p.t, comm(p.comm, p.hidden, bytes), p.flops, p.model_flops, p.energy};
  }

 private:
  // The exposed time of `counts` collectives of each op and of those beside compute items
  // (each shows only where it outlasts its compute item; with SM contention, what it adds
  // to the pair's window).
  Seconds comm(const std::array<int, 7>& counts, const std::vector<HiddenComm>& hidden, Bytes bytes) {
    Seconds t{};
    for (std::size_t op = 0; op < counts.size(); ++op)
      if (counts[op] > 0) t += counts[op] * time(static_cast<CollectiveOp>(op), bytes);
    for (const HiddenComm& h : hidden)
      t += h.count * (contended_window(h.t, time(h.op, bytes), share(h.op, bytes)) - h.t);
    return t;
  }
  // The SMs' share a tensor-parallel collective holds (Contention; 0 without).
  double share(CollectiveOp op, Bytes bytes) {
    if (!contention_) return 0;
    if (contention_->tp_share) return *contention_->tp_share;
    double& f = f_[static_cast<std::size_t>(op)];
    if (f < 0) f = contention_->share(group_, op, bytes);
    return f;
  }
  Seconds time(CollectiveOp op, Bytes bytes) {
    Seconds& t = t_[static_cast<std::size_t>(op)];
    if (t < Seconds{}) t = cost_(group_, op, bytes);
    return t;
  }

  const GroupCostFn& cost_;
  DeviceGroup group_;
  const Contention* contention_;
  std::array<Seconds, 7> t_{};
  std::array<double, 7> f_{-1, -1, -1, -1, -1, -1, -1};
};

void add_pass(PassCost& a, const PassCost& b) {
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

// SM contention: the share of the SMs a reduction's collectives hold while it runs, their
// shares weighted by their times (its codec's kernels hold none).
double reduction_share(const GradReduction& r, const DeviceGroup& group, const GroupCostFn& cost,
                       const Contention& contention, Seconds& t) {
  double held = 0;
  for (const GradReduction::Phase& ph : r.phases) {
    const Seconds p = cost(group, ph.op, ph.bytes);
    t += p;
    held += p.value() * contention.share(group, ph.op, ph.bytes);
  }
  return held;
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

// ZeRO-3 / FSDP: what one pass's gathers and reductions add_pass to its compute (the pass
// over its units, sharded_pass_time, less the units' own time).
class ShardCosts {
 public:
  ShardCosts(const Layout& lay, const ShardPlan& plan, int stage, const GroupCostFn& cost,
             const Contention* contention = nullptr)
      : cost_(cost), plan_(plan), contention_(contention) {
    shard_ = lay.shard_group(stage, plan.shard, plan.copies);
    peers_ = lay.shard_peers(stage, plan.shard, plan.copies);
  }
  Seconds exposed(const PassTotals& p, bool backward, TpCosts& tp, Bytes tp_bytes) {
    units_.clear();
    Seconds busy{};
    for (const UnitTotals& u : p.units) {
      UnitCost c;
      c.busy = tp.busy(u, tp_bytes);
      // With reductions on their own stream, the bandwidth time of a gather or reduce-scatter
      // (what sharing links slows): what twice the bytes add, t(2b) - t(b).
      const bool split = backward && plan_.reduce_stream;
      if (plan_.gathers(backward) && u.gather > Bytes{}) {
        c.gather = cost_(shard_, CollectiveOp::all_gather, u.gather);
        if (split) c.gather_bw = cost_(shard_, CollectiveOp::all_gather, u.gather * 2.0) - c.gather;
        if (contention_) c.gather_share = contention_->share(shard_, CollectiveOp::all_gather, u.gather);
      }
      if (backward && u.grads > Bytes{}) {
        c.reduce = cost_(shard_, CollectiveOp::reduce_scatter, u.grads);
        if (split) c.reduce_bw = cost_(shard_, CollectiveOp::reduce_scatter, u.grads * 2.0) - c.reduce;
        if (contention_) c.reduce_share = contention_->share(shard_, CollectiveOp::reduce_scatter, u.grads);
        if (plan_.copies > 1) {
          c.all_reduce = cost_(peers_, CollectiveOp::all_reduce, u.grads / plan_.shard);
          if (contention_)
            c.all_reduce_share = contention_->share(peers_, CollectiveOp::all_reduce, u.grads / plan_.shard);
        }
      }
      busy += c.busy;
      units_.push_back(c);
    }
    return sharded_pass_time(units_, plan_.prefetch(backward), backward, plan_.reduce_stream) - busy;
  }

 private:
  const GroupCostFn& cost_;
  const ShardPlan& plan_;
  const Contention* contention_;
  DeviceGroup shard_, peers_;
  std::vector<UnitCost> units_;
};

// What stage s's pairs (pair_end) hide of their MoE collectives, each pair alone: F then B
// less the pair's time.
Seconds paired_overlap(const PipelineSchedule& schedule, const Placement& place, int m, const std::vector<PassTimes>& t,
                       int s) {
  const int p = place.p, v = place.v;
  auto times = [&](int chunk) -> const PassTimes& { return t[static_cast<std::size_t>(s * v + chunk)]; };
  bool any = false;
  for (int c = 0; c < v; ++c) any = any || !times(c).forward_pieces.empty();
  if (!any) return Seconds{};
  Seconds hidden{};
  const std::vector<PipeOp> order = schedule.order(s, p, m, v);
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    if (!order[i].paired) continue;
    const PassTimes &tf = times(order[i].chunk), &tb = times(order[i + 1].chunk);
    if (tf.forward_pieces.empty() || tb.whole_pieces.empty()) continue;
    hidden += tf.f + tb.whole - pair_end(Seconds{}, Seconds{}, Seconds{}, tf.forward_pieces, tb.whole_pieces);
  }
  return hidden;
}

// ZeRO-1/2 with overlap_param_gather (StagePlan::param_gathers): how long the parameter
// buckets hold the pipeline's start back. Virtual stages in order, the first micro-batch
// reaches virtual stage vs at A_vs (A_0 = 0, A_{vs+1} = A_vs + f_vs + its hop), and its
// stage starts it at T_vs = max(A_vs, the stage's previous chunk's start + min(m, p) of that
// chunk's forwards). Shifted by the wait so far D, the forward walks its blocks (each
// marker's forward compute times the pass's time over its compute): at a bucket's first
// block it waits for the bucket's gather, issued on the stage's communication stream (one
// gather after the other) -- aligned: chunks 0 and 1 at 0, chunk c + 1 when chunk c starts;
// else the bucket when the forward reaches it (if not yet issued) and the next one once it
// is done. D becomes the forward's end less T_vs + f_vs, if larger. The emitter's task graph
// (lowering_pass.cpp) runs the same rules; this leaves out what the waits do to later passes.
Seconds param_gather_wait(const StepPlan& plan, const Layout& lay, const StrategySpec& st,
                          const std::vector<Seconds>& fwd_time, const std::vector<double>& fwd_stretch,
                          const std::vector<Seconds>& fwd_hop, const GroupCostFn& cost) {
  const int p = lay.pp, v = plan.v;
  bool any = false;
  for (const StagePlan& sp : plan.stages) any = any || !sp.param_gathers.empty();
  if (!any) return Seconds{};
  std::vector<Seconds> stream(static_cast<std::size_t>(p)), prev_start(static_cast<std::size_t>(p), Seconds(-1)),
      prev_busy(static_cast<std::size_t>(p));
  std::vector<std::vector<Seconds>> end(static_cast<std::size_t>(p));  // per stage, per ParamGather
  for (int s = 0; s < p; ++s)
    end[static_cast<std::size_t>(s)].assign(plan.stages[static_cast<std::size_t>(s)].param_gathers.size(), Seconds(-1));
  auto gather_time = [&](int s, const ParamGather& pg) {
    Seconds t{};
    if (pg.bytes > Bytes{}) t += cost(lay.replica_group(s), CollectiveOp::all_gather, pg.bytes);
    if (pg.expert > Bytes{}) t += cost(lay.expert_replica_group(s), CollectiveOp::all_gather, pg.expert);
    return t;
  };
  auto issue = [&](int s, std::size_t j, Seconds at) {
    auto& e = end[static_cast<std::size_t>(s)][j];
    if (e >= Seconds{}) return;
    Seconds& str = stream[static_cast<std::size_t>(s)];
    str = max(str, at) + gather_time(s, plan.stages[static_cast<std::size_t>(s)].param_gathers[j]);
    e = str;
  };
  auto issue_chunk = [&](int s, int chunk, Seconds at) {
    const auto& pgs = plan.stages[static_cast<std::size_t>(s)].param_gathers;
    for (std::size_t j = 0; j < pgs.size(); ++j)
      if (pgs[j].chunk == chunk) issue(s, j, at);
  };
  if (st.align_param_gather)
    for (int s = 0; s < p; ++s)
      for (int ch = 0; ch < std::min(2, v); ++ch) issue_chunk(s, ch, Seconds{});
  Seconds wait{}, arrive{};
  const int vstages = plan.vstages();
  for (int vs = 0; vs < vstages; ++vs) {
    const int s = plan.placement.stage(vs);
    int ch = 0;
    while (ch + 1 < v && plan.vstage(s, ch) != vs) ++ch;
    const auto k = static_cast<std::size_t>(s * v + ch);
    const auto si = static_cast<std::size_t>(s);
    Seconds t = arrive;
    if (prev_start[si] >= Seconds{}) t = max(t, prev_start[si] + prev_busy[si]);
    prev_start[si] = t;
    prev_busy[si] = std::min<double>(plan.m, p) * fwd_time[k];
    arrive = t + fwd_time[k] + (vs + 1 < vstages && plan.placement.stage(vs + 1) != s ? fwd_hop[si] : Seconds{});
    const StagePlan& sp = plan.stages[si];
    if (sp.param_gathers.empty()) continue;
    Seconds x = t + wait;
    if (st.align_param_gather && ch + 1 >= 2 && ch + 1 < v) issue_chunk(s, ch + 1, x);
    const std::vector<Seconds>& fwd = sp.totals[static_cast<std::size_t>(ch)]->marker_forward;
    const auto n = static_cast<int>(fwd.size());
    for (int mk = 0; mk < n; ++mk) {  // forward marker mk is backward marker n - 1 - mk
      for (std::size_t j = 0; j < sp.param_gathers.size(); ++j) {
        const ParamGather& pg = sp.param_gathers[j];
        if (pg.chunk != ch || pg.first != mk) continue;
        issue(s, j, x);
        x = max(x, end[si][j]);
        if (!st.align_param_gather && j + 1 < sp.param_gathers.size() && sp.param_gathers[j + 1].chunk == ch)
          issue(s, j + 1, x);
      }
      x += fwd[static_cast<std::size_t>(n - 1 - mk)] * fwd_stretch[k];
    }
    wait = max(wait, x - t - fwd_time[k]);
  }
  return wait;
}

}  // namespace

AnalyticalResult analytical_step(const LoweringInput& in, const GroupCostFn& cost, AnalyticalCache* cache,
                                 const Contention* contention) {
  const StrategySpec& st = *in.strategy;
  const StepPlan plan = build_step_plan(in, PlanDetail::totals, cache);
  const Layout& lay = plan.layout;
  const int p = lay.pp;
  const int v = plan.v;
  const double m = plan.m;
  // Micro-batches each chunk runs: all m, or with one path per direction (DualPipe) m / 2;
  // the per-stage sums below add the chunks' passes.
  const double mc = m * plan.placement.path_stages() / plan.vstages();

  AnalyticalResult r;
  r.stages.resize(static_cast<std::size_t>(p));
  std::vector<Seconds> c(static_cast<std::size_t>(p)), bwd(c.size()), shard_x(c.size());
  // ZeRO-2 reducing every micro-batch without overlap: each chunk's reductions hold the
  // compute after each of its backward passes (the emitter blocks it), inside the pipeline;
  // per stage, those of the step.
  const bool hold = plan.reduce_every_microbatch && !st.overlap_dp;
  std::vector<Seconds> held_x(c.size());
  // Per stage, each bucket point's reduction time (its dense and expert collectives).
  std::vector<std::vector<Seconds>> bucket_t(c.size());
  std::vector<std::vector<double>> bucket_f(c.size());  // SM contention: each bucket's share
  // Per stage, chunk 0's backward of one micro-batch (the stage's last pass) and its compute.
  std::vector<Seconds> last_pass(c.size()), last_pass_compute(c.size());
  Seconds fill_pp{};  // interleaved: pipeline sends on the fill and drain
  const bool split = in.schedule->splits_backward();
  // A split backward or paired passes: the order replayed (pipeline_ends), not the closed form.
  // ZeRO-2 holding its reductions: their time in each pass, which the order replays.
  const bool recur = split || in.schedule->pairs() || hold;
  // The recurrence's times, per chunk c of stage s at s * v + c.
  std::vector<PassTimes> passes(recur ? c.size() * static_cast<std::size_t>(v) : 0);
  // ZeRO-1/2's overlapped parameter gathers: per chunk c of stage s (at s * v + c) one
  // micro-batch's forward and its time over its compute; per stage the forward hop.
  std::vector<Seconds> fwd_time(c.size() * static_cast<std::size_t>(v)), fwd_hop(c.size());
  std::vector<double> fwd_stretch(fwd_time.size(), 1.0);
  for (int s = 0; s < p; ++s) {
    const StagePlan& sp = plan.stages[static_cast<std::size_t>(s)];
    TpCosts tp(cost, lay.tensor_group(s), contention);
    ShardCosts shard(lay, sp.sharding, s, cost, contention);
    PassCost f, b, bi, bw;   // bi, bw: B and W of a split backward
    Seconds cp_f{}, cp_b{};  // exposed ring-attention sends per micro-batch
    Seconds ep_f{}, ep_b{};  // MoE all-to-alls per micro-batch
    Seconds zf{}, zb{};      // exposed ZeRO-3 / FSDP gathers and reductions per micro-batch
    Seconds hb{};            // held reductions per micro-batch (hold)
    std::vector<Seconds>& times = bucket_t[static_cast<std::size_t>(s)];
    const DeviceGroup replicas = lay.replica_group(s), expert_replicas = lay.expert_replica_group(s);
    for (const BucketPoint& bp : sp.buckets) {
      times.push_back(reduction_time(bp.reduction, replicas, cost) + reduction_time(bp.expert, expert_replicas, cost));
      if (contention) {
        Seconds t{};
        const double held = reduction_share(bp.reduction, replicas, cost, *contention, t) +
                            reduction_share(bp.expert, expert_replicas, cost, *contention, t);
        bucket_f[static_cast<std::size_t>(s)].push_back(t > Seconds{} ? held / t.value() : 0.0);
      }
    }
    for (int ch = 0; ch < v; ++ch) {
      Seconds held{};
      if (hold)
        for (std::size_t i = 0; i < sp.buckets.size(); ++i)
          if (sp.buckets[i].chunk == ch) held += sp.buckets[i].repeat * times[i];
      hb += held;
      const ChunkTotals& ct = *sp.totals[static_cast<std::size_t>(ch)];
      const PassCost f1 = tp.pass(ct.fwd, ct.comm_bytes), b1 = tp.pass(ct.bwd, ct.comm_bytes);
      add_pass(f, f1);
      add_pass(b, b1);
      const Seconds cf = ring_exposed(ct.fwd, lay, s, cost), cb = ring_exposed(ct.bwd, lay, s, cost);
      Seconds ef{}, eb{};
      auto expert = [&](const EpComm& e) {
        return e.count *
               cost(e.op == CollectiveOp::all_to_all ? lay.expert_group(s) : lay.expert_tensor_group(s), e.op, e.bytes);
      };
      for (const EpComm& e : ct.fwd.ep) ef += expert(e);
      for (const EpComm& e : ct.bwd.ep) eb += expert(e);
      if (recur) {
        PassTimes& pt = passes[static_cast<std::size_t>(s * v + ch)];
        pt.f = f1.compute + f1.comm + cf + ef;
        pt.whole = pt.b = b1.compute + b1.comm + cb + eb;
        if (split) {
          const PassCost bi1 = tp.pass(ct.bwd_input, ct.comm_bytes), bw1 = tp.pass(ct.bwd_weight, ct.comm_bytes);
          add_pass(bi, bi1);
          add_pass(bw, bw1);
          pt.b = bi1.compute + bi1.comm + cb + eb;
          pt.w = bw1.compute + bw1.comm;
        }
        // Held reductions follow the pass that holds the buckets: W when split.
        (split ? pt.w : pt.b) += held;
        pt.whole += held;
        if (!ct.fwd.segments.empty() && !ct.bwd.segments.empty()) {
          // Pairs (DualPipe's, the all-to-all overlap's): the passes cut at their MoE collectives
          // (ring sends in the first piece).
          auto pieces = [&](const std::vector<EpSegment>& segs, Seconds ring) {
            std::vector<PairPiece> out;
            out.reserve(segs.size());
            for (const EpSegment& g : segs)
              out.push_back({tp.busy(g.work, ct.comm_bytes), g.ep.count > 0 ? expert(g.ep) : Seconds{}});
            out.front().busy += ring;
            return out;
          };
          pt.forward_pieces = pieces(ct.fwd.segments, cf);
          pt.whole_pieces = pieces(ct.bwd.segments, cb);
          pt.whole_pieces.back().busy += held;
        }
      }
      fwd_time[static_cast<std::size_t>(s * v + ch)] = f1.compute + f1.comm + cf + ef;
      if (ct.fwd.t > Seconds{})
        fwd_stretch[static_cast<std::size_t>(s * v + ch)] = (f1.compute + f1.comm + cf + ef) / ct.fwd.t;
      if (ch == 0) {
        last_pass[static_cast<std::size_t>(s)] = b1.compute + b1.comm + cb + eb;
        last_pass_compute[static_cast<std::size_t>(s)] = ct.bwd.t;
      }
      cp_f += cf;
      cp_b += cb;
      ep_f += ef;
      ep_b += eb;
      if (sp.sharding.on) {
        zf += shard.exposed(ct.fwd, false, tp, ct.comm_bytes);
        zb += shard.exposed(ct.bwd, true, tp, ct.comm_bytes);
      }
    }
    shard_x[static_cast<std::size_t>(s)] = mc * (zf + zb);
    held_x[static_cast<std::size_t>(s)] = mc * hb;
    Seconds pp{};
    if (p > 1) {
      // Per micro-batch and chunk: one send forward, one backward; with a codec each is
      // encoded here and decoded on the receiver (the receiver's decode counted there).
      const int next = s + 1 < p ? s + 1 : s - 1;
      const Seconds codec = sp.send_codec.compressed ? sp.send_codec.encode.t + sp.send_codec.decode.t : Seconds{};
      const Seconds hop = cost(lay.pipeline_pair(s, next), CollectiveOp::send_recv, sp.send_bytes) + codec;
      fwd_hop[static_cast<std::size_t>(s)] = hop;
      // Interleaved: in the steady state a device works on its other chunks while a chunk's
      // output travels, so the sends show only on the fill and the drain: one forward and
      // one backward hop per stage boundary.
      // Blocking sends (StrategySpec::blocking_p2p) hold the sender's compute: every chunk's
      // two hops per micro-batch are exposed.
      pp = v > 1 && !st.blocking_p2p ? Seconds{} : 2.0 * v * hop;
      fill_pp += v > 1 && s + 1 < p ? 2.0 * (st.blocking_p2p ? v : 1) * hop : Seconds{};
      if (recur)
        for (int ch = 0; ch < v; ++ch) {
          // The recurrence's sends: to the stage of each neighbouring virtual stage its own hop
          // (a codec's encode and decode with it; none to a virtual stage on this device);
          // blocking sends also hold this stage's compute.
          PassTimes& pt = passes[static_cast<std::size_t>(s * v + ch)];
          auto to = [&](int vs) {
            const int peer = plan.placement.stage(vs);
            return peer == s ? Seconds{}
                             : cost(lay.pipeline_pair(s, peer), CollectiveOp::send_recv, sp.send_bytes) + codec;
          };
          const int vs = plan.vstage(s, ch);
          if (!plan.placement.last(vs)) pt.send_forward = to(vs + 1);
          if (!plan.placement.first(vs)) pt.send_backward = to(vs - 1);
          if (st.blocking_p2p) {
            pt.f += pt.send_forward;
            pt.b += pt.send_backward;
            pt.whole += pt.send_backward;
            if (!pt.forward_pieces.empty()) {
              pt.forward_pieces.back().busy += pt.send_forward;
              pt.whole_pieces.back().busy += pt.send_backward;
            }
          }
        }
    }
    auto& a = r.stages[static_cast<std::size_t>(s)];
    a.compute = mc * (f.compute + b.compute);
    a.tp_comm = mc * (f.comm + b.comm);
    a.cp_comm = mc * (cp_f + cp_b);
    a.ep_comm =
        mc * (ep_f + ep_b) - (recur ? paired_overlap(*in.schedule, plan.placement, plan.m, passes, s) : Seconds{});
    a.pp_comm = mc * pp;
    a.flops = mc * (f.flops + b.flops);
    a.model_flops = mc * (f.model_flops + b.model_flops);
    a.dynamic_energy = mc * (f.energy + b.energy);
    c[static_cast<std::size_t>(s)] =
        f.compute + f.comm + b.compute + b.comm + pp + cp_f + cp_b + ep_f + ep_b + zf + zb + hb;
    bwd[static_cast<std::size_t>(s)] = b.compute + b.comm + cp_b + ep_b + zb + hb;
    // Split backward: the buckets are issued in the last W, which alone hides them.
    if (split) bwd[static_cast<std::size_t>(s)] = bw.compute + bw.comm + hb;
  }
  const Seconds cmax = *std::max_element(c.begin(), c.end());
  const Seconds csum = std::accumulate(c.begin(), c.end(), Seconds{});
  std::vector<Seconds> ends;  // recurrence: each stage's end
  if (recur) {
    ends = pipeline_ends(*in.schedule, plan.placement, plan.m, passes);
    r.pipeline = *std::max_element(ends.begin(), ends.end());
  } else {
    r.pipeline = m * cmax + (csum - cmax) / v + fill_pp;
  }
  if (v > 1 && !st.blocking_p2p)
    for (auto& a : r.stages) a.pp_comm = fill_pp;
  // ZeRO-1/2's overlapped parameter gathers hold the first micro-batch's forwards back: the
  // whole pipeline starts this much later.
  const Seconds gather_wait = param_gather_wait(plan, lay, st, fwd_time, fwd_stretch, fwd_hop, cost);
  r.pipeline += gather_wait;
  if (recur)
    for (Seconds& e : ends) e += gather_wait;

  Seconds drain{};  // stage s finishes its last backward this long before stage 0
  // When each stage's gradients are reduced (its optimizer may start), then its step's end.
  std::vector<Seconds> reduced(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    auto& a = r.stages[static_cast<std::size_t>(s)];
    const StagePlan& sp = plan.stages[static_cast<std::size_t>(s)];
    const DeviceGroup replicas = lay.replica_group(s), expert_replicas = lay.expert_replica_group(s);
    Seconds dp_last{};
    // The bucket stream (no split backward): each bucket issued as the last backward pass
    // reaches its marker (ChunkTotals::marker_after, the pass's compute after it, stretched
    // by the pass's collectives), those of earlier chunks by the pass's start, the last
    // after the pass; one after another. What runs past the pass's end is exposed.
    const auto k = static_cast<std::size_t>(s);
    const double stretch = last_pass_compute[k] > Seconds{} ? last_pass[k] / last_pass_compute[k] : 1.0;
    const std::vector<Seconds>& after = sp.totals.front()->marker_after;
    // ZeRO-2 reducing every micro-batch (StepPlan::reduce_every_microbatch): the mc - 1
    // earlier micro-batches' reductions take the same stream, one micro-batch's set per
    // pipeline cycle (cmax); what the stream cannot finish within its cycles is still queued
    // when the last micro-batch's buckets come. (Without overlap they hold the compute: hold.)
    const double earlier = plan.reduce_every_microbatch ? mc - 1.0 : 0.0;
    const std::vector<Seconds>& times = bucket_t[k];
    Seconds one{};  // one micro-batch's reductions
    for (std::size_t j = 0; j < times.size(); ++j) one += sp.buckets[j].repeat * times[j];
    const Seconds backlog = max(Seconds{}, earlier * (one - cmax));
    Seconds stream = -last_pass[k] + backlog;  // free, relative to the end of the last backward pass
    // SM contention: the pass slowed by the buckets beside it (its end then later than 0).
    std::optional<ContendedPass> pass;
    if (contention && st.overlap_dp && !split && !hold) pass.emplace(last_pass[k]);
    for (std::size_t j = 0; j < times.size(); ++j) {
      const BucketPoint& bp = sp.buckets[j];
      dp_last = times[j];
      for (int i = 0; i < bp.repeat; ++i) {
        const Seconds left = bp.chunk > 0    ? last_pass[k]
                             : bp.marker < 0 ? Seconds{}
                                             : stretch * after[static_cast<std::size_t>(bp.marker + i)];
        const Seconds issue = pass ? pass->reach(left) : -left;
        if (pass) pass->run(max(stream, issue), max(stream, issue) + dp_last, bucket_f[k][j]);
        stream = max(stream, issue) + dp_last;
      }
    }
    if (pass) stream = max(stream, pass->reach(Seconds{}));
    a.dp_exposed = hold             ? Seconds{}  // inside the pipeline: held_x
                   : !st.overlap_dp ? one
                   : split          ? max(dp_last, one - bwd[k] / v) + backlog
                                    : max(Seconds{}, stream);
    a.optimizer = sp.optimizer.t;
    if (!in.offload_stream.empty()) a.offload = 2.0 * in.offload_stream[static_cast<std::size_t>(s)];
    a.dynamic_energy += sp.optimizer.energy;
    if (sp.zero_gather_bytes > Bytes{}) a.optimizer += cost(replicas, CollectiveOp::all_gather, sp.zero_gather_bytes);
    if (sp.expert_gather_bytes > Bytes{})
      a.optimizer += cost(expert_replicas, CollectiveOp::all_gather, sp.expert_gather_bytes);
    Seconds last_backward = recur ? ends[static_cast<std::size_t>(s)] : r.pipeline - drain;
    if (const int copy = plan.placement.copy_stage(s); copy >= 0) {
      // Two copies (DualPipe): their gradients summed by an all-reduce of the pair once both
      // stages are done (GroupCollectives::pair_reduction).
      last_backward = max(last_backward, ends[static_cast<std::size_t>(copy)]);
      a.dp_exposed += cost(lay.pipeline_pair(s, copy), CollectiveOp::all_reduce, sp.grad_bytes + sp.expert_grad_bytes);
    }
    reduced[k] = last_backward + a.dp_exposed;
    drain += bwd[static_cast<std::size_t>(s)] / v;
  }
  if (plan.tied_bytes > Bytes{}) {
    // Tied embeddings: the embedding group's all-reduce once both stages' reductions are
    // done; both optimizers wait for it (the wait shows as idle time).
    const auto f = static_cast<std::size_t>(plan.tied_first), l = static_cast<std::size_t>(plan.tied_last);
    const Seconds tied =
        cost(lay.pipeline_pair(plan.tied_first, plan.tied_last), CollectiveOp::all_reduce, plan.tied_bytes);
    reduced[f] = reduced[l] = max(reduced[f], reduced[l]) + tied;
    r.stages[f].dp_exposed += tied;
    r.stages[l].dp_exposed += tied;
  }
  for (int s = 0; s < p; ++s) {
    const auto& a = r.stages[static_cast<std::size_t>(s)];
    r.step_time = max(r.step_time, reduced[static_cast<std::size_t>(s)] + a.offload + a.optimizer);
  }
  for (int s = 0; s < p; ++s) {
    auto& a = r.stages[static_cast<std::size_t>(s)];
    // ZeRO-3 / FSDP's exposed gathers and reductions are inside the pipeline's passes.
    // So are ZeRO-2's held reductions.
    const Seconds zero3 = shard_x[static_cast<std::size_t>(s)], held = held_x[static_cast<std::size_t>(s)];
    a.bubble = max(Seconds{},
                   r.pipeline - a.compute - a.tp_comm - a.cp_comm - a.ep_comm - a.pp_comm - zero3 - held - gather_wait);
    a.idle = max(Seconds{}, r.step_time - r.pipeline - a.dp_exposed - a.offload - a.optimizer);
    a.dp_exposed += zero3 + held + gather_wait;
  }
  return r;
}

}  // namespace hcsim
