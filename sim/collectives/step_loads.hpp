#pragma once
// The links one schedule step loads, routed once per shape of the step.
//
// The cost model's bandwidth term of a step (cost.hpp) is
//   max over directed links l of (sum over transfers i crossing l of bytes_i) / capacity_l
// where transfer i crosses l once for its own route and once for each sibling's translate
// of it that does. Which links a step loads depends on who sends to whom (the devices, the
// PXN relays, the siblings), not on the bytes, which are all that change between most
// estimates of one group; so the links are found once per shape of the step. The sums are
// those that charging every route adds up, in any order, while the bytes are whole numbers
// and every sum stays below 2^53 (doubles hold such integers exactly), which time() checks.
//   Equal bytes b (most steps): link l carries m_l x b, m_l its crossings, and as
// m x b / capacity rises with m for a fixed capacity the term is
//   max over the distinct capacities c of M_c x b / c,   M_c the largest m_l of capacity c.
//   Bytes from lo to hi: a link of capacity c below M_c carries at most hi (M_c - 1), a link
// at M_c at least lo M_c; when (hi - lo) M_c < hi (a ring's chunks differ by one element)
// only the links at M_c can hold the maximum, and their sums are taken transfer by
// transfer (their crossings listed when a shape is asked so a second time; a step seen
// once is routed as cheaply by the cost model). Otherwise time() declines and the cost
// model charges route by route.
// The path latency (largest over transfers of their route's latency, both hops of a relay
// added) and the count of transfers between nodes do not depend on the bytes either.

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/zero_array.hpp"
#include "topologies/routing.hpp"

namespace hcsim {

class StepLoads {
 public:
  struct StepTime {
    Seconds latency{};    // largest path latency over the transfers
    Seconds bandwidth{};  // the bandwidth term
    int between = 0;      // transfers between nodes
  };

  StepLoads(const TopologyGraph& g, const Router& router);

  // Id of a set of sibling offsets (cost.hpp, estimate()), for the step keys; 0: none.
  int siblings_id(const std::vector<int>& siblings);
  // The step of `key` -- {siblings id, then per transfer its source device, relay device (the
  // destination when none) and destination device}; the siblings of a non-zero id are
  // `siblings` -- with transfer i moving bytes[i] (none zero); false (nothing written) when
  // the sums would not be exact or the bytes differ too much (above).
  bool time(const std::vector<int>& key, const std::vector<int>* siblings, const std::vector<double>& bytes,
            StepTime& out);
  [[nodiscard]] std::size_t size() const { return shapes_.size(); }

  // Calls hop(from, to, i, own) for every hop of the step `key` in order: transfer i's own
  // hops (to the relay, from it; own = true) each followed by the siblings' translates of
  // that hop (own = false). hop returns its hop's latency, read for own hops: the largest
  // path latency goes into `latency`, the transfers between nodes are added to `between`.
  // `own_only`: the transfers' own hops alone (the siblings' load copies of their links:
  // disjoint_stars).
  template <class H>
  void for_hops(const std::vector<int>& key, const std::vector<int>* siblings, H hop, Seconds& latency, int& between,
                bool own_only = false) const;

  // Whether every device of `devices` (repeats allowed) is in one star scale-up domain D
  // (every hop between them is device, center, device: a node's NVSwitch) and each sibling's
  // translate of them lands in one star domain (D or another) on devices of its own (none
  // of `devices`, none of another sibling's), each device's edge to the center of the same
  // capacity as its original's. A member's only link in its star is its own edge to the
  // center, so a sibling's routes cross links of their own, each as many times as the own
  // routes cross its original, and every M_c, and every sum over a link at M_c, is the own
  // routes' alone.
  bool disjoint_stars(std::span<const int> devices, const std::vector<int>& siblings);

 private:
  struct Shape {
    Seconds latency{};
    int between = 0;
    struct Capacity {
      BytesPerSecond capacity{};  // lanes x bandwidth x efficiency
      double most = 0;            // M_c
      std::uint32_t first = 0;    // its links at M_c: top[first, next capacity's first)
    };
    std::vector<Capacity> capacities;
    std::vector<std::uint32_t> top;  // directed links at M_c, by capacity
    double most = 0;                 // the largest m_l
    struct Use {
      std::uint32_t transfer = 0;
      double times = 0;  // its routes (own, siblings') that cross the link
    };
    // Listed on first need: the crossings of top[k] in uses[use_first[k], use_first[k + 1]).
    std::vector<std::uint32_t> use_first;
    std::vector<Use> uses;
    int unequal = 0;        // times asked with unequal bytes
    bool own_only = false;  // found from the own routes alone (disjoint_stars)
  };
  struct Hash {
    std::size_t operator()(const std::vector<int>& v) const;
  };
  Shape& add(const std::vector<int>& key, const std::vector<int>* siblings);
  Shape build(const std::vector<int>& key, const std::vector<int>* siblings);
  void list_uses(Shape& s, const std::vector<int>& key, const std::vector<int>* siblings);
  // f(slot, i) for every directed link of the step's hops, as for_hops orders them: read
  // through Router::for_link_slots without keeping (a translate's links moved from its
  // base pair's route, unrouted; another pair routed afresh and not cached), each hop's
  // latency summed from its links in route order (Route::latency's sum). A shape routes its
  // step once.
  template <class F>
  void for_step_slots(const std::vector<int>& key, const std::vector<int>* siblings, F f, Seconds& latency,
                      int& between, bool own_only) const {
    for_hops(
        key, siblings,
        [&](int from, int to, std::uint32_t i, bool own) {
          Seconds hop{};
          bool joined = false;  // a route between two devices has a link
          router_.for_link_slots(
              from, to,
              [&](std::size_t slot) {
                joined = true;
                if (own) hop += g_.edges()[slot / 2].link().latency;
                f(slot, i);
              },
              false);
          HCSIM_ASSERT(joined || !own, "collective between unconnected devices");
          return hop;
        },
        latency, between, own_only);
  }

  const TopologyGraph& g_;
  const Router& router_;
  std::unordered_map<std::vector<int>, int, Hash> siblings_;
  std::unordered_map<std::vector<int>, Shape, Hash> shapes_;
  std::size_t stored_ = 0;                                      // what shapes_ holds, in ints, bounded (step_loads.cpp)
  ZeroArray<std::uint32_t> crossings_;                          // per directed link, zero between uses
  // Each edge's capacity (lanes x bandwidth x efficiency) as an index into classes_: the
  // shapes read four bytes a crossed link, not its edge record and link spec.
  std::vector<BytesPerSecond> classes_;
  std::vector<std::uint32_t> edge_class_;
  std::size_t last_class_ = 0;
  std::vector<int> class_place_;   // per class, its place in the shape being built; -1 between
  std::vector<int> star_devices_;  // disjoint_stars(): the step's devices
  std::vector<int> star_seen_;     // disjoint_stars(): the devices met
  std::vector<char> star_met_;     // per device, zero between uses
  std::vector<std::size_t> crossed_;                            // the links with crossings
  std::vector<std::pair<std::uint32_t, std::uint32_t>> marks_;  // (top link, transfer), reused
};

template <class H>
void StepLoads::for_hops(const std::vector<int>& key, const std::vector<int>* siblings, H hop, Seconds& latency,
                         int& between, bool own_only) const {
  HCSIM_ASSERT(key.size() % 3 == 1, "a step key is a siblings id and device triples");
  HCSIM_ASSERT(key[0] == 0 || (siblings && !siblings->empty()), "a step key names siblings it is not given");
  const std::size_t n = key.size() / 3;
  for (std::size_t i = 0; i < n; ++i) {
    const int a = key[1 + 3 * i], v = key[2 + 3 * i], b = key[3 + 3 * i];
    // PXN: an NVLink hop to the relay, then the relay's NIC; the latencies add up.
    Seconds path{};
    for (const auto& [from, to] : {std::pair{a, v}, std::pair{v, b}}) {
      if (from == to) continue;
      path += hop(from, to, static_cast<std::uint32_t>(i), true);
      if (key[0] != 0 && !own_only)
        for (int o : *siblings) hop(from + o, to + o, static_cast<std::uint32_t>(i), false);
    }
    latency = max(latency, path);
    between += g_.node_of(a) != g_.node_of(b) ? 1 : 0;
  }
}

}  // namespace hcsim
