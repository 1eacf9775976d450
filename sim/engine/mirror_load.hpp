#pragma once
// Inside the engine only: what the symmetric replicas that are not built (mirrors,
// workloads/task_graph.hpp) take of the links a built flow crosses.
//
// Under symmetry a mirrored collective or send runs at the same time as the task that
// stands for it, on its own devices. Where its flows cross a directed link that a built
// flow crosses too -- several GPUs of a node behind one NIC, the other tensor ranks' rings
// on the same uplink -- the link's bandwidth is shared by all of them: with k_e built and
// j_e mirrored flows on link e (in the same phase), a built flow's share is
//   R = min_e B_e x efficiency / (k_e + j_e)
// (max-min sharing of identical flows, what SimGrid gives with every replica built), where
// the built flows alone would get R_0 = min_e B_e x efficiency / k_e. SimGrid 3.32 ignores
// a rate bound on a host-to-host comm, so the built flow carries R_0 / R times its bytes
// instead (its "stretch"): it then takes its bytes / R while it shares its links as
// computed. Links no mirror crosses keep SimGrid's own sharing; with no shared link the
// stretch is 1 and the flow runs as before. The links' byte counts keep the real bytes.
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/key_table.hpp"
#include "sim/core/zero_array.hpp"
#include "topologies/routing.hpp"

namespace hcsim::engine {

using DevicePair = std::pair<std::uint32_t, std::uint32_t>;

class MirrorLoad {
 public:
  MirrorLoad(const TopologyGraph& g, const Router& router) : g_(g), router_(router), k_(2 * g.edges().size()) {}

  // Stretch (> 1; absent: 1) of each built pair, given the built flows and the mirrored
  // flows that run concurrently with them.
  std::unordered_map<std::uint64_t, double> stretches(const std::vector<DevicePair>& built,
                                                   const std::vector<DevicePair>& mirrored);

  // Time of each flow of `pairs` (carrying `bytes`) when they all run at once on an idle
  // network and share each directed link equally: route latency + transfer, transfer =
  // bytes x max_e k_e / B_e, k_e the flows on link e (what max-min sharing gives identical
  // concurrent flows).
  struct SharedTime {
    double latency = 0, transfer = 0;
    [[nodiscard]] double total() const { return latency + transfer; }
  };
  std::vector<SharedTime> shared_times(const std::vector<DevicePair>& pairs, const std::vector<double>& bytes);

  // Flows per directed link over the routes of `pairs`, ascending by link: a sorted list, so
  // that a mirror set's counts over a hundred thousand devices take one array, not a node
  // per link (counted in this object's per-link scratch array).
  //
  // Or, from class_counts, by translation class (Router::link_class): a pair m = min / period
  // periods up crosses the links of its base pair (m periods down) moved up m times, so the
  // pairs are kept as their base pairs' routes, each link under its class, and the periods
  // each base pair is moved up by; a link's count is the number of (member of its class,
  // period) that land on it. Nothing per link of the cluster is listed.
  struct LinkCounts {
    std::vector<std::pair<std::uint32_t, std::int32_t>> links;  // by link (counts)
    struct Member {
      std::size_t canon = 0;    // its class (Router::LinkClass)
      std::int64_t window = 0;  // a base pair's link of the class: its window
      std::uint32_t base = 0;   // the base pair: its periods
    };
    std::vector<Member> members;         // by class (class_counts), ascending
    std::vector<std::uint32_t> periods;  // the base pairs', base by base, each ascending
    std::vector<std::uint32_t> first;    // base b's: periods[first[b], first[b + 1])
    // Base b's periods hold every period from their first to their last (a ring's pairs, one
    // a period): lands reads them as that range.
    std::vector<char> gapless;
    const MirrorLoad* load = nullptr;    // set by class: reads a link's class
    [[nodiscard]] bool by_class() const { return load != nullptr; }
    [[nodiscard]] std::int32_t at(std::uint32_t slot) const;  // 0 where none
    [[nodiscard]] std::span<const std::uint32_t> periods_of(std::uint32_t base) const {
      return {periods.data() + first[base], first[base + 1] - first[base]};
    }
    // The members of a class, and the pairs whose links of that class land on the link of
    // window `window`.
    [[nodiscard]] std::span<const Member> of_class(std::size_t canon) const;
    [[nodiscard]] std::int32_t in_class(std::span<const Member> of, std::int64_t window) const;
    // Whether any does (in_class > 0), from the first found.
    [[nodiscard]] bool lands(std::span<const Member> of, std::int64_t window) const;
  };
  LinkCounts counts(const std::vector<DevicePair>& pairs);
  // By class where the graph has translation classes and every link of the base pairs' routes
  // has one (each moved up within its band), else counts(pairs). Its links list is empty.
  LinkCounts class_counts(const std::vector<DevicePair>& pairs);
  // A directed link's class (Router::link_class), looked up once.
  [[nodiscard]] std::optional<Router::LinkClass> slot_class(std::uint32_t slot) const;

  // The directed links (2 x edge + direction) of the route src -> dst, appended to `out`.
  void slots(const DevicePair& p, std::vector<std::uint32_t>& out) const;
  // Effective bandwidth of a directed link (bandwidth x efficiency).
  [[nodiscard]] double slot_bandwidth(std::size_t slot) const;
  [[nodiscard]] std::size_t slot_count() const { return k_.size(); }

  static std::uint64_t key(std::uint32_t src, std::uint32_t dst) { return std::uint64_t{src} << 32 | dst; }

 private:
  template <class F>
  void for_slots(const DevicePair& p, F&& f) const;

  const TopologyGraph& g_;
  const Router& router_;
  // Per directed link, zero between uses (j_ sized by the first stretches()); a few routes
  // touch few of their pages.
  ZeroArray<std::uint32_t> k_, j_;
  mutable std::unordered_map<std::uint32_t, std::optional<Router::LinkClass>> slot_classes_;
  KeyTable<std::uint32_t> base_index_;  // class_counts: a base pair's index by its key
};

}  // namespace hcsim::engine
