#pragma once
// Analytical cycle count of a GEMM on an R×C systolic array (SCALE-Sim, Samajdar et al.,
// ISPASS 2020; formulas.md §7). A GEMM C[M,N] = A[M,K]·B[K,N] maps onto the array as a
// spatial Sr×Sc problem streamed over T cycles, by dataflow:
//   output stationary (os): Sr = M, Sc = N, T = K  (each PE accumulates one output)
//   weight stationary (ws): Sr = K, Sc = N, T = M  (B held in the PEs, rows of A stream)
//   input stationary  (is): Sr = K, Sc = M, T = N  (A held in the PEs, columns of B stream)
// folds = ⌈Sr/R⌉·⌈Sc/C⌉, and each fold takes 2R + C + T − 2 cycles: R to load the
// stationary operand (os: to drain the outputs), R + C − 2 of skew to fill and drain the
// wavefront, and T of streaming. A fold always occupies the whole array: ragged edges
// are padded with zeros, so a partial fold costs as much as a full one.

#include <cstdint>
#include <string_view>

namespace hcsim {

enum class Dataflow : std::uint8_t { os, ws, is };
std::string_view dataflow_name(Dataflow d);
bool parse_dataflow(std::string_view name, Dataflow& out);

struct SystolicMapping {
  std::int64_t sr = 0, sc = 0, t = 0;
};
SystolicMapping map_gemm(Dataflow df, std::int64_t m, std::int64_t n, std::int64_t k);

struct SystolicCycles {
  std::int64_t folds = 0;
  std::int64_t cycles_per_fold = 0;
  [[nodiscard]] std::int64_t total() const { return folds * cycles_per_fold; }
};
SystolicCycles systolic_cycles(Dataflow df, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t rows,
                               std::int64_t cols);

}  // namespace hcsim
