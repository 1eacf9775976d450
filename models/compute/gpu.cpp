#include "models/compute/gpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace hcsim {

namespace {

// Fraction of the dynamic power budget (TDP - idle) that a datapath running flat out at
// its own peak rate is taken to draw; the rest is left for HBM and on-chip traffic. Used
// only when a preset gives no energy per flop for a datatype (see gpu_spec_from).
constexpr double kArithmeticShareOfDynamicPower = 0.7;

ParamSpec rate(std::string name, std::optional<nlohmann::json> def, std::string help) {
  return {.name = std::move(name), .kind = ParamKind::quantity, .dim = Dim::flop_rate, .def = std::move(def),
          .min = 0, .min_exclusive = true, .help = std::move(help)};
}

ParamSpec epf(std::string name, std::string help) {
  return {.name = std::move(name), .kind = ParamKind::quantity, .dim = Dim::energy_per_flop,
          .def = nlohmann::json(nullptr), .min = 0, .help = std::move(help)};
}

}  // namespace

const ParamTable& gpu_params() {
  static const ParamTable table = {
      rate("peak_fp32", std::nullopt, "dense non-tensor (vector FMA) fp32 rate"),
      rate("peak_tf32", std::nullopt, "dense tf32 tensor-core rate"),
      rate("peak_bf16", std::nullopt, "dense bf16/fp16 tensor-core rate (fp32 accumulate)"),
      rate("peak_fp8", nlohmann::json(nullptr), "dense fp8 tensor-core rate; absent: no fp8 (runs upcast to bf16)"),
      rate("peak_int8", nlohmann::json(nullptr), "dense int8 tensor-core rate; absent: no int8 (runs as bf16)"),
      {.name = "sparsity_speedup", .kind = ParamKind::number, .def = 2.0, .min = 1, .max = 2,
       .help = "tensor-core speed-up on 2:4 structured-sparse operands (NVIDIA datasheets: 2x)"},
      {.name = "memory_capacity", .kind = ParamKind::quantity, .dim = Dim::data, .min = 0, .min_exclusive = true,
       .help = "device memory (HBM) capacity"},
      {.name = "memory_bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .min = 0,
       .min_exclusive = true, .help = "nominal device memory bandwidth"},
      {.name = "sm_count", .kind = ParamKind::integer, .min = 1, .max = 4096,
       .help = "streaming multiprocessors: the unit of wave quantisation"},
      {.name = "tile_m", .kind = ParamKind::integer, .def = 128, .min = 1, .max = 1024,
       .help = "GEMM output tile rows per SM (CUTLASS sm80 default threadblock 128x256x64)"},
      {.name = "tile_n", .kind = ParamKind::integer, .def = 256, .min = 1, .max = 1024, .help = "GEMM output tile columns"},
      {.name = "tile_k", .kind = ParamKind::integer, .def = 64, .min = 1, .max = 1024, .help = "GEMM K step per main-loop iteration"},
      {.name = "tile_fill", .kind = ParamKind::quantity, .dim = Dim::time, .def = "1 us", .min = 0,
       .help = "per tile: latency of the first K stage from HBM plus the epilogue drain, not hidden by the K loop "
               "(order of a few HBM round trips of ~0.5 us; Jia et al. 2018, arXiv 1804.06826)"},
      {.name = "gemm_efficiency", .kind = ParamKind::number, .def = 0.86, .min = 0, .max = 1, .min_exclusive = true,
       .help = "ceiling on achieved/peak for large, well-shaped GEMMs; default: ~268 of 312 TF bf16 on A100-SXM "
               "measured with mamf-finder (stas00/ml-engineering)"},
      {.name = "gemm_efficiency_fp8", .kind = ParamKind::number, .def = nullptr, .min = 0, .max = 1,
       .min_exclusive = true,
       .help = "the same ceiling for fp8 GEMMs; absent: gemm_efficiency. At the power limit the fp8 tensor-core "
               "rate costs more energy per second than bf16's, so the clock drops further"},
      {.name = "attention_efficiency", .kind = ParamKind::number, .def = 0.85, .min = 0, .max = 1, .min_exclusive = true,
       .help = "fused attention rate relative to a GEMM's: FlashAttention-2 forward reaches ~230 TF on A100 "
               "(Dao 2023, arXiv 2307.08691), 230/268 = 0.86"},
      {.name = "flash2_rate", .kind = ParamKind::number, .def = 1.0, .min = 0, .max = 1, .min_exclusive = true,
       .help = "rate of FlashAttention-2's fused attention (strategy.attention_kernel flash2) relative to the "
               "device's own fused attention: 1 where FlashAttention-2 is the native kernel (Ampere); below 1 where "
               "it runs the previous architecture's instructions (Hopper: FlashAttention-3 is 1.5-2.0x faster, "
               "Shah et al. 2024, arXiv 2407.08608)"},
      {.name = "fp8_tn_only", .kind = ParamKind::boolean, .def = true,
       .help = "fp8 tensor cores take only the TN layout (both operands K-major: Hopper, Ada), so every fp8 GEMM "
               "operand is written a second time, transposed, for the backward (docs/models.md, \"Both layouts\"); "
               "false where fp8 GEMMs take any layout (Blackwell)"},
      {.name = "memory_efficiency", .kind = ParamKind::number, .def = 0.85, .min = 0, .max = 1, .min_exclusive = true,
       .help = "achieved fraction of nominal HBM bandwidth for streaming kernels (STREAM-like copy/triad on "
               "A100/H100 reach ~80-90 %)"},
      {.name = "launch_overhead", .kind = ParamKind::quantity, .dim = Dim::time, .def = "3 us", .min = 0,
       .help = "per kernel: launch and tail gap between back-to-back kernels (~2-5 us for CUDA launches)"},
      {.name = "idle_power", .kind = ParamKind::quantity, .dim = Dim::power, .min = 0, .help = "board power when idle"},
      {.name = "tdp", .kind = ParamKind::quantity, .dim = Dim::power, .min = 0, .min_exclusive = true,
       .help = "board power limit (TDP)"},
      epf("energy_per_flop_fp32", "absent: 0.7 (tdp - idle) / peak_fp32 (datapath at its peak draws 70 % of the dynamic budget)"),
      epf("energy_per_flop_tf32", "absent: 0.7 (tdp - idle) / peak_tf32"),
      epf("energy_per_flop_bf16", "absent: 0.7 (tdp - idle) / peak_bf16"),
      epf("energy_per_flop_fp8", "absent: 0.7 (tdp - idle) / peak_fp8"),
      epf("energy_per_flop_int8", "absent: 0.7 (tdp - idle) / peak_int8"),
      {.name = "energy_per_byte", .kind = ParamKind::quantity, .dim = Dim::energy_per_byte, .def = "3.9 pJ/bit",
       .min = 0, .help = "HBM access energy; default HBM2 ~3.9 pJ/bit (O'Connor et al., MICRO 2017)"},
      {.name = "frequency_scale", .kind = ParamKind::number, .def = 1.0, .min = 0, .max = 1, .min_exclusive = true,
       .help = "DVFS operating point f/f_nominal: compute rates x f, energy per flop x f^2, max power idle + (tdp-idle) f^3"},
      {.name = "power_cap", .kind = ParamKind::quantity, .dim = Dim::power, .def = nullptr, .min = 0,
       .min_exclusive = true,
       .help = "power limit: lowers the DVFS point to f = ((cap - idle) / (tdp - idle))^(1/3) when that is below "
               "frequency_scale (nvidia-smi -pl style)"},
  };
  return table;
}

GpuSpec gpu_spec_from(const Params& p) {
  GpuSpec s;
  s.peak_fp32 = p.get<FlopsPerSecond>("peak_fp32");
  s.peak_tf32 = p.get<FlopsPerSecond>("peak_tf32");
  s.peak_bf16 = p.get<FlopsPerSecond>("peak_bf16");
  if (p.has("peak_fp8")) s.peak_fp8 = p.get<FlopsPerSecond>("peak_fp8");
  if (p.has("peak_int8")) s.peak_int8 = p.get<FlopsPerSecond>("peak_int8");
  s.sparsity_speedup = p.number("sparsity_speedup");
  s.memory_capacity = p.get<Bytes>("memory_capacity");
  s.memory_bandwidth = p.get<BytesPerSecond>("memory_bandwidth");
  s.sm_count = p.integer("sm_count");
  s.tile_m = p.integer("tile_m");
  s.tile_n = p.integer("tile_n");
  s.tile_k = p.integer("tile_k");
  s.tile_fill = p.get<Seconds>("tile_fill");
  s.gemm_efficiency = p.number("gemm_efficiency");
  if (p.has("gemm_efficiency_fp8")) s.gemm_efficiency_fp8 = p.number("gemm_efficiency_fp8");
  s.attention_efficiency = p.number("attention_efficiency");
  s.flash2_rate = p.number("flash2_rate");
  s.fp8_tn_only = p.boolean("fp8_tn_only");
  s.memory_efficiency = p.number("memory_efficiency");
  s.launch_overhead = p.get<Seconds>("launch_overhead");
  s.idle_power = p.get<Watts>("idle_power");
  s.tdp = p.get<Watts>("tdp");
  s.frequency_scale = p.number("frequency_scale");
  if (p.has("power_cap")) {
    // A power cap picks the fastest DVFS point whose saturated power fits under it:
    // idle + (tdp - idle) f^3 <= cap (the same cubic law as max_power()).
    const Watts cap = p.get<Watts>("power_cap");
    if (cap <= s.idle_power)
      throw InputError("power_cap", fmt::format("a power cap of {} W is not above the idle power of {} W",
                                                cap.value(), s.idle_power.value()));
    if (cap < s.tdp)
      s.frequency_scale = std::min(s.frequency_scale, std::cbrt((cap - s.idle_power) / (s.tdp - s.idle_power)));
  }
  const Watts budget = max(s.tdp - s.idle_power, Watts(0));
  auto energy = [&](const char* name, std::optional<FlopsPerSecond> peak) {
    if (p.has(name)) return p.get<JoulesPerFlop>(name);
    if (!peak) return JoulesPerFlop(0);
    return JoulesPerFlop(kArithmeticShareOfDynamicPower * budget.value() / peak->value());
  };
  s.energy.fp32 = energy("energy_per_flop_fp32", s.peak_fp32);
  s.energy.tf32 = energy("energy_per_flop_tf32", s.peak_tf32);
  s.energy.bf16 = energy("energy_per_flop_bf16", s.peak_bf16);
  s.energy.fp8 = energy("energy_per_flop_fp8", s.peak_fp8 ? s.peak_fp8 : s.peak_bf16);
  s.energy.int8 = energy("energy_per_flop_int8", s.peak_int8 ? s.peak_int8 : s.peak_bf16);
  s.energy.memory = p.get<JoulesPerByte>("energy_per_byte");
  return s;
}

GpuDevice::GpuDevice(GpuSpec spec) : spec_(std::move(spec)) {
  HCSIM_ASSERT(spec_.sm_count > 0 && spec_.tile_m > 0 && spec_.tile_n > 0 && spec_.tile_k > 0, "bad GPU tiling");
}

FlopsPerSecond GpuDevice::peak(DType dt, bool sparse) const {
  const double f = spec_.frequency_scale;
  if (dt == DType::fp32) return spec_.peak_fp32 * f;  // vector pipes: no sparsity support
  return tensor_rate(dt, sparse);
}

FlopsPerSecond GpuDevice::tensor_rate(DType dt, bool sparse) const {
  FlopsPerSecond r = spec_.peak_bf16;
  switch (dt) {
    case DType::fp32: r = spec_.peak_fp32; break;
    case DType::tf32: r = spec_.peak_tf32; break;
    case DType::bf16: case DType::fp16: r = spec_.peak_bf16; break;
    case DType::fp8: r = spec_.peak_fp8.value_or(spec_.peak_bf16); break;
    case DType::int8: case DType::int4: r = spec_.peak_int8.value_or(spec_.peak_bf16); break;
  }
  if (sparse && dt != DType::fp32) r = r * spec_.sparsity_speedup;
  return r * spec_.frequency_scale;
}

bool GpuDevice::supports(const Kernel& k) const {
  if (k.dtype == DType::fp8) return spec_.peak_fp8.has_value();
  if (k.dtype == DType::int8 || k.dtype == DType::int4) return spec_.peak_int8.has_value();
  return true;
}

Watts GpuDevice::max_power() const {
  return spec_.idle_power + (spec_.tdp - spec_.idle_power) * dvfs_power_factor(spec_.frequency_scale);
}

double GpuDevice::gemm_efficiency(DType dt) const {
  return dt == DType::fp8 && spec_.gemm_efficiency_fp8 ? *spec_.gemm_efficiency_fp8 : spec_.gemm_efficiency;
}

Seconds GpuDevice::hbm_time(Bytes b) const { return b / (spec_.memory_bandwidth * spec_.memory_efficiency); }

Seconds GpuDevice::tiled_compute(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                                 std::int64_t split, FlopsPerSecond rate, Tile t, double efficiency) const {
  const std::int64_t tiles = ceil_div(m, t.m) * ceil_div(n, t.n) * batch * split;
  const std::int64_t waves = ceil_div(tiles, spec_.sm_count);
  const std::int64_t iters = ceil_div(ceil_div(k, split), spec_.tile_k);
  const Flops per_iter(2.0 * static_cast<double>(t.m * t.n * spec_.tile_k));
  const Seconds t_iter = per_iter / (rate / static_cast<double>(spec_.sm_count) * efficiency);
  return (spec_.tile_fill + t_iter * static_cast<double>(iters)) * static_cast<double>(waves);
}

std::vector<GpuDevice::Tile> GpuDevice::tile_candidates() const {
  // The configured tile, its transpose and the tile halved along its longer side: the
  // choices a cuBLAS-like heuristic weighs against tile and wave quantisation.
  const std::int64_t tm = spec_.tile_m, tn = spec_.tile_n;
  std::vector<Tile> c{{tm, tn}};
  if (tn != tm) c.push_back({tn, tm});
  const Tile half = tm >= tn ? Tile{std::max<std::int64_t>(1, tm / 2), tn} : Tile{tm, std::max<std::int64_t>(1, tn / 2)};
  if (half.m != tm || half.n != tn) c.push_back(half);
  return c;
}

GpuDevice::Phase GpuDevice::gemm_phase(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, DType dt,
                                       bool sparse, Bytes min_bytes) const {
  const FlopsPerSecond rate = tensor_rate(dt, sparse);
  const Flops work(2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
                   static_cast<double>(k));
  Phase best;
  best.executed = sparse && dt != DType::fp32 ? work / spec_.sparsity_speedup : work;
  Seconds best_total(std::numeric_limits<double>::infinity());
  for (const Tile t : tile_candidates()) {
    // Split-K only pays when the output tiles alone leave SMs idle.
    const std::int64_t out_tiles = ceil_div(m, t.m) * ceil_div(n, t.n) * batch;
    const std::int64_t max_split = std::max<std::int64_t>(
        1, std::min(spec_.sm_count / std::max<std::int64_t>(out_tiles, 1), ceil_div(k, spec_.tile_k)));
    for (std::int64_t s = 1; s <= max_split; ++s) {
      // Each split writes an fp32 partial of C and a reduction reads it back.
      const Bytes partials(s > 1 ? 2.0 * 4.0 * static_cast<double>(s * batch * m * n) : 0.0);
      const Bytes bytes = min_bytes + partials;
      const Seconds c = tiled_compute(m, n, k, batch, s, rate, t, gemm_efficiency(dt)), mem = hbm_time(bytes);
      if (max(c, mem) < best_total) {
        best_total = max(c, mem);
        best.compute = c;
        best.memory = mem;
        best.bytes = bytes;
        best.split_k = s;
        best.tile = t;
      }
    }
  }
  return best;
}

GpuCost GpuDevice::attention_cost(const Kernel& kn) const {
  const std::int64_t b = kn.batch, sq = kn.m, skv = kn.n, d = kn.k;
  const double bytes_el = dtype_bytes(kn.dtype);
  const Flops shape_flops(4.0 * static_cast<double>(b) * static_cast<double>(sq) * static_cast<double>(skv) *
                          static_cast<double>(d));
  // A workload may count less work than the full square (causal masking): scale to it.
  const double work_scale = kn.flops.value() > 0 ? kn.flops / shape_flops : 1.0;
  GpuCost c;
  if (kn.fused) {
    const std::int64_t blk = spec_.tile_m;
    const std::int64_t waves = ceil_div(b * ceil_div(sq, blk), spec_.sm_count);
    const Flops per_iter(4.0 * static_cast<double>(blk * blk * d));
    const FlopsPerSecond sm_rate = tensor_rate(kn.dtype, false) / static_cast<double>(spec_.sm_count) *
                                   (gemm_efficiency(kn.dtype) * spec_.attention_efficiency) *
                                   (kn.flash2 ? spec_.flash2_rate : 1.0);
    c.compute = (spec_.tile_fill + per_iter / sm_rate * static_cast<double>(ceil_div(skv, blk))) *
                static_cast<double>(waves) * work_scale;
    c.hbm_bytes = max(kn.bytes, Bytes(static_cast<double>(b) * bytes_el * (2.0 * sq * d + 2.0 * skv * d)));
    c.memory = hbm_time(c.hbm_bytes);
    c.executed = shape_flops * work_scale;
    c.launches = 1;
    c.total = max(c.compute, c.memory);
  } else {
    const double S = static_cast<double>(b) * static_cast<double>(sq) * static_cast<double>(skv) * bytes_el;
    const Phase qk = gemm_phase(sq, skv, d, b, kn.dtype, false,
                                Bytes(static_cast<double>(b) * bytes_el * (static_cast<double>(sq + skv) * d)) + Bytes(S));
    const Seconds soft_c = Flops(5.0 * S / bytes_el) / (spec_.peak_fp32 * spec_.frequency_scale);
    const Seconds soft_m = hbm_time(Bytes(2.0 * S));
    const Phase pv = gemm_phase(sq, d, skv, b, kn.dtype, false,
                                Bytes(S) + Bytes(static_cast<double>(b) * bytes_el * (static_cast<double>(skv + sq) * d)));
    // Traffic the workload states beyond these three kernels (the dropout on the
    // probabilities: read P, write P' and its 1-byte mask; in the backward pass the
    // dropout and softmax gradients) is one more elementwise pass at HBM speed.
    const Bytes three = qk.bytes + Bytes(2.0 * S) + pv.bytes;
    const Bytes extra = kn.bytes > three ? kn.bytes - three : Bytes(0);
    const Seconds extra_m = hbm_time(extra);
    c.compute = (qk.compute + pv.compute) * work_scale + soft_c;
    c.memory = qk.memory + soft_m + pv.memory + extra_m;
    c.hbm_bytes = three + extra;
    c.executed = (qk.executed + pv.executed) * work_scale;
    c.launches = extra.value() > 0 ? 4 : 3;
    c.total = max(qk.compute * work_scale, qk.memory) + max(soft_c, soft_m) +
              max(pv.compute * work_scale, pv.memory) + extra_m;
  }
  c.overhead = spec_.launch_overhead * static_cast<double>(c.launches);
  c.total += c.overhead;
  return c;
}

GpuCost GpuDevice::cost(const Kernel& kn) const {
  const bool shaped = kn.m > 0 && kn.n > 0 && kn.k > 0 && kn.batch > 0;
  if (kn.kind == KernelKind::attention && shaped) return attention_cost(kn);
  GpuCost c;
  c.launches = kn.launches;
  c.overhead = spec_.launch_overhead * static_cast<double>(kn.launches);
  if (kn.kind == KernelKind::gemm && shaped) {
    const Bytes min_bytes = max(kn.bytes, gemm_kernel(kn.m, kn.n, kn.k, kn.dtype, kn.batch).bytes);
    const Phase ph = gemm_phase(kn.m, kn.n, kn.k, kn.batch, kn.dtype, kn.sparse, min_bytes);
    c.compute = ph.compute;
    c.memory = ph.memory;
    c.executed = ph.executed;
    c.hbm_bytes = ph.bytes;
    c.split_k = ph.split_k;
    c.tile_m = ph.tile.m;
    c.tile_n = ph.tile.n;
  } else {
    // Unshaped work: tensor-core kinds at the GEMM ceiling, the rest on the vector pipes.
    const bool tensor = kn.kind == KernelKind::gemm || kn.kind == KernelKind::attention;
    const FlopsPerSecond r = tensor ? tensor_rate(kn.dtype, kn.sparse) * gemm_efficiency(kn.dtype)
                                    : spec_.peak_fp32 * spec_.frequency_scale;
    c.compute = kn.flops / r;
    c.executed = tensor && kn.sparse && kn.dtype != DType::fp32 ? kn.flops / spec_.sparsity_speedup : kn.flops;
    c.hbm_bytes = kn.bytes;
    c.memory = hbm_time(kn.bytes);
  }
  c.total = max(c.compute, c.memory) + c.overhead;
  return c;
}

Seconds GpuDevice::time(const Kernel& k) const { return cost(k).total; }

Joules GpuDevice::dynamic_energy(const Kernel& k) const {
  const GpuCost c = cost(k);
  const bool vector = !(k.kind == KernelKind::gemm || k.kind == KernelKind::attention);
  const DType energy_dtype = vector ? DType::fp32 : k.dtype;
  OpEnergy e = spec_.energy;
  const double f2 = dvfs_energy_factor(spec_.frequency_scale);
  return c.executed * e.per_flop(energy_dtype) * f2 + c.hbm_bytes * e.memory;
}

}  // namespace hcsim
