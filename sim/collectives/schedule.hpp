#pragma once
// Collective algorithms as explicit step schedules: who sends which slice of the buffer to
// whom at each step, and whether the receiver reduces or overwrites. One schedule serves
// three users: the reference executor (executor.hpp) runs it on real buffers to prove the
// algorithm computes the right sum / gather / scatter; the engine's flow mode replays it
// as point-to-point SimGrid flows so that link sharing is real; the cost model sums its
// per-step latency and bandwidth terms. Pure code, no SimGrid.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hcsim {

enum class CollectiveOp : std::uint8_t { all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all };
std::string_view collective_op_name(CollectiveOp op);

// Elements [offset, offset+count) of the source rank's buffer go to [dst_offset, ...) of the
// destination's; `reduce` adds into the destination instead of overwriting.
struct Transfer {
  int src = 0, dst = 0;  // ranks within the group, 0..n-1
  std::int64_t src_offset = 0, dst_offset = 0, count = 0;
  bool reduce = false;
};

struct Step {
  std::vector<Transfer> transfers;  // concurrent within the step
};

struct Schedule {
  CollectiveOp op = CollectiveOp::all_reduce;
  int ranks = 0;
  std::int64_t elements = 0;  // buffer length per rank (all-to-all: n blocks of elements/n)
  std::vector<Step> steps;
};

// Even split of `elements` into n chunks; the first `elements % n` chunks get one more.
std::int64_t chunk_offset(std::int64_t elements, int n, int i);
std::int64_t chunk_size(std::int64_t elements, int n, int i);

// Ring: all-reduce = reduce-scatter then all-gather, 2(n-1) steps of one chunk each.
Schedule ring_schedule(CollectiveOp op, int n, std::int64_t elements);

}  // namespace hcsim
