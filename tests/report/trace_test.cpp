// The Chrome/Perfetto trace: valid JSON in the trace-event format, every slice inside the
// step, no overlap within one thread (stream lane), every task of a shown device present
// with its work as args, counter tracks for power and memory, and the same bytes each run;
// one named process per device, a flow from each send to its receive, compute slices named
// by their layers, memory in GiB.
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "report_fixture.hpp"

namespace hcsim {
namespace {

using nlohmann::json;
using testing::quickstart;
using testing::run_doc;
using testing::small_doc;

// Timestamps are written as microseconds with three decimals: integer nanoseconds.
std::int64_t ns(const json& us) { return std::llround(us.get<double>() * 1000.0); }

struct Checked {
  std::size_t slices = 0;
  std::map<std::uint32_t, std::size_t> compute_per_device;
  std::set<std::string> counters;
};

Checked check_trace(const testing::Run& r) {
  const std::string text = chrome_trace(r.sc, r.out);
  const json t = json::parse(text);  // throws on invalid JSON
  Checked c;
  EXPECT_EQ(t["otherData"]["format"], kTraceFormat);
  const std::int64_t step = t["otherData"]["step_ns"].get<std::int64_t>();
  EXPECT_EQ(step, std::llround(r.out.metrics.step_time.value() * 1e9));
  std::map<std::pair<int, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> tracks;
  std::set<std::pair<int, int>> named;
  for (const json& e : t["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "thread_name") named.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    if (ph == "C") {
      c.counters.insert(std::to_string(e["pid"].get<int>()) + "/" + e["name"].get<std::string>());
      EXPECT_GE(ns(e["ts"]), 0);
      EXPECT_LE(ns(e["ts"]), step);
    }
    if (ph != "X") continue;
    ++c.slices;
    const std::int64_t a = ns(e["ts"]), d = ns(e["dur"]);
    EXPECT_GE(a, 0);
    EXPECT_GE(d, 0);
    EXPECT_LE(a + d, step) << e.dump();
    EXPECT_TRUE(e.contains("name") && e.contains("cat") && e["args"].contains("task"));
    tracks[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back({a, a + d});
    if (e["cat"] == "compute") {
      ++c.compute_per_device[e["pid"].get<std::uint32_t>()];
      const Task& task = r.out.graph[e["args"]["task"].get<TaskId>()];
      EXPECT_EQ(e["args"]["flops"].get<double>(), task.flops.value());
      EXPECT_EQ(e["args"]["bytes"].get<double>(), task.bytes.value());
    }
  }
  for (auto& [track, iv] : tracks) {
    EXPECT_TRUE(named.count(track)) << "unnamed thread " << track.first << "/" << track.second;
    std::sort(iv.begin(), iv.end());
    for (std::size_t i = 1; i < iv.size(); ++i)
      EXPECT_LE(iv[i - 1].second, iv[i].first) << "overlap on pid " << track.first << " tid " << track.second;
  }
  return c;
}

std::map<std::uint32_t, std::size_t> compute_tasks(const TaskGraph& g) {
  std::map<std::uint32_t, std::size_t> n;
  for (const Task& t : g.tasks())
    if (t.kind == TaskKind::compute) ++n[t.device];
  return n;
}

TEST(Trace, QuickstartIsStructurallyValid) {
  const auto q = quickstart();
  const Checked c = check_trace(*q);
  EXPECT_GT(c.slices, 0u);
  EXPECT_EQ(c.compute_per_device, compute_tasks(q->out.graph));
  // Power and memory counters for every simulated device (symmetry: 0 and 8).
  for (const auto& d : q->out.metrics.devices) {
    if (!d.simulated) continue;
    EXPECT_TRUE(c.counters.count(std::to_string(d.device) + "/power (W)"));
    EXPECT_TRUE(c.counters.count(std::to_string(d.device) + "/memory (GiB)"));
  }
}

TEST(Trace, EveryRankSimulatedIsStructurallyValid) {
  const auto r = run_doc(small_doc(2, 2, 2, testing::nvlink3()));
  const Checked c = check_trace(*r);
  EXPECT_EQ(c.compute_per_device.size(), 8u);
  EXPECT_EQ(c.compute_per_device, compute_tasks(r->out.graph));
}

TEST(Trace, SameRunSameBytes) {
  nlohmann::json doc = small_doc(1, 2, 2, testing::nvlink3());
  register_builtins();
  testing::register_round_device();
  const Scenario sc = parse_scenario(doc, "test.json");
  const RunOutput a = run_scenario(sc);
  const RunOutput b = run_scenario(sc);
  EXPECT_EQ(chrome_trace(sc, a), chrome_trace(sc, b));
  EXPECT_EQ(report_json(sc, a).dump(), report_json(sc, b).dump());
  EXPECT_EQ(report_csv(sc, a), report_csv(sc, b));
}

TEST(Trace, MemoryCounterStaysWithinTheStaticPeak) {
  // The activations allocated by forward and freed by backward passes never exceed the
  // memory model's peak (micro-batches in flight x per-micro-batch activations), and the
  // model state (weights, gradients, optimizer, buffers) is held all step. In GiB (2^30 B),
  // the unit of the report's tables.
  const auto r = run_doc(small_doc(1, 1, 4, testing::nvlink3()));
  const json t = json::parse(chrome_trace(r->sc, r->out));
  std::map<int, std::pair<double, double>> range;  // pid -> min, max (GiB)
  for (const json& e : t["traceEvents"]) {
    EXPECT_FALSE(e["ph"] == "C" && e["name"] == "memory (GB)") << "memory counter in GB";
    if (e["ph"] != "C" || e["name"] != "memory (GiB)") continue;
    auto [it, fresh] = range.try_emplace(e["pid"].get<int>(), 1e300, -1e300);
    it->second.first = std::min(it->second.first, e["args"]["GiB"].get<double>());
    it->second.second = std::max(it->second.second, e["args"]["GiB"].get<double>());
  }
  ASSERT_EQ(range.size(), 4u);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  for (const auto& [pid, mm] : range) {
    const MemoryBreakdown& mem = r->out.metrics.devices[static_cast<std::size_t>(pid)].memory;
    const double state = (mem.weights + mem.gradients + mem.optimizer + mem.buffers).value() / gib;
    EXPECT_NEAR(mm.first, state, 1e-9 * state);
    EXPECT_LE(mm.second, mem.total().value() / gib * (1 + 1e-9));
    EXPECT_GT(mm.second, state);
  }
}

TEST(Trace, OneNamedProcessPerDeviceAndNamedThreadsFromOne) {
  // pid = device index, distinct per device; each process named with its stage, pool and
  // device model; no thread 0 (Perfetto's process track).
  const auto r = run_doc(small_doc(2, 2, 2, testing::nvlink3()));
  const json t = json::parse(chrome_trace(r->sc, r->out));
  std::map<int, std::string> process;
  std::set<int> slice_pids;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      EXPECT_TRUE(process.emplace(e["pid"].get<int>(), e["args"]["name"].get<std::string>()).second)
          << "two names for pid " << e["pid"];
    }
    if (e["ph"] == "X") {
      slice_pids.insert(e["pid"].get<int>());
      EXPECT_GE(e["tid"].get<int>(), 1);
    }
  }
  ASSERT_EQ(process.size(), 8u);
  EXPECT_EQ(slice_pids.size(), 8u);
  for (const auto& d : r->out.metrics.devices) {
    ASSERT_TRUE(process.count(static_cast<int>(d.device)));
    const std::string& name = process[static_cast<int>(d.device)];
    EXPECT_NE(name.find(fmt::format("device {} · stage {} · t (report-test)", d.device, d.stage)), std::string::npos)
        << name;
  }
}

TEST(Trace, AFlowFromEachPipelineSendToItsReceive) {
  // Every pipeline send (both ends simulated) starts one flow ("s") on its sender's comm
  // thread and ends it ("f", bound to the enclosing slice) on its receiver's, inside the
  // send's and the receive's slices.
  const auto r = run_doc(small_doc(1, 1, 4, testing::nvlink3()));
  const json t = json::parse(chrome_trace(r->sc, r->out));
  std::map<std::pair<TaskId, bool>, std::pair<int, std::int64_t>> slice;  // (task, recv) -> pid, start
  std::map<TaskId, std::vector<json>> flow;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "comm" && e["name"] == "pp send")
      slice[{e["args"]["task"].get<TaskId>(), false}] = {e["pid"].get<int>(), ns(e["ts"])};
    if (e["ph"] == "X" && e["cat"] == "comm" && e["name"] == "pp recv")
      slice[{e["args"]["task"].get<TaskId>(), true}] = {e["pid"].get<int>(), ns(e["ts"])};
    if (e["ph"] == "s" || e["ph"] == "f") flow[e["id"].get<TaskId>()].push_back(e);
  }
  std::size_t sends = 0;
  for (TaskId id = 0; id < r->out.graph.size(); ++id) {
    const Task& task = r->out.graph[id];
    if (task.kind != TaskKind::send || task.comm != CommClass::pp) continue;
    ++sends;
    ASSERT_EQ(flow[id].size(), 2u) << "send " << id;
    const json& s = flow[id][0];
    const json& f = flow[id][1];
    EXPECT_EQ(s["ph"], "s");
    EXPECT_EQ(f["ph"], "f");
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(s["pid"].get<std::uint32_t>(), task.device);
    EXPECT_EQ(f["pid"].get<std::uint32_t>(), task.peer);
    EXPECT_EQ(s["cat"], f["cat"]);
    EXPECT_EQ(s["name"], f["name"]);
    const std::int64_t a = std::llround(r->out.engine.start[id] * 1e9), b = std::llround(r->out.engine.end[id] * 1e9);
    EXPECT_GE(ns(s["ts"]), a);
    EXPECT_LE(ns(s["ts"]), b);
    EXPECT_EQ(slice.at({id, false}).first, static_cast<int>(task.device));
    EXPECT_EQ(slice.at({id, true}).first, static_cast<int>(task.peer));
  }
  // 1F1B over 4 stages, 8 micro-batches: 3 boundaries x 8 x (activation + gradient).
  EXPECT_EQ(sends, 3u * 8u * 2u);
}

TEST(Trace, ComputeSlicesNameTheirLayers) {
  // Forward and backward compute slices are named by the model ops they run and their
  // layers' indices in the model: stage s of 4 (one layer each) holds layer s.
  const auto r = run_doc(small_doc(1, 2, 4, testing::nvlink3()));
  const json t = json::parse(chrome_trace(r->sc, r->out));
  const std::regex layer(R"(L(\d+) )");
  std::map<int, std::set<int>> layers;  // stage -> layer indices in slice names
  std::size_t named = 0, passes = 0;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] != "compute") continue;
    const std::string phase = e["args"]["phase"];
    if (phase != "forward" && phase != "backward") continue;
    ++passes;
    const std::string name = e["name"];
    EXPECT_NE(name, phase) << "a pass named by its phase only";
    EXPECT_TRUE(name.ends_with(phase == "forward" ? " fwd" : " bwd")) << name;
    std::smatch m;
    if (std::regex_search(name, m, layer)) {
      ++named;
      layers[e["args"]["stage"].get<int>()].insert(std::stoi(m[1]));
    }
  }
  EXPECT_GT(passes, 0u);
  EXPECT_GT(named, passes / 2);  // all but the embedding's and the head's own tasks
  for (int s = 0; s < 4; ++s) EXPECT_EQ(layers[s], std::set<int>{s}) << "stage " << s;
}

}  // namespace
}  // namespace hcsim
