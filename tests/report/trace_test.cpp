// The Chrome/Perfetto trace: valid JSON in the trace-event format, every slice inside the
// step, no overlap within one thread (stream lane), every task of a shown device present
// with its work as args, counter tracks for power and memory, and the same bytes each run.
#include <cmath>
#include <map>
#include <set>

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
    EXPECT_TRUE(c.counters.count(std::to_string(d.device) + "/memory (GB)"));
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
  // model state (weights, gradients, optimizer, buffers) is held all step.
  const auto r = run_doc(small_doc(1, 1, 4, testing::nvlink3()));
  const json t = json::parse(chrome_trace(r->sc, r->out));
  std::map<int, std::pair<double, double>> range;  // pid -> min, max (GB)
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] != "C" || e["name"] != "memory (GB)") continue;
    auto [it, fresh] = range.try_emplace(e["pid"].get<int>(), 1e300, -1e300);
    it->second.first = std::min(it->second.first, e["args"]["GB"].get<double>());
    it->second.second = std::max(it->second.second, e["args"]["GB"].get<double>());
  }
  ASSERT_EQ(range.size(), 4u);
  for (const auto& [pid, mm] : range) {
    const MemoryBreakdown& mem = r->out.metrics.devices[static_cast<std::size_t>(pid)].memory;
    const double state = (mem.weights + mem.gradients + mem.optimizer + mem.buffers).value() * 1e-9;
    EXPECT_NEAR(mm.first, state, 1e-9 * state);
    EXPECT_LE(mm.second, mem.total().value() * 1e-9 * (1 + 1e-9));
    EXPECT_GT(mm.second, state);
  }
}

}  // namespace
}  // namespace hcsim
