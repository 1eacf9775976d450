#include "schedule.hpp"

#include "sim/core/error.hpp"

namespace hcsim {

std::string_view collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "all_reduce";
    case CollectiveOp::reduce_scatter: return "reduce_scatter";
    case CollectiveOp::all_gather: return "all_gather";
    case CollectiveOp::broadcast: return "broadcast";
    case CollectiveOp::reduce: return "reduce";
    case CollectiveOp::all_to_all: return "all_to_all";
  }
  return "?";
}

std::int64_t chunk_size(std::int64_t elements, int n, int i) {
  return elements / n + (i < elements % n ? 1 : 0);
}

std::int64_t chunk_offset(std::int64_t elements, int n, int i) {
  const std::int64_t base = elements / n, extra = elements % n;
  return static_cast<std::int64_t>(i) * base + (i < extra ? i : extra);
}

namespace {
// Reduce-scatter phase: at step s rank r sends chunk (r - s - 1) mod n to r+1, which adds
// it in; after n-1 steps rank r holds the full sum of chunk r.
void ring_reduce_scatter_steps(Schedule& sc) {
  const int n = sc.ranks;
  for (int s = 0; s < n - 1; ++s) {
    Step st;
    for (int r = 0; r < n; ++r) {
      const int c = ((r - s - 1) % n + n) % n;
      const auto off = chunk_offset(sc.elements, n, c), cnt = chunk_size(sc.elements, n, c);
      st.transfers.push_back({r, (r + 1) % n, off, off, cnt, true});
    }
    sc.steps.push_back(std::move(st));
  }
}
// All-gather phase: at step s rank r forwards chunk (r - s) mod n to r+1.
void ring_all_gather_steps(Schedule& sc) {
  const int n = sc.ranks;
  for (int s = 0; s < n - 1; ++s) {
    Step st;
    for (int r = 0; r < n; ++r) {
      const int c = ((r - s) % n + n) % n;
      const auto off = chunk_offset(sc.elements, n, c), cnt = chunk_size(sc.elements, n, c);
      st.transfers.push_back({r, (r + 1) % n, off, off, cnt, false});
    }
    sc.steps.push_back(std::move(st));
  }
}
}  // namespace

Schedule ring_schedule(CollectiveOp op, int n, std::int64_t elements) {
  HCSIM_ASSERT(n >= 1, "a collective needs at least one rank");
  Schedule sc{op, n, elements, {}};
  if (n == 1) return sc;
  switch (op) {
    case CollectiveOp::all_reduce:
      ring_reduce_scatter_steps(sc);
      ring_all_gather_steps(sc);
      break;
    case CollectiveOp::reduce_scatter: ring_reduce_scatter_steps(sc); break;
    case CollectiveOp::all_gather: ring_all_gather_steps(sc); break;
    default: HCSIM_ASSERT(false, "ring schedule supports all-reduce, reduce-scatter and all-gather only");
  }
  return sc;
}

}  // namespace hcsim
