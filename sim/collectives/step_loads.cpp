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

namespace {

std::size_t slot_of(const TopologyGraph& g, const Route& r, std::size_t i) {
  const auto e = static_cast<std::size_t>(r.edges[i]);
  return 2 * e + (r.nodes[i] == g.edges()[e].a ? 0 : 1);
}

}  // namespace

StepLoads::Shape StepLoads::build(const std::vector<int>& key, const std::vector<int>* siblings) {
  Shape s;
  for_routes(
      key, siblings,
      [&](const Route& r, std::uint32_t) {
        for (std::size_t i = 0; i < r.edges.size(); ++i) {
          const std::size_t slot = slot_of(g_, r, i);
          if (crossings_[slot] == 0) crossed_.push_back(slot);
          crossings_[slot] += 1;
        }
      },
      s.latency, s.between, true);
  for (std::size_t slot : crossed_) {
    const TopoEdge& e = g_.edges()[slot / 2];
    const BytesPerSecond capacity = e.bandwidth() * e.link().efficiency;
    const double m = crossings_[slot];
    s.most = std::max(s.most, m);
    auto it = std::find_if(s.capacities.begin(), s.capacities.end(),
                           [&](const Shape::Capacity& c) { return c.capacity.value() == capacity.value(); });
    if (it == s.capacities.end())
      s.capacities.push_back({capacity, m, 0});
    else
      it->most = std::max(it->most, m);
  }
  // The links at M_c, grouped by capacity.
  for (Shape::Capacity& c : s.capacities) {
    c.first = static_cast<std::uint32_t>(s.top.size());
    for (std::size_t slot : crossed_) {
      const TopoEdge& e = g_.edges()[slot / 2];
      if ((e.bandwidth() * e.link().efficiency).value() == c.capacity.value() && crossings_[slot] == c.most)
        s.top.push_back(static_cast<std::uint32_t>(slot));
    }
  }
  for (std::size_t slot : crossed_) crossings_[slot] = 0;
  crossed_.clear();
  return s;
}

void StepLoads::list_uses(Shape& s, const std::vector<int>& key, const std::vector<int>* siblings) {
  Seconds latency{};  // the shape has them
  int between = 0;
  for (std::size_t k = 0; k < s.top.size(); ++k) crossings_[s.top[k]] = static_cast<double>(k + 1);
  marks_.clear();
  for_routes(
      key, siblings,
      [&](const Route& r, std::uint32_t transfer) {
        for (std::size_t i = 0; i < r.edges.size(); ++i)
          if (const double k = crossings_[slot_of(g_, r, i)]; k > 0)
            marks_.emplace_back(static_cast<std::uint32_t>(k) - 1, transfer);
      },
      latency, between, true);
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
