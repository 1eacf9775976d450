// sim/core/zero_array: an array reads zero until written, and only the pages holding a
// written element become resident (read back from the kernel: mincore(2) on the mapping,
// and its VmFlags "nh" in /proc/self/smaps).
#include "sim/core/zero_array.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace hcsim {
namespace {

// The VmFlags line and the resident kilobytes ("Rss:", which leaves out the kernel's shared
// zero page that reads of untouched memory map) of the mapping that holds p.
struct Mapping {
  std::string flags;
  long rss_kb = -1;
};
Mapping mapping_of(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  Mapping m;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= a && a < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      m.flags = line;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      std::istringstream(line.substr(4)) >> m.rss_kb;
    }
  }
  return m;
}

TEST(ZeroArray, ReadsZeroUntilWrittenAndKeepsWhatIsWritten) {
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{3} << 20}) {  // calloc and mmap
    ZeroArray<std::int32_t> a(n);
    ASSERT_EQ(a.size(), n);
    EXPECT_EQ(a.empty(), n == 0);
    for (std::size_t i = 0; i < n; i += 997) EXPECT_EQ(a[i], 0) << n << " " << i;
    for (std::size_t i = 0; i < n; i += 4099) a[i] = static_cast<std::int32_t>(i % 1000) - 7;
    for (std::size_t i = 0; i < n; i += 4099) ASSERT_EQ(a[i], static_cast<std::int32_t>(i % 1000) - 7);
    if (n > 1) { EXPECT_EQ(a[1], 0); }
  }
  ZeroArray<double> d(5);
  d[4] = 2.5;
  ZeroArray<double> moved(std::move(d));
  EXPECT_TRUE(d.empty());  // NOLINT(bugprone-use-after-move): a moved-from array is empty
  EXPECT_EQ(moved.size(), 5U);
  EXPECT_EQ(moved[4], 2.5);
  moved = ZeroArray<double>(2);
  EXPECT_EQ(moved.size(), 2U);
  EXPECT_EQ(moved[1], 0.0);
}

// Whether this kernel leaves untouched anonymous memory unbacked when it is read (the
// shared zero page, mapped read-only): 16 pages of a fresh private mapping, each read once.
// Some kernels (Linux 6.18 in a Firecracker VM among them) back each read page with a
// page of its own, and the reads below can then not be told from writes.
bool reads_map_the_zero_page() {
  const std::size_t bytes = 16 * 4096;
  void* q = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (q == MAP_FAILED) return false;
  madvise(q, bytes, MADV_NOHUGEPAGE);
  const volatile unsigned char* c = static_cast<const unsigned char*>(q);
  unsigned sum = 0;
  for (std::size_t i = 0; i < bytes; i += 4096) sum += c[i];
  const bool unbacked = sum == 0 && mapping_of(q).rss_kb == 0;
  munmap(q, bytes);
  return unbacked;
}

// 64 MiB of counters, one written per MiB: 64 pages of 4 KiB resident (256 KiB), not 16,384
// pages, nor 32 huge pages (the mapping is marked MADV_NOHUGEPAGE, "nh").
TEST(ZeroArray, OnlyThePagesOfWrittenElementsBecomeResident) {
  ASSERT_EQ(sysconf(_SC_PAGESIZE), 4096);
  const std::size_t n = std::size_t{16} << 20;  // 16 Mi four-byte counters
  ZeroArray<std::uint32_t> a(n);
  const void* p = &a[0];
  if (mapping_of(p).flags.empty()) GTEST_SKIP() << "no /proc/self/smaps here";
  // Where the kernel has no transparent huge pages, madvise refuses the advice and pages are
  // 4 KiB anyway.
  if (madvise(const_cast<void*>(p), 4096, MADV_NOHUGEPAGE) == 0) {
    EXPECT_NE(mapping_of(p).flags.find(" nh"), std::string::npos) << mapping_of(p).flags;
  }
  EXPECT_EQ(mapping_of(p).rss_kb, 0);
  const std::size_t stride = (std::size_t{1} << 20) / sizeof(std::uint32_t);  // one a MiB
  for (std::size_t i = 0; i < n; i += stride) a[i] = 1;
  EXPECT_EQ(mapping_of(p).rss_kb, 64 * 4);
}

// Reading untouched counters makes nothing resident, where the kernel maps the shared zero
// page for such reads (reads_map_the_zero_page).
TEST(ZeroArray, ReadingUntouchedElementsMakesNothingResident) {
  const std::size_t n = std::size_t{16} << 20;
  ZeroArray<std::uint32_t> a(n);
  const void* p = &a[0];
  if (mapping_of(p).flags.empty()) GTEST_SKIP() << "no /proc/self/smaps here";
  if (!reads_map_the_zero_page()) GTEST_SKIP() << "this kernel backs reads of untouched anonymous memory";
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; i += 1024) sum += a[i];  // one read a page
  EXPECT_EQ(sum, 0U);
  EXPECT_EQ(mapping_of(p).rss_kb, 0);
}

// A FilledArray reads its fill (-1 here, "none" of a router's per-node tables) until an
// element is set, and keeps what is set: the fill itself and the extremes of its type (its
// pages are a ZeroArray's, above).
TEST(FilledArray, ReadsItsFillUntilSetAndKeepsWhatIsSet) {
  FilledArray<int, -1> a(std::size_t{1} << 20);
  EXPECT_EQ(a.size(), std::size_t{1} << 20);
  EXPECT_EQ(a[0], -1);
  EXPECT_EQ(a[a.size() - 1], -1);
  for (std::size_t i = a.size() - 1024; i < a.size(); ++i) a.set(i, static_cast<int>(i % 7) - 1);
  EXPECT_EQ(a[a.size() - 1024], static_cast<int>((a.size() - 1024) % 7) - 1);
  EXPECT_EQ(a[a.size() - 1025], -1);
  a.set(3, std::numeric_limits<int>::max());
  EXPECT_EQ(a[3], std::numeric_limits<int>::max());
  a.set(3, std::numeric_limits<int>::min() + 1);
  EXPECT_EQ(a[3], std::numeric_limits<int>::min() + 1);
  a.set(3, -1);
  EXPECT_EQ(a[3], -1);
  FilledArray<signed char, -1> side(10);
  side.set(9, 1);
  EXPECT_EQ(side[9], 1);
  EXPECT_EQ(side[8], -1);
  EXPECT_TRUE((FilledArray<int, -1>().empty()));
}

}  // namespace
}  // namespace hcsim
