#include "models/compute/systolic_cycles.hpp"

#include "sim/core/error.hpp"

namespace hcsim {

std::string_view dataflow_name(Dataflow d) {
  switch (d) {
    case Dataflow::os: return "os";
    case Dataflow::ws: return "ws";
    case Dataflow::is: return "is";
  }
  return "?";
}

bool parse_dataflow(std::string_view name, Dataflow& out) {
  for (Dataflow d : {Dataflow::os, Dataflow::ws, Dataflow::is})
    if (dataflow_name(d) == name) { out = d; return true; }
  return false;
}

SystolicMapping map_gemm(Dataflow df, std::int64_t m, std::int64_t n, std::int64_t k) {
  switch (df) {
    case Dataflow::os: return {m, n, k};
    case Dataflow::ws: return {k, n, m};
    case Dataflow::is: return {k, m, n};
  }
  return {m, n, k};
}

SystolicCycles systolic_cycles(Dataflow df, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t rows,
                               std::int64_t cols) {
  HCSIM_ASSERT(m > 0 && n > 0 && k > 0 && rows > 0 && cols > 0, "systolic GEMM needs positive sizes");
  const SystolicMapping s = map_gemm(df, m, n, k);
  SystolicCycles c;
  c.folds = ((s.sr + rows - 1) / rows) * ((s.sc + cols - 1) / cols);
  c.cycles_per_fold = 2 * rows + cols + s.t - 2;
  return c;
}

}  // namespace hcsim
