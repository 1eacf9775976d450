// sim/core/key_table: every key inserted is found with its own value, and no other key is,
// through the table's doublings (256 slots first, at most half full: 100,000 keys are
// nine doublings); the empty key and a second insertion of a key are internal errors.
#include "sim/core/key_table.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

// Keys of the two kinds the table holds: pairs of 32-bit ids (src << 32 | dst, nearby pairs
// differing in few bits) and scattered 64-bit values (a 64-bit LCG, Knuth's MMIX constants).
std::vector<std::uint64_t> keys(std::size_t n) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t src = 0; out.size() < n / 2; ++src)
    for (std::uint64_t dst = 0; dst < 16 && out.size() < n / 2; ++dst) out.push_back(src << 32 | (src * 8 + dst));
  std::uint64_t x = 1;
  while (out.size() < n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    if ((x >> 32) >= (1ULL << 31)) out.push_back(x);  // apart from the pairs (their src < 2^31)
  }
  return out;
}

TEST(KeyTable, EveryKeyReadsItsOwnValueThroughTheDoublings) {
  const std::vector<std::uint64_t> k = keys(100000);
  KeyTable<std::uint32_t> t;
  EXPECT_EQ(t.find(k[0]), nullptr);  // empty
  for (std::size_t i = 0; i < k.size(); ++i) {
    t.insert(k[i], static_cast<std::uint32_t>(i));
    // The key just added and one added long before, across each doubling.
    ASSERT_NE(t.find(k[i]), nullptr) << i;
    EXPECT_EQ(*t.find(k[i]), i);
    EXPECT_EQ(*t.find(k[i / 2]), i / 2);
  }
  EXPECT_EQ(t.size(), k.size());
  for (std::size_t i = 0; i < k.size(); ++i) {
    const std::uint32_t* v = t.find(k[i]);
    ASSERT_NE(v, nullptr) << i;
    EXPECT_EQ(*v, i) << i;
  }
  // Keys next to the inserted ones are not there.
  std::size_t absent = 0;
  for (std::uint64_t src = 0; src < 64; ++src)
    for (std::uint64_t dst = 16; dst < 32; ++dst) absent += t.find(src << 32 | (src * 8 + dst)) == nullptr ? 1 : 0;
  EXPECT_EQ(absent, 64U * 16U);
  t.clear();
  EXPECT_EQ(t.size(), 0U);
  EXPECT_EQ(t.find(k[0]), nullptr);
  t.insert(k[0], 7);
  EXPECT_EQ(*t.find(k[0]), 7U);
}

TEST(KeyTable, TheEmptyKeyAndARepeatedKeyAreRefused) {
  KeyTable<int> t;
  EXPECT_THROW(t.insert(KeyTable<int>::kEmpty, 1), InternalError);
  t.insert(42, 1);
  EXPECT_THROW(t.insert(42, 2), InternalError);
  EXPECT_EQ(*t.find(42), 1);
}

}  // namespace
}  // namespace hcsim
