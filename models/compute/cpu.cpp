#include "models/compute/cpu.hpp"

#include <algorithm>

#include "models/compute/builtin.hpp"

namespace hcsim {

const ParamTable& cpu_params() {
  static const ParamTable table = {
      {.name = "cores", .kind = ParamKind::integer, .min = 1, .max = 4096, .help = "physical cores"},
      {.name = "simd_lanes", .kind = ParamKind::integer, .def = 8, .min = 1, .max = 64,
       .help = "fp32 lanes per SIMD register (AVX2: 8, AVX-512: 16)"},
      {.name = "fma_units", .kind = ParamKind::integer, .def = 2, .min = 1, .max = 8, .help = "SIMD FMA pipes per core"},
      {.name = "frequency", .kind = ParamKind::quantity, .dim = Dim::frequency, .min = 0, .min_exclusive = true,
       .help = "sustained all-core clock under SIMD load"},
      {.name = "bf16_speedup", .kind = ParamKind::number, .def = 1.0, .min = 1, .max = 16,
       .help = "bf16/fp16 rate over fp32 (1: converted and computed in fp32)"},
      {.name = "int8_speedup", .kind = ParamKind::number, .def = 1.0, .min = 1, .max = 16, .help = "int8 rate over fp32"},
      {.name = "micro_m", .kind = ParamKind::integer, .def = 24, .min = 1, .max = 256,
       .help = "GEMM micro-kernel rows mr (Eigen AVX float: 3 registers x 8 lanes)"},
      {.name = "micro_n", .kind = ParamKind::integer, .def = 4, .min = 1, .max = 256, .help = "GEMM micro-kernel columns nr"},
      {.name = "gemm_efficiency", .kind = ParamKind::number, .def = 0.8, .min = 0, .max = 1, .min_exclusive = true,
       .help = "large-SGEMM fraction of SIMD peak reached by blocked BLAS kernels (order 0.8-0.9 reported for "
               "BLIS/OpenBLAS; a physical ceiling: loads, packing, loop overhead)"},
      {.name = "memory_capacity", .kind = ParamKind::quantity, .dim = Dim::data, .min = 0, .min_exclusive = true,
       .help = "host DRAM capacity"},
      {.name = "memory_bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .min = 0, .min_exclusive = true,
       .help = "nominal DRAM bandwidth (channels x transfer rate x 8 B)"},
      {.name = "memory_efficiency", .kind = ParamKind::number, .def = 0.7, .min = 0, .max = 1, .min_exclusive = true,
       .help = "achieved fraction of nominal DRAM bandwidth (STREAM triad on servers: typically 0.6-0.8)"},
      {.name = "call_overhead", .kind = ParamKind::quantity, .dim = Dim::time, .def = "1 us", .min = 0,
       .help = "per kernel call: dispatch, packing set-up, thread wake-up"},
      {.name = "idle_power", .kind = ParamKind::quantity, .dim = Dim::power, .min = 0, .help = "package idle power"},
      {.name = "tdp", .kind = ParamKind::quantity, .dim = Dim::power, .min = 0, .min_exclusive = true, .help = "package TDP"},
      {.name = "energy_per_flop", .kind = ParamKind::quantity, .dim = Dim::energy_per_flop,
       .def = nlohmann::json(nullptr), .min = 0, .help = "absent: 0.7 (tdp - idle) / peak_fp32"},
      {.name = "energy_per_byte", .kind = ParamKind::quantity, .dim = Dim::energy_per_byte, .def = "20 pJ/bit",
       .min = 0, .help = "DRAM access energy; Horowitz ISSCC 2014: 20-40 pJ/bit, low end"},
  };
  return table;
}

CpuSpec cpu_spec_from(const Params& p) {
  CpuSpec s;
  s.peak_fp32 = FlopsPerSecond(static_cast<double>(p.integer("cores") * p.integer("fma_units") * p.integer("simd_lanes")) *
                               2.0 * p.number("frequency"));
  s.bf16_speedup = p.number("bf16_speedup");
  s.int8_speedup = p.number("int8_speedup");
  s.mr = p.integer("micro_m");
  s.nr = p.integer("micro_n");
  s.gemm_efficiency = p.number("gemm_efficiency");
  s.memory_capacity = p.get<Bytes>("memory_capacity");
  s.memory_bandwidth = p.get<BytesPerSecond>("memory_bandwidth");
  s.memory_efficiency = p.number("memory_efficiency");
  s.call_overhead = p.get<Seconds>("call_overhead");
  s.idle_power = p.get<Watts>("idle_power");
  s.tdp = p.get<Watts>("tdp");
  s.energy_per_byte = p.get<JoulesPerByte>("energy_per_byte");
  s.energy_per_flop = p.has("energy_per_flop")
                          ? p.get<JoulesPerFlop>("energy_per_flop")
                          : JoulesPerFlop(0.7 * std::max(0.0, (s.tdp - s.idle_power).value()) / s.peak_fp32.value());
  return s;
}

CpuDevice::CpuDevice(CpuSpec spec) : spec_(std::move(spec)) {
  HCSIM_ASSERT(spec_.peak_fp32.value() > 0 && spec_.mr > 0 && spec_.nr > 0, "bad CPU spec");
}

FlopsPerSecond CpuDevice::peak(DType dt, bool) const {
  switch (dt) {
    case DType::bf16: case DType::fp16: return spec_.peak_fp32 * spec_.bf16_speedup;
    case DType::int8: case DType::int4: return spec_.peak_fp32 * spec_.int8_speedup;
    default: return spec_.peak_fp32;
  }
}

Seconds CpuDevice::time(const Kernel& k) const {
  const BytesPerSecond bw = spec_.memory_bandwidth * spec_.memory_efficiency;
  if (k.kind == KernelKind::gemm && k.m > 0 && k.n > 0 && k.k > 0 && k.batch > 0) {
    const Flops padded(2.0 * static_cast<double>(ceil_div(k.m, spec_.mr) * spec_.mr) *
                       static_cast<double>(ceil_div(k.n, spec_.nr) * spec_.nr) * static_cast<double>(k.k) *
                       static_cast<double>(k.batch));
    const Bytes bytes = max(k.bytes, gemm_kernel(k.m, k.n, k.k, k.dtype, k.batch).bytes);
    return max(padded / (peak(k.dtype) * spec_.gemm_efficiency), bytes / bw) + spec_.call_overhead;
  }
  return max(k.flops / peak(k.dtype), k.bytes / bw) + spec_.call_overhead;
}

Joules CpuDevice::dynamic_energy(const Kernel& k) const {
  Bytes bytes = k.bytes;
  if (k.kind == KernelKind::gemm && k.m > 0 && k.n > 0 && k.k > 0)
    bytes = max(k.bytes, gemm_kernel(k.m, k.n, k.k, k.dtype, k.batch).bytes);
  const Flops flops = k.flops.value() > 0 || k.kind != KernelKind::gemm ? k.flops
                                                                        : gemm_kernel(k.m, k.n, k.k, k.dtype, k.batch).flops;
  return flops * spec_.energy_per_flop + bytes * spec_.energy_per_byte;
}

void register_cpu(Registry<ComputeDevice>& devices, PresetLibrary& presets) {
  devices.add({"cpu", "CPU host: SIMD FMA roofline with micro-kernel quantisation, DRAM bandwidth", cpu_params(),
               [](const Params& p) -> std::unique_ptr<ComputeDevice> {
                 return std::make_unique<CpuDevice>(cpu_spec_from(p));
               },
               "Goto and van de Geijn, TOMS 2008 (blocked GEMM); Williams et al., Roofline, CACM 2009"});
  presets.add({"amd-epyc-7543", "cpu",
               {{"cores", 32}, {"simd_lanes", 8}, {"fma_units", 2}, {"frequency", "2.8 GHz"},
                {"memory_capacity", "256 GB"}, {"memory_bandwidth", "204.8 GB/s"}, {"idle_power", "60 W"},
                {"tdp", "225 W"}},
               "Host CPU of the Jean Zay A100 nodes (BLOOM) [P/S]. AMD product figures [U: not in the collected "
               "reference]: 32 Zen 3 cores, 2.8 GHz base, AVX2 with two 256-bit FMA pipes, 8 channels DDR4-3200 -> "
               "8 x 3.2 GT/s x 8 B = 204.8 GB/s [D], 225 W. memory_capacity: half of the node's 512 GB [D, two "
               "sockets assumed, U]. idle_power [U].",
               "AMD EPYC 7543 (one socket)"});
}

}  // namespace hcsim
