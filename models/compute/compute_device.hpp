#pragma once
// The compute-device family: one interface for GPUs, TPU-like systolic arrays,
// processing/compute-in-memory and CPU hosts. A device model is a pure cost function of a
// Kernel (no SimGrid), so it is unit-testable and shared by the analytical and the event
// paths alike. Models register in compute_devices() by their JSON "type"; presets (named
// parameter sets with their public sources) live in compute_presets().

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "models/kernel.hpp"
#include "sim/core/registry.hpp"
#include "sim/core/units.hpp"

namespace hcsim {

// Whole tiles, folds or waves of size b that cover a (a >= 0, b > 0).
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class ComputeDevice {
 public:
  virtual ~ComputeDevice() = default;
  [[nodiscard]] virtual std::string_view type() const = 0;

  // Time to run one kernel on an otherwise idle device.
  [[nodiscard]] virtual Seconds time(const Kernel& k) const = 0;
  // Dynamic (above idle) energy of one kernel.
  [[nodiscard]] virtual Joules dynamic_energy(const Kernel& k) const = 0;
  // Whether this device can run the kernel at all (e.g. PIM runs no large GEMM).
  [[nodiscard]] virtual bool supports(const Kernel& k) const { return true; }

  [[nodiscard]] virtual FlopsPerSecond peak(DType dt, bool sparse = false) const = 0;
  [[nodiscard]] virtual Bytes memory_capacity() const = 0;
  [[nodiscard]] virtual BytesPerSecond memory_bandwidth() const = 0;
  [[nodiscard]] virtual Watts idle_power() const = 0;
  [[nodiscard]] virtual Watts max_power() const = 0;  // TDP: a sanity bound on average power
  // Whether an fp8 GEMM's operands must be stored a second time, transposed, for the
  // backward's GEMMs (fp8 tensor cores that take only the TN layout: Hopper, Ada; docs/
  // models.md, "Both layouts"). Devices without that restriction, or without fp8, say no.
  [[nodiscard]] virtual bool fp8_transposed_copies() const { return false; }
  // The cores a collective's channels run on, which its compute then lacks (a GPU's SMs:
  // NCCL runs one thread block per channel); 0: collectives take none (DMA engines).
  [[nodiscard]] virtual int comm_cores() const { return 0; }
};

Registry<ComputeDevice>& compute_devices();
PresetLibrary& compute_presets();
// Fills both; idempotent.
void register_builtin_compute_devices();

}  // namespace hcsim
