// A table from 64-bit keys to small values, by open addressing.
//
// The hot lookups of a frontier-scale run go by a 64-bit key (a pair of 32-bit ids: the
// router's routes by node pair, a translate's base route by device pair, a mirror set's base
// pairs): tens of thousands to millions of lookups in tables of some hundred to some ten
// thousand entries. A std::unordered_map allocates a node per entry and reads through it;
// this table keeps its entries in one array, probed linearly from the key's hash, at most
// half full (it doubles when an insertion would pass that), so a lookup reads one or two
// neighbouring slots. The key ~0 marks an empty slot and is not a key. Entries are neither
// erased nor iterated: lookups give the same results whatever the hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"

namespace hcsim {

template <class V>
class KeyTable {
 public:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  // The value of `key`, or nullptr where it is not in the table (valid until the next insert).
  [[nodiscard]] const V* find(std::uint64_t key) const {
    if (slots_.empty()) return nullptr;
    const Slot& s = slots_[probe(key)];
    return s.key == key ? &s.value : nullptr;
  }
  // Adds `key`, which must not be in the table yet, with `value`.
  void insert(std::uint64_t key, V value) {
    HCSIM_ASSERT(key != kEmpty, "a key table's empty key inserted");
    if (2 * (size_ + 1) > slots_.size()) grow();
    Slot& s = slots_[probe(key)];
    HCSIM_ASSERT(s.key == kEmpty, "a key inserted twice into a key table");
    s = {key, std::move(value)};
    ++size_;
  }
  [[nodiscard]] std::size_t size() const { return size_; }
  void clear() {
    slots_.clear();
    size_ = 0;
  }

 private:
  struct Slot {
    std::uint64_t key = kEmpty;
    V value{};
  };
  // The slot holding `key`, else the empty slot where it would go. The hash is Fibonacci
  // hashing (Knuth, TAOCP vol. 3, 6.4): the top bits of the key times 2^64 / golden ratio,
  // which every bit of the key reaches.
  [[nodiscard]] std::size_t probe(std::uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
    while (slots_[i].key != key && slots_[i].key != kEmpty) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? std::size_t{1} << kFirstBits : 2 * old.size(), Slot{});
    shift_ = old.empty() ? 64 - kFirstBits : shift_ - 1;
    for (Slot& s : old)
      if (s.key != kEmpty) slots_[probe(s.key)] = std::move(s);
  }

  static constexpr int kFirstBits = 8;  // 256 slots
  std::vector<Slot> slots_;             // 2^(64 - shift_) slots, at most half full
  int shift_ = 64 - kFirstBits;
  std::size_t size_ = 0;
};

}  // namespace hcsim
