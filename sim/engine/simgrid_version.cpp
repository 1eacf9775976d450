// The SimGrid version hcsim runs on, for `hcsim --version`.
#include <xbt/base.h>  // SG_BEGIN_DECL, XBT_PUBLIC, which version.h uses
#include <simgrid/version.h>

#include <string>

#include "sim/engine/engine.hpp"

namespace hcsim {

std::string simgrid_version() {
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);  // the library loaded
  const std::string lib = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  const std::string headers = std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR) +
                              "." + std::to_string(SIMGRID_VERSION_PATCH);
  return lib == headers ? lib : lib + " (built with the headers of " + headers + ")";
}

}  // namespace hcsim
