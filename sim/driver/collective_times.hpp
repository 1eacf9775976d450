#pragma once
// Collective times of one topology, each costed once: keyed by the arithmetic device group
// (workloads/layout.hpp: first, stride, count and the two sibling axes), the operation and
// the bytes, which are all the cost model reads. The analytical step asks the same question
// many times -- every ZeRO-3 unit of a stage gathers the same bytes over the same group,
// every micro-batch sends the same activation -- and the search asks it again for every
// layout that shares a group; the cost model's answer (routing every transfer of every
// candidate algorithm) is what takes the time. Open addressing with linear probing.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/collectives/cost.hpp"
#include "sim/driver/run.hpp"
#include "workloads/layout.hpp"

namespace hcsim {

// Times of collectives over star groups (CollectiveCostModel::star_group), shared by the
// CollectiveTimes of cost models with the same options and algorithm "auto": a search's
// clusters of every device count ask for the same tensor-parallel all-reduce in one node,
// whatever the layout around it.
class StarTimes {
 public:
  [[nodiscard]] const Seconds* find(const CollectiveCostModel::StarGroup& g, CollectiveOp op, Bytes bytes) const {
    for (const Entry& e : by_bytes(bytes))
      if (e.group == g && e.op == op) return &e.time;
    return nullptr;
  }
  void add(const CollectiveCostModel::StarGroup& g, CollectiveOp op, Bytes bytes, Seconds t) {
    map_[std::bit_cast<std::uint64_t>(bytes.value())].push_back({g, op, t});
  }
  [[nodiscard]] std::size_t size() const {
    std::size_t n = 0;
    for (const auto& [b, v] : map_) n += v.size();
    return n;
  }

 private:
  struct Entry {
    CollectiveCostModel::StarGroup group;
    CollectiveOp op;
    Seconds time;
  };
  [[nodiscard]] const std::vector<Entry>& by_bytes(Bytes bytes) const {
    static const std::vector<Entry> none;
    const auto it = map_.find(std::bit_cast<std::uint64_t>(bytes.value()));
    return it == map_.end() ? none : it->second;
  }
  std::unordered_map<std::uint64_t, std::vector<Entry>> map_;
};

class CollectiveTimes {
 public:
  // `shared`: times of star groups that other cost models of the same options found (with
  // algorithm "auto" only); null: none.
  CollectiveTimes(const CollectiveCostModel& model, std::string algorithm, StarTimes* shared = nullptr)
      : model_(model), algorithm_(std::move(algorithm)), shared_(algorithm_ == "auto" ? shared : nullptr) {}

  // The time of `op` moving `bytes` per rank over `g` (0 for a group of one or no bytes).
  Seconds operator()(const DeviceGroup& g, CollectiveOp op, Bytes bytes) {
    if (g.count <= 1 || bytes <= Bytes{}) return Seconds{};
    const Key k{g.first, g.stride, g.count, static_cast<int>(op), g.sib[0].count, g.sib[0].stride,
                g.sib[1].count, g.sib[1].stride, std::bit_cast<std::uint64_t>(bytes.value())};
    if (const Seconds* t = find(k)) return *t;
    g.devices(group_);
    g.sibling_offsets(siblings_);
    // An all-to-all's cost may read the MoE routing by rank; the rest read the star alone.
    std::optional<CollectiveCostModel::StarGroup> star;
    if (shared_ && op != CollectiveOp::all_to_all) star = model_.star_group(group_, siblings_);
    if (star)
      if (const Seconds* t = shared_->find(*star, op, bytes)) {
        insert(k, *t);
        return *t;
      }
    const Seconds t = analytical_collective_time(model_, group_, op, bytes, algorithm_, siblings_);
    if (star) shared_->add(*star, op, bytes, t);
    insert(k, t);
    return t;
  }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  struct Key {
    int first = 0, stride = 0, count = 0, op = 0;
    int sib0_count = 0, sib0_stride = 0, sib1_count = 0, sib1_stride = 0;
    std::uint64_t bytes = 0;  // the double's bits
    bool operator==(const Key&) const = default;
  };
  struct Slot {
    Key key;
    Seconds value{};
    bool used = false;
  };
  static std::uint64_t word(int a, int b) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32 | static_cast<std::uint32_t>(b);
  }
  std::size_t slot(const Key& k) const {
    std::uint64_t h = word(k.first, k.stride) * 0x9E3779B97F4A7C15ULL ^ word(k.count, k.op) * 0xC2B2AE3D27D4EB4FULL ^
                      (k.bytes + 0x632BE59BD9B4E019ULL) * 0x165667B19E3779F9ULL ^
                      word(k.sib0_count, k.sib0_stride) * 0x27D4EB2F165667C5ULL ^
                      word(k.sib1_count, k.sib1_stride) * 0x94D049BB133111EBULL;
    h ^= h >> 29;
    return static_cast<std::size_t>(h) & (slots_.size() - 1);
  }
  const Seconds* find(const Key& k) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = slot(k);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == k) return &s.value;
    }
  }
  void insert(const Key& k, Seconds v) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t i = slot(k);
    while (slots_[i].used) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = {k, v, true};
    ++size_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<std::size_t>(1024, 2 * old.size()), Slot{});
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) insert(s.key, s.value);
  }

  const CollectiveCostModel& model_;
  std::string algorithm_;
  StarTimes* shared_;
  std::vector<int> group_, siblings_;
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

// SM contention (workloads/analytical.hpp, Contention): the share of each device's SMs a
// collective over an arithmetic group holds, NCCL's channels (held_channels) over the
// SMs of the group's first device (`cores`, per device; 0: none), each (group, op, bytes)
// costed once.
class CollectiveShares {
 public:
  CollectiveShares(const CollectiveCostModel& model, std::string algorithm, std::vector<int> cores)
      : model_(model), algorithm_(std::move(algorithm)), cores_(std::move(cores)) {}
  double operator()(const DeviceGroup& g, CollectiveOp op, Bytes bytes) {
    if (g.count <= 1 || bytes <= Bytes{}) return 0;
    const auto k = std::make_tuple(g.first, g.stride, g.count, static_cast<int>(op), g.sib[0].count, g.sib[0].stride,
                                   g.sib[1].count, g.sib[1].stride, bytes.value());
    if (const auto it = done_.find(k); it != done_.end()) return it->second;
    g.devices(group_);
    g.sibling_offsets(siblings_);
    const int cores = cores_.at(static_cast<std::size_t>(group_.front()));
    double f = 0;
    if (cores > 0) {
      const CollectiveEstimate est = analytical_collective_estimate(model_, group_, op, bytes, algorithm_, siblings_);
      f = std::min(held_channels(model_.graph(), group_, est), cores - 1) / static_cast<double>(cores);
    }
    done_.emplace(k, f);
    return f;
  }

 private:
  const CollectiveCostModel& model_;
  std::string algorithm_;
  std::vector<int> cores_;
  std::vector<int> group_, siblings_;
  std::map<std::tuple<int, int, int, int, int, int, int, int, double>, double> done_;
};

}  // namespace hcsim
