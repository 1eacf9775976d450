#include "models/compute/pim_dram.hpp"

#include "models/compute/builtin.hpp"

namespace hcsim {

const ParamTable& pim_params() {
  static const ParamTable table = {
      {.name = "peak", .kind = ParamKind::quantity, .dim = Dim::flop_rate, .min = 0, .min_exclusive = true,
       .help = "aggregate rate of the bank-level units"},
      {.name = "internal_bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .min = 0,
       .min_exclusive = true, .help = "aggregate bank bandwidth seen by the in-memory units"},
      {.name = "external_bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .min = 0,
       .min_exclusive = true, .help = "bandwidth at the stack's pins (host view)"},
      {.name = "memory_efficiency", .kind = ParamKind::number, .def = 0.85, .min = 0, .max = 1, .min_exclusive = true,
       .help = "achieved fraction of internal bandwidth"},
      {.name = "memory_capacity", .kind = ParamKind::quantity, .dim = Dim::data, .min = 0, .min_exclusive = true,
       .help = "DRAM capacity"},
      {.name = "gemv_max_rows", .kind = ParamKind::integer, .def = 8, .min = 1, .max = 4096,
       .help = "largest activation count m of a GEMM the units run (as m GEMVs sharing one weight read)"},
      {.name = "launch_overhead", .kind = ParamKind::quantity, .dim = Dim::time, .def = "2 us", .min = 0,
       .help = "per kernel: host issues the PIM command sequence"},
      {.name = "energy_per_flop", .kind = ParamKind::quantity, .dim = Dim::energy_per_flop, .min = 0,
       .help = "energy per flop of a bank-level unit"},
      {.name = "energy_per_byte", .kind = ParamKind::quantity, .dim = Dim::energy_per_byte, .min = 0,
       .help = "bank access energy per byte, without the off-stack I/O"},
      {.name = "idle_power", .kind = ParamKind::quantity, .dim = Dim::power, .min = 0, .help = "idle power"},
      {.name = "tdp", .kind = ParamKind::quantity, .dim = Dim::power, .min = 0, .min_exclusive = true,
       .help = "maximum power"},
  };
  return table;
}

PimSpec pim_spec_from(const Params& p) {
  PimSpec s;
  s.peak = p.get<FlopsPerSecond>("peak");
  s.internal_bandwidth = p.get<BytesPerSecond>("internal_bandwidth");
  s.external_bandwidth = p.get<BytesPerSecond>("external_bandwidth");
  s.memory_efficiency = p.number("memory_efficiency");
  s.memory_capacity = p.get<Bytes>("memory_capacity");
  s.gemv_max_rows = p.integer("gemv_max_rows");
  s.launch_overhead = p.get<Seconds>("launch_overhead");
  s.energy_per_flop = p.get<JoulesPerFlop>("energy_per_flop");
  s.energy_per_byte = p.get<JoulesPerByte>("energy_per_byte");
  s.idle_power = p.get<Watts>("idle_power");
  s.tdp = p.get<Watts>("tdp");
  return s;
}

PimDramDevice::PimDramDevice(PimSpec spec) : spec_(std::move(spec)) {
  HCSIM_ASSERT(spec_.peak.value() > 0 && spec_.internal_bandwidth.value() > 0, "bad PIM spec");
}

bool PimDramDevice::supports(const Kernel& k) const {
  if (k.kind == KernelKind::attention) return false;
  if (k.kind == KernelKind::gemm) return std::min(k.m, k.n) <= spec_.gemv_max_rows;
  return true;
}

Bytes PimDramDevice::traffic(const Kernel& k) const {
  if (k.kind == KernelKind::gemm && k.m > 0 && k.n > 0 && k.k > 0)
    return max(k.bytes, gemm_kernel(k.m, k.n, k.k, k.dtype, k.batch).bytes);
  return k.bytes;
}

Seconds PimDramDevice::time(const Kernel& k) const {
  const Flops f = k.kind == KernelKind::gemm && k.flops.value() == 0 ? gemm_kernel(k.m, k.n, k.k, k.dtype, k.batch).flops
                                                                     : k.flops;
  return max(f / spec_.peak, traffic(k) / (spec_.internal_bandwidth * spec_.memory_efficiency)) +
         spec_.launch_overhead * static_cast<double>(k.launches);
}

Joules PimDramDevice::dynamic_energy(const Kernel& k) const {
  return k.flops * spec_.energy_per_flop + traffic(k) * spec_.energy_per_byte;
}

void register_pim_dram(Registry<ComputeDevice>& devices, PresetLibrary& presets) {
  devices.add({"pim-dram",
               "digital processing-in-DRAM: bank-level SIMD units at internal bandwidth; GEMV and elementwise only",
               pim_params(),
               [](const Params& p) -> std::unique_ptr<ComputeDevice> {
                 return std::make_unique<PimDramDevice>(pim_spec_from(p));
               },
               "Kwon et al., ISSCC 2021 and Lee et al., ISCA 2021 (Samsung HBM-PIM)"});
  presets.add({"samsung-hbm-pim", "pim-dram",
               {{"peak", "1.2 TFLOPS"}, {"internal_bandwidth", "1228.8 GB/s"}, {"external_bandwidth", "307.2 GB/s"},
                {"memory_capacity", "6 GB"}, {"energy_per_flop", "0.75 pJ/flop"}, {"energy_per_byte", "1.2 pJ/bit"},
                {"idle_power", "1 W"}, {"tdp", "15 W"}},
               "Samsung HBM-PIM (Aquabolt-XL, ISSCC 2021) via Maximum PC / Memory Guy / ExtremeTech [S]: FP16 "
               "units at 300 MHz, 1.2 TFLOPS per stack, '4x the processing bandwidth of an off-chip solution'. "
               "external_bandwidth = 1024 bits x 2.4 Gb/s / 8 = 307.2 GB/s [D, HBM2 Aquabolt pin rate], "
               "internal_bandwidth = 4 x external [D from S]. energy_per_flop: Horowitz 45 nm fp16 mul + add "
               "(1.1 + 0.4 pJ per 2 flops) [S]. energy_per_byte: 0.3 x HBM2's 3.9 pJ/bit, Samsung's '70% lower "
               "energy' applied per bit [U]. memory_capacity 6 GB, idle_power and tdp [U].",
               "Samsung HBM-PIM stack (Aquabolt-XL)"});
}

}  // namespace hcsim
