// Task-graph replay on SimGrid 3.32 (actor-free activities, created incrementally).
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "engine_internal.hpp"
#include "sim/core/error.hpp"
#include "topologies/routing.hpp"

namespace sg4 = simgrid::s4u;

namespace hcsim::engine {
namespace {

// Host speed: compute tasks carry durations; an Exec of d * kSpeed flops lasts d seconds.
constexpr double kSpeed = 1e12;

struct Platform {
  std::vector<sg4::Host*> device_host;  // per device
  sg4::Host* timer = nullptr;           // latency terms: never shared (huge core count)
  std::unique_ptr<Router> router;       // hcsim's routes, declared to SimGrid pair by pair
};

// Device pairs the task graph sends between: point-to-point sends, ring neighbours of
// all-reduce / reduce-scatter / all-gather, every pair of the other collectives.
std::set<std::pair<std::uint32_t, std::uint32_t>> used_pairs(const TaskGraph& g) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
  std::vector<bool> seen(g.groups().size() * 2, false);
  for (const Task& t : g.tasks()) {
    if (t.kind == TaskKind::send && t.device != t.peer) pairs.insert({t.device, t.peer});
    if (t.kind != TaskKind::collective) continue;
    const bool ring = t.op == CollectiveOp::all_reduce || t.op == CollectiveOp::reduce_scatter ||
                      t.op == CollectiveOp::all_gather;
    const std::size_t k = t.group * 2 + (ring ? 0 : 1);
    if (seen[k]) continue;
    seen[k] = true;
    const auto& d = g.groups()[t.group];
    for (std::size_t i = 0; i < d.size(); ++i) {
      if (ring) {
        if (d.size() > 1) pairs.insert({d[i], d[(i + 1) % d.size()]});
        continue;
      }
      for (std::size_t j = 0; j < d.size(); ++j)
        if (i != j) pairs.insert({d[i], d[j]});
    }
  }
  return pairs;
}

// Devices and memory pools are hosts; every topology edge is a split-duplex link whose UP
// direction runs from edge.a to edge.b; the routes are hcsim's own (topologies/routing),
// declared only for the pairs the task graph uses, so the platform stays small at scale.
void build_platform(const TopologyGraph& topo, const TaskGraph& graph, Platform& pf) {
  auto* zone = sg4::create_full_zone("hcsim");
  std::vector<sg4::Host*> host(topo.nodes().size(), nullptr);
  pf.device_host.assign(static_cast<std::size_t>(topo.device_count()), nullptr);
  for (std::size_t i = 0; i < topo.nodes().size(); ++i) {
    const TopoNode& n = topo.nodes()[i];
    if (n.kind != TopoNode::Kind::device) continue;
    host[i] = zone->create_host("d" + std::to_string(n.device), kSpeed);
    host[i]->seal();
    pf.device_host[static_cast<std::size_t>(n.device)] = host[i];
  }
  std::vector<sg4::SplitDuplexLink*> link(topo.edges().size(), nullptr);
  pf.router = std::make_unique<Router>(topo);
  for (const auto& [src, dst] : used_pairs(graph)) {
    const Route& r = pf.router->device_route(static_cast<int>(src), static_cast<int>(dst));
    HCSIM_ASSERT(r.reachable, "no route between devices " + std::to_string(src) + " and " + std::to_string(dst));
    std::vector<sg4::LinkInRoute> links;
    for (std::size_t h = 0; h < r.edges.size(); ++h) {
      const auto e = static_cast<std::size_t>(r.edges[h]);
      const TopoEdge& ed = topo.edges()[e];
      if (!link[e]) {
        link[e] = zone->create_split_duplex_link("e" + std::to_string(e), ed.bandwidth().value() * ed.link.efficiency);
        link[e]->set_latency(ed.link.latency.value());
        link[e]->seal();
      }
      const bool forward = r.nodes[h] == ed.a;
      links.emplace_back(link[e], forward ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
    }
    zone->add_route(pf.device_host[src]->get_netpoint(), pf.device_host[dst]->get_netpoint(), nullptr, nullptr, links,
                    false);
  }
  pf.timer = zone->create_host("timer", 1e9);
  pf.timer->set_core_count(1 << 30);
  pf.timer->seal();
  zone->seal();
}

class Replay {
 public:
  Replay(const TopologyGraph& topo, const TaskGraph& g, const std::string& mode, Platform& pf)
      : topo_(topo), g_(g), flow_(mode == "flow"), pf_(pf) {
    const std::size_t n = g.size();
    res_.start.assign(n, -1);
    res_.end.assign(n, -1);
    res_.edge_bytes.assign(topo.edges().size(), 0.0);
    missing_.resize(n);
    std::vector<std::uint32_t> count(n + 1, 0);
    for (TaskId t = 0; t < n; ++t) {
      missing_[t] = static_cast<std::uint32_t>(g.deps(t).size());
      for (TaskId d : g.deps(t)) ++count[d + 1];
    }
    for (std::size_t i = 1; i <= n; ++i) count[i] += count[i - 1];
    succ_begin_ = count;
    succ_.resize(count[n]);
    for (TaskId t = 0; t < n; ++t)
      for (TaskId d : g.deps(t)) succ_[count[d]++] = t;
  }

  EngineResult run() {
    sg4::Activity::on_completion_cb([this](sg4::Activity const& a) { on_done(a); });
    for (TaskId t = 0; t < g_.size(); ++t)
      if (missing_[t] == 0) start(t);
    sg4::Engine::get_instance()->run();
    for (TaskId t = 0; t < g_.size(); ++t)
      HCSIM_ASSERT(res_.end[t] >= 0, "task " + std::to_string(t) + " never finished (dependency cycle?)");
    for (const auto& mr : g_.mirrors()) {
      if (mr.group == TaskGraph::kNoGroup) account(mr.src, mr.dst, g_[mr.task].bytes);
      else account_collective(g_[mr.task], g_.groups()[mr.group]);
    }
    res_.makespan = sg4::Engine::get_clock();
    res_.activities = activities_;
    return std::move(res_);
  }

 private:
  // One in-flight collective: a latency term, then one or more rounds of flows.
  struct Coll {
    TaskId task = 0;
    std::uint32_t pending = 0;
    std::size_t step = 0;        // flow mode: next schedule step
    bool flows_started = false;  // event mode: latency term done
    std::shared_ptr<const Schedule> sched;
  };
  struct Slot {
    TaskId task = 0;
    int coll = -1;  // index into colls_, or -1 for a plain task
    sg4::ActivityPtr act;
  };

  void start(TaskId t) {
    const Task& task = g_[t];
    res_.start[t] = sg4::Engine::get_clock();
    switch (task.kind) {
      case TaskKind::compute:
        launch(exec(pf_.device_host[task.device], task.duration_s * kSpeed), t, -1);
        break;
      case TaskKind::send:
        if (task.device == task.peer || task.bytes <= 0) launch(exec(pf_.timer, 0), t, -1);
        else launch(comm(task.device, task.peer, task.bytes), t, -1);
        break;
      case TaskKind::collective: start_collective(t); break;
    }
  }

  // Execs created from maestro (no actor): init, size, host, then start.
  static sg4::ActivityPtr exec(sg4::Host* h, double flops) {
    sg4::ExecPtr e = sg4::Exec::init();
    e->set_flops_amount(flops);
    e->set_host(h);
    e->start();
    return e;
  }

  sg4::ActivityPtr comm(std::uint32_t src, std::uint32_t dst, double bytes) {
    account(src, dst, bytes);
    return sg4::Comm::sendto_async(pf_.device_host[src], pf_.device_host[dst], static_cast<std::uint64_t>(bytes + 0.5));
  }

  void launch(sg4::ActivityPtr a, TaskId t, int coll) {
    std::size_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = slots_.size();
      slots_.emplace_back();
    }
    slots_[id] = {t, coll, a};
    a->set_data(reinterpret_cast<void*>(static_cast<std::uintptr_t>(id + 1)));
    ++activities_;
  }

  const Route& route(std::uint32_t src, std::uint32_t dst) {
    return pf_.router->device_route(static_cast<int>(src), static_cast<int>(dst));
  }

  void account(std::uint32_t src, std::uint32_t dst, double bytes) {
    for (int e : route(src, dst).edges) res_.edge_bytes[static_cast<std::size_t>(e)] += bytes;
  }

  void start_collective(TaskId t) {
    const Task& task = g_[t];
    const auto& group = g_.groups()[task.group];
    const int n = static_cast<int>(group.size());
    if (n <= 1 || task.bytes <= 0) {
      launch(exec(pf_.timer, 0), t, -1);
      return;
    }
    colls_.push_back({t, 0, 0, false, nullptr});
    const int c = static_cast<int>(colls_.size()) - 1;
    const double alpha = ring_alpha(task.group);
    const int steps = ring_steps(task.op, n);
    if (flow_) {
      colls_[c].sched = std::make_shared<Schedule>(ring_schedule_for(task.op, n, task.bytes));
      flow_step(c);
      return;
    }
    // Coarse ring: the latency of all but the last step analytically, then one flow per
    // ring edge carrying the algorithm's per-edge volume (the last step's latency is the
    // flow's own route latency).
    colls_[c].pending = 1;
    launch(exec(pf_.timer, (steps - 1) * alpha * 1e9), t, c);
  }

  static int ring_steps(CollectiveOp op, int n) {
    return op == CollectiveOp::all_reduce ? 2 * (n - 1) : n - 1;
  }

  Schedule ring_schedule_for(CollectiveOp op, int n, double bytes) {
    if (op == CollectiveOp::all_reduce || op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather)
      return ring_schedule(op, n, static_cast<std::int64_t>(bytes + 0.5));
    // Broadcast, reduce and all-to-all: direct transfers in one step.
    Schedule s{op, n, static_cast<std::int64_t>(bytes + 0.5), {}};
    Step st;
    for (int r = 0; r < n; ++r)
      for (int q = 0; q < n; ++q)
        if (r != q && (op == CollectiveOp::all_to_all || (op == CollectiveOp::broadcast ? r == 0 : q == 0)))
          st.transfers.push_back({r, q, 0, 0, op == CollectiveOp::all_to_all ? s.elements / n : s.elements, false});
    s.steps.push_back(std::move(st));
    return s;
  }

  double ring_alpha(std::uint32_t group) {
    auto it = alpha_.find(group);
    if (it != alpha_.end()) return it->second;
    const auto& devs = g_.groups()[group];
    double a = 0;
    for (std::size_t i = 0; i < devs.size(); ++i) a = std::max(a, route(devs[i], devs[(i + 1) % devs.size()]).latency.value());
    return alpha_[group] = a;
  }

  // Per-edge volume of the coarse ring: the algorithm's bytes on each ring edge.
  static double ring_volume(const Task& task, int n) {
    switch (task.op) {
      case CollectiveOp::all_reduce: return 2.0 * (n - 1) / n * task.bytes;
      case CollectiveOp::reduce_scatter:
      case CollectiveOp::all_gather:
      case CollectiveOp::all_to_all: return (n - 1.0) / n * task.bytes;
      default: return task.bytes;  // pipelined ring broadcast/reduce
    }
  }

  // Bytes a collective puts on the links, without simulating it (mirrors of symmetry).
  void account_collective(const Task& task, const std::vector<std::uint32_t>& devs) {
    const int n = static_cast<int>(devs.size());
    if (n <= 1 || task.bytes <= 0) return;
    if (!flow_) {
      const double v = ring_volume(task, n);
      for (int r = 0; r < n; ++r) account(devs[r], devs[(r + 1) % n], v);
      return;
    }
    const Schedule sc = ring_schedule_for(task.op, n, task.bytes);
    for (const Step& st : sc.steps)
      for (const Transfer& tr : st.transfers)
        if (tr.count > 0) account(devs[tr.src], devs[tr.dst], static_cast<double>(tr.count));
  }

  void coarse_flows(int c) {
    const Task& task = g_[colls_[c].task];
    const auto& devs = g_.groups()[task.group];
    const int n = static_cast<int>(devs.size());
    const double volume = ring_volume(task, n);
    colls_[c].pending = static_cast<std::uint32_t>(n);
    for (int r = 0; r < n; ++r) launch(comm(devs[r], devs[(r + 1) % n], volume), colls_[c].task, c);
  }

  // Flow mode: all transfers of a step in flight together; the next step starts when they
  // have all arrived (a barrier per step, exact for the symmetric ring).
  void flow_step(int c) {
    Coll& co = colls_[c];
    const Task& task = g_[co.task];
    const auto& devs = g_.groups()[task.group];
    while (co.step < co.sched->steps.size()) {
      const Step& st = co.sched->steps[co.step++];
      std::uint32_t launched = 0;
      for (const Transfer& tr : st.transfers) {
        if (tr.count <= 0) continue;
        ++launched;
        launch(comm(devs[tr.src], devs[tr.dst], static_cast<double>(tr.count)), co.task, c);
      }
      if (launched) {
        colls_[c].pending = launched;
        return;
      }
    }
    finish(co.task);
  }

  void on_done(sg4::Activity const& a) {
    graveyard_.clear();
    auto id = reinterpret_cast<std::uintptr_t>(a.get_data<void>());
    if (id == 0) return;
    Slot& s = slots_[id - 1];
    graveyard_.push_back(std::move(s.act));
    free_.push_back(id - 1);
    if (s.coll < 0) {
      finish(s.task);
      return;
    }
    const int c = s.coll;
    if (--colls_[c].pending > 0) return;
    if (flow_) {
      flow_step(c);
    } else if (!colls_[c].flows_started) {
      colls_[c].flows_started = true;
      coarse_flows(c);
    } else {
      finish(colls_[c].task);
    }
  }

  void finish(TaskId t) {
    res_.end[t] = sg4::Engine::get_clock();
    for (std::uint32_t i = succ_begin_[t]; i < succ_begin_[t + 1]; ++i) {
      TaskId s = succ_[i];
      if (--missing_[s] == 0) start(s);
    }
  }

  const TopologyGraph& topo_;
  const TaskGraph& g_;
  bool flow_;
  Platform& pf_;
  EngineResult res_;
  std::vector<std::uint32_t> missing_, succ_begin_;
  std::vector<TaskId> succ_;
  std::vector<Slot> slots_;
  std::vector<std::size_t> free_;
  std::vector<sg4::ActivityPtr> graveyard_;
  std::vector<Coll> colls_;
  std::map<std::uint32_t, double> alpha_;
  std::uint64_t activities_ = 0;
};

}  // namespace

EngineResult simulate_in_process(const TopologyGraph& topo, const TaskGraph& graph, const EngineOptions& opt) {
  int argc = 1;
  char arg0[] = "hcsim";
  char* argv[] = {arg0, nullptr};
  xbt_log_control_set("root.thres:critical");
  sg4::Engine e(&argc, argv);
  // CM02 without TCP window or cross-traffic: a flow of S bytes on a path of latency L and
  // bottleneck B takes L + S/B (../shared/simgrid.md §9.6).
  e.set_config("network/model:CM02");
  e.set_config("network/TCP-gamma:0");
  e.set_config("network/crosstraffic:0");
  Platform pf;
  build_platform(topo, graph, pf);
  Replay r(topo, graph, opt.mode, pf);
  return r.run();
}

}  // namespace hcsim::engine
