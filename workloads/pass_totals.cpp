// A pass's item list summed (see pass_totals.hpp).
#include "workloads/pass_totals.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

// Adds `r` to the entry of `list` that `same` matches (counts summed), or appends it.
template <class T, class Same>
void add_counted(std::vector<T>& list, const T& r, Same same) {
  if (r.count == 0) return;
  for (T& x : list)
    if (same(x, r)) {
      x.count += r.count;
      return;
    }
  list.push_back(r);
}

void add_ring(std::vector<CpRing>& rings, const CpRing& r) {
  add_counted(rings, r, [](const CpRing& a, const CpRing& b) { return a.t == b.t && a.bytes == b.bytes; });
}

void add_ep(std::vector<EpComm>& list, const EpComm& e) {
  add_counted(list, e, [](const EpComm& a, const EpComm& b) { return a.bytes == b.bytes && a.op == b.op; });
}

void add_hidden(std::vector<HiddenComm>& hidden, const HiddenComm& h) {
  add_counted(hidden, h, [](const HiddenComm& a, const HiddenComm& b) { return a.op == b.op && a.t == b.t; });
}

}  // namespace

// The pass's pieces (EpSegment) of `items`: `segments` true, or none.
PassTotals pass_totals(const std::vector<Item>& items, bool segments) {
  PassTotals p;
  if (segments) p.segments.emplace_back();
  const Item* overlapped = nullptr;  // a collective waiting for the compute item it runs beside
  for (const Item& it : items) {
    if (overlapped && it.kind == Item::Kind::compute) {
      add_hidden(p.hidden, {overlapped->op, it.t, 1});
      if (!p.units.empty()) add_hidden(p.units.back().hidden, {overlapped->op, it.t, 1});
      if (segments) add_hidden(p.segments.back().work.hidden, {overlapped->op, it.t, 1});
      overlapped = nullptr;
    }
    HCSIM_ASSERT(!overlapped, "a tensor-parallel collective runs beside a compute item: none follows it");
    if (it.kind == Item::Kind::compute || it.kind == Item::Kind::cp_ring) {
      if (it.kind == Item::Kind::cp_ring) add_ring(p.cp, {it.t, it.comm_bytes, 1});
      p.t += it.t;
      p.flops += it.flops;
      p.model_flops += it.model_flops;
      p.energy += it.energy;
      if (!p.units.empty()) p.units.back().t += it.t;
      if (segments) p.segments.back().work.t += it.t;
    } else if (it.kind == Item::Kind::tp_comm) {
      if (it.overlap_next) {
        overlapped = &it;
      } else {
        ++p.comm[static_cast<std::size_t>(it.op)];
        if (!p.units.empty()) ++p.units.back().comm[static_cast<std::size_t>(it.op)];
        if (segments) ++p.segments.back().work.comm[static_cast<std::size_t>(it.op)];
      }
    } else if (it.kind == Item::Kind::unit) {
      p.units.push_back({Seconds{}, {}, {}, it.comm_bytes, it.grad_bytes});
    } else if (it.kind == Item::Kind::ep_comm) {
      HCSIM_ASSERT(p.units.empty(), "ZeRO-3 / FSDP units of an MoE layer");
      add_ep(p.ep, {it.comm_bytes, 1, it.op});
      if (segments) {
        p.segments.back().ep = {it.comm_bytes, 1, it.op};
        p.segments.emplace_back();
      }
    }
  }
  HCSIM_ASSERT(!overlapped, "a tensor-parallel collective runs beside a compute item: none follows it");
  return p;
}

// Pieces a then b (EpSegment): a's last piece (the end of its part) and b's first are one.
void append_segments(std::vector<EpSegment>& a, const std::vector<EpSegment>& b) {
  if (b.empty()) return;
  if (a.empty()) {
    a = b;
    return;
  }
  UnitTotals& w = a.back().work;
  const UnitTotals& x = b.front().work;
  w.t += x.t;
  for (std::size_t i = 0; i < w.comm.size(); ++i) w.comm[i] += x.comm[i];
  for (const HiddenComm& h : x.hidden) add_hidden(w.hidden, h);
  a.back().ep = b.front().ep;
  a.insert(a.end(), b.begin() + 1, b.end());
}

// The units of a chunk's pass in order: the first `lead` units of its ends (embedding
// forward, head backward), `layers` times one layer's, then the ends' others.
std::vector<UnitTotals> splice_units(const std::vector<UnitTotals>& ends, std::size_t lead,
                                     const std::vector<UnitTotals>& layer, int layers) {
  std::vector<UnitTotals> u(ends.begin(), ends.begin() + static_cast<std::ptrdiff_t>(std::min(lead, ends.size())));
  for (int l = 0; l < layers; ++l) u.insert(u.end(), layer.begin(), layer.end());
  if (lead < ends.size()) u.insert(u.end(), ends.begin() + static_cast<std::ptrdiff_t>(lead), ends.end());
  return u;
}

// a + k b, field by field.
PassTotals add_scaled(const PassTotals& a, const PassTotals& b, int k) {
  PassTotals p = a;
  p.t += k * b.t;
  p.flops += k * b.flops;
  p.model_flops += k * b.model_flops;
  p.energy += k * b.energy;
  for (std::size_t i = 0; i < p.comm.size(); ++i) p.comm[i] += k * b.comm[i];
  for (const CpRing& r : b.cp) add_ring(p.cp, {r.t, r.bytes, k * r.count});
  for (const HiddenComm& h : b.hidden) add_hidden(p.hidden, {h.op, h.t, k * h.count});
  for (const EpComm& e : b.ep) add_ep(p.ep, {e.bytes, k * e.count, e.op});
  return p;
}

// The compute time of `bwd`'s items after each of its bucket markers, in pass order, into
// `after`; returns the pass's compute time.
Seconds compute_after_markers(const std::vector<Item>& bwd, std::vector<Seconds>& after) {
  Seconds total{};
  after.clear();
  for (auto it = bwd.rbegin(); it != bwd.rend(); ++it) {
    if (it->kind == Item::Kind::bucket) after.push_back(total);
    if (it->kind == Item::Kind::compute || it->kind == Item::Kind::cp_ring) total += it->t;
  }
  std::reverse(after.begin(), after.end());
  return total;
}

}  // namespace hcsim
