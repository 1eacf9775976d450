#include "sim/collectives/ring_phase.hpp"

#include <algorithm>

namespace hcsim {

std::int64_t ring_chunk_offset(const RingJob& j, int i) {
  if (!j.chunks.empty()) return j.chunks[static_cast<std::size_t>(i)].first;
  return j.offset + chunk_offset(j.length, static_cast<int>(j.members.size()), i);
}

std::int64_t ring_chunk_size(const RingJob& j, int i) {
  if (!j.chunks.empty()) return j.chunks[static_cast<std::size_t>(i)].second;
  return chunk_size(j.length, static_cast<int>(j.members.size()), i);
}

void append_ring_phase(std::vector<Step>& steps, const std::vector<RingJob>& jobs, bool reduce_scatter,
                       bool compressed) {
  std::size_t longest = 0, members = 0;
  for (const auto& j : jobs) {
    longest = std::max(longest, j.members.size());
    members += j.members.size();
  }
  const std::size_t count = compressed ? std::min<std::size_t>(longest, 2) : longest;
  for (std::size_t s = 0; s + 1 < count; ++s) {
    Step st;
    st.transfers.reserve(members);  // at most one transfer per member and step
    st.repeat = compressed ? static_cast<int>(longest) - 1 : 1;
    for (const auto& j : jobs) {
      const int m = static_cast<int>(j.members.size());
      if (static_cast<int>(s) >= m - 1) continue;
      for (int p = 0; p < m; ++p) {
        const int shift = reduce_scatter ? static_cast<int>(s) + 1 : static_cast<int>(s);
        const int c = ((p - shift) % m + m) % m;
        const auto off = ring_chunk_offset(j, c), cnt = ring_chunk_size(j, c);
        if (cnt == 0) continue;
        st.transfers.push_back({j.members[static_cast<std::size_t>(p)],
                                j.members[static_cast<std::size_t>((p + 1) % m)], off, off, cnt, reduce_scatter});
      }
    }
    steps.push_back(std::move(st));
  }
}

}  // namespace hcsim
