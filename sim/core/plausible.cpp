#include "plausible.hpp"

#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace hcsim {
namespace {

// The dimensions of device, link and NIC parameters that a preset range bounds.
bool ranged(Dim d) {
  return d == Dim::bandwidth || d == Dim::flop_rate || d == Dim::data || d == Dim::time || d == Dim::power;
}

std::string unit_symbol(Dim d) { return d == Dim::flop_rate ? "FLOPS" : std::string(dim_unit(d)); }

// Log distance of x to [lo, hi]: 0 inside.
double log_gap(double x, double lo, double hi) {
  if (x < lo) return std::log10(lo / x);
  if (x > hi) return std::log10(x / hi);
  return 0;
}

// A plain number `raw` far outside [lo, hi]: the SI prefix that brings it closest to the
// range ("600" for a bandwidth: "600 GB/s"), if one brings it within the plausible band.
std::optional<std::string> prefix_hint(double raw, Dim d, const PresetRange& r) {
  static constexpr std::array<std::pair<std::string_view, double>, 10> kPrefixes{
      {{"p", 1e-12}, {"n", 1e-9}, {"u", 1e-6}, {"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
       {"P", 1e15}, {"E", 1e18}}};
  const double x = std::fabs(raw), centre = std::sqrt(r.lo * r.hi);
  std::optional<std::pair<double, double>> best;  // (gap, distance to the centre)
  std::string_view best_prefix;
  for (const auto& [sym, f] : kPrefixes) {
    const double y = x * f;
    if (y < r.lo / kPlausibleFactor || y > r.hi * kPlausibleFactor) continue;
    const std::pair<double, double> score{log_gap(y, r.lo, r.hi), std::fabs(std::log10(y / centre))};
    if (!best || score < *best) {
      best = score;
      best_prefix = sym;
    }
  }
  if (!best) return std::nullopt;
  return fmt::format("{:g} {}{}", raw, best_prefix, unit_symbol(d));
}

// A plain JSON number, or a string holding a number without a unit.
bool plain_number(const nlohmann::json& v) {
  if (v.is_number()) return true;
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  return !s.empty() && s.find_first_not_of("0123456789.eE+- \t") == std::string::npos;
}

}  // namespace

std::optional<PresetRange> preset_range(const ParamTable& table, const PresetLibrary& presets, const std::string& type,
                                        const std::string& param) {
  const ParamSpec* spec = nullptr;
  for (const auto& s : table)
    if (s.name == param) spec = &s;
  if (!spec || spec->kind != ParamKind::quantity) return std::nullopt;
  std::optional<PresetRange> out;
  for (const auto& [name, p] : presets.all()) {
    if (p.type != type) continue;
    auto it = p.values.find(param);
    const nlohmann::json v = it != p.values.end() ? *it : spec->def.value_or(nullptr);
    if (v.is_null()) continue;
    Diagnostics scratch;
    const auto q = resolve_value(*spec, v, "", scratch);
    if (!q || q->get<double>() == 0) continue;
    const double x = std::fabs(q->get<double>());
    if (!out) out = PresetRange{x, x, name, name};
    if (x < out->lo) out->lo = x, out->lo_preset = name;
    if (x > out->hi) out->hi = x, out->hi_preset = name;
  }
  return out;
}

void warn_implausible(const ParamTable& table, const PresetLibrary& presets, const std::string& type,
                      const std::string& kind, const nlohmann::json& given, const std::string& path,
                      Diagnostics& diag) {
  if (!given.is_object()) return;
  for (const auto& spec : table) {
    if (spec.kind != ParamKind::quantity || !ranged(spec.dim)) continue;
    const auto it = given.find(spec.name);
    if (it == given.end()) continue;
    const std::string at = json_child(path, spec.name);
    if (diag.warned_at(at)) continue;  // a unit look-alike already explains it
    Diagnostics scratch;
    const auto q = resolve_value(spec, *it, at, scratch);
    if (!q || q->get<double>() == 0) continue;  // an error, reported where the value is resolved
    const double raw = q->get<double>(), x = std::fabs(raw);
    const auto r = preset_range(table, presets, type, spec.name);
    if (!r) continue;
    const bool low = x < r->lo / kPlausibleFactor, high = x > r->hi * kPlausibleFactor;
    if (!low && !high) continue;
    const bool plain = plain_number(*it);
    std::string msg = plain ? fmt::format("{} is read as {} (a plain number is in SI units)", it->dump(),
                                          format_quantity(raw, spec.dim))
                            : fmt::format("{} is {}", it->dump(), format_quantity(raw, spec.dim));
    msg += fmt::format(", {} the shipped {} presets' {} ({} in {} to {} in {})",
                       low ? "under 1/100 of the smallest of" : "over 100 times the largest of", kind, spec.name,
                       format_quantity(r->lo, spec.dim), r->lo_preset, format_quantity(r->hi, spec.dim), r->hi_preset);
    if (plain)
      if (auto hint = prefix_hint(raw, spec.dim, *r)) msg += "; did you mean \"" + *hint + "\"?";
    diag.warn(at, msg);
  }
}

}  // namespace hcsim
