#pragma once
// DeepEP-style MoE dispatch and combine (DeepSeek-V3 report, arXiv 2412.19437 §3.2.2; the
// deepseek-ai/DeepEP kernels): a token routed to several experts of one node crosses the
// inter-node network once, to the GPU of the same local index on that node (its own rail),
// which forwards it over NVLink to every GPU of the node that hosts one of its experts. The
// combine is the reverse: the expert outputs of a token are summed on NVLink inside the
// node, then sent back across once.
//
// Deduplication. E routed experts sit evenly on the N nodes of the expert group (E/N each);
// a token picks k distinct experts uniformly (top-k of even routing). Node c receives none of
// them with probability C(E - E/N, k) / C(E, k) (hypergeometric), so the expected number of
// distinct nodes a token reaches is
//     D = N (1 - C(E - E/N, k) / C(E, k)),
// capped at M by node-limited routing (DeepSeek-V3 §2.1.2: each token goes to at most M = 4
// nodes, chosen by their highest-affinity experts, so each chosen node receives one of its
// experts): D = min(D, M). The all-to-all of today moves k copies of each token, S / n per
// destination rank for a send buffer of S (n = N g ranks); DeepEP moves D / N of the tokens,
// not k / N of the copies, to each node, so the inter-node message of the hierarchical
// exchange (S / N from one rank to its rail peer on another node) shrinks by D / k.
// Tests: tests/collectives/deepep_test.cpp (the formula against enumerating all C(E, k)
// expert sets).

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/collectives/schedule.hpp"

namespace hcsim {

// The collective algorithm's registry name (algorithms.cpp).
inline constexpr std::string_view kDeepepAlgorithm = "deepep";

// How tokens are routed to experts, for the deduplication of a DeepEP dispatch.
struct TokenRouting {
  std::int64_t experts = 0;  // routed experts E (0: none known; no deduplication)
  int top_k = 1;             // experts per token k
  int max_nodes = 0;         // node-limited routing M (0: none)
  // The routing distribution: expert j takes (j + 1)^-skew of the routed tokens (Zipf; 0:
  // uniform), and with a capacity factor > 0 every expert is padded to its capacity.
  double skew = 0, capacity_factor = 0;
  bool operator==(const TokenRouting&) const = default;
};

// Each of the E experts' share of the routed tokens under `skew` (sum 1; Zipf, (j + 1)^-skew).
std::vector<double> expert_shares(std::int64_t experts, double skew);
// Per rank of an expert-parallel group of `ranks` (rank r holding experts r E/ranks ..
// (r+1) E/ranks - 1), its experts' share of the routed tokens over the busiest rank's: the
// size of the all-to-all block each source sends it (BlockWeights, schedule.hpp). Empty when
// every rank receives as much: even routing, or every expert padded to its capacity.
std::vector<double> rank_block_weights(const TokenRouting& r, int ranks);

// Expected distinct nodes of N a token's k experts sit on (header comment); E % N == 0.
double expected_token_nodes(const TokenRouting& r, int nodes);
// D / k: the share of the hierarchical all-to-all's node-crossing bytes that a DeepEP
// dispatch sends (1 with no routing known, or on one node).
double deepep_node_share(const TokenRouting& r, int nodes);

// DeepEP all-to-all (rank = node * per_node + local), in place, on a send buffer of n blocks
// of b = elements / n (block j: the token copies bound for rank j):
//  1. across nodes, on rail i: a pairwise exchange among the nodes, (a, i) sending (c, i) its
//     blocks c g .. c g + g - 1 (bound for node c), which land in blocks a g .. a g + g - 1;
//     the message carries `node_share` of those g b elements (deduplication above; with 1 it
//     is the data itself);
//  2. inside each node: a pairwise exchange, (c, i) forwarding (c, l) block a g + l of every
//     node a (the copies (a, i) routed to (c, l)), into its block a g + i.
// With node_share = 1 this is an all-to-all (block j of rank r lands in block r of rank j).
// The combine runs the same steps: every step is a swap, so each link carries the same bytes
// both ways and the reversed order (NVLink first, then across) costs the same. One node: the
// pairwise exchange inside it.
// `weight` (empty: even): per rank, its blocks' size as a share of b (BlockWeights,
// schedule.hpp); a node's crossing message carries its ranks' mean.
Schedule deepep_all_to_all_schedule(int nodes, int per_node, std::int64_t elements, double node_share = 1,
                                    bool compressed = false, const std::vector<double>& weight = {});

}  // namespace hcsim
