// Large allocations on transparent huge pages.
//
// hcsim's frontier-scale runs hold a few hundred megabytes in a handful of arrays read at
// random (the topology's nodes and edges, the router's per-node tables, the cost model's
// per-link sums, the per-device step shapes). On 4 KiB pages every random read of them is
// also a TLB miss and every first touch a page fault; Linux's transparent huge pages
// (Documentation/admin-guide/mm/transhuge.rst) back a range marked MADV_HUGEPAGE with
// 2 MiB pages where the system allows it (`enabled` set to `always` or `madvise`).
//
// The global operator new of the programs that include sim/core/replace_new.inc (the hcsim
// executable, the search benchmark) allocates with malloc and marks the 2 MiB-aligned
// interior of every block of kHugePageThreshold bytes or more, and the main heap as it
// grows, again where it grows back after a trim (huge_pages.cpp).
// Results do not depend on it: it changes where memory lies, not what is computed. Where
// the kernel has huge pages off, madvise fails and nothing changes. docs/performance.md
// ("Huge pages") gives the measurements.
#pragma once

#include <cstddef>

namespace hcsim {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;  // x86-64 PMD page
// Blocks from this size on are marked: at least one whole huge page lies inside each.
inline constexpr std::size_t kHugePageThreshold = 2 * kHugePageBytes;

// Marks the whole 2 MiB pages inside [p, p + n) MADV_HUGEPAGE. Returns the bytes marked
// (0 when no whole page lies inside, or the kernel refused).
std::size_t advise_huge_pages(void* p, std::size_t n) noexcept;

// malloc(n) (n = 0 taken as 1), its interior marked when n >= kHugePageThreshold; calls the
// new-handler and retries on failure, throws std::bad_alloc where there is none: the
// contract of a replacement operator new, whose memory the default operator delete frees.
void* allocate_on_huge_pages(std::size_t n);

}  // namespace hcsim
