// Dimension-ordered ring all-reduce on a torus (see schedule.hpp).
#include <numeric>

#include "sim/collectives/ring_phase.hpp"
#include "sim/core/error.hpp"

namespace hcsim {
namespace {

// Rings along dimension `dim`: one per line of ranks that differ only in that coordinate.
// Each rank's region before this dimension is `region[rank]`; the ring splits it.
std::vector<RingJob> dimension_rings(const std::vector<int>& dims, std::size_t dim,
                                     const std::vector<std::pair<std::int64_t, std::int64_t>>& region) {
  const int n = static_cast<int>(region.size());
  int stride = 1;
  for (std::size_t k = 0; k < dim; ++k) stride *= dims[k];
  const int d = dims[dim];
  std::vector<RingJob> jobs;
  for (int r = 0; r < n; ++r) {
    if ((r / stride) % d != 0) continue;  // r is the line's first member
    RingJob j;
    for (int x = 0; x < d; ++x) j.members.push_back(r + x * stride);
    j.offset = region[static_cast<std::size_t>(r)].first;
    j.length = region[static_cast<std::size_t>(r)].second;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace

Schedule torus_schedule(CollectiveOp op, const std::vector<int>& dims, std::int64_t elements, bool compressed) {
  HCSIM_ASSERT(op == CollectiveOp::all_reduce, "torus schedule supports all-reduce only");
  const int n = std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>());
  HCSIM_ASSERT(n >= 1, "a torus needs at least one rank");
  Schedule sc{op, n, elements, {}, 0};
  // region[r] = (offset, length) each rank works on before each dimension.
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> before;
  std::vector<std::pair<std::int64_t, std::int64_t>> region(static_cast<std::size_t>(n), {0, elements});
  std::vector<std::vector<RingJob>> phases;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] < 2) continue;
    auto jobs = dimension_rings(dims, k, region);
    append_ring_phase(sc.steps, jobs, true, compressed);
    for (const auto& j : jobs)
      for (std::size_t p = 0; p < j.members.size(); ++p)
        region[static_cast<std::size_t>(j.members[p])] = {ring_chunk_offset(j, static_cast<int>(p)),
                                                          ring_chunk_size(j, static_cast<int>(p))};
    phases.push_back(std::move(jobs));
  }
  for (auto it = phases.rbegin(); it != phases.rend(); ++it) append_ring_phase(sc.steps, *it, false, compressed);
  return sc;
}

}  // namespace hcsim
