// "did you mean" for unknown keys, choices, presets and types (sim/core/nearest.hpp: suggest).
#include "sim/core/nearest.hpp"

#include <gtest/gtest.h>

namespace hcsim {
namespace {

TEST(Suggest, EditDistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("micro_bach", "micro_batch"), 1u);  // one insertion
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);          // the textbook case
  EXPECT_EQ(edit_distance("abc", ""), 3u);
}

TEST(Suggest, ASlipElseTheValidNames) {
  const std::vector<std::string> keys = {"global_batch", "micro_batch", "model", "precision"};
  EXPECT_EQ(suggest("micro_bach", keys), "did you mean \"micro_batch\"?");
  EXPECT_EQ(suggest("precison", keys), "did you mean \"precision\"?");
  EXPECT_EQ(suggest("frobnicate", keys), "valid ones are: global_batch, micro_batch, model, precision");
  // Two edits, or a third of the length: "zero-bubble" is not a slip of "1f1b".
  EXPECT_EQ(suggest("zero-bubble", {"1f1b", "gpipe", "interleaved-1f1b"}),
            "valid ones are: 1f1b, gpipe, interleaved-1f1b");
  EXPECT_EQ(suggest("interleaved-1fb1", {"1f1b", "gpipe", "interleaved-1f1b"}), "did you mean \"interleaved-1f1b\"?");
  // A shortened name is not a slip of another: "nvidia-a100" begins one preset, and is two
  // edits from another.
  EXPECT_EQ(suggest("nvidia-a100", {"nvidia-a100-80gb-sxm", "nvidia-b200"}), "did you mean \"nvidia-a100-80gb-sxm\"?");
  EXPECT_EQ(suggest("nvidia-a100", {"nvidia-a100-40gb", "nvidia-a100-80gb-sxm", "nvidia-b200"}),
            "valid ones are: nvidia-a100-40gb, nvidia-a100-80gb-sxm, nvidia-b200");
  // A one-letter word is a slip of nothing.
  EXPECT_EQ(suggest("x", {"dp", "pp", "tp"}), "valid ones are: dp, pp, tp");
}

}  // namespace
}  // namespace hcsim
