#pragma once
// Warnings for legal but implausible parameter values (docs/robustness.md: warnings).
//
// A device, link or NIC quantity (bandwidth, compute peak, memory size, latency, power) is
// implausible when it lies below 1/100 of the smallest or above 100 times the largest
// value of that parameter over the shipped presets of its type: the range comes from the
// preset library itself, so a new preset widens it. A plain number is read in SI units
// (600 for a bandwidth is 600 B/s); the warning then says so and which unit would bring
// it into the presets' range ("did you mean \"600 GB/s\"?").

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "params.hpp"
#include "registry.hpp"

namespace hcsim {

// Factor beyond the presets' range at which a value is reported.
inline constexpr double kPlausibleFactor = 100.0;

// Smallest and largest non-zero value of `param` (SI) over the presets of `type`.
struct PresetRange {
  double lo = 0, hi = 0;
  std::string lo_preset, hi_preset;
};
std::optional<PresetRange> preset_range(const ParamTable& table, const PresetLibrary& presets, const std::string& type,
                                        const std::string& param);

// Warns at json_child(path, key) for each quantity of `given` (the values the user wrote:
// overrides or a link description) that is far outside its presets' range. `kind` names
// the family in messages ("gpu device", "electrical link").
void warn_implausible(const ParamTable& table, const PresetLibrary& presets, const std::string& type,
                      const std::string& kind, const nlohmann::json& given, const std::string& path,
                      Diagnostics& diag);

}  // namespace hcsim
