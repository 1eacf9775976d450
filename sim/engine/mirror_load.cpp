#include "sim/engine/mirror_load.hpp"

#include <algorithm>
#include <limits>

namespace hcsim::engine {

template <class F>
void MirrorLoad::for_slots(const DevicePair& p, F&& f) const {
  if (p.first == p.second) return;
  const Route& r = router_.device_route(static_cast<int>(p.first), static_cast<int>(p.second));
  for (std::size_t i = 0; i < r.edges.size(); ++i) {
    const auto e = static_cast<std::size_t>(r.edges[i]);
    f(2 * e + (r.nodes[i] == g_.edges()[e].a ? 0 : 1));
  }
}

std::unordered_map<std::uint64_t, double> MirrorLoad::stretches(const std::vector<DevicePair>& built,
                                                             const std::vector<DevicePair>& mirrored) {
  std::vector<std::size_t> touched;
  for (const DevicePair& p : built)
    for_slots(p, [&](std::size_t s) {
      if (k_[s]++ == 0 && j_[s] == 0) touched.push_back(s);
    });
  for (const DevicePair& p : mirrored)
    for_slots(p, [&](std::size_t s) {
      if (j_[s]++ == 0 && k_[s] == 0) touched.push_back(s);
    });
  std::unordered_map<std::uint64_t, double> out;
  for (const DevicePair& p : built) {
    double alone = std::numeric_limits<double>::infinity(), shared = alone;
    for_slots(p, [&](std::size_t s) {
      const TopoEdge& e = g_.edges()[s / 2];
      const double b = e.bandwidth().value() * e.link.efficiency;
      alone = std::min(alone, b / static_cast<double>(k_[s]));
      shared = std::min(shared, b / static_cast<double>(k_[s] + j_[s]));
    });
    if (shared < alone) out[key(p.first, p.second)] = alone / shared;
  }
  for (std::size_t s : touched) k_[s] = j_[s] = 0;
  return out;
}

}  // namespace hcsim::engine
