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
// This file walks the stages through their orders and emits the gradient reductions and
// each stage's end; one pass's items are lowering_pass.cpp's (the class: lowering_emitter.hpp).
#include "lowering_emitter.hpp"

#include <algorithm>
#include <vector>

#include "sim/core/error.hpp"

namespace hcsim {
namespace lowering_detail {

Emitter::Emitter(const LoweringInput& in)
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

TaskGraph Emitter::run() {
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

// Micro-batch mb's gradient reduction `red` of stage s (the plan's) after `chain`, one per
// tensor-parallel rank: its codec's encode on each rank, its collectives one after the
// other, decode. `held` (ZeRO-2 reducing every micro-batch without overlap): the devices'
// next compute waits for it, and each built rank's entry becomes the task it ends with
// (the pass's send follows it).
void Emitter::emit_grad_collective(int s, const GradReduction& red, const std::vector<TaskId>& chain, int mb,
                                   std::vector<TaskId>* held) {
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

TaskId Emitter::add_codec(std::uint32_t device, Item it, Phase phase, int s, int mb, TaskId dep, TaskId dep2) {
  it.label = codec_label_;
  return tasks_.compute(device, it, phase, s, mb, dep, dep2);
}

// The plan's reductions issued at this point of stage s's pass over `chunk` (its last
// micro-batch's backward, or micro-batch mb's with StepPlan::reduce_every_microbatch):
// bucket marker `marker`, or -1 after the pass's items. Each point comes once a pass that
// holds buckets, in whatever order the schedule runs the chunks' passes.
// `chain` (the pass's) follows held reductions (emit_grad_collective).
void Emitter::issue_buckets(int s, int chunk, int marker, int mb, const std::function<void()>& flush,
                            std::vector<TaskId>& chain) {
  for (const BucketPoint& bp : stage(s).buckets) {
    if (bp.chunk != chunk || bp.marker != marker) continue;
    flush();
    emit_grad_collective(s, bp.reduction, chain, mb, st_.overlap_dp ? nullptr : &chain);
    groups_.expert_reduction(s, bp.expert, chain, mb);
  }
}

void Emitter::finish_stage(int s) {
  reduce_stage(s);
  update_stage(s);
}

// Without overlap, every gradient reduced after the stage's last pass.
void Emitter::reduce_stage(int s) {
  const StagePlan& sp = stage(s);
  if (sp.buckets.empty() || sp.buckets.front().chunk >= 0) return;
  std::vector<TaskId> chain = device_tails(s);
  emit_grad_collective(s, sp.buckets.front().reduction, chain, m_ - 1);
  groups_.expert_reduction(s, sp.buckets.front().expert, chain, m_ - 1);
}

// The optimizer, its offload streams and ZeRO-1/2's gathers of the updated parameters.
void Emitter::update_stage(int s) {
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
      groups_.dp_collective(s, t, CollectiveOp::all_gather, sp.zero_gather_bytes, CommClass::zero, Phase::optimizer, 0,
                            std::move(deps));
    }
  if (sp.expert_gather_bytes > Bytes{}) groups_.expert_gather(s, sp.expert_gather_bytes, Phase::optimizer, upd);
}

// One stream of a device's optimizer state (the plan's offload_bytes) from its memory
// endpoint (`read`) or back to it, after `dep` and `dep2`; kNone without offload.
TaskId Emitter::offload_stream(int s, std::uint32_t device, bool read, TaskId dep, TaskId dep2) {
  if (in_.offload_endpoint.empty()) return kNone;
  const std::uint32_t mem = g_.devices + in_.offload_endpoint[device];
  return tasks_.send(read ? mem : device, read ? device : mem, stage(s).offload_bytes, CommClass::offload,
                     Phase::optimizer, s, 0, offload_label_, {dep, dep2});
}

}  // namespace lowering_detail

TaskGraph lower_training_step(const LoweringInput& in) {
  HCSIM_ASSERT(in.model && in.strategy && in.workload && in.schedule, "lowering input incomplete");
  HCSIM_ASSERT(static_cast<int>(in.stage_device.size()) == in.strategy->pp, "one device model per stage");
  HCSIM_ASSERT(static_cast<int>(in.layers_per_stage.size()) == in.strategy->pp, "layers for every stage");
  TaskGraph g = lowering_detail::Emitter(in).run();
  g.shrink_to_fit();
  return g;
}

}  // namespace hcsim
