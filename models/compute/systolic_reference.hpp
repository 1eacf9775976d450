#pragma once
// A cycle-level systolic-array simulator, kept as an executed reference for the
// analytical model in systolic_cycles.hpp. It really moves operands through an R×C grid
// of processing elements, one register hop per cycle, tile (fold) by tile, and multiplies
// real matrices; its product is checked against Eigen's and its cycle count against
// 2R + C + T − 2 per fold. Semantics (SCALE-Sim's array, Samajdar et al. ISPASS 2020):
//   ws/is: the stationary tile is shifted in from the top edge, one row per cycle (R
//          cycles); streamed operands enter the left edge skewed by one cycle per row and
//          move right; partial sums enter the top as zero, move down and leave the bottom.
//   os:    rows of A enter the left edge and columns of B the top edge, both skewed; each
//          PE accumulates its output; the accumulators then shift out of the bottom edge
//          (R cycles).
// A fold occupies the whole array; PEs outside the tile hold zeros and still pass data.
// Not for production use: O(cycles·R·C) per fold.

#include <cstdint>

#include <Eigen/Dense>

#include "models/compute/systolic_cycles.hpp"

namespace hcsim {

struct SystolicRun {
  Eigen::MatrixXd product;  // A·B
  std::int64_t cycles = 0;  // summed over folds, as the array executes them one after another
  std::int64_t folds = 0;
  std::int64_t macs = 0;    // multiply-accumulates on real (non-padding) operands
};

SystolicRun run_systolic(Dataflow df, const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, int rows, int cols);

}  // namespace hcsim
