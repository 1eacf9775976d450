#include "quantity.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hcsim {
namespace {

struct Prefix {
  std::string_view sym;
  double factor;
  std::string_view name;  // for messages: "milli"
};
// Longest symbols first so that "Ki" is tried before "K".
constexpr std::array<Prefix, 21> kPrefixes{{{"Ki", 1024.0, "kibi"},
                                            {"Mi", 1048576.0, "mebi"},
                                            {"Gi", 1073741824.0, "gibi"},
                                            {"Ti", 1099511627776.0, "tebi"},
                                            {"Pi", 1125899906842624.0, "pebi"},
                                            {"Ei", 1152921504606846976.0, "exbi"},
                                            {"\xC2\xB5", 1e-6, "micro"},  // µ (micro sign, UTF-8)
                                            {"f", 1e-15, "femto"},
                                            {"p", 1e-12, "pico"},
                                            {"n", 1e-9, "nano"},
                                            {"u", 1e-6, "micro"},
                                            {"m", 1e-3, "milli"},
                                            {"c", 1e-2, "centi"},
                                            {"k", 1e3, "kilo"},
                                            {"K", 1e3, "kilo"},
                                            {"M", 1e6, "mega"},
                                            {"G", 1e9, "giga"},
                                            {"T", 1e12, "tera"},
                                            {"P", 1e15, "peta"},
                                            {"E", 1e18, "exa"},
                                            {"", 1.0, ""}}};

struct BaseUnit {
  std::string_view sym;
  double factor;
  bool prefixable;
};

std::vector<BaseUnit> base_units(Dim d) {
  switch (d) {
    case Dim::ratio: return {{"%", 0.01, false}};
    case Dim::time:
      return {{"s", 1, true}, {"sec", 1, false}, {"min", 60, false}, {"h", 3600, false}, {"d", 86400, false}};
    case Dim::data:
      return {{"B", 1, true}, {"byte", 1, true}, {"bytes", 1, true}, {"b", 0.125, true}, {"bit", 0.125, true},
              {"bits", 0.125, true}};
    case Dim::work:
      return {{"flop", 1, true}, {"FLOP", 1, true}, {"FLOPs", 1, true}, {"op", 1, true}, {"OP", 1, true},
              {"ops", 1, true}};
    case Dim::energy: return {{"J", 1, true}, {"Wh", 3600, true}};
    case Dim::frequency: return {{"Hz", 1, true}};
    case Dim::bandwidth:
      return {{"B/s", 1, true}, {"Bps", 1, true}, {"b/s", 0.125, true}, {"bps", 0.125, true},
              {"bit/s", 0.125, true}};
    case Dim::flop_rate:
      return {{"FLOPS", 1, true}, {"flop/s", 1, true}, {"FLOP/s", 1, true}, {"flops", 1, true},
              {"OPS", 1, true}, {"op/s", 1, true}, {"OP/s", 1, true}};
    case Dim::power: return {{"W", 1, true}};
    case Dim::energy_per_byte:
      return {{"J/B", 1, true}, {"J/byte", 1, true}, {"J/b", 8, true}, {"J/bit", 8, true}};
    case Dim::energy_per_flop: return {{"J/flop", 1, true}, {"J/FLOP", 1, true}, {"J/op", 1, true}};
    case Dim::length: return {{"m", 1, true}};
  }
  return {};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The prefix and base unit `unit` is made of, if it is one of `d`'s.
std::optional<std::pair<Prefix, BaseUnit>> split_unit(std::string_view unit, Dim d) {
  for (const auto& base : base_units(d)) {
    for (const auto& p : kPrefixes) {
      if (!base.prefixable && !p.sym.empty()) continue;
      if (unit.size() == p.sym.size() + base.sym.size() && unit.substr(0, p.sym.size()) == p.sym &&
          unit.substr(p.sym.size()) == base.sym)
        return std::pair{p, base};
    }
  }
  return std::nullopt;
}

std::optional<double> unit_factor(std::string_view unit, Dim d) {
  const auto u = split_unit(unit, d);
  if (!u) return std::nullopt;
  return u->first.factor * u->second.factor;
}

}  // namespace

std::string dim_expectation(Dim d) {
  switch (d) {
    case Dim::ratio: return "a number such as 0.85 or \"85 %\"";
    case Dim::time: return "a time such as \"1.2 us\"";
    case Dim::data: return "a size such as \"80 GiB\"";
    case Dim::work: return "an amount of work such as \"1.5 TFLOP\"";
    case Dim::energy: return "an energy such as \"3 J\"";
    case Dim::frequency: return "a frequency such as \"1.41 GHz\"";
    case Dim::bandwidth: return "a bandwidth such as \"600 GB/s\"";
    case Dim::flop_rate: return "a compute rate such as \"19.5 TFLOPS\"";
    case Dim::power: return "a power such as \"700 W\"";
    case Dim::energy_per_byte: return "an energy per bit or byte such as \"5 pJ/bit\"";
    case Dim::energy_per_flop: return "an energy per operation such as \"1.1 pJ/flop\"";
    case Dim::length: return "a length such as \"3 m\"";
  }
  return "a quantity";
}

std::string_view dim_unit(Dim d) {
  switch (d) {
    case Dim::ratio: return "";
    case Dim::time: return "s";
    case Dim::data: return "B";
    case Dim::work: return "flop";
    case Dim::energy: return "J";
    case Dim::frequency: return "Hz";
    case Dim::bandwidth: return "B/s";
    case Dim::flop_rate: return "flop/s";
    case Dim::power: return "W";
    case Dim::energy_per_byte: return "J/B";
    case Dim::energy_per_flop: return "J/flop";
    case Dim::length: return "m";
  }
  return "";
}

QuantityParse parse_quantity(std::string_view text, Dim d) {
  const std::string shown = "\"" + std::string(text.substr(0, 64)) + (text.size() > 64 ? "...\"" : "\"");
  auto fail = [&] { return QuantityParse{std::nullopt, "expected " + dim_expectation(d) + ", got " + shown}; };
  std::string_view s = trim(text);
  if (s.empty()) return fail();
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr == s.data()) return fail();
  if (!std::isfinite(v)) return fail();
  std::string_view unit = trim(std::string_view(ptr, static_cast<std::size_t>(s.data() + s.size() - ptr)));
  if (unit.empty()) return {v, {}};
  auto f = unit_factor(unit, d);
  if (!f) return fail();
  double si = v * *f;
  if (!std::isfinite(si)) return fail();
  return {si, {}};
}

std::string quantity_pattern(Dim d) {
  auto escaped = [](std::string_view s) {
    std::string out;
    for (char c : s) {
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
    return out;
  };
  std::string prefixes;
  for (const auto& p : kPrefixes)
    if (!p.sym.empty()) prefixes += (prefixes.empty() ? "" : "|") + escaped(p.sym);
  std::string units;
  for (const auto& b : base_units(d))
    units += (units.empty() ? "" : "|") + (b.prefixable ? "(?:" + prefixes + ")?" : std::string()) + escaped(b.sym);
  // from_chars' general format: digits with an optional fraction and exponent (no sign "+").
  return "^[ \\t]*-?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][-+]?[0-9]+)?[ \\t]*(?:" + units + ")?[ \\t]*$";
}

std::string unit_lookalike(std::string_view text, Dim d) {
  if (d != Dim::data && d != Dim::bandwidth) return {};
  const std::string_view s = trim(text);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr == s.data()) return {};
  const std::string_view number(s.data(), static_cast<std::size_t>(ptr - s.data()));
  const auto u = split_unit(trim(std::string_view(ptr, static_cast<std::size_t>(s.data() + s.size() - ptr))), d);
  if (!u || u->first.sym.empty()) return {};
  const auto& [prefix, base] = *u;
  const bool bits = base.factor != 1;
  // "25 millibits (0.003125 B)", "25 millibits per second (0.003125 B/s)", "80 gigabits (9.313 GiB)":
  // below a byte in base units, as a prefixed unit would repeat the slip ("12.5 mB/s").
  const double si = v * prefix.factor * base.factor;
  const std::string read = fmt::format("{} {}{}{}{} ({})", number, prefix.name, bits ? "bit" : "byte", v == 1 ? "" : "s",
                                       d == Dim::bandwidth ? " per second" : "",
                                       prefix.factor < 1 ? fmt::format("{:g} {}", si, dim_unit(d))
                                                         : format_quantity(si, d));
  const std::string shown = "\"" + std::string(s) + "\"";
  if (prefix.factor < 1) {
    std::string out = fmt::format("{} is read as {}", shown, read);
    // "m" for "M" is the likely slip; a data rate keeps the bits or bytes written.
    if (prefix.sym == "m")
      out += fmt::format("; did you mean \"{} M{}\"?", number, d == Dim::data ? std::string("B") : std::string(base.sym));
    return out;
  }
  if (d == Dim::data && bits)
    return fmt::format("{} is read as {}, an eighth of {} {}bytes; did you mean \"{} {}B\"?", shown, read, number,
                       prefix.name, number, prefix.sym);
  return {};
}

QuantityParse parse_quantity(const nlohmann::json& v, Dim d) {
  if (v.is_number()) {
    double x = v.get<double>();
    if (!std::isfinite(x)) return {std::nullopt, "expected a finite number"};
    return {x, {}};
  }
  if (v.is_string()) return parse_quantity(std::string_view(v.get_ref<const std::string&>()), d);
  return {std::nullopt, "expected " + dim_expectation(d) + ", got " + std::string(v.type_name())};
}

std::string format_quantity(double si, Dim d) {
  std::string unit(dim_unit(d));
  if (d == Dim::ratio) return fmt::format("{:.4g}", si);
  if (d == Dim::flop_rate) unit = "FLOPS";
  if (d == Dim::time) {
    double a = std::fabs(si);
    if (a == 0) return "0 s";
    if (a < 1e-6) return fmt::format("{:.4g} ns", si * 1e9);
    if (a < 1e-3) return fmt::format("{:.4g} us", si * 1e6);
    if (a < 1) return fmt::format("{:.4g} ms", si * 1e3);
    return fmt::format("{:.4g} s", si);
  }
  if (d == Dim::data) {
    static constexpr std::array<std::string_view, 6> iec{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double a = std::fabs(si);
    std::size_t i = 0;
    while (i + 1 < iec.size() && a >= 1024.0) { a /= 1024.0; ++i; }
    return fmt::format("{:.4g} {}", std::copysign(a, si), iec[i]);
  }
  static constexpr std::array<std::pair<double, std::string_view>, 9> si_pre{
      {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}, {1e-3, "m"}, {1e-6, "u"}}};
  double a = std::fabs(si);
  for (const auto& [f, p] : si_pre)
    if (a >= f) return fmt::format("{:.4g} {}{}", si / f, p, unit);
  if (a == 0) return fmt::format("0 {}", unit);
  if (a >= 1e-9) return fmt::format("{:.4g} n{}", si / 1e-9, unit);
  return fmt::format("{:.4g} p{}", si / 1e-12, unit);
}

}  // namespace hcsim
