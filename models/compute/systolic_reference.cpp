#include "models/compute/systolic_reference.hpp"

#include <algorithm>
#include <vector>

#include "sim/core/error.hpp"

namespace hcsim {

namespace {

// A register between PEs: a value with the stream index it belongs to.
struct Reg {
  double v = 0;
  bool valid = false;
  bool real = false;  // carries a real (non-padding) operand
};

using Grid = std::vector<std::vector<Reg>>;

Grid grid(int rows, int cols) { return Grid(static_cast<std::size_t>(rows), std::vector<Reg>(static_cast<std::size_t>(cols))); }

struct Fold {
  Eigen::MatrixXd out;
  std::int64_t cycles = 0;
  std::int64_t macs = 0;
};

// Stationary tile w (r×c) in an R×C array; stream x (T×r), row t entering array row i at
// cycle t + i. Returns out (T×c) = x·w.
Fold stationary_fold(const Eigen::MatrixXd& w_tile, const Eigen::MatrixXd& x, int R, int C) {
  const int r = static_cast<int>(w_tile.rows()), c = static_cast<int>(w_tile.cols());
  const int T = static_cast<int>(x.rows());
  Fold f;
  f.out = Eigen::MatrixXd::Zero(T, c);
  // Load: one row enters at the top each cycle and everything below shifts down.
  Eigen::MatrixXd w = Eigen::MatrixXd::Zero(R, C);
  for (int s = 0; s < R; ++s, ++f.cycles) {
    for (int i = R - 1; i > 0; --i) w.row(i) = w.row(i - 1);
    const int src = R - 1 - s;
    w.row(0).setZero();
    if (src < r) w.row(0).head(c) = w_tile.row(src);
  }
  Grid a = grid(R, C), p = grid(R, C);
  std::vector<int> t_of(static_cast<std::size_t>(C), 0);
  std::int64_t emitted = 0;
  for (int cyc = 0; emitted < static_cast<std::int64_t>(T) * C; ++cyc, ++f.cycles) {
    Grid na = grid(R, C), np = grid(R, C);
    for (int i = 0; i < R; ++i) {
      for (int j = 0; j < C; ++j) {
        if (j == 0) {
          const int t = cyc - i;
          if (t >= 0 && t < T) na[i][0] = {i < r ? x(t, i) : 0.0, true, i < r};
        } else {
          na[i][j] = a[i][j - 1];
        }
        const Reg in = i == 0 ? Reg{0.0, na[i][j].valid, false} : p[i - 1][j];
        if (!na[i][j].valid) continue;
        HCSIM_ASSERT(in.valid, "partial sum and operand out of step");
        np[i][j] = {in.v + na[i][j].v * w(i, j), true, false};
        if (na[i][j].real && i < r && j < c) ++f.macs;
      }
    }
    // The bottom row's partial sums leave the array: output (t, j) with t = cyc - (R-1) - j.
    for (int j = 0; j < C; ++j) {
      if (!np[R - 1][j].valid) continue;
      const int t = cyc - (R - 1) - j;
      HCSIM_ASSERT(t >= 0 && t < T && t == t_of[static_cast<std::size_t>(j)], "output out of order");
      ++t_of[static_cast<std::size_t>(j)];
      if (j < c) f.out(t, j) = np[R - 1][j].v;
      ++emitted;
    }
    a.swap(na);
    p.swap(np);
  }
  return f;
}

// Output-stationary tile: a (r×T) enters the left edge, b (T×c) the top edge.
Fold output_stationary_fold(const Eigen::MatrixXd& at, const Eigen::MatrixXd& bt, int R, int C) {
  const int r = static_cast<int>(at.rows()), c = static_cast<int>(bt.cols()), T = static_cast<int>(at.cols());
  Fold f;
  Eigen::MatrixXd acc = Eigen::MatrixXd::Zero(R, C);
  Eigen::MatrixXi done = Eigen::MatrixXi::Zero(R, C);
  Grid a = grid(R, C), b = grid(R, C);
  for (int cyc = 0; done(R - 1, C - 1) < T; ++cyc, ++f.cycles) {
    Grid na = grid(R, C), nb = grid(R, C);
    for (int i = 0; i < R; ++i) {
      for (int j = 0; j < C; ++j) {
        if (j == 0) {
          const int t = cyc - i;
          if (t >= 0 && t < T) na[i][0] = {i < r ? at(i, t) : 0.0, true, i < r};
        } else {
          na[i][j] = a[i][j - 1];
        }
        if (i == 0) {
          const int t = cyc - j;
          if (t >= 0 && t < T) nb[0][j] = {j < c ? bt(t, j) : 0.0, true, j < c};
        } else {
          nb[i][j] = b[i - 1][j];
        }
        HCSIM_ASSERT(na[i][j].valid == nb[i][j].valid, "operands out of step");
        if (!na[i][j].valid) continue;
        acc(i, j) += na[i][j].v * nb[i][j].v;
        ++done(i, j);
        if (na[i][j].real && nb[i][j].real) ++f.macs;
      }
    }
    a.swap(na);
    b.swap(nb);
  }
  // Drain: the accumulators shift down one row a cycle and leave through the bottom edge.
  f.out = Eigen::MatrixXd::Zero(r, c);
  for (int s = 0; s < R; ++s, ++f.cycles) {
    const int row = R - 1 - s;
    if (row < r) f.out.row(row) = acc.row(R - 1).head(c);
    for (int i = R - 1; i > 0; --i) acc.row(i) = acc.row(i - 1);
    acc.row(0).setZero();
  }
  return f;
}

}  // namespace

SystolicRun run_systolic(Dataflow df, const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, int R, int C) {
  HCSIM_ASSERT(a.cols() == b.rows() && R > 0 && C > 0, "bad systolic problem");
  const int M = static_cast<int>(a.rows()), K = static_cast<int>(a.cols()), N = static_cast<int>(b.cols());
  SystolicRun run;
  run.product = Eigen::MatrixXd::Zero(M, N);
  auto account = [&](const Fold& f) { run.cycles += f.cycles; run.macs += f.macs; ++run.folds; };
  if (df == Dataflow::os) {
    for (int m0 = 0; m0 < M; m0 += R)
      for (int n0 = 0; n0 < N; n0 += C) {
        const int r = std::min(R, M - m0), c = std::min(C, N - n0);
        Fold f = output_stationary_fold(a.block(m0, 0, r, K), b.block(0, n0, K, c), R, C);
        run.product.block(m0, n0, r, c) = f.out;
        account(f);
      }
  } else if (df == Dataflow::ws) {
    // B stationary (Sr = K, Sc = N); rows of A stream (T = M); K folds accumulate digitally.
    for (int k0 = 0; k0 < K; k0 += R)
      for (int n0 = 0; n0 < N; n0 += C) {
        const int r = std::min(R, K - k0), c = std::min(C, N - n0);
        Fold f = stationary_fold(b.block(k0, n0, r, c), a.block(0, k0, M, r), R, C);
        run.product.block(0, n0, M, c) += f.out;
        account(f);
      }
  } else {
    // A stationary as Aᵀ (Sr = K, Sc = M); columns of B stream (T = N): out = Bᵀ·Aᵀ = (A·B)ᵀ.
    for (int k0 = 0; k0 < K; k0 += R)
      for (int m0 = 0; m0 < M; m0 += C) {
        const int r = std::min(R, K - k0), c = std::min(C, M - m0);
        Fold f = stationary_fold(a.block(m0, k0, c, r).transpose(), b.block(k0, 0, r, N).transpose(), R, C);
        run.product.block(m0, 0, c, N) += f.out.transpose();
        account(f);
      }
  }
  return run;
}

}  // namespace hcsim
