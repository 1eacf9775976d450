#include "record.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace hcsim::sweep {

nlohmann::json report_value(const nlohmann::json& report, const std::string& pointer) {
  try {
    const nlohmann::json::json_pointer jp(pointer);
    if (report.contains(jp)) return report.at(jp);
  } catch (const nlohmann::json::exception&) {
  }
  return nullptr;
}

bool needs_per_device(const std::vector<MetricColumn>& metrics) {
  return std::any_of(metrics.begin(), metrics.end(), [](const MetricColumn& c) {
    const std::string_view p = c.pointer;
    return p.empty() || p == "/per_device" || p.starts_with("/per_device/");
  });
}

const std::vector<std::string>& cluster_record_keys() {
  static const std::vector<std::string> keys{"scheduler", "mode",  "contention",
                                             "totals",    "pools", "scheduler_resolved"};
  return keys;
}

std::string make_record(std::size_t index, const nlohmann::ordered_json& params, const Evaluation& ev,
                        const std::vector<MetricColumn>& metrics, const std::vector<std::string>& keep) {
  // Invalid UTF-8 in a message must not make a record unwritable.
  return record_json(index, params, ev, metrics, keep)
      .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

nlohmann::ordered_json record_json(std::size_t index, const nlohmann::ordered_json& params, const Evaluation& ev,
                                   const std::vector<MetricColumn>& metrics, const std::vector<std::string>& keep) {
  nlohmann::ordered_json r;
  r["index"] = index;
  r["status"] = ev.status;
  r["params"] = params;
  if (ev.status == "ok") {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& c : metrics) m[c.name] = nlohmann::ordered_json(report_value(ev.report, c.pointer));
    r["metrics"] = std::move(m);
    if (!keep.empty()) {
      nlohmann::ordered_json study = nlohmann::ordered_json::object();
      for (const auto& k : keep)
        if (ev.report.contains(k)) study[k] = nlohmann::ordered_json(ev.report[k]);
      r["study"] = std::move(study);
    }
  } else {
    r["reason"] = ev.reason;
  }
  return r;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {

std::string csv_value(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  return csv_field(v.dump());
}

}  // namespace

std::string csv_header(const Columns& c) {
  std::string out = "index,status";
  for (const auto& p : c.params) out += "," + csv_field(column_name(p));
  for (const auto& m : c.metrics) out += "," + csv_field(m.name);
  return out + ",reason\n";
}

std::string csv_row(const nlohmann::ordered_json& record, const Columns& c) {
  if (!record.is_object() || !record.contains("index") || !record["index"].is_number_unsigned() ||
      !record.contains("status") || !record["status"].is_string() || !record.contains("params") ||
      !record["params"].is_object())
    throw std::runtime_error("not a result record");
  std::string out = record["index"].dump() + "," + csv_value(record["status"]);
  const auto& params = record["params"];
  for (const auto& p : c.params) out += "," + (params.contains(p) ? csv_value(params[p]) : std::string());
  const auto metrics = record.value("metrics", nlohmann::ordered_json::object());
  for (const auto& m : c.metrics) out += "," + (metrics.contains(m.name) ? csv_value(metrics[m.name]) : std::string());
  out += "," + (record.contains("reason") ? csv_value(record["reason"]) : std::string());
  return out + "\n";
}

}  // namespace hcsim::sweep
