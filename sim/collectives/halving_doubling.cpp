// Recursive halving-doubling (Rabenseifner) schedule (see schedule.hpp).
#include "sim/collectives/schedule.hpp"
#include "sim/core/error.hpp"

namespace hcsim {

Schedule halving_doubling_schedule(CollectiveOp op, int n, std::int64_t elements) {
  HCSIM_ASSERT(n >= 1, "a collective needs at least one rank");
  int p2 = 1;
  while (p2 * 2 <= n) p2 *= 2;
  const int rem = n - p2;
  HCSIM_ASSERT(op == CollectiveOp::all_reduce || ((op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather) && rem == 0),
               "halving-doubling: all-reduce for any n, reduce-scatter / all-gather for powers of two");
  Schedule sc{op, n, elements, {}, 0};
  if (n == 1) return sc;
  // Virtual rank v of the power-of-two core: the odd rank of each folded pair, then the rest.
  auto real = [&](int v) { return v < rem ? 2 * v + 1 : v + rem; };
  auto off = [&](int c) { return chunk_offset(elements, p2, c); };
  if (rem > 0) {
    Step pre;
    for (int i = 0; i < rem; ++i) pre.transfers.push_back({2 * i, 2 * i + 1, 0, 0, elements, true});
    sc.steps.push_back(std::move(pre));
  }
  std::vector<std::pair<int, int>> reg(static_cast<std::size_t>(p2), {0, p2});  // chunk-index ranges
  if (op == CollectiveOp::all_gather)
    for (int v = 0; v < p2; ++v) reg[static_cast<std::size_t>(v)] = {v, v + 1};
  auto add = [&](Step& st, int v, int partner, int lo, int hi, bool reduce) {
    if (off(hi) > off(lo)) st.transfers.push_back({real(v), real(partner), off(lo), off(lo), off(hi) - off(lo), reduce});
  };
  if (op != CollectiveOp::all_gather) {
    for (int mask = p2 / 2; mask >= 1; mask /= 2) {
      Step st;
      auto next = reg;
      for (int v = 0; v < p2; ++v) {
        const auto [lo, hi] = reg[static_cast<std::size_t>(v)];
        const int mid = (lo + hi) / 2;
        const bool upper = (v & mask) != 0;
        add(st, v, v ^ mask, upper ? lo : mid, upper ? mid : hi, true);
        next[static_cast<std::size_t>(v)] = upper ? std::make_pair(mid, hi) : std::make_pair(lo, mid);
      }
      reg = std::move(next);
      sc.steps.push_back(std::move(st));
    }
  }
  if (op != CollectiveOp::reduce_scatter) {
    for (int mask = 1; mask < p2; mask *= 2) {
      Step st;
      auto next = reg;
      for (int v = 0; v < p2; ++v) {
        const auto [lo, hi] = reg[static_cast<std::size_t>(v)];
        const auto [plo, phi] = reg[static_cast<std::size_t>(v ^ mask)];
        add(st, v, v ^ mask, lo, hi, false);
        next[static_cast<std::size_t>(v)] = {std::min(lo, plo), std::max(hi, phi)};
      }
      reg = std::move(next);
      sc.steps.push_back(std::move(st));
    }
  }
  if (rem > 0 && op == CollectiveOp::all_reduce) {
    Step post;
    for (int i = 0; i < rem; ++i) post.transfers.push_back({2 * i + 1, 2 * i, 0, 0, elements, false});
    sc.steps.push_back(std::move(post));
  }
  return sc;
}

}  // namespace hcsim
