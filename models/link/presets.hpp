#pragma once
// The built-in link presets (presets.cpp), each citing its public source.

#include "sim/core/registry.hpp"

namespace hcsim {

void register_builtin_link_presets(PresetLibrary& lib);

}  // namespace hcsim
