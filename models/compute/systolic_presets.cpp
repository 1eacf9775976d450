// Systolic-array (TPU-like) presets. Tags as in the hardware reference: [P] primary,
// [S] secondary, [D] derived (formula given), [U] unverified.
#include "models/compute/builtin.hpp"
#include "models/compute/systolic_array.hpp"

namespace hcsim {

void register_systolic(Registry<ComputeDevice>& devices, PresetLibrary& presets) {
  devices.add({"systolic",
               "TPU-like chip: cores x arrays of RxC systolic arrays (OS/WS/IS, SCALE-Sim folds and fill/drain), "
               "vector unit, on-chip SRAM deciding HBM traffic",
               systolic_params(),
               [](const Params& p) -> std::unique_ptr<ComputeDevice> {
                 return std::make_unique<SystolicDevice>(systolic_spec_from(p));
               },
               "Samajdar et al., SCALE-Sim, ISPASS 2020 (cycles 2R + C + T - 2 per fold); Jouppi et al., ISCA 2017 "
               "and 2023 (TPU organisation); Hong and Kung 1981 (blocked-GEMM traffic)"});

  presets.add({"google-tpu-v4", "systolic",
               {{"array_rows", 128}, {"array_cols", 128}, {"arrays_per_core", 4}, {"cores", 2},
                {"clock", "1050 MHz"}, {"dataflow", "ws"}, {"int8_speedup", 1.0}, {"vector_rate", "4.3 TFLOPS"},
                {"sram_capacity", "128 MiB"}, {"memory_capacity", "32 GiB"}, {"memory_bandwidth", "1200 GB/s"},
                {"idle_power", "90 W"}, {"tdp", "192 W"}},
               "Google Cloud TPU v4 docs [P]: 2 TensorCores x 4 MXUs, 275 TF bf16 = 275 TOPS int8, 32 GiB HBM2 at "
               "1200 GB/s; measured power min/mean/max 90/170/192 W [P] (idle_power = min, tdp = max). MXU 128x128 "
               "[S]. Clock 1050 MHz [U] (blog), consistent with 2*4*16384*2*1.05 GHz = 275.3 TF [D]. sram_capacity: "
               "128 MiB CMEM [U]. vector_rate [U]: 2 cores x 8x128 lanes x 2 flop x 1.05 GHz [D from assumed lane "
               "count]. Weight-stationary dataflow [S: Jouppi et al. ISCA 2017 for the TPU MXU].",
               "Google TPU v4 chip"});

  presets.add({"google-tpu-v3", "systolic",
               {{"array_rows", 128}, {"array_cols", 128}, {"arrays_per_core", 2}, {"cores", 2},
                {"clock", "940 MHz"}, {"dataflow", "ws"}, {"vector_rate", "3.85 TFLOPS"},
                {"sram_capacity", "32 MiB"}, {"memory_capacity", "32 GiB"}, {"memory_bandwidth", "900 GB/s"},
                {"idle_power", "100 W"}, {"tdp", "450 W"}},
               "Patterson et al. 2021 Table 4 via compilation [S]: 123 TF bf16, 450 W TDP. 2 cores x 2 MXUs of "
               "128x128 at 940 MHz [U], consistent with 2*2*16384*2*0.94 GHz = 123.2 TF [D]. 32 GiB HBM at 900 GB/s "
               "[U: Google Cloud docs figure, not in the collected reference]. sram_capacity, vector_rate and "
               "idle_power [U].",
               "Google TPU v3 chip"});

  presets.add({"mlu370-class", "systolic",
               {{"array_rows", 64}, {"array_cols", 64}, {"arrays_per_core", 4}, {"cores", 4},
                {"clock", "732.4 MHz"}, {"dataflow", "ws"}, {"int8_speedup", 256.0 / 96.0}, {"fp32_passes", 3},
                {"vector_rate", "8 TFLOPS"}, {"sram_capacity", "32 MiB"}, {"memory_capacity", "48 GB"},
                {"memory_bandwidth", "614.4 GB/s"}, {"memory_efficiency", 0.8}, {"energy_per_byte", "20 pJ/bit"},
                {"idle_power", "30 W"}, {"tdp", "250 W"}},
               "Cambricon MLU370-X8 launch figures (2022-03-21) as reported by the press [S]: 96 TF bf16/fp16, 32 TF "
               "fp32 (fp32_passes = 96/32 = 3 [D]), 256 TOPS int8 (int8_speedup = 256/96 [D]), 48 GB LPDDR5 at "
               "614.4 GB/s, 250 W, two chips of two dies each (cores = 4). The MLU core is not documented as a "
               "systolic array: 4 arrays of 64x64 per die are an assumption [U], and the clock is derived so that "
               "4*4*64*64*2*f = 96 TF [D]. energy_per_byte: Horowitz DRAM 20-40 pJ/bit, low end [S]. "
               "sram_capacity, vector_rate, memory_efficiency and idle_power [U].",
               "Generic MLU370-X8-class accelerator card (two chips)"});
}

}  // namespace hcsim
