#pragma once
// GPU: a roofline per datatype with tensor cores, tile and wave quantisation, a K-loop
// pipeline-fill cost per tile, and achieved-efficiency ceilings for GEMM and HBM.
//
// GEMM (C[m,n] += A[m,k]·B[k,n], `batch` problems) on S streaming multiprocessors with
// output tile tm×tn and K step tk, optionally split s ways along K:
//   tiles  = ⌈m/tm⌉·⌈n/tn⌉·batch·s                     (tile quantisation: ragged edges padded)
//   waves  = ⌈tiles/S⌉                                  (wave quantisation)
//   t_iter = 2·tm·tn·tk / (P/S · η_gemm)                (one K step of one tile on one SM)
//   t_comp = waves · (t_fill + ⌈⌈k/s⌉/tk⌉ · t_iter)     (t_fill: first K stage load + epilogue)
//   t_mem  = (bytes + split-K partials) / (B · η_mem)
//   t      = max(t_comp, t_mem) + t_launch              (roofline)
// The tile (the configured tm×tn, its transpose, or the tile halved along its longer
// side) and the split s are chosen to minimise t, as a cuBLAS-like heuristic would.
// The efficiency of a large, well-shaped GEMM tends to η_gemm (a physical ceiling below
// 1: clock droop at the power limit, issue and synchronisation overhead) and never above
// it. Small m or n lose to tile/wave quantisation; small k loses to t_fill, which a
// K-loop of few iterations cannot amortise. These are the effects NVIDIA's "Matrix
// Multiplication Background User's Guide" (docs.nvidia.com/deeplearning/performance)
// describes; split-K is how cuBLAS/CUTLASS recover occupancy for small m·n.
// Attention: fused (FlashAttention, Dao et al. 2022/2023) keeps the s_q×s_kv scores on
// chip, so HBM traffic is Q, K, V, O only; unfused runs QKᵀ, softmax and PV as three
// kernels and writes/reads the scores and probabilities through HBM; any further traffic
// the kernel states (the dropout on the probabilities, the softmax and dropout gradients
// of the backward pass) is a fourth, elementwise pass at achieved HBM bandwidth.
// Memory-bound kinds are max(flops/P_vector, bytes/(B·η_mem)) + t_launch.
// Energy: flops·e_flop(dtype) + HBM bytes·e_byte (models/energy/energy_table.hpp); DVFS
// clock scale f scales compute rates by f and energy per flop by f².

#include <cstdint>
#include <optional>
#include <vector>

#include "models/compute/compute_device.hpp"
#include "models/energy/energy_table.hpp"
#include "sim/core/params.hpp"

namespace hcsim {

struct GpuSpec {
  FlopsPerSecond peak_fp32{};  // non-tensor
  FlopsPerSecond peak_tf32{};
  FlopsPerSecond peak_bf16{};  // also fp16
  std::optional<FlopsPerSecond> peak_fp8{};
  std::optional<FlopsPerSecond> peak_int8{};
  double sparsity_speedup = 2.0;  // 2:4 structured sparsity on tensor cores
  Bytes memory_capacity{};
  BytesPerSecond memory_bandwidth{};
  std::int64_t sm_count = 1;
  std::int64_t tile_m = 128, tile_n = 256, tile_k = 64;
  Seconds tile_fill{};
  double gemm_efficiency = 1.0;
  std::optional<double> gemm_efficiency_fp8{};  // absent: gemm_efficiency
  double attention_efficiency = 1.0;  // fused attention rate relative to a GEMM's
  double flash2_rate = 1.0;           // FlashAttention-2's fused attention relative to the device's own
  bool fp8_tn_only = true;            // fp8 GEMMs take only the TN layout (ComputeDevice::fp8_transposed_copies)
  double memory_efficiency = 1.0;
  Seconds launch_overhead{};
  Watts idle_power{};
  Watts tdp{};
  OpEnergy energy{};
  double frequency_scale = 1.0;  // DVFS operating point, f/f_nominal
};

// Declared parameters of type "gpu" (one declaration drives defaults, checks and help).
const ParamTable& gpu_params();
GpuSpec gpu_spec_from(const Params& p);

// Where one kernel's time and energy go.
struct GpuCost {
  Seconds compute{};       // tensor/vector pipes, with quantisation and efficiency
  Seconds memory{};        // HBM traffic at achieved bandwidth
  Seconds overhead{};      // kernel launches
  Seconds total{};         // per phase max(compute, memory), summed, plus overhead
  Flops executed{};        // arithmetic actually executed (sparse: halved work)
  Bytes hbm_bytes{};       // HBM traffic including split-K partials and unfused scores
  int launches = 0;
  std::int64_t split_k = 1;
  std::int64_t tile_m = 0, tile_n = 0;  // GEMM tile chosen
};

class GpuDevice final : public ComputeDevice {
 public:
  explicit GpuDevice(GpuSpec spec);
  [[nodiscard]] std::string_view type() const override { return "gpu"; }
  [[nodiscard]] Seconds time(const Kernel& k) const override;
  [[nodiscard]] Joules dynamic_energy(const Kernel& k) const override;
  [[nodiscard]] bool supports(const Kernel& k) const override;
  [[nodiscard]] FlopsPerSecond peak(DType dt, bool sparse = false) const override;
  [[nodiscard]] Bytes memory_capacity() const override { return spec_.memory_capacity; }
  [[nodiscard]] BytesPerSecond memory_bandwidth() const override { return spec_.memory_bandwidth; }
  [[nodiscard]] Watts idle_power() const override { return spec_.idle_power; }
  [[nodiscard]] Watts max_power() const override;
  [[nodiscard]] bool fp8_transposed_copies() const override { return spec_.fp8_tn_only && spec_.peak_fp8.has_value(); }
  [[nodiscard]] int comm_cores() const override { return static_cast<int>(spec_.sm_count); }

  [[nodiscard]] GpuCost cost(const Kernel& k) const;
  [[nodiscard]] const GpuSpec& spec() const { return spec_; }

 private:
  struct Tile { std::int64_t m = 0, n = 0; };
  struct Phase {
    Seconds compute{}, memory{};
    Flops executed{};
    Bytes bytes{};
    std::int64_t split_k = 1;
    Tile tile{};
  };
  [[nodiscard]] std::vector<Tile> tile_candidates() const;
  [[nodiscard]] FlopsPerSecond tensor_rate(DType dt, bool sparse) const;
  [[nodiscard]] double gemm_efficiency(DType dt) const;  // the achieved/peak ceiling of dt's GEMMs
  [[nodiscard]] Seconds tiled_compute(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                                      std::int64_t split, FlopsPerSecond rate, Tile t, double efficiency) const;
  [[nodiscard]] Phase gemm_phase(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, DType dt,
                                 bool sparse, Bytes min_bytes) const;
  [[nodiscard]] GpuCost attention_cost(const Kernel& k) const;
  [[nodiscard]] Seconds hbm_time(Bytes b) const;
  GpuSpec spec_;
};

}  // namespace hcsim
