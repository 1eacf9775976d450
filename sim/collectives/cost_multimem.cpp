// NVLS (multimem) steps of a collective schedule on a switch that reduces (cost.hpp):
// ld_reduce sends every source's slice up to the switch and the sum down to its owner,
// st sends a slice up once and down to every destination; the switch's multimem traffic
// gets nvls_efficiency x (channels - 1)/channels of each link (NCCL tuning.cc), so its
// bytes count as bytes / share. The step's per-link loads, its link bytes, and each rank's
// time (latency + its busiest link).
#include <set>
#include <tuple>

#include "sim/collectives/cost.hpp"
#include "sim/core/error.hpp"

namespace hcsim {

int CollectiveCostModel::reducing_switch(const TopologyGraph& g, const Route& r) {
  for (std::size_t i = 1; i + 1 < r.nodes.size(); ++i)
    if (g.nodes()[static_cast<std::size_t>(r.nodes[i])].in_switch_reduction) return static_cast<int>(i);
  return -1;
}

bool CollectiveCostModel::charge_multimem(const std::vector<const Transfer*>& mm, const std::vector<int>& rank_devices,
                                          Bytes element_size, std::vector<std::size_t>& touched, Seconds& lat,
                                          MultimemOwners* owners) const {
  // The switch's multimem traffic gets nvls_efficiency x (channels - 1)/channels of the
  // links (tuning.cc): its bytes count as bytes / share.
  const double share = opt_.protocols.nvls.bandwidth_share();
  std::set<std::tuple<int, std::int64_t, bool>> once;  // (rank, offset, reduce): its own slice, charged once
  for (const Transfer* t : mm) {
    const int a = rank_devices[static_cast<std::size_t>(t->src)], b = rank_devices[static_cast<std::size_t>(t->dst)];
    const Route& r = router_.device_route(a, b);
    const int k = reducing_switch(g_, r);
    if (!r.reachable || k < 0) return false;
    const auto sw = static_cast<std::size_t>(k);
    const double bytes = static_cast<double>(t->count) * element_size.value() / share;
    auto own = [&](int rank) { return owners ? &(*owners)[static_cast<std::size_t>(rank)].slots : nullptr; };
    if (owners)
      for (int rank : {t->src, t->dst}) {
        Seconds& l = (*owners)[static_cast<std::size_t>(rank)].latency;
        l = max(l, r.latency);
      }
    lat = max(lat, r.latency);
    // ld_reduce: every source's slice goes up, the sum comes down to the destination once, and
    // the destination's own slice goes up too. st: the slice goes up once and comes down to
    // every destination, the source included (a store to the multicast address).
    if (t->reduce)
      charge(r, 0, sw, bytes, touched, own(t->src));
    else
      charge(r, sw, r.edges.size(), bytes, touched, own(t->dst));
    const int owner = t->reduce ? t->dst : t->src;
    const int device = t->reduce ? b : a;
    if (!once.emplace(owner, t->reduce ? t->dst_offset : t->src_offset, t->reduce).second) continue;
    if (t->reduce)
      charge(r, sw, r.edges.size(), bytes, touched, own(t->dst));
    else
      charge(r, 0, sw, bytes, touched, own(t->src));
    const Route& self = t->reduce ? router_.route(g_.device_node(device), r.nodes[sw])
                                  : router_.route(r.nodes[sw], g_.device_node(device));
    charge(self, 0, self.edges.size(), bytes, touched, own(owner));
  }
  return true;
}

bool CollectiveCostModel::load_multimem(const Step& st, const std::vector<int>& rank_devices, Bytes element_size,
                                        std::vector<std::size_t>& touched, MultimemOwners* owners) const {
  std::vector<const Transfer*> mm;
  for (const Transfer& t : st.transfers)
    if (t.multimem && t.count > 0 && t.src != t.dst) mm.push_back(&t);
  Seconds lat{};
  return charge_multimem(mm, rank_devices, element_size, touched, lat, owners);
}

void CollectiveCostModel::add_multimem_edge_bytes(const Step& st, const std::vector<int>& rank_devices,
                                                  std::vector<double>& edge_bytes, Bytes element_size) const {
  std::vector<std::size_t> touched;
  const bool ok = load_multimem(st, rank_devices, element_size, touched, nullptr);
  const double share = opt_.protocols.nvls.bandwidth_share();  // loads count bytes / share
  for (std::size_t slot : touched) {
    edge_bytes[slot / 2] += load_[slot] * share * st.repeat;
    load_[slot] = 0;
  }
  HCSIM_ASSERT(ok, "multimem transfer without a reducing switch on its route");
}

std::vector<Seconds> CollectiveCostModel::multimem_times(const Step& st, const std::vector<int>& rank_devices,
                                                         Bytes element_size) const {
  MultimemOwners owners(rank_devices.size());
  std::vector<std::size_t> touched;
  const bool ok = load_multimem(st, rank_devices, element_size, touched, &owners);
  std::vector<Seconds> out(rank_devices.size());
  for (std::size_t r = 0; r < owners.size(); ++r) {
    Seconds bw{};
    for (std::size_t slot : owners[r].slots) {
      const auto& e = g_.edges()[slot / 2];
      bw = max(bw, Bytes(load_[slot]) / e.effective_bandwidth());
    }
    out[r] = owners[r].slots.empty() ? Seconds{} : owners[r].latency + bw;
  }
  for (std::size_t slot : touched) load_[slot] = 0;
  HCSIM_ASSERT(ok, "multimem transfer without a reducing switch on its route");
  return out;
}

}  // namespace hcsim
