#include "formulas.hpp"

namespace hcsim::formulas {

Flops megatron_flops_full_recompute(double B, double s, double l, double h, double V) {
  return Flops(96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h)));
}

Flops model_flops(double B, double s, double l, double h, double V) {
  return Flops(72.0 * B * l * s * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * h * l)));
}

Flops hardware_flops_selective(double B, double s, double l, double h, double V) {
  return Flops(72.0 * B * l * s * h * h * (1.0 + s / (3.0 * h) + V / (12.0 * h * l)));
}

Bytes activation_bytes_per_layer(double s, double b, double h, double a, double t, bool sp, Recompute r) {
  const double sbh = s * b * h;
  const double scores = 5.0 * a * s / (h * t);
  switch (r) {
    case Recompute::full:
      return Bytes(sp ? 2.0 * sbh / t : 2.0 * sbh);
    case Recompute::selective: return Bytes(sp ? sbh * 34.0 / t : sbh * (10.0 + 24.0 / t));
    case Recompute::none: return Bytes(sp ? sbh * (34.0 / t + scores) : sbh * (10.0 + 24.0 / t + scores));
    case Recompute::op:
      break;  // not a row of Table 2 (layer_activation_bytes costs it op by op)
  }
  return Bytes{};
}

Bytes zero_model_state_bytes(double psi, double nd, int stage, double k) {
  switch (stage) {
    case 0: return Bytes((2.0 + 2.0 + k) * psi);
    case 1: return Bytes(4.0 * psi + k * psi / nd);
    case 2: return Bytes(2.0 * psi + (2.0 + k) * psi / nd);
    default: return Bytes((2.0 + 2.0 + k) * psi / nd);
  }
}

double bubble_fraction(int p, int m, int v) {
  return static_cast<double>(p - 1) / (static_cast<double>(v) * m + p - 1);
}

Seconds ring_allreduce_time(int n, Bytes bytes, BytesPerSecond bandwidth, Seconds alpha) {
  return 2.0 * (n - 1) / n * bytes / bandwidth + 2.0 * (n - 1) * alpha;
}

}  // namespace hcsim::formulas
