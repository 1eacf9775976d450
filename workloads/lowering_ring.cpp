#include "workloads/lowering_ring.hpp"

namespace hcsim {

// Not inlined: inlined into the emitter's pass, g++ 12 at -O3 warns -Wfree-nonheap-object on
// the destruction of `sent` (a false positive of its value-range propagation).
[[gnu::noinline]] void RingAttention::emit(int s, int microbatch, Phase pass, const Item& block, Bytes comm_bytes,
                                           std::vector<TaskId>& chain, std::vector<TaskId>& extra) const {
  const auto dev = [&](int d, int t) { return layout.device(s, d, t); };
  const auto ring_peer = [&](int d, int step) { return d / cp * cp + (d % cp + step + cp) % cp; };
  const auto received = [&](const std::vector<TaskId>& ids, int d, int t) {
    const int from = ring_peer(d, -1);
    return ids[static_cast<std::size_t>((from < dp ? from : d) * tp + t)];
  };
  const std::vector<TaskId> ready = chain;  // this rank's K/V (and, backward, dO) exist
  for (std::size_t r = 0; r < chain.size(); ++r) {
    const auto d = static_cast<int>(r) / tp, t = static_cast<int>(r) % tp;
    chain[r] = tasks.compute(dev(d, t), block, block.phase, s, microbatch, chain[r], extra[r]);
    extra[r] = kNoTask;
  }
  std::vector<TaskId> sent(chain.size(), kNoTask);
  for (int k = 1; k < cp; ++k) {
    const std::vector<TaskId> before = sent;
    for (int d = 0; d < dp; ++d)
      for (int t = 0; t < tp; ++t) {
        const auto r = static_cast<std::size_t>(d * tp + t);
        sent[r] = tasks.send(dev(d, t), dev(ring_peer(d, 1), t), comm_bytes, CommClass::cp, pass, s, microbatch,
                             send_label, {k == 1 ? ready[r] : before[r], k == 1 ? kNoTask : received(before, d, t)});
      }
    g.add_mirror(sent[0], groups.pair_mirrors({s, s, 1}, [&](int d) { return ring_peer(d, 1); }));
    for (int d = 0; d < dp; ++d)
      for (int t = 0; t < tp; ++t) {
        const auto r = static_cast<std::size_t>(d * tp + t);
        chain[r] = tasks.compute(dev(d, t), block, block.phase, s, microbatch, chain[r], received(sent, d, t));
      }
  }
}

}  // namespace hcsim
