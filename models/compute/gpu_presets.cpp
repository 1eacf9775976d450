// GPU presets. Numbers are dense (no 2:4 sparsity) vendor figures as collected in the
// project's hardware reference (tags: [P] primary, [S] secondary, [D] derived, [U]
// unverified). Energy per flop is not listed: gpu_spec_from derives it from TDP, idle
// power and the peak rate of each datatype ([D], see gpu.cpp).
#include "models/compute/builtin.hpp"
#include "models/compute/gpu.hpp"

namespace hcsim {

namespace {

using nlohmann::json;

// Shared notes appended to each preset's source.
constexpr const char* kIdleNote =
    " idle_power [U]: typical nvidia-smi idle reading, not a datasheet figure; replace with a measurement.";
constexpr const char* kHbmNote =
    " energy_per_byte: HBM2 ~3.9 pJ/bit (O'Connor et al., 'Fine-Grained DRAM', MICRO 2017) [S], used for all "
    "HBM generations [U].";

void add_gpu_preset(PresetLibrary& lib, std::string name, json values, std::string source, std::string help) {
  lib.add({std::move(name), "gpu", std::move(values), std::move(source) + kIdleNote + kHbmNote, std::move(help)});
}

json a100_common() {
  return {{"peak_fp32", "19.5 TFLOPS"}, {"peak_tf32", "156 TFLOPS"}, {"peak_bf16", "312 TFLOPS"},
          {"peak_int8", "624 TOPS"},    {"sm_count", 108},           {"tile_m", 128},
          {"tile_n", 256},              {"tile_k", 64},              {"gemm_efficiency", 0.77},
          {"memory_efficiency", 0.65},  {"tile_fill", "1.08 us"},    {"launch_overhead", "5 us"},
          {"idle_power", "50 W"},       {"tdp", "400 W"}};
}

json h100_common() {
  return {{"peak_fp32", "66.9 TFLOPS"},
          {"peak_tf32", "494.7 TFLOPS"},
          {"peak_bf16", "989.4 TFLOPS"},
          {"peak_fp8", "1978.9 TFLOPS"},
          {"peak_int8", "1978.9 TOPS"},
          {"sm_count", 132},
          {"tile_m", 128},
          {"tile_n", 256},
          {"tile_k", 64},
          {"gemm_efficiency", 0.67},
          {"gemm_efficiency_fp8", 0.59},
          {"attention_efficiency", 0.49},
          {"flash2_rate", 0.57},
          {"memory_efficiency", 0.89},
          {"tile_fill", "1 us"},
          {"launch_overhead", "5 us"},
          {"idle_power", "70 W"},
          {"tdp", "700 W"}};
}

}  // namespace

void register_gpu(Registry<ComputeDevice>& devices, PresetLibrary& presets) {
  devices.add({"gpu",
               "GPU: per-dtype roofline with tensor cores, tile/wave quantisation, K-loop fill, split-K, fused or "
               "unfused attention, energy per flop and per HBM byte, DVFS clock scale",
               gpu_params(),
               [](const Params& p) -> std::unique_ptr<ComputeDevice> {
                 return std::make_unique<GpuDevice>(gpu_spec_from(p));
               },
               "NVIDIA Matrix Multiplication Background User's Guide (tile and wave quantisation); Williams et al., "
               "Roofline, CACM 2009; Dao 2023 FlashAttention-2; Horowitz ISSCC 2014"});

  json a100_80 = a100_common();
  a100_80["memory_capacity"] = "80 GB";
  a100_80["memory_bandwidth"] = "2039 GB/s";
  add_gpu_preset(presets, "nvidia-a100-80gb-sxm", a100_80,
      "A100 datasheet r4 / Ampere whitepaper via glennklockwood and PC2 wiki [S]: 312 TF bf16, 156 TF tf32, 19.5 TF "
      "fp32, 624 TOPS int8, 80 GB HBM2e at 2039 GB/s, 400 W; 108 SMs (Ampere whitepaper) [S]. Tile 128x256x64: CUTLASS sm80 "
      "default tensor-op threadblock shape [S]. CALIBRATED (bounded Levenberg-Marquardt fit of step time to the "
      "ten Megatron-LM SC21 Table 1 runs on Selene: scripts/calibrate/parameters.json, docs/validation.md), with "
      "the 2021 code's optimizer step, fp32 cross entropy, per-tensor gradient accumulation and blocking pipeline sends modelled: "
      "gemm_efficiency 0.77 (sustained 240 TF in training under the 400 W limit, below the ~268 TF a best-shape "
      "microbenchmark reaches, mamf-finder, stas00/ml-engineering), memory_efficiency 0.65 (fused softmax, "
      "dropout with its RNG, norms, Adam: 1.33 of 2.04 TB/s), tile_fill 1.08 us (inside its 0.5-5 us range: an "
      "HBM round trip and the epilogue). Fixed, not fitted (Table 1 does not determine it): launch_overhead 5 us, "
      "the top of a CUDA launch's 2-5 us.",
      "NVIDIA A100 80GB SXM4");

  json a100_40 = a100_common();
  a100_40["memory_capacity"] = "40 GB";
  a100_40["memory_bandwidth"] = "1555 GB/s";
  add_gpu_preset(presets, "nvidia-a100-40gb-sxm", a100_40,
      "A100 datasheet r4 / Ampere whitepaper via glennklockwood and PC2 wiki [S]: as the 80 GB part but 40 GB HBM2 at "
      "1555 GB/s; 108 SMs [S]. Calibrated efficiencies and overheads as the A100 80GB (same GA100 chip).",
      "NVIDIA A100 40GB SXM4");

  json h100 = h100_common();
  h100["memory_capacity"] = "80 GB";
  h100["memory_bandwidth"] = "3.35 TB/s";
  add_gpu_preset(
      presets, "nvidia-h100-sxm5", h100,
      "H100 whitepaper via glennklockwood [S]: 989.4 TF bf16, 494.7 TF tf32, 66.9 TF fp32, 1978.9 TF fp8 and TOPS "
      "int8, 80 GB HBM3 at 3.35 TB/s, 700 W (Llama 3 paper [P]); 132 SMs (glennklockwood peak-FLOPS page) [S]. "
      "CALIBRATED (bounded Levenberg-Marquardt fit of step time, event mode, to ten DGX-H100 FP8 pre-training rows "
      "of NVIDIA's Megatron-Bridge 25.11/26.02 and NeMo 24.07 performance summaries: scenarios/validation-h100, "
      "scripts/calibrate/parameters-h100.json, docs/validation.md; docs/validation.md gives the errors): "
      "gemm_efficiency_fp8 0.59 (1168 of 1979 TF sustained by fp8 GEMMs at the 700 W limit), attention_efficiency "
      "0.49 (fused bf16 attention, forward and backward, at 0.49 x 0.67 = 0.33 of 989 TF per computed FLOP), "
      "memory_efficiency 0.89 (2.98 of 3.35 TB/s by norms, fp8 amax and casts, RoPE, SwiGLU, the fused cross "
      "entropy, the optimizer step); gemm_efficiency 0.67 (bf16; no bf16 row in the calibration sources): tied in "
      "the fit to the fp8 ceiling at the bf16/fp8 ratio mamf-finder measures on H100 SXM, 794.5 and 1402.6 TF "
      "(stas00/ml-engineering, compute/accelerator/README.md) [S]: 0.59 x 1.133. Fitted with each row's recipe: "
      "Transformer Engine's userbuffers tensor-parallel overlap where the recipe turns it on (else Megatron-Core's "
      "backward overlap), its FP8 scaling recipe (current scaling in Megatron-Bridge 25.11/26.02, delayed in NeMo "
      "24.07), fp32 gradient reduction, the optimizer step's passes, the distributed "
      "optimizer's overlapped parameter all-gather, NCCL's protocol latencies, the fat-tree's destination "
      "routing and the transposed fp8 copies Hopper's GEMMs need modelled. Fixed, not fitted: tile_fill 1 us (one HBM "
      "round trip plus the epilogue, as the A100's "
      "fitted 1.08 us), launch_overhead 5 us (as the A100's: the top of a CUDA launch's 2-5 us). flash2_rate 0.57: "
      "FlashAttention-2's kernels (Ampere's instructions: no wgmma, no TMA) against the Hopper-native fused "
      "attention the fit measured: FlashAttention-3 is 1.5-2.0x faster than FlashAttention-2 on H100 in bf16 "
      "(Shah et al. 2024, arXiv 2407.08608, abstract) [S]: 1/1.75; 0.49 x 0.67 x 0.57 = 0.19 of the bf16 peak, "
      "forward and backward together, where the same paper measures FlashAttention-2's best forward at 35 %.",
      "NVIDIA H100 SXM5 80GB");

  json h200 = h100_common();
  h200["memory_capacity"] = "141 GB";
  h200["memory_bandwidth"] = "4.8 TB/s";
  h200["idle_power"] = "75 W";
  add_gpu_preset(presets, "nvidia-h200-sxm", h200,
      "NVIDIA MLPerf v4.0 blog [P]: 141 GB HBM3e; 4.8 TB/s and 700 W [S]; compute as H100 SXM [S]. Efficiencies and "
      "overheads as the calibrated H100 SXM5 (same GH100 chip; not calibrated on H200 runs).",
      "NVIDIA H200 SXM 141GB");

  json h800 = h100_common();
  h800["memory_capacity"] = "80 GB";
  h800["memory_bandwidth"] = "3.35 TB/s";
  add_gpu_preset(presets, "nvidia-h800-sxm5", h800,
      "NVIDIA H800 SXM5 (the GH100 export part): tensor-core rates, 80 GB HBM3 at 3.35 TB/s and 700 W as the H100 "
      "SXM5 [S: NVIDIA H800 product brief, via TechPowerUp's GPU database]; its NVLink is cut to 8 links, 400 GB/s "
      "total (link preset nvlink4-h800), and its fp64 rate (unused here) reduced. DeepSeek-V3 technical report (arXiv "
      "2412.19437, §3.1) [P]: trained on 2,048 H800, 8 per node on NVLink and NVSwitch, InfiniBand across. "
      "Efficiencies and overheads as the calibrated H100 SXM5 (same GH100 chip and clocks; not calibrated on H800 "
      "runs).",
      "NVIDIA H800 SXM5 80GB");

  add_gpu_preset(
      presets, "nvidia-b200",
      {{"peak_fp32", "80 TFLOPS"},
       {"fp8_tn_only", false},
       {"peak_tf32", "1100 TFLOPS"},
       {"peak_bf16", "2250 TFLOPS"},
       {"peak_fp8", "4500 TFLOPS"},
       {"peak_int8", "4500 TOPS"},
       {"memory_capacity", "192 GB"},
       {"memory_bandwidth", "8 TB/s"},
       {"sm_count", 148},
       {"tile_m", 128},
       {"tile_n", 256},
       {"tile_k", 64},
       {"gemm_efficiency", 0.78},
       {"gemm_efficiency_fp8", 0.48},
       {"attention_efficiency", 0.73},
       {"memory_efficiency", 0.89},
       {"tile_fill", "1 us"},
       {"launch_overhead", "5 us"},
       {"idle_power", "100 W"},
       {"tdp", "1000 W"}},
      "NVIDIA via glennklockwood and Vultr docs [S] (HGX B200): 2250 TF bf16 dense, 1100 TF tf32, 80 TF fp32, 4500 TF "
      "fp8 and TOPS int8, 192 GB HBM3e at 8 TB/s, 1000 W. 148 SMs [U]. fp8_tn_only false: Blackwell's fp8 "
      "GEMMs take any layout (Transformer Engine's is_non_tn_fp8_gemm_supported), so per-tensor fp8 keeps one "
      "copy of each operand. CALIBRATED on four DGX-B200 FP8 rows of "
      "NVIDIA's Megatron-Bridge 25.09/25.11 performance summaries (two distinct layouts: scenarios/validation-b200, "
      "scripts/calibrate/parameters-b200.json, docs/validation.md; event mode): gemm_efficiency_fp8 0.48 (2.2 of "
      "4.5 PF fp8 at the 1000 W limit), attention_efficiency 0.73 (Blackwell's fused attention at 0.73 x 0.78 = "
      "0.57 of 2250 TF), with each row's recipe (userbuffers tensor-parallel overlap on the 405B rows, current "
      "scaling in 25.11, delayed in 25.09) and the distributed optimizer's overlapped parameter all-gather "
      "modelled; two values from two layouts, so weakly determined. Not fitted: memory_efficiency 0.89, the H100 "
      "fit's (with the H100's attention_efficiency instead of its own the fit drives it to the top of its range); "
      "gemm_efficiency 0.78 (bf16), mamf-finder's best shape on B200 SXM, 1745 of 2250 TF "
      "(stas00/ml-engineering, compute/accelerator/README.md) [S]: a ceiling, not the rate sustained in training; "
      "tile_fill 1 us and launch_overhead 5 us as the calibrated H100 [U: assumed to carry over].",
      "NVIDIA B200 (HGX, 1000 W)");

  add_gpu_preset(presets, "nvidia-v100-sxm2",
      {{"peak_fp32", "15.7 TFLOPS"}, {"peak_tf32", "15.7 TFLOPS"}, {"peak_bf16", "125 TFLOPS"},
       {"memory_capacity", "32 GB"}, {"memory_bandwidth", "900 GB/s"}, {"sm_count", 80}, {"tile_m", 128},
       {"tile_n", 256}, {"tile_k", 32}, {"idle_power", "40 W"}, {"tdp", "300 W"}},
      "V100 datasheet via compilation [S]: 125 TF fp16 tensor, 15.7 TF fp32, 32 GB HBM2 at 900 GB/s, 300 W; 80 SMs "
      "[S]. No tf32 or bf16 tensor cores: tf32 runs on the fp32 pipes and bf16 is taken at the fp16 tensor rate; no "
      "int8/fp8 tensor path. Tile 128x256x32: CUTLASS sm70 default [S]. gemm_efficiency: model default [U: no V100 "
      "measurement collected].",
      "NVIDIA V100 SXM2 32GB");
}

}  // namespace hcsim
