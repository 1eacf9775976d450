#pragma once
// Closed forms from the literature that hcsim's workload model must reproduce where their
// assumptions hold. Used by the memory model and by the tests as independent references.

#include <cstdint>

#include "workloads/strategy.hpp"

namespace hcsim::formulas {

// Narayanan et al. SC21 eq. 3: FLOPs per iteration with full activation recomputation,
// 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
Flops megatron_flops_full_recompute(double B, double s, double l, double h, double V);
// Korthikanti et al. 2022 eq. 8 (model FLOPs, no recomputation): 72 B l s h^2 (1 + s/(6h) + V/(12 h l)).
Flops model_flops(double B, double s, double l, double h, double V);
// Korthikanti eq. 9 (hardware FLOPs, selective recomputation): 72 B l s h^2 (1 + s/(3h) + V/(12 h l)).
Flops hardware_flops_selective(double B, double s, double l, double h, double V);

// Korthikanti et al. 2022, Table 2: activation bytes per layer, 16-bit activations and
// 1-byte dropout masks; a = heads, t = tensor-parallel size. Full recomputation keeps the
// layer's input, 2 s b h, which Table 2 gives unsplit; under sequence parallelism that input
// is the rank's s/t tokens (Megatron-LM's CheckpointFunction saves it as it arrives), 2 s b h / t.
Bytes activation_bytes_per_layer(double s, double b, double h, double a, double t, bool sequence_parallel,
                                 Recompute recompute);

// Rajbhandari et al. SC20 §5: model-state bytes per device for mixed-precision Adam (K=12)
// with Psi parameters over N_d data-parallel ranks at ZeRO stage 0..3.
Bytes zero_model_state_bytes(double psi, double nd, int stage, double k = 12.0);

// Pipeline bubble fraction of the step, uniform stages and free communication.
double bubble_fraction(int p, int m, int v);

// NCCL ring all-reduce: 2(n-1)/n S/B + 2(n-1) alpha.
Seconds ring_allreduce_time(int n, Bytes bytes, BytesPerSecond bandwidth, Seconds alpha);

}  // namespace hcsim::formulas
