#include "sim/engine/mirror_load.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <tuple>

namespace hcsim::engine {
namespace {

// Ascending: three passes of a counting sort on 11 bits each (least significant first), so
// that a mirror set's tens of thousands of links sort in linear time; std::sort below that.
void sort_slots(std::vector<std::uint32_t>& v) {
  if (v.size() < 4096) {
    std::sort(v.begin(), v.end());
    return;
  }
  std::vector<std::uint32_t> out(v.size());
  for (int shift = 0; shift < 32; shift += 11) {
    std::array<std::size_t, 2049> at{};
    for (std::uint32_t x : v) ++at[((x >> shift) & 2047U) + 1];
    for (std::size_t i = 1; i < at.size(); ++i) at[i] += at[i - 1];
    for (std::uint32_t x : v) out[at[(x >> shift) & 2047U]++] = x;
    v.swap(out);
  }
}

}  // namespace

template <class F>
void MirrorLoad::for_slots(const DevicePair& p, F&& f) const {
  if (p.first == p.second) return;
  router_.for_link_slots(static_cast<int>(p.first), static_cast<int>(p.second), f);
}

std::unordered_map<std::uint64_t, double> MirrorLoad::stretches(const std::vector<DevicePair>& built,
                                                             const std::vector<DevicePair>& mirrored) {
  std::vector<std::size_t> touched;
  if (j_.empty()) j_ = ZeroArray<std::uint32_t>(k_.size());
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
      const double b = slot_bandwidth(s);
      alone = std::min(alone, b / static_cast<double>(k_[s]));
      shared = std::min(shared, b / static_cast<double>(k_[s] + j_[s]));
    });
    if (shared < alone) out[key(p.first, p.second)] = alone / shared;
  }
  for (std::size_t s : touched) k_[s] = j_[s] = 0;
  return out;
}

MirrorLoad::LinkCounts MirrorLoad::counts(const std::vector<DevicePair>& pairs) {
  std::vector<std::uint32_t> touched;
  for (const DevicePair& p : pairs)
    for_slots(p, [&](std::size_t s) {
      if (k_[s]++ == 0) touched.push_back(static_cast<std::uint32_t>(s));
    });
  sort_slots(touched);
  LinkCounts out;
  out.links.reserve(touched.size());
  for (std::uint32_t s : touched) {
    out.links.emplace_back(s, static_cast<std::int32_t>(k_[s]));
    k_[s] = 0;
  }
  return out;
}

MirrorLoad::LinkCounts MirrorLoad::class_counts(const std::vector<DevicePair>& pairs) {
  const std::int64_t periods = router_.translation_periods();
  if (periods == 0) return counts(pairs);
  const auto period = static_cast<std::uint32_t>(g_.translation_period);
  LinkCounts out;
  // Each pair as (its base pair, m); the periods grouped base by base. The base pairs are
  // numbered as first seen, through an open-addressed table of their keys (a mirror set's
  // thousands of pairs have some hundred base pairs).
  std::vector<DevicePair> bases;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> moved;
  moved.reserve(pairs.size());
  base_index_.clear();
  for (const DevicePair& p : pairs) {
    if (p.first == p.second) continue;
    const std::uint32_t m = std::min(p.first, p.second) / period;
    const DevicePair b{p.first - m * period, p.second - m * period};
    const std::uint64_t k = key(b.first, b.second);
    const std::uint32_t* index = base_index_.find(k);
    if (!index) {
      base_index_.insert(k, static_cast<std::uint32_t>(bases.size()));
      bases.push_back(b);
    }
    moved.emplace_back(index ? *index : static_cast<std::uint32_t>(bases.size() - 1), m);
  }
  out.first.assign(bases.size() + 1, 0);
  for (const auto& [base, m] : moved) ++out.first[base + 1];
  for (std::size_t b = 1; b < out.first.size(); ++b) out.first[b] += out.first[b - 1];
  out.periods.resize(moved.size());
  {
    std::vector<std::uint32_t> at(out.first.begin(), out.first.end() - 1);
    for (const auto& [base, m] : moved) out.periods[at[base]++] = m;
  }
  std::vector<std::uint32_t> route;
  out.gapless.assign(bases.size(), 1);
  for (std::uint32_t i = 0; i < bases.size(); ++i) {
    const auto from = out.periods.begin() + out.first[i], to = out.periods.begin() + out.first[i + 1];
    if (!std::is_sorted(from, to)) std::sort(from, to);  // a ring's pairs come period by period
    for (auto p = from; p + 1 < to; ++p)
      if (p[1] > p[0] + 1) {
        out.gapless[i] = 0;
        break;
      }
    route.clear();
    slots(bases[i], route);
    for (std::uint32_t s : route) {
      const std::optional<Router::LinkClass> c = slot_class(s);
      // Moved up past the band's last step, a link would wrap round: counted link by link.
      if (!c || c->window + *(to - 1) >= periods) return counts(pairs);
      out.members.push_back({c->canon, c->window, i});
    }
  }
  std::sort(out.members.begin(), out.members.end(), [](const LinkCounts::Member& x, const LinkCounts::Member& y) {
    return std::tie(x.canon, x.window, x.base) < std::tie(y.canon, y.window, y.base);
  });
  out.load = this;
  return out;
}

std::optional<Router::LinkClass> MirrorLoad::slot_class(std::uint32_t slot) const {
  const auto [it, added] = slot_classes_.try_emplace(slot);
  if (added) it->second = router_.link_class(slot);
  return it->second;
}

std::span<const MirrorLoad::LinkCounts::Member> MirrorLoad::LinkCounts::of_class(std::size_t canon) const {
  const auto [lo, hi] = std::equal_range(members.begin(), members.end(), Member{canon, 0, 0},
                                         [](const Member& x, const Member& y) { return x.canon < y.canon; });
  return {lo, hi};
}

std::int32_t MirrorLoad::LinkCounts::in_class(std::span<const Member> of, std::int64_t window) const {
  std::int32_t n = 0;
  for (const Member& x : of) {
    if (window < x.window) continue;  // moved up, never down
    const std::span<const std::uint32_t> moved = periods_of(x.base);
    const auto [lo, hi] = std::equal_range(moved.begin(), moved.end(), static_cast<std::uint32_t>(window - x.window));
    n += static_cast<std::int32_t>(hi - lo);
  }
  return n;
}

bool MirrorLoad::LinkCounts::lands(std::span<const Member> of, std::int64_t window) const {
  for (const Member& x : of) {
    if (window < x.window) continue;  // moved up, never down
    const auto d = static_cast<std::uint32_t>(window - x.window);
    const std::span<const std::uint32_t> moved = periods_of(x.base);
    if (gapless[x.base] ? d >= moved.front() && d <= moved.back() : std::ranges::binary_search(moved, d)) return true;
  }
  return false;
}

std::int32_t MirrorLoad::LinkCounts::at(std::uint32_t slot) const {
  if (load) {
    const std::optional<Router::LinkClass> c = load->slot_class(slot);
    return c ? in_class(of_class(c->canon), c->window)
             : 0;  // the pairs' links all have a class, and so their translates
  }
  const auto it = std::lower_bound(links.begin(), links.end(), std::pair<std::uint32_t, std::int32_t>{slot, 0},
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return it != links.end() && it->first == slot ? it->second : 0;
}

void MirrorLoad::slots(const DevicePair& p, std::vector<std::uint32_t>& out) const {
  for_slots(p, [&](std::size_t s) { out.push_back(static_cast<std::uint32_t>(s)); });
}

double MirrorLoad::slot_bandwidth(std::size_t slot) const {
  const TopoEdge& e = g_.edges()[slot / 2];
  return e.effective_bandwidth().value();
}

std::vector<MirrorLoad::SharedTime> MirrorLoad::shared_times(const std::vector<DevicePair>& pairs,
                                                             const std::vector<double>& bytes) {
  std::vector<std::size_t> touched;
  for (const DevicePair& p : pairs)
    for_slots(p, [&](std::size_t s) {
      if (k_[s]++ == 0) touched.push_back(s);
    });
  std::vector<SharedTime> out;
  out.reserve(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    double per_byte = 0;  // seconds per byte on the slowest shared link
    for_slots(pairs[i], [&](std::size_t s) {
      per_byte = std::max(per_byte, static_cast<double>(k_[s]) / slot_bandwidth(s));
    });
    const auto& [src, dst] = pairs[i];
    const double latency =
        src == dst ? 0.0 : router_.device_latency(static_cast<int>(src), static_cast<int>(dst)).value();
    out.push_back({latency, bytes[i] * per_byte});
  }
  for (std::size_t s : touched) k_[s] = 0;
  return out;
}

}  // namespace hcsim::engine
