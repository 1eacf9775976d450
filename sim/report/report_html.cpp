// The HTML report of one run (`hcsim run --html FILE`, report.html under --out DIR): the
// JSON report's figures as tables and inline SVG charts in one self-contained page.
#include <functional>

#include <fmt/format.h>

#include "report.hpp"
#include "sim/core/quantity.hpp"
#include "sim/report/html_page.hpp"
#include "sim/report/html_svg.hpp"
#include "sim/report/html_timeline.hpp"
#include "sim/report/report_text.hpp"

namespace hcsim {
namespace {

using nlohmann::json;

constexpr double kGiB = 1073741824.0;
constexpr const char* kMemoryParts[][2] = {{"weights_bytes", "weights"},
                                           {"gradients_bytes", "gradients"},
                                           {"optimizer_bytes", "optimizer"},
                                           {"activations_bytes", "activations"},
                                           {"buffers_bytes", "buffers"}};
// Past this many devices the per-device table is left out (the stage table stays).
constexpr std::size_t kDeviceTableMax = 64;

double num(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }
using report_text::duration;
using report_text::pct;
using report_text::si;
std::string gib2(double b) { return report_text::gib(b, 2); }

// The exposed communication kinds present (non-zero) anywhere in the report, sorted.
std::vector<std::string> exposed_kinds(const json& rep) {
  std::vector<std::string> kinds;
  for (const auto& [k, v] : rep["breakdown"]["exposed_comm_s"].items())
    if (v.get<double>() != 0) kinds.push_back(k);
  return kinds;
}

// Time buckets of a breakdown-shaped object (report.breakdown, a stage): compute, exposed
// kinds, bubble, idle, in seconds.
std::vector<double> buckets(const json& b, const std::vector<std::string>& kinds) {
  std::vector<double> v{num(b, "compute_s")};
  for (const auto& k : kinds) v.push_back(b["exposed_comm_s"][k].get<double>());
  v.push_back(num(b, "bubble_s"));
  v.push_back(num(b, "idle_s"));
  return v;
}
std::vector<std::string> bucket_names(const std::vector<std::string>& kinds) {
  std::vector<std::string> n{"compute"};
  for (const auto& k : kinds) n.push_back("exposed " + k);
  n.emplace_back("bubble");
  n.emplace_back("idle");
  return n;
}

std::string summary(const Scenario& sc, const json& rep) {
  const auto& st = sc.strategy;
  std::string body = html::figures({
      {"step time", si(num(rep, "step_time_s"), Dim::time)},
      {"tokens/s", fmt::format("{:.4g}", num(rep, "tokens_per_s"))},
      {"samples/s", fmt::format("{:.4g}", num(rep, "samples_per_s"))},
      {"MFU", pct(num(rep, "mfu"))},
      {"HFU", pct(num(rep, "hfu"))},
      {"bubble", pct(num(rep, "bubble_fraction"))},
      {"memory/device",
       fmt::format("{} of {} GiB", gib2(num(rep["memory"], "peak_bytes")), gib2(num(rep["memory"], "capacity_bytes")))},
      {"energy/step", si(num(rep["energy"], "it_j"), Dim::energy)},
  });
  body += html::table({"", "value"}, {
                                         {"devices", fmt::format("{}", rep["devices"].get<long long>())},
                                         {"parallelism", fmt::format("TP {} · PP {} · DP {}{}", st.tp, st.pp, st.dp,
                                                                     st.cp > 1 ? fmt::format(" · CP {}", st.cp) : "")},
                                         {"schedule", std::string(sc.schedule().type())},
                                         {"fidelity", rep["mode"].get<std::string>()},
                                         {"memory fits", rep["memory_fits"].get<bool>() ? "yes" : "no"},
                                         {"time to train", duration(num(rep, "time_to_train_s"))},
                                         {"tasks simulated", fmt::format("{}", rep["simulation"]["tasks"].get<long long>())},
                                     });
  return html::section("summary", "Summary", body);
}

std::string breakdown(const json& rep) {
  const auto kinds = exposed_kinds(rep);
  const auto names = bucket_names(kinds);
  const double step = num(rep, "step_time_s");
  std::vector<std::vector<std::string>> rows;
  const auto mean = buckets(rep["breakdown"], kinds);
  std::vector<std::vector<double>> per_stage;
  for (const json& s : rep["stages"]) per_stage.push_back(buckets(s, kinds));
  for (std::size_t k = 0; k < names.size(); ++k) {
    std::vector<std::string> r{names[k], si(mean[k], Dim::time), pct(step > 0 ? mean[k] / step : 0)};
    for (const auto& s : per_stage) r.push_back(si(s[k], Dim::time));
    rows.push_back(std::move(r));
  }
  std::vector<std::string> header{"bucket", "mean over devices", "share"};
  for (const json& s : rep["stages"]) header.push_back(fmt::format("stage {}", s["stage"].get<int>()));
  return html::section("breakdown", "Time breakdown",
                       "<p>Each device's step cut into compute, communication not hidden behind compute, "
                       "pipeline bubble and idle time (they add up to the step time).</p>\n" +
                           html::table(header, rows));
}

// `devices`: the report's per-device list (report_per_device), asked for only when its table is drawn.
std::string memory(const json& rep, std::size_t device_count, const std::function<json()>& devices) {
  std::vector<std::string> header{"stage", "pool"};
  for (const auto& p : kMemoryParts) header.emplace_back(std::string(p[1]) + " GiB");
  for (const char* h : {"peak GiB", "capacity GiB", "headroom GiB"}) header.emplace_back(h);
  std::vector<std::vector<std::string>> rows;
  for (const json& s : rep["stages"]) {
    std::vector<std::string> r{fmt::format("{}", s["stage"].get<int>()), s["pool"].get<std::string>()};
    for (const auto& p : kMemoryParts) r.push_back(gib2(num(s["memory"], p[0])));
    for (const char* k : {"peak_bytes", "capacity_bytes", "headroom_bytes"}) r.push_back(gib2(num(s["memory"], k)));
    rows.push_back(std::move(r));
  }
  std::string body = "<p>Per stage, its device with the least headroom.</p>\n" + html::table(header, rows);
  if (device_count <= kDeviceTableMax) {
    std::vector<std::vector<std::string>> dev;
    for (const json& d : devices())
      dev.push_back({fmt::format("{}", d["device"].get<int>()), fmt::format("{}", d["stage"].get<int>()),
                     d["pool"].get<std::string>(), gib2(num(d["memory"], "peak_bytes")),
                     gib2(num(d["memory"], "capacity_bytes")), d["memory"]["fits"].get<bool>() ? "yes" : "no"});
    body += fmt::format("\n<details><summary>per device ({})</summary>\n", dev.size()) +
            html::table({"device", "stage", "pool", "peak GiB", "capacity GiB", "fits"}, dev) + "</details>";
  } else {
    body += fmt::format("\n<p>{} devices: the per-device table is left out (report.json has it).</p>", device_count);
  }
  return html::section("memory", "Memory per stage and device", body);
}

std::string energy(const json& rep) {
  const json& e = rep["energy"];
  const double it = num(e, "it_j");
  std::vector<std::vector<std::string>> rows;
  for (const auto& [label, key] : std::initializer_list<std::pair<const char*, const char*>>{
           {"device dynamic", "device_dynamic_j"},
           {"device static (idle)", "device_static_j"},
           {"network dynamic", "network_dynamic_j"},
           {"network static", "network_static_j"},
           {"hosts", "host_j"},
           {"IT total", "it_j"},
           {"facility", "facility_j"}})
    rows.push_back({label, si(num(e, key), Dim::energy), pct(it > 0 ? num(e, key) / it : 0)});
  std::string body = html::table({"component", "per step", "of IT"}, rows);
  body += html::table({"power", "value"}, {{"average (IT)", si(num(e, "average_power_w"), Dim::power)},
                                           {"peak (IT)", si(num(e, "peak_power_w"), Dim::power)},
                                           {"energy per token", si(num(e, "per_token_j"), Dim::energy)},
                                           {"PUE", fmt::format("{:.2f}", num(e, "pue"))}});
  return html::section("energy", "Energy and power", body);
}

std::string plots(const RunOutput& run, const json& rep) {
  std::string body;
  const double step = num(rep, "step_time_s");
  if (rep["mode"] == "analytical") {
    body += html::note("timeline", "analytical mode: no timeline; run with fidelity event");
  } else {
    const AggregatedTimeline tl = aggregate_timeline(run.graph, run.engine, run.metrics);
    const std::string title =
        tl.per_stage ? fmt::format("timeline: one row per stage and stream ({} simulated devices aggregated; "
                                   "shade = share of the stage's devices busy)",
                                   run.metrics.simulated_devices)
                     : std::string("timeline: one row per simulated device and stream");
    body += html::timeline("timeline", title, step, tl.rows);
  }
  const auto kinds = exposed_kinds(rep);
  html::BarChart b{"breakdown-bars", "time breakdown per stage (mean over its devices)", "ms", bucket_names(kinds),
                   {}, {}, {}, {}};
  b.rows.emplace_back("all devices");
  b.values.push_back(buckets(rep["breakdown"], kinds));
  for (const json& s : rep["stages"]) {
    b.rows.push_back(fmt::format("stage {} ({})", s["stage"].get<int>(), s["pool"].get<std::string>()));
    b.values.push_back(buckets(s, kinds));
  }
  for (auto& v : b.values)
    for (double& x : v) x *= 1e3;
  body += html::stacked_bars(b);
  html::BarChart m{"memory-bars", "memory per device by stage, against capacity", "GiB", {}, {}, {}, {}, "capacity"};
  for (const auto& p : kMemoryParts) m.series.emplace_back(p[1]);
  for (const json& s : rep["stages"]) {
    m.rows.push_back(fmt::format("stage {} ({})", s["stage"].get<int>(), s["pool"].get<std::string>()));
    std::vector<double> v;
    for (const auto& p : kMemoryParts) v.push_back(num(s["memory"], p[0]) / kGiB);
    m.values.push_back(std::move(v));
    m.marks.push_back(num(s["memory"], "capacity_bytes") / kGiB);
  }
  body += html::stacked_bars(m);
  std::vector<double> kw;
  for (const json& w : rep["power"]["it_w"]) kw.push_back(w.get<double>() / 1e3);
  body += html::step_curve("power-curve", "IT power over the step", "kW", step, kw);
  return html::section("plots", "Plots", body);
}

}  // namespace

std::string report_html(const Scenario& sc, const RunOutput& run, const json& rep) {
  const std::string title = fmt::format("hcsim report: {}", sc.name);
  const std::string subtitle =
      fmt::format("{} devices · TP {} · PP {} · DP {} · {} mode · step {}", rep["devices"].get<long long>(),
                  sc.strategy.tp, sc.strategy.pp, sc.strategy.dp, rep["mode"].get<std::string>(),
                  si(num(rep, "step_time_s"), Dim::time));
  return html::page(
      title, subtitle,
      {summary(sc, rep), breakdown(rep),
       memory(rep, run.metrics.devices.size(),
              [&] { return rep.contains("per_device") ? rep["per_device"] : report_per_device(sc, run); }),
       energy(rep), plots(run, rep)},
      fmt::format("{} · hcsim {}", kReportFormat, rep["hcsim_version"].get<std::string>()));
}

}  // namespace hcsim
