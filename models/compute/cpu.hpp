#pragma once
// CPU host: SIMD FMA roofline with register-blocking (micro-kernel) quantisation.
//   peak_fp32 = cores · fma_units · simd_lanes · 2 · f
// A GEMM runs as a BLIS/GotoBLAS-style loop nest whose inner micro-kernel updates an
// mr×nr block of C (Goto and van de Geijn, "Anatomy of High-Performance Matrix
// Multiplication", TOMS 2008); ragged edges of m and n are padded to mr and nr:
//   t_comp = 2·⌈m/mr⌉mr·⌈n/nr⌉nr·k·batch / (peak · η_gemm)
//   t      = max(t_comp, bytes / (B · η_mem)) + t_call
// Other kernels: max(flops/peak, bytes/(B·η_mem)) + t_call. bf16 and int8 run at
// peak · bf16_speedup / int8_speedup (AVX-512 BF16 / VNNI where present).
// Energy: flops · e_flop + DRAM bytes · e_byte.

#include <cstdint>

#include "models/compute/compute_device.hpp"
#include "sim/core/params.hpp"

namespace hcsim {

struct CpuSpec {
  FlopsPerSecond peak_fp32{};
  double bf16_speedup = 1.0, int8_speedup = 1.0;
  std::int64_t mr = 12, nr = 4;
  double gemm_efficiency = 0.8;
  Bytes memory_capacity{};
  BytesPerSecond memory_bandwidth{};
  double memory_efficiency = 0.7;
  Seconds call_overhead{};
  Watts idle_power{}, tdp{};
  JoulesPerFlop energy_per_flop{};
  JoulesPerByte energy_per_byte{};
};

const ParamTable& cpu_params();
CpuSpec cpu_spec_from(const Params& p);

class CpuDevice final : public ComputeDevice {
 public:
  explicit CpuDevice(CpuSpec spec);
  [[nodiscard]] std::string_view type() const override { return "cpu"; }
  [[nodiscard]] Seconds time(const Kernel& k) const override;
  [[nodiscard]] Joules dynamic_energy(const Kernel& k) const override;
  [[nodiscard]] FlopsPerSecond peak(DType dt, bool sparse = false) const override;
  [[nodiscard]] Bytes memory_capacity() const override { return spec_.memory_capacity; }
  [[nodiscard]] BytesPerSecond memory_bandwidth() const override { return spec_.memory_bandwidth; }
  [[nodiscard]] Watts idle_power() const override { return spec_.idle_power; }
  [[nodiscard]] Watts max_power() const override { return spec_.tdp; }
  [[nodiscard]] const CpuSpec& spec() const { return spec_; }

 private:
  CpuSpec spec_;
};

}  // namespace hcsim
