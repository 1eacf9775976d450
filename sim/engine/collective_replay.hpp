#pragma once
// Inside the engine only: the replay of collective tasks from their plans
// (collective_plan.hpp). It decides which flows and timers run when; the task replay
// (replay.cpp) turns them into SimGrid activities and reports back when each one ends.
// Flow mode's per-rank replay is in flow_collectives.cpp, the solo collectives in
// solo_collectives.cpp.
//   event mode: per phase, a timer then the phase's merged flows, phases in order;
//   flow mode:  every transfer of the schedule as a flow, rank r's step-k sends starting
//               once all transfers of earlier steps that r sends or receives are done.
//
// Representative flows (event mode and flow mode by phases, symmetric runs). Under symmetry a collective spans
// devices that run nothing: the replicas the lowering did not build. The flows of a phase
// fall into classes of equal bytes at an equal share of their links (MirrorLoad::shared_times;
// routes may differ in latency): a ring whose every hop crosses the same kind of path is one
// class, a multi-ring over two nodes two (its NVLink hops and its network hops). Where the
// flows that a built device (one that runs a compute task) sends or receives meet every
// class, or the phase is one class, the others are translates of them, and only these run
// in SimGrid, plus the slowest flow of a class when it is elsewhere (the longest route: the
// phase ends with it). Where a class of several has no built device's flow (a torus shared
// unevenly), every flow runs, as before. The
// other flows of the phase ("rest") are charged like mirrors: they load the links the
// launched flows cross (their stretch, mirror_load.hpp) and their bytes are counted on
// their routes, once per plan and number of runs (account_rest). Rest flows are not in
// SimGrid, so every flow that starts while their phase runs (other stages' collectives and
// sends crossing the same spines) is stretched for them: a flow starting with k_e SimGrid
// flows (itself included), r_e rest flows and m_e flows of its own mirrors on link e
// carries R_0 / R times its bytes, R_0 = min_e B_e / k_e, R = min_e B_e / (k_e + r_e + m_e)
// (dynamic_stretch; it replaces the per-phase stretch of mirror_load.hpp in such runs).
// On an idle network a phase still takes exactly the cost model's time; its SimGrid
// activities no longer grow with the data-parallel degree. Without symmetry every device
// of a group is built and every flow runs, as before; a graph with no compute task
// (hcsim collective) runs every flow, and so does EngineOptions::representative_flows false.
// Flow mode by phases (FlowSplit), where every rank of each flow step sends as many flows
// and receives as many (a tree's ranks drift apart; its collectives run every flow): each
// flow step of the schedule splits as a phase does; a
// rank's timer step runs where the rank sends or receives a flow of its phase that runs (a
// phase of timers alone: the built ranks', else its first rank's). A step is closed once
// its transfers that run have arrived (and the step before is closed): its rest transfers
// arrive then, so the ranks' per-step order holds, and its rest flows load the links from
// the close of the step before to its own (as an event-mode phase's after its timer).
//
// Solo collectives (event mode). Per directed link the engine notes who crosses it: a
// group's collectives (their launched and rest flows in every phase, and their mirrors'),
// the sends of one device pair (and their mirrors'); only on the links the built collectives'
// flows cross, the only ones whose users are read. A collective runs as one timer where
// its group's launched flows of a phase share no directed link, its group's collectives
// each depend (through the graph) on the one before, and every task of another user of its
// links (at most three others) is ordered with it: a dependency either way, found by a
// bounded search back along the dependencies (galloping out from the task's place in the
// group's chain, then bisecting; the chain makes the neighbours of an ordered one ordered
// too). It then has nothing to contend with: each of its flows would run alone at its
// bottleneck, so SimGrid would end each phase at its timer plus its slowest launched flow's
// route latency + bytes x stretch / bottleneck (CM02, no TCP window:
// ../shared/simgrid.md §9.6), and the timer is that sum (solo_time), its flows' bytes charged
// to their links as the flows would. A tensor-parallel group inside an NVSwitch node is
// one; with data-parallel ranks in the node, all but the collectives that may run beside
// the data-parallel reduction. A group is searched where others cross its links with fewer
// tasks than a quarter of its own (plus 64), within a bound of 2 M steps (5e7 in all).
// Not in merged graphs (another job's mirrors), with offload streams, or in flow mode.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/collective_plan.hpp"
#include "sim/engine/mirror_load.hpp"
#include "workloads/task_graph.hpp"

namespace hcsim::engine {

// What the task replay lends the collective replay. `coll` and `item` come back in
// CollectiveReplay::on_activity when the activity ends; coll < 0 finishes task `t` instead.
class ActivityHost {
 public:
  virtual ~ActivityHost() = default;
  // `stretch`: the flow's simulated bytes per real byte (>= 1), for the links it shares
  // with mirrored flows (mirror_load.hpp).
  virtual void launch_comm(std::uint32_t src, std::uint32_t dst, double bytes, TaskId t, int coll,
                           std::uint32_t item, double stretch) = 0;
  virtual void launch_timer(Seconds duration, TaskId t, int coll, std::uint32_t item) = 0;
  virtual void finish(TaskId t) = 0;
  virtual std::vector<double>& edge_bytes() = 0;
};

class CollectiveReplay {
 public:
  // `representatives`: representative flows in symmetric runs (header comment); false runs
  // every flow of the built ranks' collectives.
  CollectiveReplay(const TaskGraph& g, CollectivePlanner& planner, ActivityHost& host, bool representatives = true);

  // Plans every collective of the graph and adds the device pairs their flows use; with
  // `solo`, finds the solo collectives (header comment).
  void plan_all(std::set<std::pair<std::uint32_t, std::uint32_t>>& pairs, bool solo = true);
  void start(TaskId t);                            // a collective whose dependencies are done
  // The SMs collective task `t` holds on each of its devices while it runs: NCCL's channels
  // (one thread block each) on one node, two per NIC its ranks on a node use across nodes
  // (NCCL's rings, each run twice: src/graph/connect.cc), 0 for a protocol that is not
  // NCCL's; a tensor- or sequence-parallel one the overlap's SMs when set_overlap_sms.
  int channels(TaskId t);
  // Tensor- and sequence-parallel collectives run by the overlap's own kernels hold `sms`
  // SMs each (EngineOptions::tp_overlap_sms; none: NCCL's channels).
  void set_overlap_sms(std::optional<int> sms) { overlap_sms_ = sms; }
  void on_activity(int coll, std::uint32_t item);  // one of its activities ended
  // Bytes of `copies` collectives like task `t` over each group of mirror set `set`, charged
  // to the links, not simulated.
  void account_mirror(TaskId t, std::uint32_t set, double copies);
  // Stretch of send task `t` for its mirrors' share of its route (mirror_load.hpp).
  double send_stretch(TaskId t);
  // The bytes of the flows that representative flows stood for, on their routes (call once,
  // after the run).
  void account_rest();
  // A SimGrid flow src -> dst starts (before its stretch is asked for) or ends: the link
  // counts of dynamic_stretch. No-ops when no phase has rest flows.
  void flow_started(std::uint32_t src, std::uint32_t dst) { count_flow(src, dst, +1); }
  void flow_ended(std::uint32_t src, std::uint32_t dst) { count_flow(src, dst, -1); }
  // A send's flow ended: its mirrors leave the other parts' counts (merged graphs).
  void send_ended(TaskId t);

 private:
  // Event mode: the flows of each phase of a plan that run (launched) and those that
  // representative flows stand for (rest); see the header comment.
  struct Split {
    std::vector<std::vector<PlannedFlow>> launched, rest;  // per phase
    std::vector<std::vector<std::uint32_t>> rest_slots;    // per phase: the rest flows' directed links
    double runs = 0;                                       // collectives that ran this plan
  };
  // Flow mode by phases: the transfers of a schedule that run and those that representative
  // flows stand for; see the header comment.
  struct FlowSplit {
    std::vector<char> run;                               // per transfer: runs in SimGrid
    std::vector<std::uint32_t> launched;                 // per step: transfers that run
    std::vector<std::vector<std::uint32_t>> rest;        // per step: the others (transfer indices)
    std::vector<std::vector<std::uint32_t>> rest_slots;  // per step: the rest flows' directed links
    std::vector<PlannedFlow> rest_flows;                 // every rest flow, for account_rest
    std::vector<std::uint32_t> active;                   // ranks with a transfer that runs
    double runs = 0;                                     // collectives that ran this plan
  };
  struct Instance {
    TaskId task = 0;
    const CollectiveExpansion* plan = nullptr;
    Split* split = nullptr;     // event mode
    FlowSplit* flow_split = nullptr;       // flow mode by phases with rest flows
    std::vector<std::uint32_t> step_left;  // flow_split: per step, its running transfers not yet arrived
    std::uint32_t steps_done = 0;          // flow_split: steps whose every transfer has arrived
    std::uint32_t pending = 0;  // activities in flight (event mode)
    std::size_t phase = 0;      // event mode: current phase
    bool in_timer = false;      // event mode: the phase's timer is running
    const void* mirrors_live = nullptr;  // event mode: its phase's mirrors counted for other parts
    std::size_t remaining = 0;           // flow mode without a flow split: transfers not yet arrived
    std::vector<std::uint16_t> done;                  // flow mode: [r * steps + s] arrived
    std::vector<std::uint32_t> first_open, next_send; // flow mode: per rank
  };

  const CollectiveExpansion& plan_of(const Task& t);
  Split& split_of(const CollectiveExpansion& p);
  // Flow mode by phases: the plan's split, or null where every transfer runs.
  FlowSplit* flow_split_of(const CollectiveExpansion& p);
  void keep_rest_counts();  // a phase or step has rest flows: the link counts of dynamic_stretch
  // Flow split: the steps whose running transfers have all arrived, in order: their rest
  // transfers arrive with them. True when the collective finished.
  bool close_steps(int c);
  void count_rest_step(const FlowSplit& s, std::uint32_t step, int d);
  // Which flows of a phase run (`run`: 1 for a built device's flows on entry); see split_of.
  static void represent(const std::vector<MirrorLoad::SharedTime>& t, const std::vector<double>& bytes,
                        std::vector<char>& run);
  void count_flow(std::uint32_t src, std::uint32_t dst, int d);
  // The directed links of the route src -> dst (src != dst), found once per pair: a pair's
  // flows start and end many times. Valid until the next call.
  std::span<const std::uint32_t> pair_slots(std::uint32_t src, std::uint32_t dst);
  void count_rest(const Instance& co, int d);  // the current phase's rest flows on their links
  using SlotCounts = MirrorLoad::LinkCounts;   // directed link -> flows
  // R_0 / R of the header comment for a flow src -> dst starting now, with `mirrors` its
  // own mirrors' flows per link.
  // With merged graphs (TaskGraph::part_begin), the live mirrors of the other parts too
  // (part_mirrors_); `part` is the flow's.
  double dynamic_stretch(std::uint32_t src, std::uint32_t dst, const SlotCounts* mirrors, std::uint32_t part);
  void count_part_mirrors(const SlotCounts* m, std::uint32_t part, int d);
  SlotCounts mirror_counts(const std::vector<DevicePair>& pairs);  // by class where nothing adds links one by one
  const SlotCounts& send_counts(std::uint32_t set);  // a send mirror set's (MirrorLoad::class_counts), counted once
  // The flows of collective c's mirrors in event-mode phase `phase` (flow mode by phases:
  // step `phase` of the schedule), per link (null: none).
  const SlotCounts* mirror_slots(int c, std::size_t phase);
  [[nodiscard]] bool built(std::uint32_t device) const;
  // Solo collectives (see the header comment): finds the collectives that run alone on
  // their links (solo_), after every plan is known.
  void find_solo();
  // The idle-network time of collective c's plan, phase by phase (its timers, then its slowest
  // launched flow as SimGrid runs it alone: route latency + bytes x stretch / bottleneck).
  double solo_time(int c);
  void run_phase(int c);
  void launch_flows(int c);
  void start_flows(int c);  // flow mode: the first sends of every rank
  void advance(int c, std::uint32_t rank);
  void transfer_done(int c, std::uint32_t item);
  void finish(int c);
  // Stretch of collective c's flow src -> dst in event-mode phase `phase` (flow mode: npos,
  // all the plan's pairs); 1 when its task has no mirrors or they share none of its links.
  double stretch(int c, std::size_t phase, std::uint32_t src, std::uint32_t dst);
  // The plan of the collective like task `t` over a mirror group (its algorithm): a plan and
  // the offset of the mirror's devices from the plan's (CollectivePlanner::shift; 0 where
  // the mirror is planned as its own).
  struct MirrorPlan {
    const CollectiveExpansion* plan;
    std::int64_t offset;
    [[nodiscard]] std::uint32_t at(std::uint32_t device) const { return static_cast<std::uint32_t>(device + offset); }
  };
  // The mirror plans of task `t`'s collective over the groups of mirror set `set`, in the
  // set's order: planned once per (t's plan, set), kept in mirror_plans_.
  const std::vector<MirrorPlan>& mirror_plans(const Task& t, std::uint32_t set);
  using Stretches = std::unordered_map<std::uint64_t, double>;  // by MirrorLoad::key

  const TaskGraph& g_;
  CollectivePlanner& planner_;
  ActivityHost& host_;
  std::deque<Instance> colls_;  // stable references while tasks finish and start others
  std::vector<int> free_;       // instances of finished collectives, reused
  std::map<std::tuple<std::uint32_t, int, double>, const CollectiveExpansion*> plans_;  // (group, op, bytes)
  struct LastPlan {
    double bytes = 0;
    const CollectiveExpansion* plan = nullptr;
  };
  static constexpr std::size_t kOps = static_cast<std::size_t>(CollectiveOp::send_recv) + 1;
  // Per (group, operation): the plan its last collective ran. A ZeroArray over every group of
  // the graph (16,512 at 131,072 GPUs, most of them mirrors'): only the pages of the groups
  // that run collectives are touched.
  ZeroArray<LastPlan> last_plan_;
  static constexpr std::uint32_t kNoSet = ~std::uint32_t{0};
  std::vector<std::uint32_t> mirror_set_;  // per task: its mirror set, kNoSet where none (empty: no mirrors)
  [[nodiscard]] std::uint32_t set_of(TaskId t) const { return mirror_set_.empty() ? kNoSet : mirror_set_[t]; }
  MirrorLoad load_;
  std::map<std::tuple<const CollectiveExpansion*, std::uint32_t, std::size_t>, Stretches> stretches_;  // (plan, set, phase)
  std::map<std::pair<std::uint32_t, std::uint64_t>, double> send_stretches_;  // (set, pair)
  std::vector<char> built_;                 // per device: runs a compute task (none: all built)
  std::deque<Split> splits_;                // in the order plans first ran (deterministic sums)
  std::unordered_map<const CollectiveExpansion*, Split*> split_of_;
  bool representatives_ = true;
  std::optional<int> overlap_sms_;     // set_overlap_sms
  std::deque<FlowSplit> flow_splits_;  // as splits_
  std::unordered_map<const CollectiveExpansion*, FlowSplit*> flow_split_of_;
  bool has_rest_ = false;                   // some phase has rest flows: link counts kept
  // Per directed link (zero where no flow ever crossed: pages written only where flows go).
  ZeroArray<std::int32_t> live_, rest_live_;  // SimGrid flows, rest flows
  // Merged graphs only: per directed link, the mirrored flows of every part's live flows
  // (all_mirrors_) and of each part's (part_mirrors_[part]).
  ZeroArray<std::int32_t> all_mirrors_;
  std::vector<ZeroArray<std::int32_t>> part_mirrors_;
  std::map<TaskId, const SlotCounts*> send_mirrors_live_;  // sends whose mirrors are counted
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> pair_at_;  // (first, count)
  std::vector<std::uint32_t> pair_slots_;  // the pairs' directed links, end to end
  std::map<std::tuple<const CollectiveExpansion*, std::uint32_t, std::size_t>, SlotCounts> mirror_slots_;
  // Mirror plans by (their collective's plan, mirror set), one per group of the set: that
  // plan shifted (CollectivePlanner::shift), or the mirror's own plan at offset 0. 16 bytes
  // a mirror group (a 131,072-GPU run has 16,384 tensor-parallel groups mirrored).
  std::map<std::pair<const CollectiveExpansion*, std::uint32_t>, std::vector<MirrorPlan>> mirror_plans_;
  std::map<std::uint32_t, SlotCounts> send_mirror_slots_;  // by mirror set
  std::vector<char> solo_;  // per task: a collective that runs as one timer (empty: none)
  std::map<std::pair<const CollectiveExpansion*, std::uint32_t>, double> solo_times_;  // (plan, mirror set)
};

}  // namespace hcsim::engine
