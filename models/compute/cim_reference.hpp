#pragma once
// Executed reference for the analog CIM model: a GEMV y = Wᵀx run through the same
// datapath the model counts, on real numbers. Weights are quantised to weight_bits and
// inputs to dac_bits (symmetric, per tensor); each crossbar tile of rows×cols forms exact
// integer column sums (the ideal analog currents); a mid-tread ADC of adc_bits digitises
// each column sum, and row tiles are added digitally. The ADC full scale is
// √rows · q_w · q_x, the spread of a sum of `rows` independent signed products (larger
// sums clip): the usual choice when the worst case rows·q_w·q_x would waste most codes.
// Returns the result and the event counts that cim_energy() prices.

#include <Eigen/Dense>

#include "models/compute/cim_analog.hpp"

namespace hcsim {

struct CimGemvRun {
  Eigen::VectorXd y;  // n outputs, dequantised
  CimCounts counts;
};

// w: k×n weights, x: k inputs.
CimGemvRun run_cim_gemv(const Eigen::MatrixXd& w, const Eigen::VectorXd& x, const CimSpec& spec);

}  // namespace hcsim
