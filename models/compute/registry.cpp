// The compute-device registry and preset library, filled explicitly (never by static
// initialisers, which a static link may drop).
#include "models/compute/builtin.hpp"

namespace hcsim {

Registry<ComputeDevice>& compute_devices() {
  static Registry<ComputeDevice> registry("compute device");
  return registry;
}

PresetLibrary& compute_presets() {
  static PresetLibrary presets("compute device");
  return presets;
}

void register_builtin_compute_devices() {
  static bool done = false;
  if (done) return;
  done = true;
  register_gpu(compute_devices(), compute_presets());
  register_systolic(compute_devices(), compute_presets());
  register_cpu(compute_devices(), compute_presets());
  register_cim_analog(compute_devices(), compute_presets());
  register_pim_dram(compute_devices(), compute_presets());
}

}  // namespace hcsim
