#pragma once
// Dynamic energy of device work: E = Σ_dtype flops · e_flop(dtype) + bytes · e_byte.
//
// Energy per operation is the activity-based model of Horowitz ("Computing's Energy
// Problem", ISSCC 2014): arithmetic costs a fixed energy per operation for a datatype,
// and moving a byte from DRAM costs far more than the arithmetic on it. Device presets
// state where their coefficients come from (datasheet power budget or Horowitz's table).
// DVFS: switching energy per operation is C·V²; in the DVFS range V scales about linearly
// with f, so e(f) = e(f0)·(f/f0)² and the power of a saturated unit goes as (f/f0)³.
// Facility energy multiplies IT energy by the PUE (The Green Grid, "PUE: a comprehensive
// examination of the metric", 2012).

#include "models/kernel.hpp"
#include "sim/core/units.hpp"

namespace hcsim {

struct OpEnergy {
  JoulesPerFlop fp32{};  // non-tensor (vector) fp32 FMA work
  JoulesPerFlop tf32{};
  JoulesPerFlop bf16{};  // also fp16
  JoulesPerFlop fp8{};
  JoulesPerFlop int8{};  // also int4 (no separate figure published)
  JoulesPerByte memory{};  // device-memory (HBM/DRAM) traffic

  [[nodiscard]] JoulesPerFlop per_flop(DType d) const;
};

// flops · e_flop(dtype) + bytes · e_byte.
[[nodiscard]] Joules dynamic_energy(const OpEnergy& e, DType d, Flops flops, Bytes bytes);

// Energy per operation at clock scale f/f0 = `frequency_scale`: (f/f0)².
[[nodiscard]] double dvfs_energy_factor(double frequency_scale);
// Dynamic power of a saturated unit at clock scale s, relative to nominal: s³.
[[nodiscard]] double dvfs_power_factor(double frequency_scale);

// Facility energy from IT energy and power usage effectiveness (>= 1).
[[nodiscard]] Joules facility_energy(Joules it, double pue);

}  // namespace hcsim
