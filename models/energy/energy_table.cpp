#include "models/energy/energy_table.hpp"

#include "sim/core/error.hpp"

namespace hcsim {

JoulesPerFlop OpEnergy::per_flop(DType d) const {
  switch (d) {
    case DType::fp32: return fp32;
    case DType::tf32: return tf32;
    case DType::bf16: case DType::fp16: return bf16;
    case DType::fp8: return fp8;
    case DType::int8: case DType::int4: return int8;
  }
  return bf16;
}

Joules dynamic_energy(const OpEnergy& e, DType d, Flops flops, Bytes bytes) {
  return flops * e.per_flop(d) + bytes * e.memory;
}

double dvfs_energy_factor(double s) {
  HCSIM_ASSERT(s > 0, "frequency scale must be positive");
  return s * s;
}

double dvfs_power_factor(double s) {
  HCSIM_ASSERT(s > 0, "frequency scale must be positive");
  return s * s * s;
}

Joules facility_energy(Joules it, double pue) {
  HCSIM_ASSERT(pue >= 1.0, "PUE below 1");
  return it * pue;
}

}  // namespace hcsim
