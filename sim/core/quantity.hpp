#pragma once
// The one place where quantities written with units are parsed (style principle 2, after
// SimGrid's xbt_parse_units). Accepted: a plain JSON number, taken as the SI base unit of
// the expected dimension, or a string "<number> <prefix><unit>", e.g. "600 GB/s",
// "1.2 us", "19.5 TFLOPS", "80 GiB", "700 W", "5 pJ/bit", "25 Gb/s". Prefixes: SI
// (f p n u µ m k K M G T P E) and IEC (Ki Mi Gi Ti Pi Ei). Bits are converted to bytes.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace hcsim {

enum class Dim {
  ratio,            // dimensionless; "%" accepted
  time,             // s
  data,             // B
  work,             // flop
  energy,           // J
  frequency,        // Hz
  bandwidth,        // B/s
  flop_rate,        // flop/s
  power,            // W
  energy_per_byte,  // J/B
  energy_per_flop,  // J/flop
  length,           // m
};

// Human name of the dimension and an example, for messages: "a bandwidth such as \"600 GB/s\"".
std::string dim_expectation(Dim d);
// SI unit symbol written in reports and schemas ("B/s").
std::string_view dim_unit(Dim d);

struct QuantityParse {
  std::optional<double> value;  // SI base units
  std::string error;            // set when !value
};

QuantityParse parse_quantity(std::string_view text, Dim d);
// A JSON number (SI) or a string with units.
QuantityParse parse_quantity(const nlohmann::json& v, Dim d);

// A unit that parses but probably says something else than meant, for a warning; "" when
// none. In a size or a data rate, a sub-unit prefix ("25 mb" is 25 millibits, "mB/s"
// millibytes per second); in a size, bits with a magnitude prefix ("80 Gb" is 10 GB, not
// 80 GB). Data rates in Gb/s are the norm for network links and are not flagged.
std::string unit_lookalike(std::string_view text, Dim d);

// An ECMAScript regular expression (for a JSON Schema "pattern") matching the strings
// parse_quantity accepts for `d`: a decimal number, then optionally one of d's units with any
// prefix it takes ("^[ \t]*-?(...)[ \t]*(B|KiB|...)?[ \t]*$").
std::string quantity_pattern(Dim d);

// "312 TFLOPS", "80 GiB", "1.2 us": a compact human rendering with 4 significant digits.
std::string format_quantity(double si, Dim d);

}  // namespace hcsim
