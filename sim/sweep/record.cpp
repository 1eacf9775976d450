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

namespace {

nlohmann::ordered_json record_json(std::size_t index, const nlohmann::ordered_json& params, const Evaluation& ev,
                                   const std::vector<MetricColumn>& metrics, const std::vector<std::string>& keep) {
  nlohmann::ordered_json r;
  r["index"] = index;
  r["status"] = ev.status;
  r["params"] = params;
  if (ev.status == "ok") {
    r["metrics"] = metrics_json(ev.report, metrics);
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

}  // namespace

std::string make_record(std::size_t index, const nlohmann::ordered_json& params, const Evaluation& ev,
                        const std::vector<MetricColumn>& metrics, const std::vector<std::string>& keep) {
  // Invalid UTF-8 in a message must not make a record unwritable.
  return record_json(index, params, ev, metrics, keep)
      .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

nlohmann::ordered_json metrics_json(const nlohmann::json& report, const std::vector<MetricColumn>& metrics) {
  nlohmann::ordered_json m = nlohmann::ordered_json::object();
  for (const auto& c : metrics) m[c.name] = nlohmann::ordered_json(report_value(report, c.pointer));
  return m;
}

namespace {

void append_field(std::string& out, std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
    out += s;
    return;
  }
  out += '"';
  // The text between quotes copied whole, each quote doubled (RFC 4180).
  for (std::size_t at = 0;;) {
    const std::size_t q = s.find('"', at);
    if (q == std::string_view::npos) {
      out.append(s.substr(at));
      break;
    }
    out.append(s.substr(at, q + 1 - at));
    out += '"';
    at = q + 1;
  }
  out += '"';
}

}  // namespace

std::string csv_field(std::string_view s) {
  std::string out;
  append_field(out, s);
  return out;
}

CsvLine::CsvLine(std::size_t index) : out_(std::to_string(index)) {}

CsvLine& CsvLine::text(std::string_view s) {
  out_ += ',';
  append_field(out_, s);
  return *this;
}

CsvLine& CsvLine::integer(long long v) {
  out_ += ',';
  out_ += std::to_string(v);
  return *this;
}

CsvLine& CsvLine::boolean(bool b) {
  out_ += b ? ",true" : ",false";
  return *this;
}

CsvLine& CsvLine::value(const nlohmann::ordered_json& v) {
  if (v.is_null()) return empty();
  if (v.is_string()) return text(v.get_ref<const std::string&>());
  return text(v.dump());
}

CsvLine& CsvLine::empty() {
  out_ += ',';
  return *this;
}

std::string CsvLine::finish() {
  out_ += '\n';
  return std::move(out_);
}

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
  CsvLine line(record["index"].get<std::size_t>());
  line.value(record["status"]);
  const auto& params = record["params"];
  for (const auto& p : c.params) params.contains(p) ? line.value(params[p]) : line.empty();
  const auto metrics = record.value("metrics", nlohmann::ordered_json::object());
  for (const auto& m : c.metrics) metrics.contains(m.name) ? line.value(metrics[m.name]) : line.empty();
  record.contains("reason") ? line.value(record["reason"]) : line.empty();
  return line.finish();
}

}  // namespace hcsim::sweep
