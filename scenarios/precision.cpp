#include "precision.hpp"

#include <fmt/format.h>

namespace hcsim {

void check_precision(const Scenario& sc, Diagnostics& diag) {
  const DType dt = sc.workload.precision;
  const Kernel probe = gemm_kernel(4096, 4096, 4096, dt);
  for (const auto& p : sc.pools) {
    if (!p.attach_to.empty()) continue;
    const std::string label = p.preset.empty() ? p.type : p.preset;
    // Without tensor cores for it (fp8 on an A100) the device would run the precision at
    // another datatype's rate with its narrower bytes, faster than it can: refused.
    if (!p.device->supports(probe)) {
      diag.error("/workload/precision", fmt::format("pool \"{}\" ({}) has no {} tensor cores; train in a precision it "
                                                    "has (bf16)", p.name, label, dtype_name(dt)));
      continue;
    }
    // A device whose model runs fp8 no faster than bf16 (a CPU: at its fp32 rate) has no
    // fp8 units; it runs, and the user is told at which rate.
    if (dt != DType::fp8) continue;
    const double fp8 = p.device->peak(DType::fp8).value();
    if (fp8 > p.device->peak(DType::bf16).value()) continue;
    std::string rate = "a rate no faster than its bf16 one";
    for (DType wider : {DType::fp32, DType::bf16, DType::fp16})
      if (p.device->peak(wider).value() == fp8) {
        rate = fmt::format("its {} rate", dtype_name(wider));
        break;
      }
    diag.warn("/workload/precision", fmt::format("pool \"{}\" ({}) has no fp8 units: its fp8 GEMMs run at {} ({})",
                                                 p.name, label, rate, format_quantity(fp8, Dim::flop_rate)));
  }
}

}  // namespace hcsim
