// sim/core/huge_pages: which range of a block is marked MADV_HUGEPAGE, read back from the
// kernel's own account of the process's mappings (/proc/self/smaps, VmFlags "hg").
#include "sim/core/huge_pages.hpp"
#include "sim/core/replace_new.inc"  // this test program's operator new is the hcsim executable's

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hcsim {
namespace {

// The VmFlags of the mapping that holds address a ("" when none does).
std::string vm_flags(std::uintptr_t a) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-')
      inside = lo <= a && a < hi;
    else if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

bool marked(std::uintptr_t a) { return vm_flags(a).find(" hg") != std::string::npos; }

// A mapping of `pages` huge pages that starts on a huge-page boundary.
struct AlignedMapping {
  explicit AlignedMapping(std::size_t pages) {
    raw = mmap(nullptr, (pages + 1) * kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    length = (pages + 1) * kHugePageBytes;
    base = (reinterpret_cast<std::uintptr_t>(raw) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  }
  ~AlignedMapping() { munmap(raw, length); }
  void* raw;
  std::size_t length;
  std::uintptr_t base;
};

TEST(HugePages, MarksTheWholePagesInsideABlock) {
  AlignedMapping m(4);
  ASSERT_NE(m.raw, MAP_FAILED);
  // A block from 4 KiB past a boundary to 4 KiB before the fourth: the two whole pages
  // between the first and the third boundary (closed form: ceil to 2 MiB, floor to 2 MiB).
  const std::uintptr_t from = m.base + 4096, to = m.base + 3 * kHugePageBytes + 4096;
  const std::size_t n = advise_huge_pages(reinterpret_cast<void*>(from), to - from);
  if (n == 0 && vm_flags(from).empty()) GTEST_SKIP() << "no /proc/self/smaps here";
  if (n == 0) GTEST_SKIP() << "this kernel has no transparent huge pages (madvise refused MADV_HUGEPAGE)";
  EXPECT_EQ(n, 2 * kHugePageBytes);
  EXPECT_FALSE(marked(m.base)) << "the partial page before the first boundary";
  EXPECT_TRUE(marked(m.base + kHugePageBytes));
  EXPECT_TRUE(marked(m.base + 3 * kHugePageBytes - 1));
  EXPECT_FALSE(marked(m.base + 3 * kHugePageBytes)) << "the partial page after the last boundary";
}

TEST(HugePages, ABlockWithNoWholePageInsideIsLeftAlone) {
  AlignedMapping m(2);
  ASSERT_NE(m.raw, MAP_FAILED);
  // From 4 KiB past a boundary to 4 KiB past the next one: 2 MiB long, no whole page.
  EXPECT_EQ(advise_huge_pages(reinterpret_cast<void*>(m.base + 4096), kHugePageBytes), 0u);
  EXPECT_FALSE(marked(m.base + kHugePageBytes));
  EXPECT_EQ(advise_huge_pages(nullptr, 8 * kHugePageBytes), 0u);
}

TEST(HugePages, LargeAllocationsAreMarkedAndSmallOnesAreMalloc) {
  AlignedMapping probe(1);  // does this kernel take the advice at all?
  if (advise_huge_pages(reinterpret_cast<void*>(probe.base), kHugePageBytes) == 0)
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  // From kHugePageThreshold bytes on, a block holds at least one whole page, and it is marked.
  void* big = allocate_on_huge_pages(kHugePageThreshold);
  const auto b = reinterpret_cast<std::uintptr_t>(big);
  EXPECT_TRUE(marked((b + kHugePageBytes - 1) & ~(kHugePageBytes - 1)));
  std::free(big);                           // malloc's memory: free (the default operator delete) releases it
  void* small = allocate_on_huge_pages(0);  // n = 0 is one byte, a distinct block
  EXPECT_NE(small, nullptr);
  std::free(small);
}

#if defined(HCSIM_HUGE_PAGES_NEW)
TEST(HugePages, TheProgramsOperatorNewMarksLargeBlocks) {
  AlignedMapping probe(1);
  if (advise_huge_pages(reinterpret_cast<void*>(probe.base), kHugePageBytes) == 0)
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  // A vector's storage of 8 MiB, from operator new (replace_new.inc, as in main.cpp): the
  // whole pages inside it are marked.
  std::vector<char> big(8 << 20);
  const auto b = reinterpret_cast<std::uintptr_t>(big.data());
  EXPECT_TRUE(marked((b + kHugePageBytes - 1) & ~(kHugePageBytes - 1)));
  EXPECT_TRUE(marked(b + (8 << 20) - kHugePageBytes - 1));
}
#endif

#if !defined(HCSIM_SANITIZED)  // the sanitizers' malloc has no brk heap
TEST(HugePages, TheHeapIsMarkedAsItGrows) {
  AlignedMapping probe(1);
  if (advise_huge_pages(reinterpret_cast<void*>(probe.base), kHugePageBytes) == 0)
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  // 64 KiB blocks (below malloc's mmap threshold: from the heap) until the heap has grown
  // by three growths of 64 MiB: the block last allocated lies in a marked range.
  std::vector<void*> blocks;
  const std::size_t count = 3 * (64 << 20) / (64 << 10);
  for (std::size_t i = 0; i < count; ++i) blocks.push_back(allocate_on_huge_pages(64 << 10));
  EXPECT_TRUE(marked(reinterpret_cast<std::uintptr_t>(blocks.back())))
      << vm_flags(reinterpret_cast<std::uintptr_t>(blocks.back()));
  for (void* b : blocks) std::free(b);
}

TEST(HugePages, TheHeapIsMarkedAgainWhenItGrowsBackAfterATrim) {
  AlignedMapping probe(1);
  if (advise_huge_pages(reinterpret_cast<void*>(probe.base), kHugePageBytes) == 0)
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  // The heap grown by three growths, every block freed and the heap trimmed (its break
  // lowered, the memory above it unmapped), then grown again as far: the memory it grows
  // back into is a fresh mapping, which must be marked too.
  const std::size_t count = 3 * (64 << 20) / (64 << 10);
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < count; ++i) blocks.push_back(allocate_on_huge_pages(64 << 10));
  const auto high = reinterpret_cast<std::uintptr_t>(sbrk(0));
  for (void* b : blocks) std::free(b);
  blocks.clear();
  malloc_trim(0);
  if (reinterpret_cast<std::uintptr_t>(sbrk(0)) + (64 << 20) > high) GTEST_SKIP() << "malloc_trim left the heap's top";
  std::free(allocate_on_huge_pages(1));  // sees the lowered break
  for (std::size_t i = 0; i < count; ++i) blocks.push_back(allocate_on_huge_pages(64 << 10));
  EXPECT_TRUE(marked(reinterpret_cast<std::uintptr_t>(blocks.back())))
      << vm_flags(reinterpret_cast<std::uintptr_t>(blocks.back()));
  for (void* b : blocks) std::free(b);
}
#endif

}  // namespace
}  // namespace hcsim
