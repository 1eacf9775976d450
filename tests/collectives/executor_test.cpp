// Every algorithm run on real buffers (the reference executor) must compute the true
// sum / gather / scatter: expected values come from expected_result(), i.e. the
// definition of each operation summed directly, for group sizes 2..64 and ragged sizes.
#include "sim/collectives/executor.hpp"

#include <cmath>
#include <random>
#include <tuple>

#include <gtest/gtest.h>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/deepep.hpp"

namespace hcsim {
namespace {

std::vector<Eigen::VectorXd> random_inputs(int n, std::int64_t len, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-1000, 1000);  // integers: sums are exact in double
  std::vector<Eigen::VectorXd> out;
  for (int r = 0; r < n; ++r) {
    Eigen::VectorXd v(len);
    for (std::int64_t i = 0; i < len; ++i) v[i] = dist(rng);
    out.push_back(std::move(v));
  }
  return out;
}

// Runs `sc` and compares every specified element; returns the first mismatch.
std::string run_and_compare(const Schedule& sc, std::uint64_t seed) {
  auto inputs = random_inputs(sc.ranks, sc.elements, seed);
  auto buffers = inputs;
  if (auto err = execute_schedule(sc, buffers); !err.empty()) return err;
  const auto want = expected_result(sc.op, inputs, sc.root);
  for (int r = 0; r < sc.ranks; ++r)
    for (std::int64_t i = 0; i < sc.elements; ++i) {
      const double w = want[static_cast<std::size_t>(r)][i];
      if (!std::isnan(w) && buffers[static_cast<std::size_t>(r)][i] != w)
        return "rank " + std::to_string(r) + " element " + std::to_string(i) + ": got " +
               std::to_string(buffers[static_cast<std::size_t>(r)][i]) + ", want " + std::to_string(w);
    }
  return {};
}

std::vector<std::int64_t> sizes_for(int n) { return {1, n - 1, n, 3 * n + 1, 101}; }

TEST(Executor, EveryAlgorithmComputesItsOperationForGroupsOf2To64) {
  const CollectiveOp ops[] = {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather,
                              CollectiveOp::broadcast,  CollectiveOp::reduce,         CollectiveOp::all_to_all};
  int checked = 0;
  for (const auto& [name, algo] : collective_algorithms()) {
    if (algo.analytic_only) continue;
    for (int n = 2; n <= 64; ++n) {
      GroupShape shape{n, 1, 0, {}};
      for (CollectiveOp op : ops) {
        if (!algo.supports(op, shape)) continue;
        for (std::int64_t len : sizes_for(n)) {
          if (op == CollectiveOp::all_to_all) len = len * n;  // n equal blocks
          for (int chunks : algo.pipelined ? std::vector<int>{1, 3} : std::vector<int>{1}) {
            const Schedule sc = algo.schedule({op, shape, len, chunks, false});
            ASSERT_EQ(run_and_compare(sc, 1000u * static_cast<unsigned>(n) + static_cast<unsigned>(len)), "")
                << name << " " << collective_op_name(op) << " n=" << n << " elements=" << len << " chunks=" << chunks;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 2000);
}

TEST(Executor, TorusRingsOnTwoAndThreeDimensions) {
  for (const std::vector<int>& dims : std::vector<std::vector<int>>{{2, 2}, {4, 4}, {3, 5}, {2, 3, 4}, {4, 4, 4}, {1, 4, 2}}) {
    int n = 1;
    for (int d : dims) n *= d;
    for (std::int64_t len : sizes_for(n)) {
      const Schedule sc = torus_schedule(CollectiveOp::all_reduce, dims, len);
      ASSERT_EQ(run_and_compare(sc, 7u + static_cast<unsigned>(len)), "") << "n=" << n << " elements=" << len;
    }
  }
}

TEST(Executor, TorusAllDimensionsAtOnce) {
  // 2d parts, each reduced along the dimensions in its own order and direction; the sum
  // must come out exact on integers for every shape, sizes of 1 and 2 included.
  for (const std::vector<int>& dims : std::vector<std::vector<int>>{{2, 2}, {4, 4}, {3, 5}, {2, 3, 4}, {4, 4, 4}, {1, 4, 2}}) {
    int n = 1;
    for (int d : dims) n *= d;
    for (std::int64_t len : sizes_for(n)) {
      const Schedule sc = torus_all_dims_schedule(CollectiveOp::all_reduce, dims, len);
      ASSERT_EQ(run_and_compare(sc, 17u + static_cast<unsigned>(len)), "") << "n=" << n << " elements=" << len;
    }
  }
}

TEST(Executor, HierarchicalOnNodesOfEqualSize) {
  for (int nodes : {2, 3, 4, 8})
    for (int per_node : {2, 4, 8})
      for (std::int64_t len : {std::int64_t{1}, std::int64_t{nodes * per_node} + 5, std::int64_t{97}}) {
        const Schedule sc = hierarchical_schedule(CollectiveOp::all_reduce, nodes, per_node, len);
        ASSERT_EQ(run_and_compare(sc, 11u + static_cast<unsigned>(len)), "") << nodes << "x" << per_node;
      }
}

TEST(Executor, NodeAwareAllToAllsOnNodesOfEqualSize) {
  // Block j of rank r lands in block r of rank j, for odd and power-of-two node counts and
  // node sizes: the hierarchical exchange (inside the node, then one rail across) and DeepEP's
  // order with every token's copies sent across (node share 1: one rail across, then the
  // NVLink forwarding).
  using Build = Schedule (*)(int, int, std::int64_t);
  const Build builds[] = {[](int n, int g, std::int64_t e) { return hierarchical_all_to_all_schedule(n, g, e); },
                          [](int n, int g, std::int64_t e) { return deepep_all_to_all_schedule(n, g, e); }};
  for (int i : {0, 1})
    for (int nodes : {1, 2, 3, 4, 8})
      for (int per_node : {1, 2, 3, 4, 8})
        for (std::int64_t block : {std::int64_t{1}, std::int64_t{3}}) {
          const Schedule sc = builds[i](nodes, per_node, block * nodes * per_node);
          ASSERT_EQ(run_and_compare(sc, 29u + static_cast<unsigned>(block)), "")
              << (i == 0 ? "hierarchical " : "deepep ") << nodes << "x" << per_node;
        }
}

TEST(Executor, MultiRingOnNodesOfEqualSize) {
  // All-reduce, and reduce-scatter / all-gather, whose ring j carries slice j of every
  // rank's chunk (ragged: chunks of one rank split unevenly over the rings, some empty).
  for (CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather})
    for (int nodes : {2, 3, 5})
      for (int per_node : {2, 4, 8})
        for (std::int64_t len : {std::int64_t{1}, std::int64_t{nodes * per_node} - 1, std::int64_t{203},
                                 std::int64_t{nodes * per_node * per_node} + 3}) {
          const Schedule sc = multi_ring_schedule(op, nodes, per_node, len);
          ASSERT_EQ(run_and_compare(sc, 13u + static_cast<unsigned>(len)), "")
              << collective_op_name(op) << " " << nodes << "x" << per_node << " elements=" << len;
        }
}

TEST(Executor, SendRecv) {
  ASSERT_EQ(run_and_compare(send_recv_schedule(17), 5), "");
}

TEST(Executor, StepCountsMatchTheAlgorithms) {
  // Ring all-reduce: 2(n-1) steps; halving-doubling on 2^k: 2k; torus 4x4: 2 x 2 x (4-1).
  EXPECT_EQ(ring_schedule(CollectiveOp::all_reduce, 8, 64).steps.size(), 14u);
  EXPECT_EQ(halving_doubling_schedule(CollectiveOp::all_reduce, 16, 64).steps.size(), 8u);
  EXPECT_EQ(halving_doubling_schedule(CollectiveOp::all_reduce, 12, 64).steps.size(), 8u);  // 6 + fold in/out
  EXPECT_EQ(torus_schedule(CollectiveOp::all_reduce, {4, 4}, 64).steps.size(), 12u);
  // Tree, depth D = floor(log2 n): 2 (c + D - 1) steps.
  EXPECT_EQ(double_binary_tree_schedule(CollectiveOp::all_reduce, 16, 1024, 4).steps.size(), 2u * (4 + 4 - 1));
  EXPECT_EQ(pairwise_all_to_all_schedule(8, 64).steps.size(), 7u);
  EXPECT_EQ(pairwise_all_to_all_schedule(6, 60).steps.size(), 6u);
  // Hierarchical all-to-all, 4 nodes of 8: 7 steps inside the node, 3 across; DeepEP's, 3
  // across, then 7 inside.
  EXPECT_EQ(hierarchical_all_to_all_schedule(4, 8, 32 * 4).steps.size(), 10u);
  EXPECT_EQ(deepep_all_to_all_schedule(4, 8, 32 * 4).steps.size(), 10u);
}

TEST(Executor, DoubleBinaryTreesAreComplementary) {
  // Every rank forwards (is interior) in at most one of the two trees: it receives from
  // at most 2 children per reduce step counted over both trees (Sanders et al. 2009).
  for (int n : {7, 8, 16, 33}) {
    const Schedule sc = double_binary_tree_schedule(CollectiveOp::all_reduce, n, 1 << 12, 1);
    for (const auto& st : sc.steps) {
      std::vector<int> received(static_cast<std::size_t>(n), 0);
      for (const auto& t : st.transfers) ++received[static_cast<std::size_t>(t.dst)];
      for (int c : received) EXPECT_LE(c, 2) << n;
    }
  }
}

// A compressed tree schedule, each step expanded by its repeat count, moves the same counts
// between the same ranks, step by step and in the same order, as the full schedule; with many
// chunks it has O(depth) steps: D - 1 to fill, one repeated, D - 1 to drain, per phase of an
// all-reduce whose chunks are one size.
TEST(Executor, CompressedTreesRepeatTheirSteadySteps) {
  using Key = std::tuple<int, int, std::int64_t, bool>;
  auto expand = [](const Schedule& sc) {
    std::vector<std::vector<Key>> steps;
    for (const auto& st : sc.steps)
      for (int r = 0; r < st.repeat; ++r) {
        steps.emplace_back();
        for (const auto& t : st.transfers) steps.back().emplace_back(t.src, t.dst, t.count, t.reduce);
      }
    return steps;
  };
  for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::broadcast, CollectiveOp::reduce})
    for (const int n : {2, 5, 16, 33})
      for (const int chunks : {1, 3, 40})
        for (const std::int64_t elements : {std::int64_t{7}, std::int64_t{4000}, std::int64_t{4019}}) {
          const Schedule full = double_binary_tree_schedule(op, n, elements, chunks);
          const Schedule packed = double_binary_tree_schedule(op, n, elements, chunks, true);
          EXPECT_EQ(expand(packed), expand(full)) << n << " ranks, " << chunks << " chunks, " << elements;
        }
  // 16 ranks: D = 4; 256 chunks of 16 elements each (4096 per tree).
  EXPECT_EQ(double_binary_tree_schedule(CollectiveOp::all_reduce, 16, 8192, 256, true).steps.size(), 2u * (2 * 4 - 1));
  EXPECT_EQ(double_binary_tree_schedule(CollectiveOp::all_reduce, 16, 8192, 256).steps.size(), 2u * (256 + 4 - 1));
}

TEST(Executor, MalformedSchedulesAreRejected) {
  Schedule bad{CollectiveOp::all_reduce, 2, 4, {}, 0};
  bad.steps.push_back({{{0, 1, 0, 0, 4, false}, {1, 1, 0, 2, 2, false}}});
  std::vector<Eigen::VectorXd> b(2, Eigen::VectorXd::Zero(4));
  EXPECT_EQ(execute_schedule(bad, b), "step 0: rank 1 is overwritten twice at element 2");
  Schedule out{CollectiveOp::all_reduce, 2, 4, {}, 0};
  out.steps.push_back({{{0, 1, 2, 0, 4, true}}});
  EXPECT_EQ(execute_schedule(out, b), "step 0: transfer 0 -> 1 outside the buffers");
  const Schedule compressed = ring_schedule(CollectiveOp::all_reduce, 4, 16, true);
  std::vector<Eigen::VectorXd> c(4, Eigen::VectorXd::Zero(16));
  EXPECT_EQ(execute_schedule(compressed, c), "a compressed schedule (repeated steps) cannot be executed");
}

}  // namespace
}  // namespace hcsim
