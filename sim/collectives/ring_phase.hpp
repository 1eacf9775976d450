#pragma once
// Building block shared by the ring, torus and hierarchical schedules: several disjoint
// rings run the same ring phase at once, each on its own region of the buffer.
//
// A ring of m members over region [offset, offset + length) splits the region into m
// chunks (chunk_offset / chunk_size), or takes its m chunks as listed (`chunks`: the
// multi-ring reduce-scatter and all-gather, whose ring j owns slice j of every rank's
// chunk, a region that is not contiguous). Reduce-scatter: at step s member p sends chunk
// (p - s - 1) mod m to member p + 1, which adds it in; after m - 1 steps member p holds the
// reduced chunk p. All-gather: at step s member p forwards chunk (p - s) mod m.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/collectives/schedule.hpp"

namespace hcsim {

struct RingJob {
  std::vector<int> members;  // ranks in ring order
  std::int64_t offset = 0, length = 0;
  // (offset, size) of chunk i, one per member in ring order; empty: the even split of
  // [offset, offset + length).
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks{};
};

// Offset and size of chunk i of a ring job's region.
std::int64_t ring_chunk_offset(const RingJob& j, int i);
std::int64_t ring_chunk_size(const RingJob& j, int i);

// Appends max(m) - 1 steps; step s holds every ring's step s (rings shorter than the
// longest simply finish early). `compressed`: only step 0, with repeat = max(m) - 1.
void append_ring_phase(std::vector<Step>& steps, const std::vector<RingJob>& jobs, bool reduce_scatter,
                       bool compressed = false);

// Pairwise exchange over n partners (all-to-all): at step s rank r swaps with partner
// r xor s (n = 2^k, s = 1..n-1) or (s - r) mod n (s = 0..n-1; a rank whose partner is
// itself idles). Appends the steps, calling add(step, r, partner) for each rank r with a
// partner; `compressed`: at most 64 evenly spaced steps, each standing for its share.
template <class Add>
void append_pairwise(std::vector<Step>& steps, int n, bool compressed, Add add) {
  if (n <= 1) return;
  const bool pow2 = (n & (n - 1)) == 0;
  const int first = pow2 ? 1 : 0, total = pow2 ? n - 1 : n;
  const int kept = compressed ? std::min(total, 64) : total;
  for (int i = 0; i < kept; ++i) {
    // Kept step i stands for the steps up to the next kept one.
    const int s = first + static_cast<int>(static_cast<std::int64_t>(i) * total / kept);
    const int next = first + static_cast<int>(static_cast<std::int64_t>(i + 1) * total / kept);
    Step st;
    st.repeat = next - s;
    for (int r = 0; r < n; ++r) {
      const int j = pow2 ? (r ^ s) : ((s - r) % n + n) % n;
      if (j != r) add(st, r, j);
    }
    steps.push_back(std::move(st));
  }
}

}  // namespace hcsim
