#pragma once
// One finished sweep point as a result record: a single JSON line in results.jsonl
//   {"index":3,"status":"ok","params":{"/strategy/tp":2},"metrics":{"step_time_s":0.52}}
//   {"index":4,"status":"infeasible","params":{"/strategy/tp":3},"reason":"/strategy: ..."}
// (a cluster sweep's ok records add "study": the totals and pools of the cluster report)
// and the matching row of results.csv (index, status, parameters, metrics, reason). The CSV
// row is always derived from the record, so both files agree whatever was resumed.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/scenario_source.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace hcsim::sweep {

// The record line (no newline) of point `index` with its evaluation. `keep`: keys of an ok
// point's report copied into the record under "study" (a cluster sweep keeps the totals
// and pools of its report, not the per-job and timeline arrays).
std::string make_record(std::size_t index, const nlohmann::ordered_json& params, const Evaluation& ev,
                        const std::vector<MetricColumn>& metrics, const std::vector<std::string>& keep = {});

// The `metrics` of an ok point's report, as its record holds them (null where absent).
nlohmann::ordered_json metrics_json(const nlohmann::json& report, const std::vector<MetricColumn>& metrics);
// The report keys a cluster sweep keeps in each ok record ("study"): scheduler, mode,
// contention, totals, pools, scheduler_resolved.
const std::vector<std::string>& cluster_record_keys();

// The value at `pointer` of a report, null when absent.
nlohmann::json report_value(const nlohmann::json& report, const std::string& pointer);

// Whether any metric reads the report's "per_device" section (or the whole report).
bool needs_per_device(const std::vector<MetricColumn>& metrics);

struct Columns {
  std::vector<std::string> params;    // pointers
  std::vector<MetricColumn> metrics;
};

std::string csv_header(const Columns& c);
// Throws std::runtime_error when `record` is not a result record.
std::string csv_row(const nlohmann::ordered_json& record, const Columns& c);
// RFC 4180 quoting when needed.
std::string csv_field(std::string_view s);

// A CSV row written field by field, in column order, as csv_row writes a record's: the
// index, then each field after a comma, quoted when needed; a JSON value as csv_row writes
// it (null: empty; a string: its text; else its JSON). A caller with typed fields (the
// search's screen) writes the row csv_row would write from their record without making it.
class CsvLine {
 public:
  explicit CsvLine(std::size_t index);
  CsvLine& text(std::string_view s);
  CsvLine& integer(long long v);
  CsvLine& boolean(bool b);
  CsvLine& value(const nlohmann::ordered_json& v);
  CsvLine& empty();
  // The row with its newline; the line is spent.
  std::string finish();

 private:
  std::string out_;
};

}  // namespace hcsim::sweep
