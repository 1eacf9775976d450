#pragma once
// The Pareto front of candidates under several objectives, all minimised (negate one to
// maximise it): a point is on the front when no other point is at least as good in every
// objective and strictly better in one. O(n^2 k), for the few thousand candidates a search
// keeps.

#include <cstddef>
#include <vector>

namespace hcsim::sweep {

// Indices of the non-dominated rows of `objectives` (each row one candidate), ascending.
// Rows equal in every objective are all kept.
std::vector<std::size_t> pareto_front(const std::vector<std::vector<double>>& objectives);

}  // namespace hcsim::sweep
