#pragma once
// What a compute device is asked to cost: one kernel (a GEMM, an attention block, a
// memory-bound elementwise op, ...), described by shape, datatype, arithmetic work and
// the bytes it must move to and from device memory. Workloads produce Kernels; device
// models (models/compute) turn them into time and energy. Pure data, no behaviour.

#include <cstdint>
#include <string_view>

#include "sim/core/units.hpp"

namespace hcsim {

enum class DType : std::uint8_t { fp32, tf32, bf16, fp16, fp8, int8, int4 };

// Bytes per element.
constexpr double dtype_bytes(DType d) {
  switch (d) {
    case DType::fp32: case DType::tf32: return 4;
    case DType::bf16: case DType::fp16: return 2;
    case DType::fp8: case DType::int8: return 1;
    case DType::int4: return 0.5;
  }
  return 4;
}
// The datatype of everything but the GEMMs' arithmetic. Mixed fp8 training (Transformer
// Engine; Micikevicius et al., "FP8 Formats for Deep Learning", arXiv 2209.05433) runs the
// GEMMs on fp8 tensor cores and keeps activations, attention, weights, gradients and their
// communication in bf16; other precisions store what they compute in.
constexpr DType storage_dtype(DType d) { return d == DType::fp8 ? DType::bf16 : d; }
std::string_view dtype_name(DType d);
// nullopt-free: returns false when the name is unknown.
bool parse_dtype(std::string_view name, DType& out);

enum class KernelKind : std::uint8_t {
  gemm,         // C[m,n] = A[m,k] B[k,n], `batch` independent problems
  attention,    // softmax(QK^T)V over batch*heads problems of seq_q x seq_kv x head_dim (m, n, k)
  elementwise,  // bias, activation, dropout, residual add: memory bound
  norm,         // layernorm / rmsnorm: memory bound
  softmax,      // unfused softmax: memory bound
  embedding,    // gather rows: memory bound
  optimizer,    // Adam and friends: memory bound over parameters and state
  codec,        // compression encode/decode
  memcpy,       // device-local copy
};
std::string_view kernel_kind_name(KernelKind k);

struct Kernel {
  KernelKind kind = KernelKind::elementwise;
  DType dtype = DType::bf16;
  std::int64_t m = 0, n = 0, k = 0;  // GEMM / attention problem shape
  std::int64_t batch = 1;            // independent problems
  Flops flops{};                     // arithmetic work (2 per multiply-accumulate)
  Bytes bytes{};                     // device-memory traffic at minimum (each operand once)
  bool fused = false;                // attention: flash-style fused kernel
  // Fused attention from FlashAttention-2's kernels, written for the previous architecture's
  // instructions, on a device whose own fused attention is faster (GpuSpec::flash2_rate).
  bool flash2 = false;
  bool sparse = false;               // 2:4 structured sparsity
  // Kernels launched one after another for this work (a memory-bound pass over several
  // tensors, one kernel each: PyTorch's per-parameter gradient accumulation); each pays
  // the device's launch overhead.
  int launches = 1;
};

// Convenience constructors; they fill flops and minimum bytes from the shape.
Kernel gemm_kernel(std::int64_t m, std::int64_t n, std::int64_t k, DType dt, std::int64_t batch = 1);
Kernel memory_kernel(KernelKind kind, Bytes bytes, Flops flops, DType dt);

}  // namespace hcsim
