#pragma once
// A pass's item list (workloads/items.hpp) summed into PassTotals, and the sums combined:
// what chunk_totals builds a chunk's totals from (one layer of each kind times its count,
// the ends apart), for the closed forms and the search, which never build the full lists.

#include <cstddef>
#include <vector>

#include "workloads/items.hpp"

namespace hcsim {

// The items' compute, flops, energy, collectives by op, context rings, MoE collectives,
// collectives hidden beside the next compute item, ZeRO-3 units; with `segments`, also the
// pass cut at its MoE collectives (EpSegment).
PassTotals pass_totals(const std::vector<Item>& items, bool segments = false);
// Pieces a then b (EpSegment): a's last piece (the end of its part) and b's first are one.
void append_segments(std::vector<EpSegment>& a, const std::vector<EpSegment>& b);
// The units of a chunk's pass in order: the first `lead` units of its ends (embedding
// forward, head backward), `layers` times one layer's, then the ends' others.
std::vector<UnitTotals> splice_units(const std::vector<UnitTotals>& ends, std::size_t lead,
                                     const std::vector<UnitTotals>& layer, int layers);
// a + k b, field by field.
PassTotals add_scaled(const PassTotals& a, const PassTotals& b, int k);
// The compute time of `bwd`'s items after each of its bucket markers, in pass order, into
// `after`; returns the pass's compute time.
Seconds compute_after_markers(const std::vector<Item>& bwd, std::vector<Seconds>& after);

}  // namespace hcsim
