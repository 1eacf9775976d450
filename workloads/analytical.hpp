#pragma once
// The analytical fidelity: a training step in closed form over the step plan the lowering
// emits (workloads/step_plan.hpp: the same items, bytes, groups, buckets and codecs), with
// no engine. Per stage s and micro-batch, c_s is the forward plus backward compute, the
// exposed tensor-parallel collectives and the pipeline sends (with their codec's encode
// and decode); the pipeline takes
//   T_pipe = m * max_s c_s + (sum_s c_s - max_s c_s) / v
// which is (m + p - 1) c for uniform GPipe/1F1B stages and (m + (p-1)/v) c for interleaved
// 1F1B (Narayanan et al. SC21 §2.2); ZB-H1, which splits the backward, has its own
// recurrence (pipeline_ends, below). Stage s finishes its last backward pass
// sum_{j<s} b_j / v before stage 0; its gradient buckets are reduced behind that backward,
// one after another on the stream, each issued when the last backward pass reaches its
// marker: r_k before the pass's end, r_k its marker's compute after it (ChunkTotals::
// marker_after) times the pass's time over its compute; those of earlier chunks at the
// pass's start, the rest after the pass (exposed: the stream's end past the pass's; a
// split backward: what the last W does not hide, at least the last bucket), then the
// optimizer runs (with its state offloaded: streamed in before and back after,
// LoweringInput::offload_stream each), then ZeRO's parameter all-gather. The step is
// the latest stage. With overlap_param_gather, ZeRO-1/2's gather runs bucket by bucket
// before the first micro-batch's forward instead, and the pipeline starts as late as the
// buckets hold its first forwards back (param_gather_wait, analytical.cpp).
// ZeRO-3 / FSDP: each pass runs over its units (workloads/plan_sharding.cpp) with the
// gathers and reductions on the communication stream in the emitter's order; its time is
// sharded_pass_time (below), and what it adds to the units' compute is part of c_s.
// Context parallelism: c_s also holds the ring-attention sends attention blocks do not
// hide; data-parallel groups span the dp * cp ranks of equal weights.
// MoE: c_s also holds each pass's dispatch and combine all-to-alls over the expert group;
// the routed experts' gradient reductions (and ZeRO-1/2 gathers) run over the expert
// replica group beside the others, in the same buckets.
// Collective times come from a callback (the topology-aware collective cost model), so
// this file knows no topology.

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "workloads/step_plan.hpp"

namespace hcsim {

struct AnalyticalStage {
  Seconds compute{};     // per step: forward + backward + recompute compute
  Seconds tp_comm{};     // per step: tensor/sequence-parallel collectives (on the critical path)
  Seconds cp_comm{};     // per step: ring-attention sends not hidden behind attention blocks
  Seconds ep_comm{};     // per step: MoE dispatch and combine all-to-alls (on the critical path)
  Seconds pp_comm{};     // per step: pipeline sends on the critical path
  Seconds dp_exposed{};  // gradient collectives not hidden behind the last backward
  Seconds optimizer{};   // optimizer (+ ZeRO parameter all-gather)
  Seconds offload{};     // optimizer state streamed in and back out (LoweringInput::offload_stream)
  Seconds bubble{};      // waiting in the pipeline
  Seconds idle{};        // waiting after the pipeline for the slowest stage
  Flops flops{}, model_flops{};  // per device
  Joules dynamic_energy{};
};

struct AnalyticalResult {
  Seconds step_time{};
  Seconds pipeline{};
  std::vector<AnalyticalStage> stages;
};

// ZeRO-3 / FSDP: one pass over units u = 0..n-1 in pass order, each with its compute and
// tensor-parallel time c_u (busy), its all-gather g_u (0: none in this pass) and, backward,
// its gradient reduction r_u (reduce-scatter, plus the all-reduce across shard groups with
// hybrid sharding), prefetch depth d. On the communication stream, in order: at unit u's
// start (when unit u-1's compute ends, E_{u-1}; E_{-1} = 0) the reduction of unit u-1
// (backward) then the gathers of units up to u + d not yet issued, each starting at
// max(stream free, E_{u-1}); unit u computes from max(E_{u-1}, its gather's end) for c_u;
// backward, the last unit's reduction follows its compute. The pass takes
//   max(E_{n-1}, the stream's last end).
// Equal units, forward: d = 0 gives n (g + c); d >= 1 gives g + c + (n - 1) max(g, c).
// With `reduce_streams` (ShardPlan::reduce_stream) the reductions leave the gathers' stream:
// unit u's reduce-scatter r_u starts at max(E_u, the reduce-scatter stream free), its
// all-reduce a_u (hybrid) at max(its reduce-scatter's end, the all-reduce stream free), and
// the pass takes the largest of E_{n-1} and the three streams' last ends (the backward's end
// waits for the reductions). Without, r_u and a_u follow each other on the one stream.
// A gather and a reduce-scatter running at once share their group's links: each moves its
// bandwidth time (gather_bw, reduce_bw, of g_u and r_u) at half rate while the other moves
// its own, their latency apart (workloads/sharded_pass.cpp).
struct UnitCost {
  Seconds busy{}, gather{}, reduce{}, all_reduce{};
  Seconds gather_bw{}, reduce_bw{};  // the bandwidth time of gather and reduce (reduce_streams)
  // SM contention (Contention): the share of the SMs each of the three holds while it runs;
  // the units' compute runs at 1 - (the shares of the running ones) meanwhile.
  double gather_share = 0, reduce_share = 0, all_reduce_share = 0;
};
Seconds sharded_pass_time(const std::vector<UnitCost>& units, int prefetch, bool backward, bool reduce_streams = false);

// A schedule that splits the backward into B and W (ZB-H1, workloads/pipeline_schedule.hpp):
// with per micro-batch forward f_s, B b_s and W w_s on stage s (each with its exposed
// tensor-parallel, ring and MoE communication, as c_s above) and the pipeline send's time
// to the next stage and to the previous one, each pass of the order starts when its stage
// is free and its input has arrived (a forward: the previous stage's forward plus its send;
// a B: the next stage's B plus its send; a W: its stage's B, earlier in the order). The
// pipeline is the latest stage's end of this max-plus recurrence over the p orders (3 p m
// passes), exact for the order with per-stage times. For uniform stages (f, b, w, free sends,
// w <= f, m >= p) ZB-H1 gives
//   T_pipe = m (f + b + w) + (p - 1)(f + b - w)
// (Qi et al. ICLR 2024 §3.1: the bubble (p-1)(T_F + T_B - T_W) against 1F1B's
// (p-1)(T_F + T_B + T_W)): the s W passes stage s defers fill its drain. The gradient buckets
// are issued in the last micro-batch's W, so only that pass's w_s hides them; stage s
// reduces after its own end in the recurrence.
// With v chunks per stage (ZB-V) each chunk has its own times and the inputs come from the
// neighbouring virtual stages (Placement): for uniform chunk passes F = B = W and m >= 2p - 1
// ZB-V gives T_pipe = 6 m F + (p - 1) F (workloads/pipeline_schedule.cpp).
// Pairs (PipeOp::paired: a forward and a whole backward of two micro-batches on one device;
// DualPipe's, and the MoE all-to-all overlap's) overlap one pass's computation with the other's MoE dispatch and
// combine, as the DeepSeek-V3 report's Figure 4 and the lowering (emit_pair) do: with each pass cut at its MoE
// collectives into pieces (busy, then the collective's time comm; workloads/items.hpp EpSegment), the device runs F's
// piece 0, B's piece 0, F's piece 1, ... (the rest of the longer pass alone), each piece once the device is free and
// its own pass's previous collective (or, for the first, its input) is done; the pair ends when the device and both
// passes' last collectives are done, and both outputs leave then. The pair's collectives run
// one after another on one communication stream (the report's Figure 4 has one row of them;
// Megatron-Core's combined 1F1B issues dispatch and combine on its comm stream), each once
// its piece is computed and the stream is free. Without pieces (a pass with no MoE
// collective) the pair is F then B.
struct PairPiece {
  Seconds busy{}, comm{};
};
Seconds pair_end(Seconds free, Seconds ready_f, Seconds ready_b, const std::vector<PairPiece>& f,
                 const std::vector<PairPiece>& b);

struct PassTimes {
  Seconds f{}, b{}, w{};
  // To the next virtual stage's stage, to the previous one's (0 where that is this stage).
  Seconds send_forward{}, send_backward{};
  // A whole backward (B and W in one pass, DualPipe's): its collectives may hide behind its
  // weight-gradient GEMMs, which B alone lacks, so it can take less than b + w.
  Seconds whole{};
  // The forward and the whole backward as pieces (PairPiece; empty: no MoE collective).
  std::vector<PairPiece> forward_pieces{}, whole_pieces{};
};
// Each stage's end of `schedule`'s order under that recurrence; `t` holds chunk c of stage s
// at s * v + c. (pipeline_ends.cpp, with pair_end.)
std::vector<Seconds> pipeline_ends(const PipelineSchedule& schedule, const Placement& place, int m,
                                   const std::vector<PassTimes>& t);

// Collective time over an arithmetic group (workloads/layout.hpp).
using GroupCostFn = std::function<Seconds(const DeviceGroup& group, CollectiveOp op, Bytes bytes)>;

// Chunk cost sums kept across analytical_step calls (workloads/step_plan.hpp).
using AnalyticalCache = ChunkCache;

// SM contention (simulation.sm_contention; docs/models.md "SM contention"): the share f of
// each device's SMs a collective over a group holds while it runs (NCCL's channels /
// SMs), and the share a tensor- or sequence-parallel collective holds when the overlap
// runs it with kernels of its own (tp_overlap_sms / SMs; none: NCCL's).
using GroupShareFn = std::function<double(const DeviceGroup& group, CollectiveOp op, Bytes bytes)>;
struct Contention {
  GroupShareFn share;
  std::optional<double> tp_share;
};
// Compute of t seconds (at the full rate) beside a collective of c seconds that holds share
// f of the SMs: the compute runs at 1 - f while the collective runs, so the two end at
// max(c, t + f min(c, t / (1 - f))) (work conservation; the engine's re-rated kernels).
inline Seconds contended_window(Seconds t, Seconds c, double f) {
  if (f <= 0) return max(t, c);
  return max(c, t + f * min(c, t / (1 - f)));
}

// The step in closed form, its collectives costed by `cost` on arithmetic device groups
// (sim/driver/collective_times.hpp costs each group once), with, optionally, a cache of
// chunk sums (null: none) and SM contention (null: none).
AnalyticalResult analytical_step(const LoweringInput& in, const GroupCostFn& cost, AnalyticalCache* cache,
                                 const Contention* contention = nullptr);

}  // namespace hcsim
