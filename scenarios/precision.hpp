#pragma once
// The workload's precision against each compute pool's device (a cross-field rule of the
// scenario, docs/scenario.md): a device without tensor cores for it is an error; a device
// that runs fp8 at a wider datatype's rate (a CPU) is a warning naming that rate.

#include "scenario.hpp"

namespace hcsim {

void check_precision(const Scenario& sc, Diagnostics& diag);

}  // namespace hcsim
