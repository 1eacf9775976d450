#pragma once
// A device with round numbers for tests whose expectation is a closed form: time is
// FLOPs at a fixed rate plus bytes at a fixed bandwidth, nothing else.
#include "models/compute/compute_device.hpp"

namespace hcsim::testing {

class TestDevice final : public ComputeDevice {
 public:
  explicit TestDevice(double flops_per_s = 100e12, double bytes_per_s = 1e18, double capacity = 80e9)
      : rate_(flops_per_s), bw_(bytes_per_s), cap_(capacity) {}
  std::string_view type() const override { return "test"; }
  Seconds time(const Kernel& k) const override { return Seconds(k.flops.value() / rate_ + k.bytes.value() / bw_); }
  Joules dynamic_energy(const Kernel& k) const override { return Joules(k.flops.value() * 1e-12); }
  FlopsPerSecond peak(DType, bool) const override { return FlopsPerSecond(rate_); }
  Bytes memory_capacity() const override { return Bytes(cap_); }
  BytesPerSecond memory_bandwidth() const override { return BytesPerSecond(bw_); }
  Watts idle_power() const override { return Watts(50); }
  Watts max_power() const override { return Watts(400); }

 private:
  double rate_, bw_, cap_;
};

}  // namespace hcsim::testing
