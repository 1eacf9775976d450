// Chrome/Perfetto trace in the JSON trace-event format ("Trace Event Format", Google,
// docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU): "M" metadata
// names processes (devices) and threads (streams), "X" complete events are the slices,
// "s"/"f" flow events join each send to its receive, "C" counter events the power and
// memory tracks. ui.perfetto.dev and chrome://tracing load it as it is. Slices of one
// thread must not overlap, so a stream whose tasks do overlap (pipeline sends in flight
// together) is spread over lanes "comm", "comm 2", ...
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "hcsim/version.hpp"
#include "report.hpp"
#include "sim/report/metrics_parts.hpp"

namespace hcsim {
namespace {

using report_detail::Series;

std::int64_t ns(double s) { return std::llround(s * 1e9); }
// Microseconds with three decimals from integer nanoseconds: exact, locale-free.
std::string us(std::int64_t t) { return fmt::format("{}.{:03d}", t / 1000, static_cast<int>(t % 1000)); }
std::string str(const std::string& s) { return nlohmann::json(s).dump(); }

struct Slice {
  std::uint32_t device;
  int stream;  // 0 compute, 1 comm
  std::int64_t a, b;
  TaskId task;
  bool receiver;  // the receiving side of a send
  int lane = 0;
};

std::vector<Slice> collect(const TaskGraph& g, const EngineResult& r, const Metrics& m) {
  std::vector<Slice> out;
  auto add = [&](std::uint32_t d, const Task& t, TaskId id, bool recv) {
    if (g.is_memory(d) || !m.devices.simulated(d)) return;  // memory endpoints: no device track
    out.push_back({d, t.stream == Stream::compute ? 0 : 1, ns(r.start[id]), ns(r.end[id]), id, recv});
  };
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g[id];
    if (t.kind == TaskKind::collective) {
      for (std::uint32_t d : g.groups()[t.group]) add(d, t, id, false);
      continue;
    }
    add(t.device, t, id, false);
    if (t.kind == TaskKind::send && t.peer != t.device) add(t.peer, t, id, true);
  }
  return out;
}

// Greedy interval partitioning per (device, stream): first lane free at the slice's start.
void assign_lanes(std::vector<Slice>& s) {
  std::sort(s.begin(), s.end(), [](const Slice& x, const Slice& y) {
    return std::tie(x.device, x.stream, x.a, x.b, x.task, x.receiver) <
           std::tie(y.device, y.stream, y.a, y.b, y.task, y.receiver);
  });
  std::vector<std::int64_t> lane_end;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == 0 || s[i].device != s[i - 1].device || s[i].stream != s[i - 1].stream) lane_end.clear();
    std::size_t k = 0;
    while (k < lane_end.size() && lane_end[k] > s[i].a) ++k;
    if (k == lane_end.size()) lane_end.push_back(0);
    lane_end[k] = s[i].b;
    s[i].lane = static_cast<int>(k);
  }
}

// Thread ids from 1 (Perfetto reads tid 0 as the process's own track): compute lanes
// 1, 2, ..., communication lanes 1001, 1002, ...
int tid(int stream, int lane) { return 1 + stream * 1000 + lane; }
int tid(const Slice& s) { return tid(s.stream, s.lane); }

std::string slice_event(const TaskGraph& g, const Slice& s) {
  const Task& t = g[s.task];
  std::string out = fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},)", s.device,
                                tid(s), us(s.a), us(s.b - s.a));
  const std::string common = fmt::format(R"("task":{},"stage":{},"microbatch":{})", s.task, t.stage, t.microbatch);
  if (t.kind == TaskKind::compute) {
    out += fmt::format(R"("name":{},"cat":"compute","args":{{{},"phase":"{}","flops":{},"model_flops":{},)"
                       R"("bytes":{},"energy_j":{}}}}})",
                       str(g.labels()[t.label]), common, phase_name(t.phase), t.flops.value(),
                       t.model_flops.value(), t.bytes.value(), t.energy.value());
    return out;
  }
  const std::string kind(comm_class_name(t.comm));
  if (t.kind == TaskKind::send) {
    out += fmt::format(R"("name":"{} {}","cat":"comm","args":{{{},"kind":"{}","peer":{},"bytes":{}}}}})", kind,
                       s.receiver ? "recv" : "send", common, kind, s.receiver ? t.device : t.peer, t.bytes.value());
    return out;
  }
  std::string group;
  for (std::uint32_t d : g.groups()[t.group]) {
    if (!group.empty()) group += ',';
    group += std::to_string(d);
  }
  out += fmt::format(R"("name":"{} {}","cat":"comm","args":{{{},"kind":"{}","op":"{}","bytes":{},"group":[{}]}}}})",
                     kind, collective_op_name(t.op), common, kind, collective_op_name(t.op), t.bytes.value(), group);
  return out;
}

// A flow from each send's slice to its receive's (both devices shown), bound to the
// enclosing slices ("bp": "e") at their common midpoint, so an arrow joins the two.
void flows(std::vector<std::string>& out, const TaskGraph& g, const std::vector<Slice>& slices) {
  std::map<TaskId, std::pair<const Slice*, const Slice*>> ends;  // task -> send, recv
  for (const Slice& s : slices)
    if (g[s.task].kind == TaskKind::send) (s.receiver ? ends[s.task].second : ends[s.task].first) = &s;
  for (const auto& [task, e] : ends) {
    if (e.first == nullptr || e.second == nullptr) continue;
    const std::string name = fmt::format("{} send", comm_class_name(g[task].comm));
    const std::string mid = us(e.first->a + (e.first->b - e.first->a) / 2);
    for (const auto& [ph, s] : {std::pair{"s", e.first}, std::pair{"f", e.second}})
      out.push_back(fmt::format(R"({{"ph":"{}",{}"id":{},"pid":{},"tid":{},"ts":{},"cat":"{}","name":"{}"}})", ph,
                                *ph == 'f' ? R"("bp":"e",)" : "", task, s->device, tid(*s), mid,
                                comm_class_name(g[task].comm), name));
  }
}

void counter(std::vector<std::string>& out, std::uint32_t d, const char* name, const char* key, const Series& s,
             double scale) {
  for (std::size_t i = 0; i < s.t.size(); ++i)
    out.push_back(fmt::format(R"({{"ph":"C","pid":{},"name":"{}","ts":{},"args":{{"{}":{}}}}})", d, name,
                              us(ns(s.t[i])), key, s.v[i] * scale));
}

std::vector<std::string> metadata(const Scenario& sc, const Metrics& m, const std::vector<Slice>& slices) {
  std::vector<std::string> out;
  std::map<std::uint32_t, std::map<int, int>> threads;  // device -> tid -> stream
  for (const Slice& s : slices) threads[s.device][tid(s)] = s.stream;
  for (const auto& dm : m.devices) {
    if (!dm.simulated) continue;
    const DevicePool& pool = sc.pools[static_cast<std::size_t>(dm.pool)];
    const std::string& model = pool.preset.empty() ? pool.type : pool.preset;
    const std::string name = fmt::format("device {} · stage {} · {} ({})", dm.device, dm.stage, pool.name, model);
    out.push_back(fmt::format(R"({{"ph":"M","pid":{},"name":"process_name","args":{{"name":{}}}}})", dm.device,
                              str(name)));
    out.push_back(fmt::format(R"({{"ph":"M","pid":{},"name":"process_labels","args":{{"labels":{}}}}})", dm.device,
                              str(fmt::format("pool {}, {}, stage {}", pool.name, model, dm.stage))));
    out.push_back(fmt::format(R"({{"ph":"M","pid":{},"name":"process_sort_index","args":{{"sort_index":{}}}}})",
                              dm.device, dm.device));
    for (const auto& [t, stream] : threads[dm.device]) {
      const int lane = (t - 1) % 1000;
      const std::string tname = (stream == 0 ? std::string("compute") : std::string("comm")) +
                                (lane > 0 ? fmt::format(" {}", lane + 1) : std::string());
      out.push_back(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"{}"}}}})",
                                dm.device, t, tname));
      out.push_back(fmt::format(
          R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})", dm.device, t, t));
    }
  }
  return out;
}

}  // namespace

std::string chrome_trace(const Scenario& sc, const RunOutput& run) {
  const Metrics& m = run.metrics;
  std::vector<Slice> slices = collect(run.graph, run.engine, m);
  assign_lanes(slices);
  std::vector<std::string> ev = metadata(sc, m, slices);
  for (const Slice& s : slices) ev.push_back(slice_event(run.graph, s));
  flows(ev, run.graph, slices);
  const auto power = report_detail::device_power_series(run.graph, run.engine, m);
  const auto memory = report_detail::device_memory_series(run.graph, run.engine, m, run.shapes);
  for (const auto& dm : m.devices) {
    if (!dm.simulated) continue;
    counter(ev, dm.device, "power (W)", "W", power.of(dm.device), 1.0);
    counter(ev, dm.device, "memory (GiB)", "GiB", memory.of(dm.device), 1.0 / 1073741824.0);
  }
  std::string out = fmt::format(
      R"({{"displayTimeUnit":"ns","otherData":{{"format":"{}","hcsim_version":"{}","scenario":{},)"
      R"("step_time_s":{},"step_ns":{},"devices":{},"devices_shown":{}}},"traceEvents":[)",
      kTraceFormat, kVersion, str(sc.name), m.step_time.value(), ns(m.step_time.value()), m.devices.size(), m.simulated_devices);
  for (std::size_t i = 0; i < ev.size(); ++i) out += (i ? ",\n" : "\n") + ev[i];
  out += "\n]}\n";
  return out;
}

}  // namespace hcsim
