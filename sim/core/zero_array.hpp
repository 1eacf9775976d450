// Arrays of zeros whose memory is touched only where they are written.
//
// A frontier-scale run keeps several counters per directed link of the cluster (a 131,072-GPU
// fabric has 786,432 of them) that are zero between uses and written only on the links a
// few routes cross: the flows a built replica runs, a mirror set's base routes. A
// std::vector of zeros writes every element, so the kernel hands each of its pages to the
// process and clears it (docs/performance.md: on the reference VM a first touch costs about
// 2 ns a byte, more than the work on the counters). A ZeroArray takes its memory straight
// from the kernel (anonymous mmap: zero-filled, Linux's mmap(2)), on 4 KiB pages
// (MADV_NOHUGEPAGE: a 2 MiB page would be cleared whole for one counter), so only the
// pages holding a written element are ever cleared; reading an untouched one reads zero.
// Small arrays come from calloc. Results do not depend on it: it changes when memory is
// cleared, not what is stored.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace hcsim {

namespace zero_array_detail {
// `bytes` of zeros (nullptr for 0 bytes); throws std::bad_alloc when none are to be had.
void* allocate(std::size_t bytes);
void release(void* p, std::size_t bytes) noexcept;
}  // namespace zero_array_detail

template <class T>
class ZeroArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "a ZeroArray holds plain values whose all-zero bytes are their zero");

 public:
  ZeroArray() = default;
  explicit ZeroArray(std::size_t n) : data_(static_cast<T*>(zero_array_detail::allocate(n * sizeof(T)))), size_(n) {}
  ZeroArray(ZeroArray&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  ZeroArray& operator=(ZeroArray&& o) noexcept {
    if (this != &o) {
      zero_array_detail::release(data_, size_ * sizeof(T));
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ZeroArray(const ZeroArray&) = delete;
  ZeroArray& operator=(const ZeroArray&) = delete;
  ~ZeroArray() { zero_array_detail::release(data_, size_ * sizeof(T)); }

  [[nodiscard]] T& operator[](std::size_t i) { return data_[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const { return data_[i]; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// A ZeroArray of integers that reads `Fill` where nothing was written (it stores value -
// Fill, modulo 2^bits: every value of T is kept): per-node tables whose "none" is -1,
// written for a few nodes only (a cluster's switches, not its devices), touch only those
// nodes' pages.
template <class T, T Fill>
class FilledArray {
  static_assert(std::is_integral_v<T>, "a FilledArray holds integers");
  using U = std::make_unsigned_t<T>;

 public:
  FilledArray() = default;
  explicit FilledArray(std::size_t n) : values_(n) {}
  [[nodiscard]] T operator[](std::size_t i) const {
    return static_cast<T>(static_cast<U>(values_[i] + static_cast<U>(Fill)));
  }
  void set(std::size_t i, T v) { values_[i] = static_cast<U>(static_cast<U>(v) - static_cast<U>(Fill)); }
  [[nodiscard]] std::size_t size() const { return values_.size(); }
  [[nodiscard]] bool empty() const { return values_.empty(); }

 private:
  ZeroArray<U> values_;
};

}  // namespace hcsim
