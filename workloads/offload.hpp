#pragma once
// Optimizer-state offload to memory outside the device (strategy.offload = "pool").
//
// Mixed-precision Adam keeps 12 B of state per parameter: the fp32 master weights, the
// momentum and the variance (Rajbhandari et al. SC20 §3.1, "K = 12"). With the state in a
// memory pool (a CXL pool, or host DRAM behind PCIe), the device keeps only its 16-bit
// weights and gradients; at the optimizer step it streams its state shard in, updates it
// with its own gradients (the update runs on the device, as ZeRO-Infinity does on GPUs,
// Rajbhandari et al. SC21 §5, rather than ZeRO-Offload's host-CPU Adam), and streams it
// back:
//   bytes each way per device = 12 B x parameters of its shard (1/dp of them under ZeRO >= 1)
//   T_opt = T_read + T_adam + T_write,  T_read = T_write = max over links l of
//           (bytes all devices move over l) / (bandwidth_l x efficiency_l) + path latency
// when every device streams at once (topologies/transfer_time.hpp gives the closed form; the
// engine shares the links between flows). The pool's capacity holds every device's state.

#include "sim/core/units.hpp"

namespace hcsim {

inline constexpr double kOptimizerStateBytesPerParam = 12.0;  // fp32 master, Adam m and v

// Optimizer state of `params` parameters: what one stream (in, or back out) moves.
[[nodiscard]] inline Bytes offload_state_bytes(double params) { return Bytes(kOptimizerStateBytesPerParam * params); }

}  // namespace hcsim
