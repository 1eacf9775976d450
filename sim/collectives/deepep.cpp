// DeepEP dispatch and combine: the deduplication of node-crossing bytes and the two-stage
// schedule (see deepep.hpp).
#include "sim/collectives/deepep.hpp"

#include <algorithm>
#include <cmath>

#include "sim/collectives/ring_phase.hpp"
#include "sim/core/error.hpp"

namespace hcsim {

double expected_token_nodes(const TokenRouting& r, int nodes) {
  HCSIM_ASSERT(nodes >= 1 && r.experts >= 1 && r.top_k >= 1 && r.top_k <= r.experts && r.experts % nodes == 0,
               "token routing needs k <= E experts spread evenly over the nodes");
  // C(E - m, k) / C(E, k) = prod_{i < k} (E - m - i) / (E - i), m = E / N experts per node;
  // 0 once a factor is (no k-set avoids the node).
  const double e = static_cast<double>(r.experts), m = e / nodes;
  double none = 1;
  for (int i = 0; i < r.top_k && none > 0; ++i) none *= std::max(0.0, (e - m - i) / (e - i));
  const double d = nodes * (1 - none);
  return r.max_nodes > 0 ? std::min(d, static_cast<double>(r.max_nodes)) : d;
}

std::vector<double> expert_shares(std::int64_t experts, double skew) {
  std::vector<double> w(static_cast<std::size_t>(std::max<std::int64_t>(1, experts)));
  double sum = 0;
  for (std::size_t j = 0; j < w.size(); ++j) sum += w[j] = std::pow(static_cast<double>(j + 1), -skew);
  for (double& x : w) x /= sum;
  return w;
}

std::vector<double> rank_block_weights(const TokenRouting& r, int ranks) {
  if (r.skew == 0 || r.capacity_factor > 0 || r.experts < ranks || ranks < 2) return {};
  const std::vector<double> w = expert_shares(r.experts, r.skew);
  const std::size_t per_rank = w.size() / static_cast<std::size_t>(ranks);
  std::vector<double> share(static_cast<std::size_t>(ranks), 0.0);
  for (std::size_t j = 0; j < per_rank * share.size(); ++j) share[j / per_rank] += w[j];
  const double most = *std::max_element(share.begin(), share.end());
  for (double& x : share) x /= most;
  return share;
}

double deepep_node_share(const TokenRouting& r, int nodes) {
  if (r.experts <= 0 || nodes <= 1) return 1;
  return expected_token_nodes(r, nodes) / r.top_k;
}

Schedule deepep_all_to_all_schedule(int nodes, int per_node, std::int64_t elements, double node_share, bool compressed,
                                    const std::vector<double>& weight) {
  const int n = nodes * per_node, g = per_node;
  HCSIM_ASSERT(nodes >= 1 && per_node >= 1 && elements % n == 0, "all-to-all needs a buffer of n equal blocks");
  HCSIM_ASSERT(node_share > 0 && node_share <= 1, "a DeepEP node share is in (0, 1]");
  HCSIM_ASSERT(weight.empty() || weight.size() == static_cast<std::size_t>(n), "a block weight per rank");
  Schedule sc{CollectiveOp::all_to_all, n, elements, {}, 0};
  const std::int64_t b = elements / n;
  if (b == 0) return sc;
  const BlockWeights w{weight};
  // Across nodes on rail i: (a, i) sends (c, i) the tokens bound for node c once each, as
  // many as node c's ranks' blocks together.
  auto sent = [&](int c) {
    std::int64_t node = 0;
    for (int l = 0; l < g; ++l) node += w.block(b, c * g + l);
    return std::max<std::int64_t>(1, std::llround(static_cast<double>(node) * node_share));
  };
  append_pairwise(sc.steps, nodes, compressed, [&](Step& st, int a, int c) {
    for (int i = 0; i < g; ++i) st.transfers.push_back({a * g + i, c * g + i, c * g * b, a * g * b, sent(c), false});
  });
  // Inside node c: (c, i) forwards (c, l) the copies every (a, i) routed to (c, l), block
  // a g + l, into the place of their source, block a g + i; (c, l) does the same for (c, i).
  append_pairwise(sc.steps, g, compressed, [&](Step& st, int i, int l) {
    for (int c = 0; c < nodes; ++c)
      for (int a = 0; a < nodes; ++a)
        st.transfers.push_back({c * g + i, c * g + l, (a * g + l) * b, (a * g + i) * b, w.block(b, c * g + l), false});
  });
  return sc;
}

}  // namespace hcsim
