#pragma once
#include <string>

namespace hcsim {
// `hcsim list WHAT`: every registry with each type's parameters and help, and the presets
// with their values and sources. Throws InputError for an unknown WHAT.
std::string list_registries(const std::string& what);
}
