#pragma once
#include <string>
#include <vector>

namespace hcsim {
// `hcsim list WHAT`: every registry with each type's parameters and help, and the presets
// with their values and sources. Throws InputError for an unknown WHAT.
std::string list_registries(const std::string& what);
// The WHATs it takes: "all", then one per registry in the order `hcsim list` prints them.
std::vector<std::string> list_families();
}
