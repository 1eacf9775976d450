// edit_distance and nearest_name (sim/core/nearest.hpp): the Levenshtein distance counts
// insertions, deletions and substitutions, each 1 (kitten → sitting is the textbook 3).
#include "sim/core/nearest.hpp"

#include <gtest/gtest.h>

namespace hcsim {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "run"), 3u);
  EXPECT_EQ(edit_distance("run", "run"), 0u);
  EXPECT_EQ(edit_distance("runn", "run"), 1u);
  EXPECT_EQ(edit_distance("serach", "search"), 2u);  // a transposition is two substitutions
}

TEST(NearestName, ClosestWithinTheLimitTiesByName) {
  const std::vector<std::string> names{"run", "validate", "sweep", "search", "schema"};
  EXPECT_EQ(nearest_name("runn", names, 1), "run");
  EXPECT_EQ(nearest_name("sweeep", names, 2), "sweep");
  EXPECT_EQ(nearest_name("frobnicate", names, 3), std::nullopt);
  EXPECT_EQ(nearest_name("ab", {"ax", "ay"}, 1), "ax");  // equal distance: the first in name order
  EXPECT_EQ(nearest_name("ab", {"ay", "ax"}, 1), "ax");
  EXPECT_EQ(nearest_name("x", {}, 5), std::nullopt);
}

}  // namespace
}  // namespace hcsim
