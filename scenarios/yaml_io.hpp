#pragma once
// YAML scenario (and sweep, search, check) files: read with yaml-cpp and turned into the
// JSON value the same file would be in JSON, so every check and every JSON pointer in a
// message is the one of the JSON file (docs/scenario.md: YAML files).

#include <string>

#include <nlohmann/json.hpp>

namespace hcsim {

// Whether `file` is read as YAML: its name ends in .yaml or .yml.
bool is_yaml_file(const std::string& file);

// The JSON value of YAML `text`. Quoted scalars stay strings; a plain scalar that reads as a
// JSON number, true/false or null becomes one. Throws InputError (empty pointer) for a
// syntax error ("invalid YAML at line L, column C: ..."), and at the pointer of a key given
// twice, of an alias or of a non-string key; at most 64 levels of nesting.
nlohmann::json parse_yaml(const std::string& text, const std::string& file);

}  // namespace hcsim
