// The collective-algorithm registry (sim/collectives/algorithms.cpp): what "auto" tries and
// in which order, and the pipeline facts each pipelined entry declares for the cost model.
#include "sim/collectives/algorithms.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace hcsim {
namespace {

std::vector<std::string> auto_names() {
  std::vector<std::string> out;
  for (const CollectiveAlgorithm* a : auto_candidates()) out.push_back(a->name);
  return out;
}

TEST(CollectiveAlgorithms, AutoTriesEveryEntryWithAPriorityInPriorityThenNameOrder) {
  // The rule of algorithms.hpp, checked against the registry itself: an entry added with a
  // priority is a candidate without any other list to edit.
  std::vector<const CollectiveAlgorithm*> want;
  for (const auto& [name, a] : collective_algorithms())
    if (a.auto_priority) want.push_back(&a);
  std::sort(want.begin(), want.end(), [](const CollectiveAlgorithm* x, const CollectiveAlgorithm* y) {
    return std::make_pair(*x->auto_priority, x->name) < std::make_pair(*y->auto_priority, y->name);
  });
  EXPECT_EQ(auto_candidates(), want);
}

TEST(CollectiveAlgorithms, BuiltinAutoOrderIsTheOneTheShippedReportsWereMadeWith) {
  // The preference on equal predicted time that hcsim's reports have always used (the order
  // cost.cpp once listed): NCCL's own algorithms first (ring, its channels, trees, CollNet),
  // then the rest; the all-dimension torus rings right after the dimension-ordered ones.
  // Halving-doubling, an MPI algorithm, is not a candidate: used only when named.
  const std::vector<std::string> want{"ring",       "multi_ring", "hierarchical", "torus",   "torus_all_dims",
                                      "double_binary_tree", "in_network", "nvls_tree", "chain", "pairwise",
                                      "direct"};
  EXPECT_EQ(auto_names(), want);
  ASSERT_NE(find_collective_algorithm("halving_doubling"), nullptr);
  EXPECT_FALSE(find_collective_algorithm("halving_doubling")->auto_priority.has_value());
}

TEST(CollectiveAlgorithms, PipelinedEntriesDeclareDepthAndShare) {
  // Double binary tree (Sanders, Speck & Traeff 2009): in-order trees of depth ceil(log2 n)
  // (the root has one child: 2 ranks need 1 level, 3 and 4 need 2, 5 to 8 need 3), each of the two
  // trees carries half of an all-reduce and the whole of a broadcast or reduce. Chain: a ring
  // cut open, n - 1 hops, the whole buffer; "auto" tries it up to 256 ranks.
  const CollectiveAlgorithm* tree = find_collective_algorithm("double_binary_tree");
  const CollectiveAlgorithm* chain = find_collective_algorithm("chain");
  ASSERT_TRUE(tree && chain);
  ASSERT_TRUE(tree->pipelined && chain->pipelined);
  for (int n = 2; n <= 1024; ++n) {
    const GroupShape s{.ranks = n};
    EXPECT_EQ(tree->depth(s), static_cast<int>(std::ceil(std::log2(n)))) << n;
    EXPECT_EQ(chain->depth(s), n - 1) << n;
  }
  const GroupShape any{.ranks = 8};
  EXPECT_EQ(tree->share(CollectiveOp::all_reduce, any), 0.5);
  EXPECT_EQ(tree->share(CollectiveOp::broadcast, any), 1.0);
  EXPECT_EQ(chain->share(CollectiveOp::broadcast, any), 1.0);
  // NVLS tree (NCCL's NVLS_TREE) on N nodes of g GPUs: a piece enters at step k and leaves at
  // k + 2D + 1, D = ceil(log2 N) the height of the rails' trees (depth 2D + 2 = 6 on 4 nodes).
  // Two stages: each GPU's NVLink (rank 0 -> 1) carries (g + 1)/g of the buffer (multimem
  // loads and stores), each NIC (rank 0 -> rank g, rail 0 of node 1) at most twice its 1/g
  // slice each way (an interior rank of one tree and a leaf of the other: 4 halves).
  const CollectiveAlgorithm* nvls = find_collective_algorithm("nvls_tree");
  ASSERT_TRUE(nvls && nvls->pipelined && nvls->stages);
  const GroupShape four{.ranks = 32, .nodes = 4, .per_node = 8};
  EXPECT_EQ(nvls->depth(four), 6);
  const auto stages = nvls->stages(CollectiveOp::all_reduce, four);
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(std::pair(stages[0].from, stages[0].to), std::pair(0, 1));
  EXPECT_DOUBLE_EQ(stages[0].share, 9.0 / 8);
  EXPECT_EQ(std::pair(stages[1].from, stages[1].to), std::pair(0, 8));
  EXPECT_DOUBLE_EQ(stages[1].share, 2.0 / 8);
  EXPECT_DOUBLE_EQ(nvls->stages(CollectiveOp::all_reduce, {.ranks = 16, .nodes = 2, .per_node = 8})[1].share, 1.0 / 8);
  EXPECT_EQ(chain->auto_max_ranks, 256);
  for (const auto& [name, a] : collective_algorithms()) {
    if (a.pipelined) {
      EXPECT_TRUE(a.depth && (a.share || a.stages)) << name;
    }
  }
}

TEST(CollectiveAlgorithms, ChoicesAreAutoThenEveryName) {
  std::vector<std::string> want{"auto"};
  for (const auto& [name, a] : collective_algorithms()) want.push_back(name);
  EXPECT_EQ(collective_algorithm_choices(), want);
}

}  // namespace
}  // namespace hcsim
