#include "attached_pim.hpp"

namespace hcsim {

AttachedPimDevice::AttachedPimDevice(std::shared_ptr<const ComputeDevice> host, std::shared_ptr<const ComputeDevice> pim,
                                     int stacks)
    : host_(std::move(host)), pim_(std::move(pim)), stacks_(stacks) {
  HCSIM_ASSERT(host_ && pim_ && stacks_ >= 1, "attached PIM needs a host, a PIM model and at least one stack");
}

Kernel AttachedPimDevice::share(const Kernel& k) const {
  Kernel s = k;
  s.flops = k.flops / stacks_;
  s.bytes = k.bytes / stacks_;
  return s;
}

bool AttachedPimDevice::offloaded(const Kernel& k) const {
  const bool memory_bound =
      k.kind == KernelKind::norm || k.kind == KernelKind::elementwise || k.kind == KernelKind::softmax;
  return memory_bound && pim_->supports(share(k));
}

Seconds AttachedPimDevice::time(const Kernel& k) const {
  return offloaded(k) ? pim_->time(share(k)) : host_->time(k);
}

Joules AttachedPimDevice::dynamic_energy(const Kernel& k) const {
  return offloaded(k) ? pim_->dynamic_energy(share(k)) * static_cast<double>(stacks_) : host_->dynamic_energy(k);
}

Watts AttachedPimDevice::idle_power() const { return host_->idle_power() + pim_->idle_power() * static_cast<double>(stacks_); }

Watts AttachedPimDevice::max_power() const { return host_->max_power() + pim_->max_power() * static_cast<double>(stacks_); }

}  // namespace hcsim
