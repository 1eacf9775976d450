#include "models/compression/two_phase.hpp"

#include <numeric>

#include "sim/core/error.hpp"

namespace hcsim::compression {

namespace {
std::int64_t round_up(std::int64_t x, std::int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }
double d(std::int64_t x) { return static_cast<double>(x); }
}  // namespace

ChunkGeometry sign_geometry(std::int64_t elements, int ranks) {
  HCSIM_ASSERT(ranks >= 1 && elements >= 0, "chunk geometry needs ranks >= 1 and elements >= 0");
  const std::int64_t n = ranks;
  const std::int64_t padded = round_up(elements, n * std::lcm(n, std::int64_t{8}));
  return {padded, padded / n};
}

ChunkGeometry even_geometry(std::int64_t elements, int ranks) {
  HCSIM_ASSERT(ranks >= 1 && elements >= 0, "chunk geometry needs ranks >= 1 and elements >= 0");
  const std::int64_t chunk = (elements + ranks - 1) / ranks;
  return {chunk * ranks, chunk};
}

CollectivePlan allreduce_plan(Bytes bytes) { return {{{WireOp::all_reduce, bytes, bytes}}}; }

CollectivePlan allgather_plan(Bytes contribution, int ranks) {
  return {{{WireOp::all_gather, contribution, contribution * static_cast<double>(ranks)}}};
}

CodecCost two_phase_cost(const ChunkFormat& f, const CodecInput& in) {
  const double n = in.ranks, p = d(f.geo.padded), c = d(f.geo.chunk);
  const Bytes m = f.message;
  const Bytes input = Bytes(d(in.elements()) * in.elem_bytes);
  CodecCost k;
  k.compressed = true;
  k.uncompressed_bytes = input;
  k.plan.phases = {{WireOp::all_to_all, m * n, m * n}, {WireOp::all_gather, m, m * n}};
  k.wire_bytes_per_rank = m * n + m;
  k.encode_flops = Flops(f.encode_ops * (p + c));
  k.decode_flops = Flops((2 * f.decode_ops + 1) * p + c);
  k.encode_memory_traffic = input + m * n + Bytes(4 * c) + m;
  k.decode_memory_traffic = m * (2 * n) + Bytes(4 * c) + input;
  k.extra_memory = m * (3 * n) + m + Bytes(4 * c);
  if (f.error_feedback) {
    k.encode_memory_traffic += Bytes(8 * p + 8 * c);
    k.extra_memory += Bytes(4 * p + 4 * c);
  }
  return k;
}

CodecCost two_phase_allgather_cost(const ChunkFormat& f, const CodecInput& in) {
  const double n = in.ranks, p = d(f.geo.padded);
  const Bytes message = f.message * n;
  const Bytes input = Bytes(d(in.elements()) * in.elem_bytes);
  CodecCost k;
  k.compressed = true;
  k.uncompressed_bytes = input;
  k.plan = allgather_plan(message, in.ranks);
  k.wire_bytes_per_rank = message;
  k.encode_flops = Flops(f.encode_ops * p);
  k.decode_flops = Flops((f.decode_ops + 1) * n * p);
  k.encode_memory_traffic = input + message;
  k.decode_memory_traffic = message * n + input;
  k.extra_memory = message + message * n;
  if (f.error_feedback) {
    k.encode_memory_traffic += Bytes(8 * p);
    k.extra_memory += Bytes(4 * p);
  }
  return k;
}

CodecCost uncompressed_cost(const CodecInput& in) {
  CodecCost k;
  k.uncompressed_bytes = Bytes(d(in.elements()) * in.elem_bytes);
  k.wire_bytes_per_rank = k.uncompressed_bytes;
  k.plan = allreduce_plan(k.uncompressed_bytes);
  return k;
}

}  // namespace hcsim::compression
