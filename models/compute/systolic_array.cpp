#include "models/compute/systolic_array.hpp"

#include <algorithm>
#include <cmath>

namespace hcsim {

namespace {
ParamSpec positive_int(std::string name, std::optional<nlohmann::json> def, std::string help) {
  return {.name = std::move(name), .kind = ParamKind::integer, .def = std::move(def), .min = 1, .max = 1 << 20,
          .help = std::move(help)};
}
ParamSpec positive_q(std::string name, Dim dim, std::optional<nlohmann::json> def, std::string help) {
  return {.name = std::move(name), .kind = ParamKind::quantity, .dim = dim, .def = std::move(def), .min = 0,
          .min_exclusive = true, .help = std::move(help)};
}
}  // namespace

const ParamTable& systolic_params() {
  static const ParamTable table = {
      positive_int("array_rows", 128, "R: PE rows of one systolic array (MXU)"),
      positive_int("array_cols", 128, "C: PE columns of one systolic array"),
      positive_int("arrays_per_core", 1, "systolic arrays (MXUs) per core"),
      positive_int("cores", 1, "cores per chip; GEMM folds are dealt to all arrays of all cores"),
      positive_q("clock", Dim::frequency, std::nullopt, "array clock"),
      {.name = "dataflow", .kind = ParamKind::choice, .def = "ws", .choices = {"os", "ws", "is"},
       .help = "output, weight or input stationary (SCALE-Sim mapping)"},
      {.name = "int8_speedup", .kind = ParamKind::number, .def = 1.0, .min = 1, .max = 16,
       .help = "int8 MACs per bf16 MAC slot (TPU v4: 1, 275 TF = 275 TOPS)"},
      positive_int("fp32_passes", 3, "bf16 passes to emulate an fp32 GEMM (XLA Precision.HIGH: bf16_3x)"),
      positive_q("vector_rate", Dim::flop_rate, std::nullopt, "vector-unit rate for non-GEMM work (softmax, norms)"),
      {.name = "sram_capacity", .kind = ParamKind::quantity, .dim = Dim::data, .min = 0,
       .help = "on-chip SRAM usable to hold GEMM operand blocks"},
      positive_q("memory_capacity", Dim::data, std::nullopt, "HBM capacity"),
      positive_q("memory_bandwidth", Dim::bandwidth, std::nullopt, "nominal HBM bandwidth"),
      {.name = "memory_efficiency", .kind = ParamKind::number, .def = 0.85, .min = 0, .max = 1, .min_exclusive = true,
       .help = "achieved fraction of HBM bandwidth for streaming (as the GPU default)"},
      {.name = "launch_overhead", .kind = ParamKind::quantity, .dim = Dim::time, .def = "1 us", .min = 0,
       .help = "per compiled op dispatch"},
      {.name = "idle_power", .kind = ParamKind::quantity, .dim = Dim::power, .min = 0, .help = "chip power when idle"},
      positive_q("tdp", Dim::power, std::nullopt, "chip power limit"),
      {.name = "energy_per_flop", .kind = ParamKind::quantity, .dim = Dim::energy_per_flop,
       .def = nlohmann::json(nullptr), .min = 0,
       .help = "one bf16 flop on the arrays; absent: 0.7 (tdp - idle) / peak_bf16 (see gpu energy rule)"},
      {.name = "energy_per_byte", .kind = ParamKind::quantity, .dim = Dim::energy_per_byte, .def = "3.9 pJ/bit",
       .min = 0, .help = "HBM access energy; default HBM2 ~3.9 pJ/bit (O'Connor et al., MICRO 2017)"},
  };
  return table;
}

SystolicSpec systolic_spec_from(const Params& p) {
  SystolicSpec s;
  s.rows = p.integer("array_rows");
  s.cols = p.integer("array_cols");
  s.arrays_per_core = p.integer("arrays_per_core");
  s.cores = p.integer("cores");
  s.clock = p.get<Hertz>("clock");
  HCSIM_ASSERT(parse_dataflow(p.string("dataflow"), s.dataflow), "dataflow choice not parsed");
  s.int8_speedup = p.number("int8_speedup");
  s.fp32_passes = p.integer("fp32_passes");
  s.vector_rate = p.get<FlopsPerSecond>("vector_rate");
  s.sram_capacity = p.get<Bytes>("sram_capacity");
  s.memory_capacity = p.get<Bytes>("memory_capacity");
  s.memory_bandwidth = p.get<BytesPerSecond>("memory_bandwidth");
  s.memory_efficiency = p.number("memory_efficiency");
  s.launch_overhead = p.get<Seconds>("launch_overhead");
  s.idle_power = p.get<Watts>("idle_power");
  s.tdp = p.get<Watts>("tdp");
  s.energy_per_byte = p.get<JoulesPerByte>("energy_per_byte");
  const double peak = 2.0 * static_cast<double>(s.arrays() * s.rows * s.cols) * s.clock.value();
  s.energy_per_flop = p.has("energy_per_flop")
                          ? p.get<JoulesPerFlop>("energy_per_flop")
                          : JoulesPerFlop(0.7 * std::max(0.0, (s.tdp - s.idle_power).value()) / peak);
  return s;
}

SystolicDevice::SystolicDevice(SystolicSpec spec) : spec_(std::move(spec)) {
  HCSIM_ASSERT(spec_.rows > 0 && spec_.cols > 0 && spec_.arrays() > 0 && spec_.clock.value() > 0, "bad array");
}

double SystolicDevice::passes(DType dt) const {
  switch (dt) {
    case DType::fp32: case DType::tf32: return static_cast<double>(spec_.fp32_passes);
    case DType::int8: case DType::int4: return 1.0 / spec_.int8_speedup;
    default: return 1.0;
  }
}

FlopsPerSecond SystolicDevice::peak(DType dt, bool) const {
  return FlopsPerSecond(2.0 * static_cast<double>(spec_.arrays() * spec_.rows * spec_.cols) * spec_.clock.value() /
                        passes(dt));
}

bool SystolicDevice::supports(const Kernel& k) const { return k.dtype != DType::fp8; }

std::int64_t SystolicDevice::gemm_cycles(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) const {
  const SystolicCycles c = systolic_cycles(spec_.dataflow, m, n, k, spec_.rows, spec_.cols);
  return ceil_div(c.folds * batch, spec_.arrays()) * c.cycles_per_fold;
}

Bytes SystolicDevice::gemm_traffic(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, DType dt) const {
  const double e = dtype_bytes(dt), M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  const double once = e * (M * K + K * N + M * N);
  if (once <= spec_.sram_capacity.value()) return Bytes(static_cast<double>(batch) * once);
  const auto b = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::sqrt(spec_.sram_capacity.value() / (3.0 * e))));
  const double blocked = e * (M * K * static_cast<double>(ceil_div(n, b)) + K * N * static_cast<double>(ceil_div(m, b)) + M * N);
  return Bytes(static_cast<double>(batch) * blocked);
}

SystolicCost SystolicDevice::attention_cost(const Kernel& kn) const {
  const std::int64_t b = kn.batch, sq = kn.m, skv = kn.n, d = kn.k;
  const double el = dtype_bytes(kn.dtype);
  const double S = static_cast<double>(b) * static_cast<double>(sq) * static_cast<double>(skv);
  SystolicCost c;
  c.cycles = gemm_cycles(sq, skv, d, b) + gemm_cycles(sq, d, skv, b);
  const Seconds mxu = cycles_time(static_cast<double>(c.cycles) * passes(kn.dtype));
  const Seconds vpu = Flops(5.0 * S) / spec_.vector_rate;
  c.executed = Flops(4.0 * S * static_cast<double>(d));
  if (kn.fused) {
    c.compute = max(mxu, vpu);  // softmax overlaps the array work inside one fused op
    c.hbm_bytes = Bytes(static_cast<double>(b) * el * 2.0 * static_cast<double>((sq + skv) * d));
    c.overhead = spec_.launch_overhead;
  } else {
    c.compute = mxu + vpu;
    c.hbm_bytes = gemm_traffic(sq, skv, d, b, kn.dtype) + gemm_traffic(sq, d, skv, b, kn.dtype) + Bytes(2.0 * S * el);
    c.overhead = spec_.launch_overhead * 3.0;
  }
  c.memory = c.hbm_bytes / (spec_.memory_bandwidth * spec_.memory_efficiency);
  c.total = max(c.compute, c.memory) + c.overhead;
  return c;
}

SystolicCost SystolicDevice::cost(const Kernel& kn) const {
  const bool shaped = kn.m > 0 && kn.n > 0 && kn.k > 0 && kn.batch > 0;
  if (kn.kind == KernelKind::attention && shaped) return attention_cost(kn);
  SystolicCost c;
  c.overhead = spec_.launch_overhead * static_cast<double>(kn.launches);
  if (kn.kind == KernelKind::gemm && shaped) {
    c.cycles = gemm_cycles(kn.m, kn.n, kn.k, kn.batch);
    c.compute = cycles_time(static_cast<double>(c.cycles) * passes(kn.dtype));
    c.executed = gemm_kernel(kn.m, kn.n, kn.k, kn.dtype, kn.batch).flops;
    c.hbm_bytes = max(kn.bytes, gemm_traffic(kn.m, kn.n, kn.k, kn.batch, kn.dtype));
  } else {
    const bool array_work = kn.kind == KernelKind::gemm || kn.kind == KernelKind::attention;
    c.compute = kn.flops / (array_work ? peak(kn.dtype) : spec_.vector_rate);
    c.executed = kn.flops;
    c.hbm_bytes = kn.bytes;
  }
  c.memory = c.hbm_bytes / (spec_.memory_bandwidth * spec_.memory_efficiency);
  c.total = max(c.compute, c.memory) + c.overhead;
  return c;
}

Joules SystolicDevice::dynamic_energy(const Kernel& k) const {
  const SystolicCost c = cost(k);
  return c.executed * spec_.energy_per_flop * passes(k.dtype) + c.hbm_bytes * spec_.energy_per_byte;
}

}  // namespace hcsim
