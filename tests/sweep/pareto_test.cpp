// The Pareto front (sim/sweep/pareto.cpp) on points whose dominance is worked by hand.
#include "sim/sweep/pareto.hpp"

#include <gtest/gtest.h>

namespace hcsim::sweep {
namespace {

TEST(Pareto, KeepsExactlyTheNonDominatedPoints) {
  // (step time, energy, devices), all minimised.
  const std::vector<std::vector<double>> pts{
      {1.0, 5.0, 8},   // 0: fastest at 8 devices
      {2.0, 3.0, 8},   // 1: slower, cheaper: on the front
      {2.0, 4.0, 8},   // 2: dominated by 1
      {0.5, 6.0, 16},  // 3: fastest overall, more devices: on the front
      {1.0, 5.0, 16},  // 4: dominated by 0 (same time and energy, more devices)
      {3.0, 3.0, 4},   // 5: fewest devices: on the front
      {1.0, 5.0, 8},   // 6: equal to 0: kept with it
  };
  EXPECT_EQ(pareto_front(pts), (std::vector<std::size_t>{0, 1, 3, 5, 6}));
}

TEST(Pareto, OneObjectiveKeepsTheMinimaAndEmptyStaysEmpty) {
  EXPECT_EQ(pareto_front({{3}, {1}, {2}, {1}}), (std::vector<std::size_t>{1, 3}));
  EXPECT_TRUE(pareto_front({}).empty());
}

}  // namespace
}  // namespace hcsim::sweep
