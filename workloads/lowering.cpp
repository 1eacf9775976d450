// Lowering of one training step to a TaskGraph (see lowering.hpp): the step plan
// (workloads/step_plan.hpp) times the schedule.
//
// Each (stage, chunk) has a forward and a backward "item list" in the plan: compute items
// (one per kernel, already costed on the stage's device) separated by tensor-parallel
// communication items and gradient-bucket markers. Emitting a pipeline pass walks the list
// for every (data-parallel, tensor-parallel) rank of the stage, folding consecutive compute
// items into one task (compute between two communication points is one activity). Passes
// are emitted in a global topological order by stepping each stage through its schedule
// whenever the activations or gradients it needs have been sent.
// A schedule that splits the backward (ZB-H1) runs each as two passes from the plan's
// split lists: B (input gradients) sends its output gradient to the previous virtual stage
// as soon as it ends; W (weight gradients, and the bucket markers that issue the gradient
// reductions after them) runs later on the same device and sends nothing.
#include "lowering.hpp"
#include "lowering_groups.hpp"
#include "lowering_ring.hpp"
#include "lowering_sharding.hpp"
#include "lowering_tasks.hpp"
#include "span_labels.hpp"
#include "step_plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

constexpr TaskId kNone = kNoTask;

// The lowering's view: the dp * cp ranks of equal weights are a stage's replica axis
// (lowering.hpp); micro-batches per replica follow dp alone.
StrategySpec replica_axis(const StrategySpec& st) {
  StrategySpec f = st;
  f.dp = st.grad_ranks();
  f.cp = 1;
  return f;
}

class Emitter {
 public:
  explicit Emitter(const LoweringInput& in)
      : in_(in), st_(replica_axis(*in.strategy)), cp_(in.strategy->cp), plan_(build_step_plan(in)) {
    p_ = st_.pp;
    // Symmetry builds whole context-parallel rings: the cp ranks of a data-parallel rank
    // are not identical where their ring crosses links of different speeds (a node edge).
    dp_ = in.dp_replicas > 0 ? std::min(in.dp_replicas * cp_, st_.dp) : st_.dp;
    tp_ = in.tp_ranks > 0 ? std::min(in.tp_ranks, st_.tp) : st_.tp;  // simulated tensor-parallel ranks
    m_ = plan_.m;
    ranks_ = dp_ * tp_;
    shard_.set_built(dp_, tp_);
    groups_.set_built(dp_, tp_);
    const std::uint32_t devices = static_cast<std::uint32_t>(p_ * st_.dp * st_.tp);
    g_.devices = devices;
    g_.memory_endpoints = in.memory_endpoints;
  }

  TaskGraph run() {
    std::vector<std::vector<PipeOp>> order(static_cast<std::size_t>(p_));
    for (int s = 0; s < p_; ++s) order[s] = plan_.stages[static_cast<std::size_t>(s)].order;
    std::vector<std::size_t> pos(static_cast<std::size_t>(p_), 0);
    // A pass that completes gradients: a whole backward, or W.
    const auto grads = [](const PipeOp& op) { return op.part == PassPart::whole ? op.backward : op.weight(); };
    // Per stage and chunk: the pass that holds the bucket markers of the chunk's last
    // micro-batch (its last such pass in the order).
    std::vector<std::vector<std::size_t>> holder(static_cast<std::size_t>(p_),
                                                 std::vector<std::size_t>(static_cast<std::size_t>(plan_.v)));
    std::size_t remaining = 0;
    for (int s = 0; s < p_; ++s) {
      remaining += order[s].size();
      for (std::size_t i = 0; i < order[s].size(); ++i)
        if (grads(order[s][i])) holder[s][static_cast<std::size_t>(order[s][i].chunk)] = i;
    }
    // Reduced every micro-batch (ZeRO-2): every such pass holds its chunk's buckets.
    const auto holds = [&](int s, std::size_t i) {
      const PipeOp& op = order[s][i];
      return plan_.reduce_every_microbatch ? grads(op) : i == holder[s][static_cast<std::size_t>(op.chunk)];
    };
    // ZeRO-1/2 aligned parameter gathers: model chunks 0 and 1 issued as the step starts.
    for (int s = 0; s < p_; ++s)
      if (st_.align_param_gather)
        for (int c = 0; c < std::min(2, plan_.v); ++c) groups_.issue_chunk_gathers(s, c, {});
    std::vector<bool> done(static_cast<std::size_t>(p_), false);
    while (remaining > 0) {
      bool progress = false;
      for (int s = 0; s < p_; ++s) {
        while (pos[s] < order[s].size() && ready(s, order[s][pos[s]])) {
          const PipeOp& op = order[s][pos[s]];
          if (op.paired) {
            // A pair runs once both passes' inputs are there.
            HCSIM_ASSERT(pos[s] + 1 < order[s].size(), "a paired forward ends the order");
            const PipeOp& b = order[s][pos[s] + 1];
            if (!ready(s, b)) break;
            emit_pair(s, op, b, holds(s, pos[s] + 1));
            ++pos[s];
            --remaining;
          } else {
            emit_pass(s, op, holds(s, pos[s]));
          }
          ++pos[s];
          --remaining;
          progress = true;
          if (pos[s] < order[s].size()) continue;
          // Two copies of the parameters (DualPipe): their gradients are summed once both
          // stages are done, before either's optimizer.
          done[s] = true;
          const int copy = plan_.placement.copy_stage(s), tied = plan_.tied_pair(s);
          if (copy >= 0) {
            if (done[copy]) {
              const StagePlan& a = stage(std::min(s, copy));
              groups_.pair_reduction(std::min(s, copy), std::max(s, copy), a.grad_bytes + a.expert_grad_bytes);
              finish_stage(std::min(s, copy));
              finish_stage(std::max(s, copy));
            }
          } else if (tied >= 0) {
            // Tied embeddings: both stages' gradients reduced, then the embedding group's
            // all-reduce, then both optimizers.
            reduce_stage(s);
            if (done[tied]) {
              groups_.pair_reduction(plan_.tied_first, plan_.tied_last, plan_.tied_bytes);
              update_stage(plan_.tied_first);
              update_stage(plan_.tied_last);
            }
          } else {
            finish_stage(s);
          }
        }
      }
      HCSIM_ASSERT(progress, "pipeline schedule deadlocks: a pass waits for one that never comes");
    }
    return std::move(g_);
  }

 private:
  int vstage(int s, int c) const { return plan_.vstage(s, c); }
  std::uint32_t dev(int s, int r, int tpi) const { return plan_.layout.device(s, r, tpi); }
  const StagePlan& stage(int s) const { return plan_.stages[static_cast<std::size_t>(s)]; }
  std::uint64_t key(int vs, int mb, bool bwd) const {
    return (static_cast<std::uint64_t>(vs) * static_cast<std::uint64_t>(m_) + static_cast<std::uint64_t>(mb)) * 2 +
           (bwd ? 1 : 0);
  }

  bool ready(int s, const PipeOp& op) const {
    if (op.weight()) return true;  // after its B, earlier in the stage's order
    const int vs = vstage(s, op.chunk);
    if (!op.backward) return plan_.placement.first(vs) || recv_.count(key(vs, op.microbatch, false));
    return plan_.placement.last(vs) || recv_.count(key(vs, op.microbatch, true));
  }

  // Micro-batch mb's gradient reduction `red` of stage s (the plan's) after `chain`, one per
  // tensor-parallel rank: its codec's encode on each rank, its collectives one after the
  // other, decode. `held` (ZeRO-2 reducing every micro-batch without overlap): the devices'
  // next compute waits for it, and each built rank's entry becomes the task it ends with
  // (the pass's send follows it).
  void emit_grad_collective(int s, const GradReduction& red, const std::vector<TaskId>& chain, int mb,
                            std::vector<TaskId>* held = nullptr) {
    for (int t = 0; t < tp_; ++t) {
      std::vector<TaskId> deps;
      for (int d = 0; d < dp_; ++d) {
        const TaskId after = chain[static_cast<std::size_t>(d * tp_ + t)];
        deps.push_back(red.codec.compressed ? add_codec(dev(s, d, t), red.codec.encode, Phase::backward, s, mb, after)
                                            : after);
      }
      TaskId last = kNone;
      for (const GradReduction::Phase& ph : red.phases) {
        last = groups_.dp_collective(s, t, ph.op, ph.bytes, plan_.grad_class, Phase::backward, mb, deps);
        deps = {last};
      }
      // A decode runs on the compute stream: what follows it waits for the reduction anyway.
      for (int d = 0; d < dp_; ++d) {
        TaskId end = last;
        if (red.codec.compressed)
          end = add_codec(dev(s, d, t), red.codec.decode, Phase::backward, s, mb, last);
        else if (held)
          tasks_.block_compute_on(dev(s, d, t), last);
        if (held) (*held)[static_cast<std::size_t>(d * tp_ + t)] = end;
      }
    }
  }

  TaskId add_codec(std::uint32_t device, Item it, Phase phase, int s, int mb, TaskId dep, TaskId dep2 = kNone) {
    it.label = codec_label_;
    return tasks_.compute(device, it, phase, s, mb, dep, dep2);
  }

  // The plan's reductions issued at this point of stage s's pass over `chunk` (its last
  // micro-batch's backward, or micro-batch mb's with StepPlan::reduce_every_microbatch):
  // bucket marker `marker`, or -1 after the pass's items. Each point comes once a pass that
  // holds buckets, in whatever order the schedule runs the chunks' passes.
  // `chain` (the pass's) follows held reductions (emit_grad_collective).
  void issue_buckets(int s, int chunk, int marker, int mb, const std::function<void()>& flush,
                     std::vector<TaskId>& chain) {
    for (const BucketPoint& bp : stage(s).buckets) {
      if (bp.chunk != chunk || bp.marker != marker) continue;
      flush();
      emit_grad_collective(s, bp.reduction, chain, mb, st_.overlap_dp ? nullptr : &chain);
      groups_.expert_reduction(s, bp.expert, chain, mb);
    }
  }

  // One pass being emitted: where it is in its items and its ranks' chains.
  struct PassCursor {
    int s = 0, vs = 0;
    PipeOp op;
    const ChunkItems* ci = nullptr;
    const std::vector<Item>* items = nullptr;
    std::size_t next = 0;  // the next item
    std::vector<TaskId> chain, extra;
    // Collectives running beside the next compute item (Item::overlap_next): the task
    // after that item waits for them.
    std::vector<TaskId> beside;
    bool sharded = false;
    bool last = false;  // holds the bucket markers: the chunk's last whole backward or W
    std::size_t unit = 0;
    int marker = 0;
    bool gathers = false;  // the chunk's first forward: waits for ZeRO-1/2's parameter buckets
    int fwd_marker = 0;
    Item acc;  // compute items folded into one task
    Phase acc_phase = Phase::forward;
    bool pending = false;
    const Item* first_op = nullptr;  // the first and last named items folded into acc
    const Item* last_op = nullptr;
    // A pair's communication stream (emit_pair): the tasks of the last MoE collective either
    // pass of the pair issued, which the next one waits for; null outside a pair.
    std::vector<TaskId>* stream = nullptr;
  };

  PassCursor begin_pass(int s, const PipeOp& op, bool holds_buckets) {
    PassCursor c;
    c.s = s;
    c.op = op;
    c.vs = vstage(s, op.chunk);
    c.ci = &stage(s).chunks[static_cast<std::size_t>(op.chunk)];
    c.items = op.weight()                  ? &c.ci->bwd_weight
              : op.part == PassPart::input ? &c.ci->bwd_input
              : op.backward                ? &c.ci->bwd
                                           : &c.ci->fwd;
    c.chain.assign(static_cast<std::size_t>(ranks_), kNone);
    c.extra.assign(c.chain.size(), kNone);
    // W waits for nothing but the device's earlier tasks (its B among them).
    if (!op.weight())
      if (auto it = recv_.find(key(c.vs, op.microbatch, op.backward)); it != recv_.end()) c.chain = it->second;
    c.sharded = stage(s).sharding.on;
    if (c.sharded) shard_.begin(s, stage(s).sharding, *c.items, op.backward, op.microbatch);
    c.last = holds_buckets;
    c.gathers = op.forward() && op.microbatch == 0 && !stage(s).param_gathers.empty();
    // Aligned gathers: chunk c + 1's issued as chunk c's first forward starts (Megatron-Core's
    // interleaved schedule, param_sync_func; chunks 0 and 1 at the step's start).
    if (c.gathers && st_.align_param_gather && op.chunk + 1 >= 2 && op.chunk + 1 < plan_.v)
      groups_.issue_chunk_gathers(s, op.chunk + 1, c.chain);
    return c;
  }

  // The compute items folded so far as one task per rank.
  void flush(PassCursor& c) {
    if (!c.pending) return;
    if (c.first_op != nullptr)
      c.acc.label = span_labels_.label(*c.first_op, *c.last_op, c.acc_phase, c.ci->first_layer);
    for (int d = 0; d < dp_; ++d)
      for (int t = 0; t < tp_; ++t) {
        const auto r = static_cast<std::size_t>(d * tp_ + t);
        c.chain[r] = tasks_.compute(dev(c.s, d, t), c.acc, c.acc_phase, c.s, c.op.microbatch, c.chain[r], c.extra[r]);
        c.extra[r] = kNone;
      }
    c.acc = Item{};
    c.pending = false;
    c.first_op = c.last_op = nullptr;
  }

  // Emits the pass's items up to and including its next MoE collective (Item::Kind::ep_comm),
  // or with `to_end` all of them; whether items remain.
  bool advance(PassCursor& c, bool to_end) {
    const int s = c.s;
    const PipeOp& op = c.op;
    while (c.next < c.items->size()) {
      const Item& it = (*c.items)[c.next++];
      if (it.kind == Item::Kind::compute) {
        if (c.pending && it.phase != c.acc_phase && (it.phase == Phase::recompute || c.acc_phase == Phase::recompute))
          flush(c);
        c.acc_phase = it.phase;
        c.acc.t += it.t;
        c.acc.flops += it.flops;
        c.acc.model_flops += it.model_flops;
        c.acc.bytes += it.bytes;
        c.acc.energy += it.energy;
        c.pending = true;
        if (it.op_name != nullptr) {
          if (c.first_op == nullptr) c.first_op = &it;
          c.last_op = &it;
        }
        if (!c.beside.empty()) {
          flush(c);
          c.extra = c.beside;
          c.beside.clear();
        }
        continue;
      }
      if (it.kind == Item::Kind::cp_ring) {
        flush(c);
        emit_ring(s, op, it, c.chain, c.extra);
        continue;
      }
      if (it.kind == Item::Kind::unit) {
        flush(c);
        shard_.at_unit(c.unit++, c.chain, device_tails(s), c.extra);
        continue;
      }
      if (it.kind == Item::Kind::tp_comm) {
        flush(c);
        HCSIM_ASSERT(c.beside.empty(), "two tensor-parallel collectives run beside one compute item");
        if (it.overlap_next) c.beside.assign(c.chain.size(), kNone);
        groups_.tp_comm(s, op, it, c.chain, c.extra, it.overlap_next ? c.beside : c.chain);
        continue;
      }
      if (it.kind == Item::Kind::ep_comm) {
        flush(c);
        groups_.ep_comm(s, op, it, c.chain, c.extra, c.stream);
        if (c.stream) *c.stream = c.chain;
        if (!to_end) return c.next < c.items->size();
        continue;
      }
      // A forward marker: the block after it waits for its parameter bucket (the first
      // micro-batch, ZeRO-1/2 with overlap_param_gather).
      if (op.forward()) {
        if (c.gathers) param_marker(c);
        continue;
      }
      // Gradient bucket marker: the plan's reductions issued here (the passes that hold buckets).
      if (c.last)
        issue_buckets(
            s, op.chunk, c.marker, op.microbatch, [&] { flush(c); }, c.chain);
      ++c.marker;
    }
    return false;
  }

  // The first forward of a chunk at a block marker: the bucket that starts here is waited for
  // by the block's first task; unaligned, it is issued now if it was not, and the chunk's
  // next bucket once it is done (Megatron-Core's forward pre-hook, finish_param_sync).
  void param_marker(PassCursor& c) {
    const int k = c.fwd_marker++;
    const auto& pgs = stage(c.s).param_gathers;
    for (std::size_t j = 0; j < pgs.size(); ++j) {
      if (pgs[j].chunk != c.op.chunk || pgs[j].first != k) continue;
      flush(c);
      const std::vector<TaskId>* done = groups_.gathered(c.s, j);
      const std::vector<TaskId> ids = done ? *done : groups_.issue_gather(c.s, j, c.chain);
      if (!st_.align_param_gather && j + 1 < pgs.size() && pgs[j + 1].chunk == c.op.chunk &&
          !groups_.gathered(c.s, j + 1))
        groups_.issue_gather(c.s, j + 1, ids);
      for (std::size_t r = 0; r < ids.size(); ++r) {
        HCSIM_ASSERT(c.extra[r] == kNone, "a parameter bucket's wait meets another pending dependency");
        c.extra[r] = ids[r];
      }
    }
  }

  void end_pass(PassCursor& c) {
    flush(c);
    HCSIM_ASSERT(c.beside.empty(), "a tensor-parallel collective runs beside a compute item: none follows it");
    if (c.sharded) {
      // Reductions on their own streams: the compute stream waits for the last one at the
      // backward's end (FSDP's final callback), so the device's next compute and the pass's
      // send (issued on the compute stream's order) follow it.
      const std::vector<TaskId> wait = shard_.end(c.chain);
      for (int d = 0; d < dp_; ++d)
        for (int t = 0; t < tp_; ++t) {
          const auto r = static_cast<std::size_t>(d * tp_ + t);
          if (wait[r] == kNone) continue;
          tasks_.block_compute_on(dev(c.s, d, t), wait[r]);
          c.chain[r] = wait[r];
        }
    }
    if (c.last)
      issue_buckets(
          c.s, c.op.chunk, -1, c.op.microbatch, [&] { flush(c); }, c.chain);
  }

  void emit_pass(int s, const PipeOp& op, bool holds_buckets) {
    PassCursor c = begin_pass(s, op, holds_buckets);
    advance(c, true);
    end_pass(c);
    if (!op.weight()) send(s, op, c.vs, c.chain);
  }

  // A pair (PipeOp::paired): forward `f` and whole backward `b` of two
  // micro-batches on one device (DualPipe's, or the MoE all-to-all overlap's). As the
  // DeepSeek-V3 report's Figure 4 overlaps them, the device computes a piece of one pass while
  // the other's MoE dispatch or combine runs: f up to its first MoE collective, b up to its
  // first, f up to its next, and so on, each piece after its own pass's collective, each
  // collective after the pair's previous one (one communication stream); both outputs leave
  // when both passes are done (the repository's order).
  void emit_pair(int s, const PipeOp& f, const PipeOp& b, bool b_holds_buckets) {
    // One ZeRO-3 / FSDP pass at a time (ShardEmitter); the scenario refuses DualPipe and the
    // all-to-all overlap with it.
    HCSIM_ASSERT(!stage(s).sharding.on, "a pair of passes under ZeRO-3 / FSDP");
    PassCursor cf = begin_pass(s, f, false), cb = begin_pass(s, b, b_holds_buckets);
    // The pair's collectives one after another on one communication stream (analytical.hpp,
    // pair_end).
    std::vector<TaskId> stream(cf.chain.size(), kNoTask);
    cf.stream = cb.stream = &stream;
    for (bool more_f = true, more_b = true; more_f || more_b;) {
      if (more_f) more_f = advance(cf, false);
      if (more_b) more_b = advance(cb, false);
    }
    end_pass(cf);
    end_pass(cb);
    send(s, f, cf.vs, cf.chain, &cb.chain);
    send(s, b, cb.vs, cb.chain, &cf.chain);
  }

  std::vector<TaskId> device_tails(int s) const {  // each built rank's last compute task
    std::vector<TaskId> out(static_cast<std::size_t>(ranks_));
    for (int d = 0; d < dp_; ++d)
      for (int t = 0; t < tp_; ++t) out[static_cast<std::size_t>(d * tp_ + t)] = tasks_.compute_tail(dev(s, d, t));
    return out;
  }

  // Ring attention over the cp ranks of each built rank (workloads/lowering_ring.hpp).
  void emit_ring(int s, const PipeOp& op, const Item& it, std::vector<TaskId>& chain, std::vector<TaskId>& extra) {
    Item block = it;
    block.kind = Item::Kind::compute;
    if (it.op_name != nullptr)
      block.label = span_labels_.label(it, it, it.phase, stage(s).chunks[static_cast<std::size_t>(op.chunk)].first_layer);
    block.t /= cp_;
    block.flops /= cp_;
    block.model_flops /= cp_;
    block.bytes /= cp_;
    block.energy /= cp_;
    const RingAttention ring{tasks_, g_, groups_, plan_.layout, cp_, dp_, tp_, send_label_};
    ring.emit(s, op.microbatch, op.forward() ? Phase::forward : Phase::backward, block, it.comm_bytes, chain, extra);
  }

  // `also`: a second task per rank the send waits for (a pair's other pass), or null.
  void send(int s, const PipeOp& op, int vs, const std::vector<TaskId>& chain,
            const std::vector<TaskId>* also = nullptr) {
    if (op.backward ? plan_.placement.first(vs) : plan_.placement.last(vs)) return;
    const int next_vs = op.backward ? vs - 1 : vs + 1;
    const int ns = plan_.placement.stage(next_vs);
    // The next virtual stage on this device (ZB-V's turn on the last stage): no send.
    if (ns == s) {
      recv_[key(next_vs, op.microbatch, op.backward)] = chain;
      return;
    }
    const StagePlan& from = stage(s);
    const Phase phase = op.backward ? Phase::backward : Phase::forward;
    std::vector<TaskId> ids(chain.size(), kNone);
    for (int d = 0; d < dp_; ++d)
      for (int t = 0; t < tp_; ++t) {
        const auto r = static_cast<std::size_t>(d * tp_ + t);
        TaskId dep = chain[r], dep2 = also != nullptr ? (*also)[r] : kNone;
        if (dep2 == dep) dep2 = kNone;
        if (from.send_codec.compressed) {
          dep = add_codec(dev(s, d, t), from.send_codec.encode, phase, s, op.microbatch, dep, dep2);
          dep2 = kNone;
        }
        ids[r] = tasks_.send(dev(s, d, t), dev(ns, d, t), from.send_bytes, CommClass::pp, phase, s, op.microbatch,
                             send_label_, {dep, dep2});
        if (st_.blocking_p2p) tasks_.block_compute_on(dev(s, d, t), ids[r]);
        if (from.send_codec.compressed)
          ids[r] = add_codec(dev(ns, d, t), stage(ns).send_codec.decode, phase, ns, op.microbatch, ids[r]);
      }
    // Ranks not built (symmetry) send the same bytes between their own devices.
    g_.add_mirror(first_send(ids[0]), groups_.pair_mirrors({s, ns, 0}, [](int d) { return d; }));
    recv_[key(next_vs, op.microbatch, op.backward)] = std::move(ids);
  }

  // The send task behind a receive id (the id is the decode task when compressed).
  TaskId first_send(TaskId id) const {
    if (g_[id].kind == TaskKind::send) return id;
    for (TaskId d : g_.deps(id))
      if (g_[d].kind == TaskKind::send) return d;
    return id;
  }

  void finish_stage(int s) {
    reduce_stage(s);
    update_stage(s);
  }

  // Without overlap, every gradient reduced after the stage's last pass.
  void reduce_stage(int s) {
    const StagePlan& sp = stage(s);
    if (sp.buckets.empty() || sp.buckets.front().chunk >= 0) return;
    std::vector<TaskId> chain(static_cast<std::size_t>(ranks_), kNone);
    for (int d = 0; d < dp_; ++d)
      for (int t = 0; t < tp_; ++t) chain[static_cast<std::size_t>(d * tp_ + t)] = tasks_.compute_tail(dev(s, d, t));
    emit_grad_collective(s, sp.buckets.front().reduction, chain, m_ - 1);
    groups_.expert_reduction(s, sp.buckets.front().expert, chain, m_ - 1);
  }

  // The optimizer, its offload streams and ZeRO-1/2's gathers of the updated parameters.
  void update_stage(int s) {
    const StagePlan& sp = stage(s);
    // Adam over this device's parameters (its 1/dp shard under ZeRO >= 1).
    std::vector<TaskId> upd(static_cast<std::size_t>(ranks_), kNone);
    // Offload: a device's state streams in once its gradients are complete (last backward,
    // last gradient collective), not before: there is no room to keep it on the device.
    const auto twin = dev(s, 0, 0);
    const TaskId twin_compute = tasks_.compute_tail(twin), twin_comm = tasks_.comm_tail(twin);
    for (int d = 0; d < dp_; ++d)
      for (int t = 0; t < tp_; ++t) {
        const auto dv = dev(s, d, t);
        const auto r = static_cast<std::size_t>(d * tp_ + t);
        const TaskId read = offload_stream(s, dv, true, tasks_.compute_tail(dv), tasks_.comm_tail(dv));
        upd[r] = tasks_.compute(dv, sp.optimizer, Phase::optimizer, s, 0, tasks_.comm_tail(dv), read);
        offload_stream(s, dv, false, upd[r], kNone);
      }
    // Ranks not built stream their own state at the same time as their built twin.
    for (int d = 0; d < st_.dp; ++d)
      for (int t = 0; t < st_.tp; ++t)
        if (d >= dp_ || t >= tp_)
          offload_stream(s, dev(s, d, t), false, offload_stream(s, dev(s, d, t), true, twin_compute, twin_comm), upd[0]);
    if (sp.zero_gather_bytes > Bytes{})
      for (int t = 0; t < tp_; ++t) {
        std::vector<TaskId> deps;
        for (int d = 0; d < dp_; ++d) deps.push_back(upd[static_cast<std::size_t>(d * tp_ + t)]);
        groups_.dp_collective(s, t, CollectiveOp::all_gather, sp.zero_gather_bytes, CommClass::zero, Phase::optimizer,
                              0, std::move(deps));
      }
    if (sp.expert_gather_bytes > Bytes{}) groups_.expert_gather(s, sp.expert_gather_bytes, Phase::optimizer, upd);
  }

  // One stream of a device's optimizer state (the plan's offload_bytes) from its memory
  // endpoint (`read`) or back to it, after `dep` and `dep2`; kNone without offload.
  TaskId offload_stream(int s, std::uint32_t device, bool read, TaskId dep, TaskId dep2) {
    if (in_.offload_endpoint.empty()) return kNone;
    const std::uint32_t mem = g_.devices + in_.offload_endpoint[device];
    return tasks_.send(read ? mem : device, read ? device : mem, stage(s).offload_bytes, CommClass::offload,
                       Phase::optimizer, s, 0, offload_label_, {dep, dep2});
  }

  const LoweringInput& in_;
  const StrategySpec st_;  // replica_axis(): dp is dp * cp
  int cp_ = 1;
  int p_ = 1, dp_ = 1, tp_ = 1, m_ = 1, ranks_ = 1;
  StepPlan plan_;
  TaskGraph g_;
  std::map<std::uint64_t, std::vector<TaskId>> recv_;
  StreamTasks tasks_{g_, static_cast<std::uint32_t>(st_.pp * st_.dp * st_.tp)};  // interns the phases' labels first
  std::uint32_t send_label_ = g_.intern_label("send");
  std::uint32_t codec_label_ = g_.intern_label("codec");
  std::uint32_t offload_label_ = g_.intern_label("offload");
  SpanLabels span_labels_{g_};  // compute tasks' labels
  ShardEmitter shard_{g_, plan_.layout, dp_, tp_,
                      [this](std::uint32_t group, CollectiveOp op, Bytes bytes, Phase phase, int s, int mb,
                             std::vector<TaskId>& deps, int stream) {
                        return stream < 0
                                   ? tasks_.collective(group, op, bytes, CommClass::zero, phase, s, mb, deps, true)
                                   : tasks_.reduction(group, op, bytes, CommClass::zero, phase, s, mb, deps, stream);
                      }};
  GroupCollectives groups_{g_, tasks_, plan_, st_};
};

}  // namespace

TaskGraph lower_training_step(const LoweringInput& in) {
  HCSIM_ASSERT(in.model && in.strategy && in.workload && in.schedule, "lowering input incomplete");
  HCSIM_ASSERT(static_cast<int>(in.stage_device.size()) == in.strategy->pp, "one device model per stage");
  HCSIM_ASSERT(static_cast<int>(in.layers_per_stage.size()) == in.strategy->pp, "layers for every stage");
  TaskGraph g = Emitter(in).run();
  g.shrink_to_fit();
  return g;
}

}  // namespace hcsim
