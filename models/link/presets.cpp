// Link presets: named parameter sets for the registered link types, each citing its
// public source (/work/shared/reference/hardware.md §3-6 where possible).
//
// Conventions:
// - bandwidth is per direction and per GPU/port as the edge carries it; NVIDIA's NVLink
//   totals are bidirectional sums and are halved here (nccl issue #1442).
// - Link latencies (alpha) for NVLink, PCIe and InfiniBand are not published as link
//   figures (hardware.md §10). They are ESTIMATES taken from NCCL's own tuning model
//   (src/graph/tuning.cc, hwLat, per-step ring latency with the low-latency LL protocol:
//   NVLink 0.47 us, PCI 1.0 us, NET 2.7 us). A GPU-to-GPU step crosses two edges (GPU ->
//   switch -> GPU), so each edge carries half of NCCL's per-step figure.
// - NVLink efficiency 0.78: NCCL's tuning model caps A100 NVLink bus bandwidth at
//   235 GB/s of 300 GB/s per direction (src/graph/tuning.cc, compCap80); used as the
//   achievable fraction for every NVLink generation (an estimate for the others).
// - Energy per bit of off-package electrical SerDes: 5.5 pJ/bit, the SerDes figure NVIDIA
//   compares NVLink-C2C's 1.3 pJ/bit against (hardware.md §3, [S]); optical scale-out
//   ports: ~15 pJ/bit for pluggable transceivers (hardware.md §6, [S]).
// - static_power is 0 where no public figure exists; the energy model's idle power covers it.

#include "models/link/link.hpp"

namespace hcsim {
namespace {

const char* const kNvlinkLatency =
    "latency ESTIMATE: half of NCCL's NVLink per-step ring latency (0.47 us, LL; NVIDIA/nccl src/graph/tuning.cc); "
    "efficiency: NCCL tuning cap of 235 of 300 GB/s on A100; 5.5 pJ/bit SerDes figure from NVLink-C2C "
    "comparison [S]";
const char* const kPcieNotes =
    "latency ESTIMATE: half of NCCL's PCI per-step ring latency (1.0 us, LL; NVIDIA/nccl src/graph/tuning.cc); "
    "efficiency ESTIMATE 0.8 for TLP/DLLP header and flow-control overhead; 5.5 pJ/bit SerDes [S]";
const char* const kIbNotes =
    "latency ESTIMATE: half of NCCL's network per-step ring latency (2.7 us, LL; NVIDIA/nccl src/graph/tuning.cc) "
    "per host edge; efficiency ESTIMATE 0.92 (RDMA framing, NCCL proxy); ~15 pJ/bit pluggable optics [S]";

void add_link_preset(PresetLibrary& lib, std::string name, std::string type, nlohmann::json values, std::string source,
         std::string help) {
  lib.add({std::move(name), std::move(type), std::move(values), std::move(source), std::move(help)});
}

void add_nvlink(PresetLibrary& lib) {
  auto nv = [](const char* bw, double efficiency = 0.78) {
    return nlohmann::json{{"bandwidth", bw}, {"latency", "0.25 us"}, {"efficiency", efficiency},
                          {"energy_per_byte", "5.5 pJ/bit"}};
  };
  add_link_preset(lib, "nvlink2", "electrical", nv("150 GB/s"),
      std::string("V100: 6 links x 25 GB/s per direction = 300 GB/s total (NVIDIA DGX-1 whitepaper, hardware.md §3 "
                  "[S]); ") + kNvlinkLatency,
      "NVLink 2 (V100), per GPU, per direction");
  add_link_preset(lib, "nvlink3", "electrical", nv("300 GB/s"),
      std::string("A100: 12 links x 50 GB/s = 600 GB/s total, 300 per direction (A100 datasheet, hardware.md §1/§3 "
                  "[S]); ") + kNvlinkLatency +
          "; efficiency 0.78: NCCL's A100 NVLink tuning cap (235 of 300 GB/s), as nccl-tests busbw (~230-240 "
          "GB/s); not fitted: the Megatron-LM SC21 Table 1 calibration does not determine it (docs/validation.md)",
      "NVLink 3 (A100), per GPU, per direction");
  add_link_preset(lib, "nvlink4", "electrical", nv("450 GB/s"),
      std::string("H100: 18 links = 900 GB/s total, 450 per direction (H100 whitepaper; nccl #1442; hardware.md §3 "
                  "[S]); ") + kNvlinkLatency,
      "NVLink 4 (H100/H200), per GPU, per direction");
  add_link_preset(lib, "nvlink4-h800", "electrical", nv("200 GB/s"),
      std::string("H800: NVLink 4 cut to 8 links = 400 GB/s total, 200 per direction (NVIDIA H800 product brief [S]; "
                  "DeepSeek-V3 technical report, arXiv 2412.19437 §3.2.2, measures 160 GB/s of NVLink per GPU, 0.80 "
                  "of it [P]); ") + kNvlinkLatency,
      "NVLink 4 of the H800 (8 links), per GPU, per direction");
  add_link_preset(lib, "nvlink5", "electrical", nv("900 GB/s"),
      std::string("Blackwell: 18 x 100 GB/s = 1.8 TB/s total, 900 per direction (hardware.md §3 [S]); ") +
          kNvlinkLatency,
      "NVLink 5 (B200/GB200), per GPU, per direction");
}

void add_pcie(PresetLibrary& lib) {
  auto pc = [](const char* bw) {
    return nlohmann::json{{"bandwidth", bw}, {"latency", "0.5 us"}, {"efficiency", 0.8},
                          {"energy_per_byte", "5.5 pJ/bit"}};
  };
  add_link_preset(lib, "pcie4", "electrical", pc("32 GB/s"),
      std::string("PCIe Gen4 x16: 32 GB/s per direction (A100 spec 64 GB/s total, hardware.md §5 [S]); ") + kPcieNotes,
      "PCIe 4.0 x16");
  add_link_preset(lib, "pcie5", "electrical", pc("64 GB/s"),
      std::string("PCIe Gen5 x16: ~64 GB/s per direction (H100 spec 128 GB/s total, hardware.md §5 [S]); ") +
          kPcieNotes,
      "PCIe 5.0 x16");
  add_link_preset(lib, "pcie6", "electrical", pc("128 GB/s"),
      std::string("PCIe Gen6 x16: 256 GB/s total, 128 per direction (B200 spec, hardware.md §5 [S]); ") + kPcieNotes,
      "PCIe 6.0 x16");
}

void add_scale_out(PresetLibrary& lib) {
  auto ib = [](const char* bw, double efficiency = 0.92) {
    return nlohmann::json{{"bandwidth", bw}, {"latency", "1.35 us"}, {"efficiency", efficiency},
                          {"energy_per_byte", "15 pJ/bit"}};
  };
  add_link_preset(lib, "ib-hdr", "electrical", ib("200 Gb/s"),
      std::string("InfiniBand HDR 200 Gb/s per port (Megatron SC21, hardware.md §4 [P]); ") + kIbNotes +
          "; efficiency 0.92: 23 GB/s per port, nccl-tests' ~22-24 GB/s per HCA; not fitted: the Megatron-LM "
          "SC21 Table 1 calibration does not determine it (docs/validation.md)",
      "InfiniBand HDR, one 200 Gb/s port");
  add_link_preset(lib, "ib-ndr", "electrical", ib("400 Gb/s"),
      std::string("InfiniBand NDR 400 Gb/s per port (ConnectX-7, hardware.md §4 [S]); ") + kIbNotes,
      "InfiniBand NDR, one 400 Gb/s port");
  add_link_preset(lib, "ib-xdr", "electrical", ib("800 Gb/s"),
      std::string("InfiniBand XDR 800 Gb/s per port (Quantum-X800, hardware.md §4 [S]); ") + kIbNotes,
      "InfiniBand XDR, one 800 Gb/s port");
  add_link_preset(lib, "roce-400g", "electrical",
      {{"bandwidth", "400 Gb/s"}, {"latency", "1.5 us"}, {"efficiency", 0.9}, {"energy_per_byte", "15 pJ/bit"}},
      "RoCE 400 Gb/s per GPU (Llama 3 paper, hardware.md §4 [P]); latency ESTIMATE: NCCL network per-step 2.7 us "
      "split over two host edges, plus Ethernet switching; efficiency ESTIMATE 0.9; ~15 pJ/bit pluggable optics [S]",
      "RDMA over Converged Ethernet, one 400 Gb/s port");
  add_link_preset(lib, "ethernet-40g", "electrical",
      {{"bandwidth", "40 Gb/s"}, {"latency", "10 us"}, {"efficiency", 0.9}, {"energy_per_byte", "10 pJ/bit"}},
      "40 Gb Ethernet (DeepSpeed 1-bit Adam test cluster, hardware.md §4 [P]); latency ESTIMATE for kernel TCP; "
      "efficiency ESTIMATE 0.9 for TCP/IP framing -- that cluster measured only 4.1 Gb/s with iperf, override "
      "efficiency (~0.1) to reproduce it; energy ESTIMATE",
      "40 Gb/s Ethernet with TCP");
}

void add_cxl(PresetLibrary& lib) {
  auto cx = [](const char* bw) {
    return nlohmann::json{{"bandwidth", bw},        {"load_latency", "80 ns"}, {"switch_hop_latency", "70 ns"},
                          {"efficiency", 0.8},      {"energy_per_byte", "5.5 pJ/bit"}};
  };
  const std::string notes =
      "load latency: CXL adds ~70-90 ns over local DRAM (Pond, ASPLOS'23, hardware.md §5 [S]); switch hop ESTIMATE "
      "70 ns (switched CXL adds ~100-200 ns in total, same table); efficiency ESTIMATE 0.8 as PCIe; 5.5 pJ/bit SerDes";
  add_link_preset(lib, "cxl2", "cxl", cx("64 GB/s"),
      "CXL 2.0 on PCIe 5.0 x16, 64 GB/s per direction (hardware.md §5 [S]); " + notes,
      "CXL 2.0 memory link, PCIe 5.0 x16");
  add_link_preset(lib, "cxl3", "cxl", cx("128 GB/s"),
      "CXL 3.0 on PCIe 6.0 x16, 128 GB/s per direction (hardware.md §5 [S]); " + notes,
      "CXL 3.0 memory link, PCIe 6.0 x16");
}

void add_photonic(PresetLibrary& lib) {
  add_link_preset(lib, "photonic-cpo", "photonic",
      {{"lane_rate", "200 Gb/s"}, {"wavelengths", 8}, {"fibres", 1}, {"fixed_latency", "100 ns"},
       {"length", "10 m"}, {"energy_per_byte", "5.6 pJ/bit"}, {"laser_power_per_lane", "0 W"}},
      "NVIDIA Quantum-X/Spectrum-X Photonics co-packaged optics: 1.6 Tb/s per port at ~9 W -> 5.6 pJ/bit [D] "
      "(hardware.md §6 [S]); 8 x 200 Gb/s lanes ASSUMED; fixed latency ESTIMATE 100 ns for 200G PAM4 with RS-FEC; "
      "laser power is inside the per-bit figure (split not published)",
      "co-packaged optics switch port, 1.6 Tb/s per direction, 10 m fibre");
  add_link_preset(lib, "optical-io-teraphy", "photonic",
      {{"lane_rate", "32 Gb/s"}, {"wavelengths", 8}, {"fibres", 8}, {"fixed_latency", "10 ns"},
       {"length", "1 m"}, {"energy_per_byte", "5 pJ/bit"}, {"laser_power_per_lane", "0 W"}},
      "Ayar Labs TeraPHY optical I/O chiplet: 4 Tb/s bidirectional (2 per direction), < 5 pJ/bit, 5 ns per chiplet "
      "+ time of flight, no FEC (vendor, hardware.md §6); 8 fibres x 8 wavelengths x 32 Gb/s split ASSUMED; "
      "laser power inside the per-bit figure (split not published)",
      "in-package optical I/O chiplet pair, 2 Tb/s per direction, 1 m fibre");
}

}  // namespace

void register_builtin_link_presets(PresetLibrary& lib) {
  add_nvlink(lib);
  add_pcie(lib);
  add_scale_out(lib);
  add_cxl(lib);
  add_photonic(lib);
}

}  // namespace hcsim
