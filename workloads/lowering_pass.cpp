// One pass of the lowering (workloads/lowering_emitter.hpp): its items walked for every
// built rank, consecutive compute items folded into one task, the collectives between them
// (tensor-parallel, MoE, ZeRO-3 / FSDP units, ZeRO-1/2 parameter buckets, gradient
// buckets), ring attention, and the pipeline send to the next virtual stage; a pair of
// passes interleaved at their MoE collectives (DualPipe, the all-to-all overlap).
#include "lowering_emitter.hpp"

#include <vector>

#include "sim/core/error.hpp"
#include "workloads/lowering_ring.hpp"

namespace hcsim::lowering_detail {

Emitter::PassCursor Emitter::begin_pass(int s, const PipeOp& op, bool holds_buckets) {
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
void Emitter::flush(PassCursor& c) {
  if (!c.pending) return;
  if (c.first_op != nullptr) c.acc.label = span_labels_.label(*c.first_op, *c.last_op, c.acc_phase, c.ci->first_layer);
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
bool Emitter::advance(PassCursor& c, bool to_end) {
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
void Emitter::param_marker(PassCursor& c) {
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

void Emitter::end_pass(PassCursor& c) {
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

void Emitter::emit_pass(int s, const PipeOp& op, bool holds_buckets) {
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
void Emitter::emit_pair(int s, const PipeOp& f, const PipeOp& b, bool b_holds_buckets) {
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

// Each built rank's last compute task.
std::vector<TaskId> Emitter::device_tails(int s) const {
  std::vector<TaskId> out(static_cast<std::size_t>(ranks_));
  for (int d = 0; d < dp_; ++d)
    for (int t = 0; t < tp_; ++t) out[static_cast<std::size_t>(d * tp_ + t)] = tasks_.compute_tail(dev(s, d, t));
  return out;
}

// Ring attention over the cp ranks of each built rank (workloads/lowering_ring.hpp).
void Emitter::emit_ring(int s, const PipeOp& op, const Item& it, std::vector<TaskId>& chain,
                        std::vector<TaskId>& extra) {
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
void Emitter::send(int s, const PipeOp& op, int vs, const std::vector<TaskId>& chain, const std::vector<TaskId>* also) {
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
TaskId Emitter::first_send(TaskId id) const {
  if (g_[id].kind == TaskKind::send) return id;
  for (TaskId d : g_.deps(id))
    if (g_[d].kind == TaskKind::send) return d;
  return id;
}

}  // namespace hcsim::lowering_detail
