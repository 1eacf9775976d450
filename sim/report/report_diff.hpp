#pragma once
// Two JSON reports side by side (`hcsim diff A.json B.json`): step time, throughput, MFU,
// the time breakdown, memory and energy of each, and the relative change (B - A) / A.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/quantity.hpp"

namespace hcsim {

struct DiffRow {
  std::string label;
  std::string pointer;     // JSON pointer into the report
  Dim dim = Dim::ratio;
  bool percent = false;    // a fraction shown as a percentage (MFU, bubble)
  std::optional<double> a, b;
  [[nodiscard]] std::optional<double> change() const;  // (b - a) / a; none when a is 0 or missing
};

// Throws InputError (with `file`) unless `report` is an hcsim report (format hcsim-report/N).
void check_report(const nlohmann::json& report, const std::string& file);

// The compared rows, in a fixed order; exposed communication rows only for the kinds
// present (non-zero) in either report.
std::vector<DiffRow> report_diff_rows(const nlohmann::json& a, const nlohmann::json& b);

std::string report_diff_table(const nlohmann::json& a, const nlohmann::json& b, const std::string& name_a,
                              const std::string& name_b);
// One self-contained HTML page: the rows as a table, breakdown and memory as bars side by side.
std::string report_diff_html(const nlohmann::json& a, const nlohmann::json& b, const std::string& name_a,
                             const std::string& name_b);
// A row's value as the table prints it ("—" when missing), and its relative change.
std::string diff_value(const DiffRow& r, const std::optional<double>& v);
std::string diff_change(const DiffRow& r);

nlohmann::json report_diff_json(const nlohmann::json& a, const nlohmann::json& b, const std::string& name_a,
                                const std::string& name_b);

}  // namespace hcsim
