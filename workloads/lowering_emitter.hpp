#pragma once
// The lowering's emitter (workloads/lowering.cpp, lowering_pass.cpp): walks the step plan's
// passes in the schedule's order and writes the task graph. lowering.cpp holds the walk over
// the stages, the gradient reductions and the stages' ends (optimizer, offload streams,
// ZeRO-1/2 gathers); lowering_pass.cpp one pass's items (compute folded into tasks, the
// collectives between them, ring attention, the pipeline sends).

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "workloads/lowering.hpp"
#include "workloads/lowering_groups.hpp"
#include "workloads/lowering_sharding.hpp"
#include "workloads/lowering_tasks.hpp"
#include "workloads/span_labels.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim::lowering_detail {

constexpr TaskId kNone = kNoTask;

// The lowering's view: the dp * cp ranks of equal weights are a stage's replica axis
// (lowering.hpp); micro-batches per replica follow dp alone.
inline StrategySpec replica_axis(const StrategySpec& st) {
  StrategySpec f = st;
  f.dp = st.grad_ranks();
  f.cp = 1;
  return f;
}

class Emitter {
 public:
  explicit Emitter(const LoweringInput& in);
  TaskGraph run();

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

  // Gradient reductions (lowering.cpp).
  void emit_grad_collective(int s, const GradReduction& red, const std::vector<TaskId>& chain, int mb,
                            std::vector<TaskId>* held = nullptr);
  TaskId add_codec(std::uint32_t device, Item it, Phase phase, int s, int mb, TaskId dep, TaskId dep2 = kNone);
  void issue_buckets(int s, int chunk, int marker, int mb, const std::function<void()>& flush,
                     std::vector<TaskId>& chain);

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

  // One pass (lowering_pass.cpp).
  PassCursor begin_pass(int s, const PipeOp& op, bool holds_buckets);
  void flush(PassCursor& c);
  bool advance(PassCursor& c, bool to_end);
  void param_marker(PassCursor& c);
  void end_pass(PassCursor& c);
  void emit_pass(int s, const PipeOp& op, bool holds_buckets);
  void emit_pair(int s, const PipeOp& f, const PipeOp& b, bool b_holds_buckets);
  std::vector<TaskId> device_tails(int s) const;
  void emit_ring(int s, const PipeOp& op, const Item& it, std::vector<TaskId>& chain, std::vector<TaskId>& extra);
  void send(int s, const PipeOp& op, int vs, const std::vector<TaskId>& chain,
            const std::vector<TaskId>* also = nullptr);
  TaskId first_send(TaskId id) const;

  // The stages' ends (lowering.cpp).
  void finish_stage(int s);
  void reduce_stage(int s);
  void update_stage(int s);
  TaskId offload_stream(int s, std::uint32_t device, bool read, TaskId dep, TaskId dep2);

  const LoweringInput& in_;
  const StrategySpec st_;  // replica_axis(): dp is dp * cp
  int cp_ = 1;
  int p_ = 1, dp_ = 1, tp_ = 1, m_ = 1, ranks_ = 1;
  StepPlan plan_;
  TaskGraph g_;
  std::map<std::uint64_t, std::vector<TaskId>> recv_;
  StreamTasks tasks_{g_, static_cast<std::uint32_t>(st_.pp* st_.dp* st_.tp)};  // interns the phases' labels first
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

}  // namespace hcsim::lowering_detail
