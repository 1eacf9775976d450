#include "models/compute/cim_analog.hpp"

#include <cmath>

#include "models/compute/builtin.hpp"

namespace hcsim {

namespace {
bool shaped_gemm(const Kernel& k) { return k.kind == KernelKind::gemm && k.m > 0 && k.n > 0 && k.k > 0 && k.batch > 0; }
}  // namespace

const ParamTable& cim_params() {
  static const ParamTable table = {
      {.name = "tiles", .kind = ParamKind::integer, .min = 1, .max = 1 << 20, .help = "crossbar tiles"},
      {.name = "tile_rows", .kind = ParamKind::integer, .def = 1024, .min = 1, .max = 1 << 16, .help = "inputs per tile"},
      {.name = "tile_cols", .kind = ParamKind::integer, .def = 1024, .min = 1, .max = 1 << 16, .help = "outputs per tile"},
      {.name = "peak", .kind = ParamKind::quantity, .dim = Dim::flop_rate, .min = 0, .min_exclusive = true,
       .help = "chip MAC rate, 2 ops per MAC (datasheet TOPS)"},
      {.name = "weight_bits", .kind = ParamKind::integer, .def = 8, .min = 1, .max = 16, .help = "weight precision per cell"},
      {.name = "dac_bits", .kind = ParamKind::integer, .def = 8, .min = 1, .max = 16, .help = "input DAC precision"},
      {.name = "adc_bits", .kind = ParamKind::integer, .def = 8, .min = 1, .max = 16, .help = "column ADC precision"},
      {.name = "reprogram_bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .min = 0,
       .min_exclusive = true, .help = "rate at which new weights can be written into the tiles"},
      {.name = "io_bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .min = 0, .min_exclusive = true,
       .help = "activation traffic to and from the host"},
      {.name = "launch_overhead", .kind = ParamKind::quantity, .dim = Dim::time, .def = "10 us", .min = 0,
       .help = "per kernel: host dispatch over the I/O link"},
      {.name = "energy_per_op", .kind = ParamKind::quantity, .dim = Dim::energy_per_flop, .min = 0,
       .help = "analog array energy per op (MAC = 2 ops), converters excluded"},
      {.name = "adc_fom", .kind = ParamKind::quantity, .dim = Dim::energy, .def = "20 fJ", .min = 0,
       .help = "ADC energy per conversion step (Walden FOM; SAR ADCs in Murmann's ADC survey reach 1-50 fJ)"},
      {.name = "dac_energy", .kind = ParamKind::quantity, .dim = Dim::energy, .def = "50 fJ", .min = 0,
       .help = "energy to drive one input onto a tile's rows"},
      {.name = "idle_power", .kind = ParamKind::quantity, .dim = Dim::power, .min = 0, .help = "chip idle power"},
      {.name = "tdp", .kind = ParamKind::quantity, .dim = Dim::power, .min = 0, .min_exclusive = true,
       .help = "chip maximum power"},
  };
  return table;
}

CimSpec cim_spec_from(const Params& p) {
  CimSpec s;
  s.tiles = p.integer("tiles");
  s.rows = p.integer("tile_rows");
  s.cols = p.integer("tile_cols");
  s.peak = p.get<FlopsPerSecond>("peak");
  s.weight_bits = static_cast<int>(p.integer("weight_bits"));
  s.dac_bits = static_cast<int>(p.integer("dac_bits"));
  s.adc_bits = static_cast<int>(p.integer("adc_bits"));
  s.reprogram_bandwidth = p.get<BytesPerSecond>("reprogram_bandwidth");
  s.io_bandwidth = p.get<BytesPerSecond>("io_bandwidth");
  s.launch_overhead = p.get<Seconds>("launch_overhead");
  s.energy_per_op = p.get<JoulesPerFlop>("energy_per_op");
  s.adc_fom = p.get<Joules>("adc_fom");
  s.dac_energy = p.get<Joules>("dac_energy");
  s.idle_power = p.get<Watts>("idle_power");
  s.tdp = p.get<Watts>("tdp");
  return s;
}

CimCounts cim_counts(const CimSpec& s, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  CimCounts c;
  const std::int64_t row_tiles = ceil_div(k, s.rows), col_tiles = ceil_div(n, s.cols);
  c.macs = batch * m * n * k;
  c.adc_conversions = batch * m * n * row_tiles;
  c.dac_conversions = batch * m * k * col_tiles;
  c.tiles_needed = row_tiles * col_tiles * batch;
  c.rounds = ceil_div(c.tiles_needed, s.tiles);
  return c;
}

Joules cim_energy(const CimSpec& s, const CimCounts& c) {
  return Flops(2.0 * static_cast<double>(c.macs)) * s.energy_per_op +
         s.adc_fom * (static_cast<double>(c.adc_conversions) * std::ldexp(1.0, s.adc_bits)) +
         s.dac_energy * static_cast<double>(c.dac_conversions);
}

CimAnalogDevice::CimAnalogDevice(CimSpec spec) : spec_(std::move(spec)) {
  HCSIM_ASSERT(spec_.tiles > 0 && spec_.rows > 0 && spec_.cols > 0 && spec_.peak.value() > 0, "bad CIM spec");
}

Bytes CimAnalogDevice::memory_capacity() const {
  return Bytes(static_cast<double>(spec_.tiles * spec_.rows * spec_.cols) * spec_.weight_bits / 8.0);
}

bool CimAnalogDevice::supports(const Kernel& k) const { return shaped_gemm(k); }

Seconds CimAnalogDevice::time(const Kernel& k) const {
  if (!shaped_gemm(k))
    return max(k.flops / spec_.peak, k.bytes / spec_.io_bandwidth) + spec_.launch_overhead * static_cast<double>(k.launches);
  const CimCounts c = cim_counts(spec_, k.m, k.n, k.k, k.batch);
  const Seconds t_mvm = Flops(2.0 * static_cast<double>(spec_.rows * spec_.cols)) /
                        (spec_.peak / static_cast<double>(spec_.tiles));
  const Seconds compute = t_mvm * static_cast<double>(c.rounds * k.m);
  const double weight_bytes = static_cast<double>(k.k * k.n * k.batch) * spec_.weight_bits / 8.0;
  const Seconds program = c.rounds > 1 ? Bytes(weight_bytes) / spec_.reprogram_bandwidth : Seconds(0);
  const double act_bytes = static_cast<double>(k.batch * k.m) *
                           (static_cast<double>(k.k) * spec_.dac_bits / 8.0 + static_cast<double>(k.n) * spec_.adc_bits / 8.0);
  const Seconds io = Bytes(act_bytes) / spec_.io_bandwidth;
  return max(compute, io) + program + spec_.launch_overhead;
}

Joules CimAnalogDevice::dynamic_energy(const Kernel& k) const {
  if (!shaped_gemm(k)) return k.flops * spec_.energy_per_op;
  return cim_energy(spec_, cim_counts(spec_, k.m, k.n, k.k, k.batch));
}

void register_cim_analog(Registry<ComputeDevice>& devices, PresetLibrary& presets) {
  devices.add({"cim-analog",
               "analog compute-in-memory: weight-stationary crossbar tiles, capacity-bound (reprogramming when "
               "weights do not fit), DAC/ADC precision and energy",
               cim_params(),
               [](const Params& p) -> std::unique_ptr<ComputeDevice> {
                 return std::make_unique<CimAnalogDevice>(cim_spec_from(p));
               },
               "Shafiee et al., ISAAC, ISCA 2016 (crossbar + ADC accounting); Walden 1999 / Murmann ADC survey (ADC "
               "figure of merit); Mythic M1076 product brief"});
  presets.add({"mythic-m1076", "cim-analog",
               {{"tiles", 76}, {"tile_rows", 1024}, {"tile_cols", 1024}, {"peak", "25 TOPS"}, {"weight_bits", 8},
                {"dac_bits", 8}, {"adc_bits", 8}, {"reprogram_bandwidth", "2 GB/s"}, {"io_bandwidth", "2 GB/s"},
                {"energy_per_op", "0.1 pJ/op"}, {"idle_power", "0.5 W"}, {"tdp", "4 W"}},
               "Mythic M1076 AMP via resellers [S]: 76 tiles, 25 TOPS int8, up to 80M weights on chip, PCIe Gen2 x4, "
               "3-4 W. Tile 1024x1024 [D]: 80M / 76 = 1.05M = 1024^2 cells. io and reprogram bandwidth: PCIe Gen2 x4 "
               "= 4 lanes x 5 GT/s x 8b/10b = 2 GB/s [D], an upper bound (flash cell programming is slower [U]). "
               "energy_per_op 0.1 pJ/op [D]: 3-4 W at 25 TOPS is 0.12-0.16 pJ/op all-in, less converters and idle. "
               "idle_power [U].",
               "Mythic M1076 analog matrix processor"});
}

}  // namespace hcsim
