#include "schedule.hpp"

#include <string>
#include <utility>

#include "sim/collectives/ring_phase.hpp"
#include "sim/core/error.hpp"

namespace hcsim {

std::string_view collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "all_reduce";
    case CollectiveOp::reduce_scatter: return "reduce_scatter";
    case CollectiveOp::all_gather: return "all_gather";
    case CollectiveOp::broadcast: return "broadcast";
    case CollectiveOp::reduce: return "reduce";
    case CollectiveOp::all_to_all: return "all_to_all";
    case CollectiveOp::send_recv: return "send_recv";
  }
  return "?";
}

bool parse_collective_op(std::string_view name, CollectiveOp& out) {
  std::string key;
  for (char c : name)
    if (c != '_' && c != '-') key += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  static const std::pair<const char*, CollectiveOp> table[] = {
      {"allreduce", CollectiveOp::all_reduce}, {"reducescatter", CollectiveOp::reduce_scatter},
      {"allgather", CollectiveOp::all_gather}, {"broadcast", CollectiveOp::broadcast},
      {"reduce", CollectiveOp::reduce},        {"alltoall", CollectiveOp::all_to_all},
      {"sendrecv", CollectiveOp::send_recv}};
  for (const auto& [n, op] : table)
    if (key == n) { out = op; return true; }
  return false;
}

std::int64_t chunk_size(std::int64_t elements, int n, int i) {
  return elements / n + (i < elements % n ? 1 : 0);
}

std::int64_t chunk_offset(std::int64_t elements, int n, int i) {
  const std::int64_t base = elements / n, extra = elements % n;
  return static_cast<std::int64_t>(i) * base + (i < extra ? i : extra);
}

Schedule ring_schedule(CollectiveOp op, int n, std::int64_t elements) { return ring_schedule(op, n, elements, false); }

Schedule ring_schedule(CollectiveOp op, int n, std::int64_t elements, bool compressed) {
  HCSIM_ASSERT(n >= 1, "a collective needs at least one rank");
  Schedule sc{op, n, elements, {}, 0};
  if (n == 1) return sc;
  RingJob ring{{}, 0, elements};
  for (int r = 0; r < n; ++r) ring.members.push_back(r);
  switch (op) {
    case CollectiveOp::all_reduce:
      append_ring_phase(sc.steps, {ring}, true, compressed);
      append_ring_phase(sc.steps, {ring}, false, compressed);
      break;
    case CollectiveOp::reduce_scatter: append_ring_phase(sc.steps, {ring}, true, compressed); break;
    case CollectiveOp::all_gather: append_ring_phase(sc.steps, {ring}, false, compressed); break;
    default: HCSIM_ASSERT(false, "ring schedule supports all-reduce, reduce-scatter and all-gather only");
  }
  return sc;
}

}  // namespace hcsim
