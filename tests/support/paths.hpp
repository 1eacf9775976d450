#pragma once
// The paths many tests read: the source tree, the quickstart scenario and the tiny GPT of
// the sweep examples (HCSIM_SOURCE_DIR is defined for every test executable).
#include <string>

namespace hcsim {

inline const std::string kSource = HCSIM_SOURCE_DIR;
inline const std::string kQuickstart = kSource + "/scenarios/quickstart.json";
inline const std::string kTiny = kSource + "/scenarios/sweeps/tiny-gpt.json";

}  // namespace hcsim
