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
                                      "double_binary_tree", "in_network", "chain", "pairwise", "direct"};
  EXPECT_EQ(auto_names(), want);
  ASSERT_NE(find_collective_algorithm("halving_doubling"), nullptr);
  EXPECT_FALSE(find_collective_algorithm("halving_doubling")->auto_priority.has_value());
}

TEST(CollectiveAlgorithms, PipelinedEntriesDeclareDepthAndShare) {
  // Double binary tree (Sanders, Speck & Traeff 2009): depth floor(log2 n), each of the two
  // trees carries half of an all-reduce and the whole of a broadcast or reduce. Chain: a ring
  // cut open, n - 1 hops, the whole buffer; "auto" tries it up to 256 ranks.
  const CollectiveAlgorithm* tree = find_collective_algorithm("double_binary_tree");
  const CollectiveAlgorithm* chain = find_collective_algorithm("chain");
  ASSERT_TRUE(tree && chain);
  ASSERT_TRUE(tree->pipelined && chain->pipelined);
  for (int n = 2; n <= 1024; ++n) {
    EXPECT_EQ(tree->depth(n), static_cast<int>(std::floor(std::log2(n)))) << n;
    EXPECT_EQ(chain->depth(n), n - 1) << n;
  }
  EXPECT_EQ(tree->share(CollectiveOp::all_reduce), 0.5);
  EXPECT_EQ(tree->share(CollectiveOp::broadcast), 1.0);
  EXPECT_EQ(chain->share(CollectiveOp::broadcast), 1.0);
  EXPECT_EQ(chain->auto_max_ranks, 256);
  for (const auto& [name, a] : collective_algorithms()) {
    if (a.pipelined) {
      EXPECT_TRUE(a.depth && a.share) << name;
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
