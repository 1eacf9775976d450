#pragma once
// Digital processing-in-DRAM (HBM-PIM-like): SIMD units next to the DRAM banks read their
// banks directly, so a kernel sees the aggregate bank bandwidth, several times the
// stack's external bandwidth (Kwon et al., Samsung HBM-PIM, ISSCC 2021; Lee et al., ISCA
// 2021). Arithmetic is modest, so the device suits GEMV and elementwise work: a GEMM runs
// only when its activation side is small (m ≤ gemv_max_rows, each weight read once from
// the banks for all m vectors); larger GEMMs are not supported (supports() is false).
//   t = max(flops / peak, bytes / (B_internal · η)) + t_launch
//   E = flops · e_flop + bytes · e_byte_internal

#include <cstdint>

#include "models/compute/compute_device.hpp"
#include "sim/core/params.hpp"

namespace hcsim {

struct PimSpec {
  FlopsPerSecond peak{};
  BytesPerSecond internal_bandwidth{}, external_bandwidth{};
  double memory_efficiency = 0.85;
  Bytes memory_capacity{};
  std::int64_t gemv_max_rows = 8;
  Seconds launch_overhead{};
  JoulesPerFlop energy_per_flop{};
  JoulesPerByte energy_per_byte{};
  Watts idle_power{}, tdp{};
};

const ParamTable& pim_params();
PimSpec pim_spec_from(const Params& p);

class PimDramDevice final : public ComputeDevice {
 public:
  explicit PimDramDevice(PimSpec spec);
  [[nodiscard]] std::string_view type() const override { return "pim-dram"; }
  [[nodiscard]] Seconds time(const Kernel& k) const override;
  [[nodiscard]] Joules dynamic_energy(const Kernel& k) const override;
  [[nodiscard]] bool supports(const Kernel& k) const override;
  [[nodiscard]] FlopsPerSecond peak(DType, bool = false) const override { return spec_.peak; }
  [[nodiscard]] Bytes memory_capacity() const override { return spec_.memory_capacity; }
  // What the host sees at the stack's pins; kernels inside see internal_bandwidth.
  [[nodiscard]] BytesPerSecond memory_bandwidth() const override { return spec_.external_bandwidth; }
  [[nodiscard]] Watts idle_power() const override { return spec_.idle_power; }
  [[nodiscard]] Watts max_power() const override { return spec_.tdp; }

 private:
  [[nodiscard]] Bytes traffic(const Kernel& k) const;
  PimSpec spec_;
};

}  // namespace hcsim
