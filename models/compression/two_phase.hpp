#pragma once
// Cost of the two-phase compressed all-reduce shared by int8 and the 1-bit family (DeepSpeed
// NcclBackend.compressed_allreduce; Tang et al. 2021, arXiv 2102.02888, §4.1). The padded buffer
// of P elements is cut into one chunk of c = P/n elements per rank:
//   phase 1, all-to-all: rank i sends its encoded chunk j to rank j (n messages of m bytes);
//   rank j decodes the n copies of chunk j, averages them and re-encodes the average ("server"
//   side, with its own error feedback in the 1-bit family);
//   phase 2, all-gather: every rank receives the n averaged chunks (m bytes each) and decodes them.
// The encoded formats cannot be added in place (each rank's chunk carries its own scales), which
// is why the reduction happens between the two phases. Internal to models/compression.

#include <cstdint>

#include "models/compression/codec.hpp"

namespace hcsim::compression {

struct ChunkGeometry {
  std::int64_t padded = 0;  // P: elements after padding
  std::int64_t chunk = 0;   // c = P / ranks
};

// 1-bit: DeepSpeed pads the buffer to a multiple of n * lcm(n, 8) elements, so every chunk is a
// whole number of bytes of packed signs (OnebitAdam's `divider`).
ChunkGeometry sign_geometry(std::int64_t elements, int ranks);
// int8: c = ceil(N / n); the last chunk is padded with zeros.
ChunkGeometry even_geometry(std::int64_t elements, int ranks);

// A chunk format: bytes of one encoded chunk and its work per element.
struct ChunkFormat {
  ChunkGeometry geo;
  Bytes message{};              // m: encoded bytes of one chunk of c elements
  double encode_ops = 0;        // operations per encoded element
  double decode_ops = 0;        // operations per decoded element, before accumulating
  bool error_feedback = false;  // fp32 residual on the worker (P elements) and server (c elements)
};

// The plan above. With n ranks, P padded, c chunk, m message, e elem_bytes, N elements:
//   wire           = n m (all-to-all) + m (all-gather)
//   encode flops   = encode_ops (P + c)
//   decode flops   = (2 decode_ops + 1) P + c        (server: decode + add n copies, divide by n;
//                                                     final: decode the n averaged chunks)
//   encode traffic = N e + n m + 4c + m  [+ 8P + 8c with error feedback: read and write residuals]
//   decode traffic = 2 n m + 4c + N e
//   extra memory   = 3 n m + m + 4c     [+ 4P + 4c residuals with error feedback]
CodecCost two_phase_cost(const ChunkFormat& f, const CodecInput& in);

// Fallback: the whole encoded buffer (n chunks, n m bytes) travels by one all-gather and every
// rank decodes and adds all n messages:
//   wire = n m; encode flops = encode_ops P; decode flops = (decode_ops + 1) n P
//   encode traffic = N e + n m [+ 8P]; decode traffic = n^2 m + N e
//   extra memory = n m + n^2 m [+ 4P]
CodecCost two_phase_allgather_cost(const ChunkFormat& f, const CodecInput& in);

// No compression: one in-place all-reduce of N e bytes, nothing else.
CodecCost uncompressed_cost(const CodecInput& in);

// One-phase plans.
CollectivePlan allreduce_plan(Bytes bytes);
CollectivePlan allgather_plan(Bytes contribution, int ranks);

}  // namespace hcsim::compression
