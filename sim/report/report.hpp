#pragma once
// Report writers, all from the one Metrics of a run:
//  - report_table: the human summary, fitting a 100-column terminal;
//  - report_json: every figure in SI units with unit-suffixed keys and a format version;
//    its JSON Schema is docs/report.schema.json, its fields are described in docs/report.md;
//  - report_csv: one row per rank (device), for spreadsheets;
//  - chrome_trace: the timeline in the Chrome/Perfetto JSON trace-event format;
//  - report_html: one self-contained HTML page (inline style, script and SVG charts).
// Every writer is deterministic: fixed formatting and a stable order, same run, same bytes.

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/run_output.hpp"

namespace hcsim {

inline constexpr const char* kReportFormat = "hcsim-report/2";
inline constexpr const char* kTraceFormat = "hcsim-trace/2";

// `per_device`: false leaves out "per_device" (one object per device: most of the report's
// time at thousands of devices), for callers that read none of it (sweeps, searches).
nlohmann::json report_json(const Scenario& sc, const RunOutput& run, bool per_device = true);
std::string report_table(const Scenario& sc, const RunOutput& run);

// Compression section (null / empty when no codec is configured): savings against the
// same step without codecs, and the codec time added.
nlohmann::json compression_json(const Scenario& sc, const RunOutput& run);
std::string compression_table(const Scenario& sc, const RunOutput& run);
// Optical-circuit-switch section (null / empty unless the torus is rewired in phases,
// cluster.topology.ocs_phases): each phase's wiring and step time, the reconfigurations.
nlohmann::json ocs_json(const Scenario& sc, const RunOutput& run);
std::string ocs_table(const Scenario& sc, const RunOutput& run);
// Mixture-of-experts section (null / empty for a dense model; the table line only when the
// routing is uneven): each expert rank's share of the routed tokens, the busiest rank's
// load, the dropped fraction, and the step against the same step with even routing.
nlohmann::json moe_json(const Scenario& sc, const RunOutput& run);
std::string moe_table(const Scenario& sc, const RunOutput& run);
// The report's "per_device" list alone.
nlohmann::json report_per_device(const Scenario& sc, const RunOutput& run);

// report_json(sc, run).dump(indent) written to `os` from `report` -- report_json(sc, run,
// false), the report without "per_device" -- with the per-device list streamed in, one device
// at a time: the same bytes, without the whole report in memory (a million devices: 1.5 GB
// of text).
void write_report_json(std::ostream& os, const Scenario& sc, const RunOutput& run, const nlohmann::json& report,
                       int indent = 2);

std::string report_csv(const Scenario& sc, const RunOutput& run);

// One process per simulated device (pid = device index; devices that are replicas of a
// twin have no timeline of their own), named with its stage, pool and device model; one
// thread per stream -- "compute" and "comm", plus "comm 2", ... where a stream's tasks
// overlap -- a complete ("X") slice per task, a compute task named by the model ops it runs
// and their layers ("L3 attention fwd"), with its FLOPs, bytes, energy and micro-batch as
// args; a flow ("s" -> "f") from each send to its receive; counter tracks "power (W)" and
// "memory (GiB)" per device. Timestamps are integer nanoseconds written as microseconds
// with three decimals.
std::string chrome_trace(const Scenario& sc, const RunOutput& run);

// The HTML report: sections "summary", "breakdown", "memory", "energy" and "plots" (the
// timeline -- per device up to 16 simulated devices, per stage beyond, a note in
// analytical mode --, the breakdown and memory bars, the power curve), from `report`
// (report_json of the same run) and the run's timeline. No external resource.
std::string report_html(const Scenario& sc, const RunOutput& run, const nlohmann::json& report);

}  // namespace hcsim
