#pragma once
// TPU-like accelerator: `cores` × `arrays_per_core` R×C systolic arrays (MXUs), a vector
// unit for non-GEMM work, an on-chip SRAM that decides HBM traffic, and HBM.
//
// GEMM: the SCALE-Sim analytical count (systolic_cycles.hpp) per array,
//   cycles = ⌈batch·folds / arrays⌉ · (2R + C + T − 2) · passes(dtype)
// i.e. folds are independent tiles dealt round-robin to the arrays of all cores (K-folds
// of WS/IS add their partial sums in the vector unit's accumulators), and
// t_compute = cycles / clock. passes: fp32 is emulated with 3 bf16 passes (JAX/XLA
// Precision.HIGH, "bf16_3x"); int8 runs `int8_speedup` times faster per pass.
// HBM traffic: A, B and C once when they fit in `sram_capacity`; otherwise square
// blocking with three b×b blocks resident, b = ⌊√(S/(3·e))⌋, re-reads A ⌈n/b⌉ and B
// ⌈m/b⌉ times (the Hong–Kung Ω(mnk/√S) traffic of a blocked GEMM).
// t = max(t_compute, t_hbm) + t_launch. Attention = QKᵀ and PV on the arrays, softmax on
// the vector unit; fused keeps the scores in SRAM, unfused writes and reads them through HBM.
// Energy: executed flops · e_flop(dtype) + HBM bytes · e_byte.

#include <cstdint>

#include "models/compute/compute_device.hpp"
#include "models/compute/systolic_cycles.hpp"
#include "models/energy/energy_table.hpp"
#include "sim/core/params.hpp"

namespace hcsim {

struct SystolicSpec {
  std::int64_t rows = 128, cols = 128, arrays_per_core = 1, cores = 1;
  Hertz clock{};
  Dataflow dataflow = Dataflow::ws;
  double int8_speedup = 1.0;
  std::int64_t fp32_passes = 3;
  FlopsPerSecond vector_rate{};
  Bytes sram_capacity{};
  Bytes memory_capacity{};
  BytesPerSecond memory_bandwidth{};
  double memory_efficiency = 1.0;
  Seconds launch_overhead{};
  Watts idle_power{};
  Watts tdp{};
  JoulesPerFlop energy_per_flop{};  // one bf16 pass; other dtypes scale with their passes
  JoulesPerByte energy_per_byte{};

  [[nodiscard]] std::int64_t arrays() const { return cores * arrays_per_core; }
};

const ParamTable& systolic_params();
SystolicSpec systolic_spec_from(const Params& p);

struct SystolicCost {
  Seconds compute{}, memory{}, overhead{}, total{};
  std::int64_t cycles = 0;  // array cycles (per array, critical path)
  Flops executed{};
  Bytes hbm_bytes{};
};

class SystolicDevice final : public ComputeDevice {
 public:
  explicit SystolicDevice(SystolicSpec spec);
  [[nodiscard]] std::string_view type() const override { return "systolic"; }
  [[nodiscard]] Seconds time(const Kernel& k) const override { return cost(k).total; }
  [[nodiscard]] Joules dynamic_energy(const Kernel& k) const override;
  [[nodiscard]] bool supports(const Kernel& k) const override;
  [[nodiscard]] FlopsPerSecond peak(DType dt, bool sparse = false) const override;
  [[nodiscard]] Bytes memory_capacity() const override { return spec_.memory_capacity; }
  [[nodiscard]] BytesPerSecond memory_bandwidth() const override { return spec_.memory_bandwidth; }
  [[nodiscard]] Watts idle_power() const override { return spec_.idle_power; }
  [[nodiscard]] Watts max_power() const override { return spec_.tdp; }

  [[nodiscard]] SystolicCost cost(const Kernel& k) const;
  // HBM bytes of one GEMM given the SRAM (see header comment).
  [[nodiscard]] Bytes gemm_traffic(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, DType dt) const;
  [[nodiscard]] const SystolicSpec& spec() const { return spec_; }

 private:
  [[nodiscard]] double passes(DType dt) const;
  [[nodiscard]] std::int64_t gemm_cycles(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) const;
  [[nodiscard]] Seconds cycles_time(double cycles) const { return Seconds(cycles / spec_.clock.value()); }
  [[nodiscard]] SystolicCost attention_cost(const Kernel& k) const;
  SystolicSpec spec_;
};

}  // namespace hcsim
