// Ring all-reduces on a torus: dimension-ordered, and on all dimensions at once (see
// schedule.hpp).
#include <algorithm>
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

using Regions = std::vector<std::pair<std::int64_t, std::int64_t>>;

// After a reduce-scatter along the jobs' rings, member p of a ring owns its chunk p.
void narrow(Regions& region, const std::vector<RingJob>& jobs) {
  for (const auto& j : jobs)
    for (std::size_t p = 0; p < j.members.size(); ++p)
      region[static_cast<std::size_t>(j.members[p])] = {ring_chunk_offset(j, static_cast<int>(p)),
                                                        ring_chunk_size(j, static_cast<int>(p))};
}

// Compression (one step per phase, Step::repeat) is exact only when the phase's rings are
// equally long.
bool equal_lengths(const std::vector<RingJob>& jobs) {
  return std::all_of(jobs.begin(), jobs.end(),
                     [&](const RingJob& j) { return j.members.size() == jobs.front().members.size(); });
}

}  // namespace

Schedule torus_all_dims_schedule(CollectiveOp op, const std::vector<int>& dims, std::int64_t elements,
                                 bool compressed) {
  HCSIM_ASSERT(op == CollectiveOp::all_reduce, "torus schedule supports all-reduce only");
  const int n = std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>());
  HCSIM_ASSERT(n >= 1, "a torus needs at least one rank");
  Schedule sc{op, n, elements, {}, 0};
  std::vector<std::size_t> active;
  for (std::size_t k = 0; k < dims.size(); ++k)
    if (dims[k] >= 2) active.push_back(k);
  if (active.empty()) return sc;
  const int d = static_cast<int>(active.size()), parts = 2 * d;
  // Part q runs the dimensions in the order active[(q/2 + k) mod d], on rings that turn the
  // positive way (q even) or the negative way (q odd).
  std::vector<Regions> region;
  for (int q = 0; q < parts; ++q)
    region.emplace_back(static_cast<std::size_t>(n),
                        std::pair{chunk_offset(elements, parts, q), chunk_size(elements, parts, q)});
  std::vector<std::vector<RingJob>> phases;
  for (int k = 0; k < d; ++k) {
    std::vector<RingJob> jobs;
    for (int q = 0; q < parts; ++q) {
      auto part = dimension_rings(dims, active[static_cast<std::size_t>((q / 2 + k) % d)], region[static_cast<std::size_t>(q)]);
      for (auto& j : part)
        if (q % 2 == 1) std::reverse(j.members.begin(), j.members.end());
      narrow(region[static_cast<std::size_t>(q)], part);
      jobs.insert(jobs.end(), part.begin(), part.end());
    }
    append_ring_phase(sc.steps, jobs, true, compressed && equal_lengths(jobs));
    phases.push_back(std::move(jobs));
  }
  for (auto it = phases.rbegin(); it != phases.rend(); ++it)
    append_ring_phase(sc.steps, *it, false, compressed && equal_lengths(*it));
  return sc;
}

Schedule torus_schedule(CollectiveOp op, const std::vector<int>& dims, std::int64_t elements, bool compressed) {
  HCSIM_ASSERT(op == CollectiveOp::all_reduce, "torus schedule supports all-reduce only");
  const int n = std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>());
  HCSIM_ASSERT(n >= 1, "a torus needs at least one rank");
  Schedule sc{op, n, elements, {}, 0};
  // region[r] = (offset, length) each rank works on before each dimension.
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> before;
  Regions region(static_cast<std::size_t>(n), {0, elements});
  std::vector<std::vector<RingJob>> phases;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] < 2) continue;
    auto jobs = dimension_rings(dims, k, region);
    append_ring_phase(sc.steps, jobs, true, compressed);
    narrow(region, jobs);
    phases.push_back(std::move(jobs));
  }
  for (auto it = phases.rbegin(); it != phases.rend(); ++it) append_ring_phase(sc.steps, *it, false, compressed);
  return sc;
}

}  // namespace hcsim
