// Energy helpers: activity-based dynamic energy, DVFS scaling, facility energy.
#include "models/energy/energy_table.hpp"

#include <gtest/gtest.h>

namespace hcsim {
namespace {

TEST(EnergyTable, DynamicEnergyIsFlopsTimesPerFlopPlusBytesTimesPerByte) {
  OpEnergy e;
  e.fp32 = JoulesPerFlop(2.3e-12);
  e.bf16 = JoulesPerFlop(1.0e-12);
  e.int8 = JoulesPerFlop(0.15e-12);
  e.memory = JoulesPerByte(31.2e-12);  // 3.9 pJ/bit
  // 1 TFLOP of bf16 at 1 pJ + 1 GB at 31.2 pJ/B = 1 J + 0.0312 J.
  EXPECT_DOUBLE_EQ(dynamic_energy(e, DType::bf16, Flops(1e12), Bytes(1e9)).value(), 1.0 + 0.0312);
  EXPECT_DOUBLE_EQ(e.per_flop(DType::fp16).value(), 1.0e-12);  // fp16 priced as bf16
  EXPECT_DOUBLE_EQ(e.per_flop(DType::int4).value(), 0.15e-12);  // int4 priced as int8
}

TEST(EnergyTable, DvfsFollowsCV2f) {
  // E/op ~ V^2 with V ~ f; power of a saturated unit ~ f^3.
  EXPECT_DOUBLE_EQ(dvfs_energy_factor(0.5), 0.25);
  EXPECT_DOUBLE_EQ(dvfs_power_factor(0.5), 0.125);
  EXPECT_DOUBLE_EQ(dvfs_energy_factor(1.0), 1.0);
}

TEST(EnergyTable, FacilityEnergyIsItEnergyTimesPue) {
  // PaLM: PUE 1.08 (hardware reference, TPU v4 section).
  EXPECT_DOUBLE_EQ(facility_energy(Joules(1e6), 1.08).value(), 1.08e6);
}

}  // namespace
}  // namespace hcsim
