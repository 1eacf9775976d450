#include "models/compute/cim_reference.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/error.hpp"

namespace hcsim {

namespace {

// Symmetric per-tensor quantisation to `bits`: integer codes and the scale.
Eigen::MatrixXd quantise(const Eigen::MatrixXd& v, int bits, double& scale) {
  const double qmax = std::ldexp(1.0, bits - 1) - 1.0;
  const double amax = v.cwiseAbs().maxCoeff();
  scale = amax > 0 ? amax / qmax : 1.0;
  return (v / scale).array().round().matrix();
}

}  // namespace

CimGemvRun run_cim_gemv(const Eigen::MatrixXd& w, const Eigen::VectorXd& x, const CimSpec& s) {
  HCSIM_ASSERT(w.rows() == x.size() && s.rows > 0 && s.cols > 0, "bad CIM GEMV");
  const auto k = static_cast<std::int64_t>(w.rows()), n = static_cast<std::int64_t>(w.cols());
  double sw = 1, sx = 1;
  const Eigen::MatrixXd wq = quantise(w, s.weight_bits, sw);
  const Eigen::VectorXd xq = quantise(x, s.dac_bits, sx);
  const double qw = std::ldexp(1.0, s.weight_bits - 1) - 1.0, qx = std::ldexp(1.0, s.dac_bits - 1) - 1.0;
  const double codes = std::ldexp(1.0, s.adc_bits - 1) - 1.0;
  CimGemvRun run;
  run.y = Eigen::VectorXd::Zero(n);
  for (std::int64_t r0 = 0; r0 < k; r0 += s.rows) {
    const std::int64_t r = std::min(s.rows, k - r0);
    const double full_scale = std::sqrt(static_cast<double>(s.rows)) * qw * qx;
    const double lsb = full_scale / codes;
    for (std::int64_t c0 = 0; c0 < n; c0 += s.cols) {
      const std::int64_t c = std::min(s.cols, n - c0);
      run.counts.dac_conversions += r;  // this tile's rows are driven
      // Column currents: exact integer dot products of the codes.
      const Eigen::VectorXd current = wq.block(r0, c0, r, c).transpose() * xq.segment(r0, r);
      run.counts.macs += r * c;
      for (std::int64_t j = 0; j < c; ++j) {
        const double code = std::clamp(std::round(current(j) / lsb), -codes, codes);
        run.y(c0 + j) += code * lsb;
        ++run.counts.adc_conversions;
      }
    }
  }
  run.y *= sw * sx;
  const std::int64_t row_tiles = (k + s.rows - 1) / s.rows, col_tiles = (n + s.cols - 1) / s.cols;
  run.counts.tiles_needed = row_tiles * col_tiles;
  run.counts.rounds = (run.counts.tiles_needed + s.tiles - 1) / s.tiles;
  return run;
}

}  // namespace hcsim
