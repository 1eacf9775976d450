#pragma once
// Bounded Levenberg-Marquardt least squares (Levenberg 1944; Marquardt 1963; the damped
// Gauss-Newton step of Nocedal and Wright, Numerical Optimization, §10.3):
//   minimise  S(x) = Σ r_i(x)^2  over  lo <= x <= hi
//   step      (JᵀJ + λ·diag(JᵀJ)) δ = -Jᵀr,  x <- clamp(x + δ)
// J by forward differences (a simulator gives no derivatives); λ shrinks after a step that
// lowers S and grows after one that does not. A parameter at a bound whose gradient points
// out of the box is held there (projected step).
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Dense>

namespace hcsim::calibrate {

struct FitOptions {
  int max_iterations = 20;
  double relative_step = 0.02;   // finite-difference step, as a fraction of the bounds' range
  double tolerance = 1e-4;       // stop when S falls by less than this fraction
  double initial_lambda = 1e-2;
  int jobs = 1;                  // Jacobian columns evaluated concurrently (the residual must be thread safe)
};

struct FitResult {
  Eigen::VectorXd x;
  Eigen::VectorXd residuals;
  Eigen::MatrixXd jacobian;  // at x
  double cost = 0;           // Σ r²
  int iterations = 0;
  int evaluations = 0;
  std::string stop_reason;
};

using ResidualFn = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;
// Called after each accepted step with (iteration, x, cost).
using ProgressFn = std::function<void(int, const Eigen::VectorXd&, double)>;

FitResult levenberg_marquardt(const ResidualFn& residuals, Eigen::VectorXd x0, const Eigen::VectorXd& lo,
                              const Eigen::VectorXd& hi, const FitOptions& opt = {},
                              const ProgressFn& progress = {});

}  // namespace hcsim::calibrate
