// A GPU with HBM-PIM stacks in its memory: memory-bound kernels run on the stacks, GEMMs stay.
#include <gtest/gtest.h>

#include "models/compute/attached_pim.hpp"

namespace hcsim {
namespace {

std::shared_ptr<const ComputeDevice> preset(const char* name) {
  register_builtin_compute_devices();
  const Preset* p = compute_presets().find(name);
  Diagnostics d;
  return std::shared_ptr<const ComputeDevice>(compute_devices().build(p->type, p->values, "/", d));
}

TEST(AttachedPim, MemoryBoundKernelsRunOnTheStacks) {
  auto gpu = preset("nvidia-a100-80gb-sxm");
  auto pim = preset("samsung-hbm-pim");
  AttachedPimDevice dev(gpu, pim, 5);
  const Kernel norm = memory_kernel(KernelKind::norm, Bytes(1e9), Flops(0), DType::bf16);
  ASSERT_TRUE(dev.offloaded(norm));
  // The 1 GB spreads over five stacks: each stack streams 200 MB at its internal bandwidth.
  Kernel share = norm;
  share.bytes = Bytes(2e8);
  EXPECT_DOUBLE_EQ(dev.time(norm).value(), pim->time(share).value());
  EXPECT_DOUBLE_EQ(dev.dynamic_energy(norm).value(), 5.0 * pim->dynamic_energy(share).value());
  // Five stacks of 1228.8 GB/s internal bandwidth (Samsung: 4x the external 307.2 GB/s)
  // outrun the A100's 2039 GB/s HBM on a streaming kernel.
  EXPECT_LT(dev.time(norm), gpu->time(norm));
}

TEST(AttachedPim, GemmsStayOnTheGpu) {
  AttachedPimDevice dev(preset("nvidia-a100-80gb-sxm"), preset("samsung-hbm-pim"), 5);
  const Kernel g = gemm_kernel(4096, 4096, 4096, DType::bf16);
  EXPECT_FALSE(dev.offloaded(g));
  EXPECT_DOUBLE_EQ(dev.time(g).value(), preset("nvidia-a100-80gb-sxm")->time(g).value());
  EXPECT_DOUBLE_EQ(dev.peak(DType::bf16).value(), 312e12);
}

}  // namespace
}  // namespace hcsim
