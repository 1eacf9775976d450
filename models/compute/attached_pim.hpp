#pragma once
// A compute device with processing-in-memory stacks in its own memory (HBM-PIM-like,
// Kwon et al., ISSCC 2021): GEMMs and attention stay on the host device, while memory-bound
// kernels (norms, elementwise, unfused softmax) run on the PIM units next to the DRAM
// banks, where the data already is -- no transfer over a link. The kernel's data is spread
// over the `stacks` PIM stacks attached to the device, each working on its share:
//   t = pim.time(k / stacks)        for offloaded kernels the PIM supports
//   t = host.time(k)                otherwise
//   E = stacks * pim.energy(k / stacks)  or  host.energy(k)
// Capacity, bandwidth and peak are the host's; idle power adds the stacks' idle power.

#include <memory>

#include "models/compute/compute_device.hpp"

namespace hcsim {

class AttachedPimDevice final : public ComputeDevice {
 public:
  AttachedPimDevice(std::shared_ptr<const ComputeDevice> host, std::shared_ptr<const ComputeDevice> pim, int stacks);
  [[nodiscard]] std::string_view type() const override { return host_->type(); }
  [[nodiscard]] Seconds time(const Kernel& k) const override;
  [[nodiscard]] Joules dynamic_energy(const Kernel& k) const override;
  [[nodiscard]] FlopsPerSecond peak(DType dt, bool sparse = false) const override { return host_->peak(dt, sparse); }
  [[nodiscard]] Bytes memory_capacity() const override { return host_->memory_capacity(); }
  [[nodiscard]] BytesPerSecond memory_bandwidth() const override { return host_->memory_bandwidth(); }
  [[nodiscard]] Watts idle_power() const override;
  [[nodiscard]] Watts max_power() const override;
  // Whether `k` runs on the PIM stacks.
  [[nodiscard]] bool offloaded(const Kernel& k) const;

 private:
  [[nodiscard]] Kernel share(const Kernel& k) const;
  std::shared_ptr<const ComputeDevice> host_, pim_;
  int stacks_;
};

}  // namespace hcsim
