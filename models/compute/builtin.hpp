#pragma once
// Registration hooks of the built-in compute-device models, called once each by
// register_builtin_compute_devices() (models/compute/registry.cpp). One model, one hook.

#include "models/compute/compute_device.hpp"

namespace hcsim {

void register_gpu(Registry<ComputeDevice>& devices, PresetLibrary& presets);
void register_systolic(Registry<ComputeDevice>& devices, PresetLibrary& presets);
void register_cpu(Registry<ComputeDevice>& devices, PresetLibrary& presets);
void register_cim_analog(Registry<ComputeDevice>& devices, PresetLibrary& presets);
void register_pim_dram(Registry<ComputeDevice>& devices, PresetLibrary& presets);

}  // namespace hcsim
