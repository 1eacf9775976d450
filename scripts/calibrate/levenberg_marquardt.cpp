#include "levenberg_marquardt.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <vector>

namespace hcsim::calibrate {
namespace {

Eigen::VectorXd clamp(Eigen::VectorXd x, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  return x.cwiseMax(lo).cwiseMin(hi);
}

// Forward differences, stepping inwards when a parameter sits at its upper bound; up to
// `jobs` columns at once.
Eigen::MatrixXd jacobian(const ResidualFn& f, const Eigen::VectorXd& x, const Eigen::VectorXd& r,
                         const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, const FitOptions& opt, int& evals) {
  Eigen::MatrixXd J(r.size(), x.size());
  auto column = [&](Eigen::Index j) {
    double h = opt.relative_step * (hi[j] - lo[j]);
    if (x[j] + h > hi[j]) h = -h;
    Eigen::VectorXd xp = x;
    xp[j] += h;
    J.col(j) = (f(xp) - r) / h;
  };
  for (Eigen::Index first = 0; first < x.size(); first += std::max(1, opt.jobs)) {
    const Eigen::Index last = std::min<Eigen::Index>(x.size(), first + std::max(1, opt.jobs));
    std::vector<std::future<void>> running;
    for (Eigen::Index j = first; j < last; ++j) running.push_back(std::async(std::launch::async, column, j));
    for (auto& fu : running) fu.get();
  }
  evals += static_cast<int>(x.size());
  return J;
}

}  // namespace

FitResult levenberg_marquardt(const ResidualFn& f, Eigen::VectorXd x0, const Eigen::VectorXd& lo,
                              const Eigen::VectorXd& hi, const FitOptions& opt, const ProgressFn& progress) {
  FitResult res;
  res.x = clamp(std::move(x0), lo, hi);
  res.residuals = f(res.x);
  res.evaluations = 1;
  res.cost = res.residuals.squaredNorm();
  double lambda = opt.initial_lambda;
  res.stop_reason = "iteration limit";
  for (res.iterations = 0; res.iterations < opt.max_iterations; ++res.iterations) {
    res.jacobian = jacobian(f, res.x, res.residuals, lo, hi, opt, res.evaluations);
    const Eigen::MatrixXd& J = res.jacobian;
    const Eigen::VectorXd g = J.transpose() * res.residuals;
    // Projected step: a parameter at a bound whose descent direction leaves the box is fixed.
    std::vector<bool> active(static_cast<std::size_t>(res.x.size()), false);
    for (Eigen::Index j = 0; j < res.x.size(); ++j)
      active[j] = (res.x[j] <= lo[j] && g[j] > 0) || (res.x[j] >= hi[j] && g[j] < 0);
    Eigen::MatrixXd A = J.transpose() * J;
    bool improved = false;
    for (int attempt = 0; attempt < 8 && !improved; ++attempt) {
      Eigen::MatrixXd M = A;
      for (Eigen::Index j = 0; j < M.rows(); ++j) M(j, j) += lambda * std::max(A(j, j), 1e-12);
      Eigen::VectorXd rhs = -g;
      for (Eigen::Index j = 0; j < M.rows(); ++j)
        if (active[j]) {
          M.row(j).setZero();
          M.col(j).setZero();
          M(j, j) = 1;
          rhs[j] = 0;
        }
      const Eigen::VectorXd step = M.ldlt().solve(rhs);
      const Eigen::VectorXd xn = clamp(res.x + step, lo, hi);
      const Eigen::VectorXd rn = f(xn);
      ++res.evaluations;
      const double cn = rn.squaredNorm();
      if (cn < res.cost) {
        const double drop = (res.cost - cn) / std::max(res.cost, 1e-300);
        res.x = xn;
        res.residuals = rn;
        res.cost = cn;
        lambda = std::max(lambda / 3.0, 1e-7);
        improved = true;
        if (progress) progress(res.iterations + 1, res.x, res.cost);
        if (drop < opt.tolerance) {
          res.stop_reason = "converged (cost fell by less than the tolerance)";
          ++res.iterations;
          return res;
        }
      } else {
        lambda *= 4.0;
      }
    }
    if (!improved) {
      res.stop_reason = "converged (no damped step lowers the cost)";
      ++res.iterations;
      return res;
    }
  }
  return res;
}

}  // namespace hcsim::calibrate
