#include "report_diff.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

using nlohmann::json;

std::optional<double> number_at(const json& j, const std::string& pointer) {
  const json::json_pointer p(pointer);
  if (!j.contains(p)) return std::nullopt;
  const json& v = j.at(p);
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

struct Spec {
  const char* label;
  const char* pointer;
  Dim dim;
  bool percent;
};

// The order of the human report: time, throughput, breakdown, memory, energy.
constexpr Spec kHead[] = {
    {"step time", "/step_time_s", Dim::time, false},
    {"tokens/s", "/tokens_per_s", Dim::ratio, false},
    {"samples/s", "/samples_per_s", Dim::ratio, false},
    {"MFU", "/mfu", Dim::ratio, true},
    {"HFU", "/hfu", Dim::ratio, true},
    {"bubble fraction", "/bubble_fraction", Dim::ratio, true},
    {"time to train", "/time_to_train_s", Dim::time, false},
    {"compute", "/breakdown/compute_s", Dim::time, false},
};
constexpr Spec kTail[] = {
    {"bubble", "/breakdown/bubble_s", Dim::time, false},
    {"idle", "/breakdown/idle_s", Dim::time, false},
    {"memory peak/device", "/memory/peak_bytes", Dim::data, false},
    {"memory headroom", "/memory/headroom_bytes", Dim::data, false},
    {"energy/step (IT)", "/energy/it_j", Dim::energy, false},
    {"  device dynamic", "/energy/device_dynamic_j", Dim::energy, false},
    {"  device static", "/energy/device_static_j", Dim::energy, false},
    {"  network dynamic", "/energy/network_dynamic_j", Dim::energy, false},
    {"  network static", "/energy/network_static_j", Dim::energy, false},
    {"energy/step facility", "/energy/facility_j", Dim::energy, false},
    {"energy/token", "/energy/per_token_j", Dim::energy, false},
    {"average power", "/energy/average_power_w", Dim::power, false},
    {"peak power", "/energy/peak_power_w", Dim::power, false},
    {"devices", "/devices", Dim::ratio, false},
};

DiffRow row(const Spec& s, const json& a, const json& b) {
  return {s.label, s.pointer, s.dim, s.percent, number_at(a, s.pointer), number_at(b, s.pointer)};
}

}  // namespace

std::string diff_value(const DiffRow& r, const std::optional<double>& v) {
  if (!v) return "—";
  if (r.percent) return fmt::format("{:.1f} %", 100.0 * *v);
  if (r.dim == Dim::ratio) return fmt::format("{:.4g}", *v);
  if (r.dim == Dim::time && *v >= 2 * 86400.0) return fmt::format("{:.4g} days", *v / 86400.0);
  return format_quantity(*v, r.dim);
}

std::string diff_change(const DiffRow& r) {
  const auto c = r.change();
  if (!c) return r.a && r.b && *r.a == *r.b ? "0.0 %" : "—";
  return fmt::format("{:+.1f} %", 100.0 * *c);
}

std::optional<double> DiffRow::change() const {
  if (!a || !b || *a == 0) return std::nullopt;
  return (*b - *a) / std::fabs(*a);
}

void check_report(const json& report, const std::string& file) {
  const bool ok = report.is_object() && report.contains("format") && report["format"].is_string() &&
                  report["format"].get<std::string>().rfind("hcsim-report/", 0) == 0;
  if (!ok)
    throw InputError("/format", "not an hcsim report: expected \"format\": \"hcsim-report/<version>\" "
                                "(write one with `hcsim run SCENARIO --format json` or --out DIR)", file);
}

std::vector<DiffRow> report_diff_rows(const json& a, const json& b) {
  std::vector<DiffRow> rows;
  for (const Spec& s : kHead) rows.push_back(row(s, a, b));
  std::vector<std::string> kinds;
  for (const json* r : {&a, &b}) {
    const json::json_pointer p("/breakdown/exposed_comm_s");
    if (!r->contains(p) || !r->at(p).is_object()) continue;
    for (const auto& [k, v] : r->at(p).items())
      if (v.is_number() && v.get<double>() != 0 && std::find(kinds.begin(), kinds.end(), k) == kinds.end())
        kinds.push_back(k);
  }
  std::sort(kinds.begin(), kinds.end());
  for (const auto& k : kinds) {
    const std::string ptr = "/breakdown/exposed_comm_s/" + k;
    rows.push_back({"exposed " + k, ptr, Dim::time, false, number_at(a, ptr), number_at(b, ptr)});
  }
  for (const Spec& s : kTail) rows.push_back(row(s, a, b));
  return rows;
}

std::string report_diff_table(const json& a, const json& b, const std::string& name_a, const std::string& name_b) {
  auto cut = [](const std::string& s) { return s.size() <= 28 ? s : "…" + s.substr(s.size() - 27); };
  std::string out = fmt::format("{:<22} {:>28} {:>28} {:>10}\n", "", cut(name_a), cut(name_b), "change");
  for (const DiffRow& r : report_diff_rows(a, b))
    out += fmt::format("{:<22} {:>28} {:>28} {:>10}\n", r.label, diff_value(r, r.a), diff_value(r, r.b), diff_change(r));
  return out;
}

json report_diff_json(const json& a, const json& b, const std::string& name_a, const std::string& name_b) {
  json rows = json::array();
  for (const DiffRow& r : report_diff_rows(a, b)) {
    const auto c = r.change();
    rows.push_back({{"metric", r.label},
                    {"pointer", r.pointer},
                    {"a", r.a ? json(*r.a) : json(nullptr)},
                    {"b", r.b ? json(*r.b) : json(nullptr)},
                    {"change", c ? json(*c) : json(nullptr)}});
  }
  return {{"format", "hcsim-report-diff/1"}, {"a", name_a}, {"b", name_b}, {"rows", rows}};
}

}  // namespace hcsim
