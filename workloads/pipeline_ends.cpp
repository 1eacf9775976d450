// The pipeline's recurrence (workloads/analytical.hpp): each stage's end of a schedule's
// order, every pass once its input is there (pipeline_ends), and a forward and a whole
// backward run as a pair with their MoE collectives interleaved (pair_end). The analytical
// step (analytical.cpp) and the tests of the schedules read them.
#include <algorithm>

#include "sim/core/error.hpp"
#include "workloads/analytical.hpp"

namespace hcsim {

std::vector<Seconds> pipeline_ends(const PipelineSchedule& schedule, const Placement& place, int m,
                                   const std::vector<PassTimes>& t) {
  // Each stage runs its order one pass after another; a forward waits for the previous
  // virtual stage's forward of its micro-batch and that stage's send, a backward (B) for the
  // next virtual stage's; W for its B, earlier in the stage's own order. Passes are emitted
  // in rounds over the stages, as the lowering does, each as far as its inputs exist.
  const int p = place.p, v = place.v;
  const auto P = static_cast<std::size_t>(p), M = static_cast<std::size_t>(m);
  HCSIM_ASSERT(t.size() == P * static_cast<std::size_t>(v), "pass times for every chunk of every stage");
  std::vector<std::vector<PipeOp>> order(P);
  for (int s = 0; s < p; ++s) order[static_cast<std::size_t>(s)] = schedule.order(s, p, m, v);
  const Seconds none(-1);
  const auto V = static_cast<std::size_t>(place.vstages());
  std::vector<Seconds> fwd(V * M, none), bwd(V * M, none), free(P);
  auto times = [&](int vs) -> const PassTimes& {
    return t[static_cast<std::size_t>(place.stage(vs) * v + place.chunk(vs))];
  };
  auto slot = [&](int vs, const PipeOp& op) {
    return static_cast<std::size_t>(vs) * M + static_cast<std::size_t>(op.microbatch);
  };
  // When `op`'s input is there (a forward: the previous virtual stage's forward plus its send;
  // a B or whole backward: the next one's; W: at once), in `ready`; false: not yet known.
  auto input = [&](int vs, const PipeOp& op, Seconds& ready) {
    if (op.weight() || (op.forward() ? place.first(vs) : place.last(vs))) return true;
    const Seconds from = op.forward() ? fwd[slot(vs, op) - M] : bwd[slot(vs, op) + M];
    if (from < Seconds{}) return false;
    ready = from + (op.forward() ? times(vs - 1).send_forward : times(vs + 1).send_backward);
    return true;
  };
  std::vector<std::size_t> pos(P, 0);
  std::size_t remaining = 0;
  for (const auto& o : order) remaining += o.size();
  while (remaining > 0) {
    bool progress = false;
    for (std::size_t s = 0; s < P; ++s) {
      for (; pos[s] < order[s].size(); ++pos[s], --remaining, progress = true) {
        const PipeOp& op = order[s][pos[s]];
        const int vs = place.vstage(static_cast<int>(s), op.chunk);
        const PassTimes& ts = times(vs);
        const std::size_t at = slot(vs, op);
        Seconds ready{};
        if (op.paired) {
          // A pair (DualPipe's, the all-to-all overlap's): both passes' inputs, then pair_end.
          HCSIM_ASSERT(pos[s] + 1 < order[s].size(), "a paired forward ends the order");
          const PipeOp& ob = order[s][pos[s] + 1];
          HCSIM_ASSERT(ob.backward && ob.part == PassPart::whole, "a pair of a forward and a whole backward");
          const int vb = place.vstage(static_cast<int>(s), ob.chunk);
          const PassTimes& tb = times(vb);
          const std::size_t bt = slot(vb, ob);
          Seconds ready_b{};
          if (!input(vs, op, ready) || !input(vb, ob, ready_b)) break;
          if (ts.forward_pieces.empty() || tb.whole_pieces.empty())
            free[s] = max(max(free[s], ready) + ts.f, ready_b) + tb.whole;
          else
            free[s] = pair_end(free[s], ready, ready_b, ts.forward_pieces, tb.whole_pieces);
          fwd[at] = bwd[bt] = free[s];
          ++pos[s];
          --remaining;
          continue;
        }
        if (!input(vs, op, ready)) break;
        const Seconds d = op.weight() ? ts.w : !op.backward ? ts.f : op.part == PassPart::whole ? ts.whole : ts.b;
        free[s] = max(free[s], ready) + d;
        if (!op.weight()) (op.backward ? bwd : fwd)[at] = free[s];
      }
    }
    HCSIM_ASSERT(progress, "pipeline schedule deadlocks: a pass waits for one that never comes");
  }
  return free;
}

Seconds pair_end(Seconds free, Seconds ready_f, Seconds ready_b, const std::vector<PairPiece>& f,
                 const std::vector<PairPiece>& b) {
  Seconds t = free, done_f = ready_f, done_b = ready_b;  // device free; each pass's last collective done
  Seconds stream = free;  // the communication stream free: the pair's collectives one after another
  const auto piece = [&](const PairPiece& x, Seconds& done) {
    t = max(t, done) + x.busy;
    done = x.comm > Seconds{} ? (stream = max(t, stream) + x.comm) : t;
  };
  for (std::size_t i = 0; i < std::max(f.size(), b.size()); ++i) {
    if (i < f.size()) piece(f[i], done_f);
    if (i < b.size()) piece(b[i], done_b);
  }
  return max(t, max(done_f, done_b));
}

}  // namespace hcsim
