#pragma once
// Report writers: the human table (fits an 100-column terminal) and the JSON report (SI
// units, unit-suffixed keys, a format version; schema in docs/report.schema.json).

#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/run.hpp"

namespace hcsim {

inline constexpr const char* kReportFormat = "hcsim-report/1";

nlohmann::json report_json(const Scenario& sc, const RunOutput& run);
std::string report_table(const Scenario& sc, const RunOutput& run);

}  // namespace hcsim
