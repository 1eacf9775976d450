#pragma once
// Analog compute-in-memory (Mythic-like): weights stay in crossbar tiles of rows×cols
// cells; an input vector is driven through DACs onto the rows, each column's current is
// the dot product, and an ADC digitises each column per row-tile (Shafiee et al., ISAAC,
// ISCA 2016; Mythic M1076 product brief).
//
// GEMM of m input vectors, k inputs, n outputs, batch problems with distinct weights:
//   tiles_needed = ⌈k/rows⌉·⌈n/cols⌉·batch,   rounds = ⌈tiles_needed / tiles⌉
//   t_mvm   = 2·rows·cols / (peak / tiles)               (one full-tile MVM)
//   t_comp  = rounds · m · t_mvm                          (vectors pipeline through a round's tiles)
//   t_prog  = rounds > 1 ? weight bytes / reprogram_bandwidth : 0   (capacity bound: weights
//             that do not fit are tiled through the array and rewritten every round)
//   t_io    = activation bytes in and out / io_bandwidth
//   t       = max(t_comp, t_io) + t_prog + t_launch
// Energy: 2·MACs·e_op + ADC conversions·FOM·2^adc_bits (Walden figure of merit, energy per
// conversion step) + DAC conversions·e_dac, with
//   ADC conversions = batch·m·n·⌈k/rows⌉,   DAC conversions = batch·m·k·⌈n/cols⌉.
// Precision is set by weight_bits, dac_bits and adc_bits; cim_reference.hpp executes the
// same datapath on real numbers.

#include <cstdint>

#include "models/compute/compute_device.hpp"
#include "sim/core/params.hpp"

namespace hcsim {

struct CimSpec {
  std::int64_t tiles = 1, rows = 1024, cols = 1024;
  FlopsPerSecond peak{};
  int weight_bits = 8, dac_bits = 8, adc_bits = 8;
  BytesPerSecond reprogram_bandwidth{};
  BytesPerSecond io_bandwidth{};
  Seconds launch_overhead{};
  JoulesPerFlop energy_per_op{};  // analog MAC energy per op (a MAC is two ops)
  Joules adc_fom{};               // per conversion step
  Joules dac_energy{};            // per input conversion
  Watts idle_power{}, tdp{};
};

const ParamTable& cim_params();
CimSpec cim_spec_from(const Params& p);

// Datapath event counts of one GEMM; shared by the model and the executed reference.
struct CimCounts {
  std::int64_t macs = 0, adc_conversions = 0, dac_conversions = 0;
  std::int64_t tiles_needed = 0, rounds = 0;
};
CimCounts cim_counts(const CimSpec& s, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch);
Joules cim_energy(const CimSpec& s, const CimCounts& c);

class CimAnalogDevice final : public ComputeDevice {
 public:
  explicit CimAnalogDevice(CimSpec spec);
  [[nodiscard]] std::string_view type() const override { return "cim-analog"; }
  [[nodiscard]] Seconds time(const Kernel& k) const override;
  [[nodiscard]] Joules dynamic_energy(const Kernel& k) const override;
  [[nodiscard]] bool supports(const Kernel& k) const override;
  [[nodiscard]] FlopsPerSecond peak(DType, bool = false) const override { return spec_.peak; }
  // Weight storage of all tiles.
  [[nodiscard]] Bytes memory_capacity() const override;
  [[nodiscard]] BytesPerSecond memory_bandwidth() const override { return spec_.io_bandwidth; }
  [[nodiscard]] Watts idle_power() const override { return spec_.idle_power; }
  [[nodiscard]] Watts max_power() const override { return spec_.tdp; }
  [[nodiscard]] const CimSpec& spec() const { return spec_; }

 private:
  CimSpec spec_;
};

}  // namespace hcsim
