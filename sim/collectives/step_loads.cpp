#include "sim/collectives/step_loads.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace hcsim {

namespace {

// Doubles hold every integer up to 2^53 exactly, so sums of whole byte counts below it do
// not depend on their order.
constexpr double kExact = 9007199254740992.0;
// Shapes kept (ints of keys, links and crossings), about 100 MB; all are dropped past it.
constexpr std::size_t kMaxStored = std::size_t{24} << 20;

}  // namespace

std::size_t StepLoads::Hash::operator()(const std::vector<int>& v) const {
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ v.size();
  for (int x : v) {
    h ^= static_cast<std::uint32_t>(x);
    h *= 0x100000001B3ULL;
    h ^= h >> 31;
  }
  return static_cast<std::size_t>(h);
}

StepLoads::StepLoads(const TopologyGraph& g, const Router& router)
    : g_(g), router_(router), crossings_(2 * g.edges().size()) {
  edge_class_.reserve(g.edges().size());
  for (const TopoEdge& e : g.edges()) {
    const BytesPerSecond capacity = e.effective_bandwidth();
    // Few classes (one per kind of link): the last one matched is tried first.
    std::size_t k = last_class_;
    if (k >= classes_.size() || classes_[k].value() != capacity.value()) {
      k = static_cast<std::size_t>(std::find_if(classes_.begin(), classes_.end(),
                                                [&](BytesPerSecond c) { return c.value() == capacity.value(); }) -
                                   classes_.begin());
      if (k == classes_.size()) classes_.push_back(capacity);
      last_class_ = k;
    }
    edge_class_.push_back(static_cast<std::uint32_t>(k));
  }
  class_place_.assign(classes_.size(), -1);
}

int StepLoads::siblings_id(const std::vector<int>& siblings) {
  if (siblings.empty()) return 0;
  return siblings_.try_emplace(siblings, static_cast<int>(siblings_.size()) + 1).first->second;
}

bool StepLoads::time(const std::vector<int>& key, const std::vector<int>* siblings, const std::vector<double>& bytes,
                     StepTime& out) {
  double lo = kExact, hi = 0;
  for (double b : bytes) {
    if (b != std::floor(b)) return false;
    lo = std::min(lo, b);
    hi = std::max(hi, b);
  }
  const bool equal = bytes.empty() || lo == hi;
  Shape* found = nullptr;
  if (auto it = shapes_.find(key); it != shapes_.end()) found = &it->second;
  // Unequal bytes use a shape that equal ones built, and list its crossings when asked
  // twice: a step seen once is routed as cheaply by the cost model.
  if (!equal && (!found || (found->use_first.empty() && found->unequal++ == 0))) return false;
  Shape& s = found ? *found : add(key, siblings);
  if (hi * s.most >= kExact) return false;
  Seconds bw{};
  if (equal) {
    for (const Shape::Capacity& c : s.capacities) bw = max(bw, Bytes(c.most * hi) / c.capacity);
  } else {
    for (const Shape::Capacity& c : s.capacities)
      if ((hi - lo) * c.most >= hi) return false;
    if (s.use_first.empty()) list_uses(s, key, siblings);
    for (std::size_t i = 0; i < s.capacities.size(); ++i) {
      const std::size_t end = i + 1 < s.capacities.size() ? s.capacities[i + 1].first : s.top.size();
      for (std::size_t k = s.capacities[i].first; k < end; ++k) {
        double load = 0;
        for (std::uint32_t u = s.use_first[k]; u < s.use_first[k + 1]; ++u)
          load += s.uses[u].times * bytes[s.uses[u].transfer];
        bw = max(bw, Bytes(load) / s.capacities[i].capacity);
      }
    }
  }
  out = {s.latency, bw, s.between};
  return true;
}

StepLoads::Shape& StepLoads::add(const std::vector<int>& key, const std::vector<int>* siblings) {
  Shape s = build(key, siblings);
  const std::size_t size = key.size() + 4 * s.capacities.size() + s.top.size() + 16;
  if (stored_ + size > kMaxStored) {
    shapes_.clear();
    stored_ = 0;
  }
  stored_ += size;
  return shapes_.emplace(key, std::move(s)).first->second;
}

StepLoads::Shape StepLoads::build(const std::vector<int>& key, const std::vector<int>* siblings) {
  Shape s;
  // A link's count is at most the step's routes (two hops a transfer, each with its siblings').
  HCSIM_ASSERT(static_cast<double>(key.size()) / 3 * 2 * (1.0 + (siblings ? siblings->size() : 0)) < 4294967295.0,
               "a step with more routes than its link counts hold");
  s.own_only = key[0] != 0 && disjoint_stars(std::span<const int>(key).subspan(1), *siblings);
  for_step_slots(
      key, siblings,
      [&](std::size_t slot, std::uint32_t) {
        if (crossings_[slot] == 0) crossed_.push_back(slot);
        crossings_[slot] += 1;
      },
      s.latency, s.between, s.own_only);
  // Each class's M_c, the classes in the order the crossed links first meet them.
  std::vector<int>& place = class_place_;  // class -> its index in s.capacities, -1: none yet
  for (std::size_t slot : crossed_) {
    const std::uint32_t k = edge_class_[slot / 2];
    const double m = crossings_[slot];  // exact: a count below 2^32
    s.most = std::max(s.most, m);
    if (place[k] < 0) {
      place[k] = static_cast<int>(s.capacities.size());
      s.capacities.push_back({classes_[k], m, 0});
    } else {
      double& most = s.capacities[static_cast<std::size_t>(place[k])].most;
      most = std::max(most, m);
    }
  }
  // The links at M_c, grouped by capacity.
  for (Shape::Capacity& c : s.capacities) {
    c.first = static_cast<std::uint32_t>(s.top.size());
    const auto index = static_cast<int>(&c - s.capacities.data());
    for (std::size_t slot : crossed_)
      if (place[edge_class_[slot / 2]] == index && crossings_[slot] == c.most)
        s.top.push_back(static_cast<std::uint32_t>(slot));
  }
  for (std::size_t slot : crossed_) place[edge_class_[slot / 2]] = -1;
  for (std::size_t slot : crossed_) crossings_[slot] = 0;
  crossed_.clear();
  return s;
}

bool StepLoads::disjoint_stars(std::span<const int> devices, const std::vector<int>& siblings) {
  star_devices_.clear();
  int home = -1;
  for (const int x : devices) {
    const int d = router_.device_star(x);
    if (d < 0 || (home >= 0 && d != home)) return false;
    home = d;
    star_devices_.push_back(x);
  }
  if (home < 0) return false;
  std::sort(star_devices_.begin(), star_devices_.end());
  star_devices_.erase(std::unique(star_devices_.begin(), star_devices_.end()), star_devices_.end());
  star_met_.resize(static_cast<std::size_t>(g_.device_count()), 0);
  star_seen_.clear();
  const auto claim = [&](int x) {  // false when a device is met twice
    if (star_met_[static_cast<std::size_t>(x)]) return false;
    star_met_[static_cast<std::size_t>(x)] = 1;
    star_seen_.push_back(x);
    return true;
  };
  const auto same_class = [&](int x, int y) {
    return edge_class_[static_cast<std::size_t>(router_.star_edge(x))] ==
           edge_class_[static_cast<std::size_t>(router_.star_edge(y))];
  };
  for (const int x : star_devices_) claim(x);
  bool disjoint = true;
  for (std::size_t k = 0; disjoint && k < siblings.size(); ++k) {
    const int o = siblings[k];
    const int d = router_.device_star(star_devices_.front() + o);
    if (d < 0) {
      disjoint = false;
      break;
    }
    for (const int x : star_devices_)
      if (router_.device_star(x + o) != d || !same_class(x, x + o) || !claim(x + o)) {
        disjoint = false;
        break;
      }
  }
  for (const int x : star_seen_) star_met_[static_cast<std::size_t>(x)] = 0;
  return disjoint;
}

void StepLoads::list_uses(Shape& s, const std::vector<int>& key, const std::vector<int>* siblings) {
  Seconds latency{};  // the shape has them
  int between = 0;
  for (std::size_t k = 0; k < s.top.size(); ++k) crossings_[s.top[k]] = static_cast<std::uint32_t>(k + 1);
  marks_.clear();
  for_step_slots(
      key, siblings,
      [&](std::size_t slot, std::uint32_t transfer) {
        if (const std::uint32_t k = crossings_[slot]; k > 0) marks_.emplace_back(k - 1, transfer);
      },
      latency, between, s.own_only);
  for (std::uint32_t slot : s.top) crossings_[slot] = 0;
  std::sort(marks_.begin(), marks_.end());
  s.use_first.assign(s.top.size() + 1, 0);
  for (std::size_t i = 0; i < marks_.size();) {
    std::size_t j = i;
    while (j < marks_.size() && marks_[j] == marks_[i]) ++j;
    s.uses.push_back({marks_[i].second, static_cast<double>(j - i)});
    ++s.use_first[marks_[i].first + 1];
    i = j;
  }
  for (std::size_t k = 0; k < s.top.size(); ++k) s.use_first[k + 1] += s.use_first[k];
  stored_ += 3 * s.uses.size() + s.use_first.size();
}

}  // namespace hcsim
