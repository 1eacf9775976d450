#include "kernel.hpp"

namespace hcsim {

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::fp32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp8: return "fp8";
    case DType::int8: return "int8";
    case DType::int4: return "int4";
  }
  return "?";
}

bool parse_dtype(std::string_view name, DType& out) {
  for (DType d : {DType::fp32, DType::tf32, DType::bf16, DType::fp16, DType::fp8, DType::int8, DType::int4})
    if (dtype_name(d) == name) { out = d; return true; }
  return false;
}

std::string_view kernel_kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::gemm: return "gemm";
    case KernelKind::attention: return "attention";
    case KernelKind::elementwise: return "elementwise";
    case KernelKind::norm: return "norm";
    case KernelKind::softmax: return "softmax";
    case KernelKind::embedding: return "embedding";
    case KernelKind::optimizer: return "optimizer";
    case KernelKind::codec: return "codec";
    case KernelKind::memcpy: return "memcpy";
  }
  return "?";
}

Kernel gemm_kernel(std::int64_t m, std::int64_t n, std::int64_t k, DType dt, std::int64_t batch) {
  Kernel kn;
  kn.kind = KernelKind::gemm;
  kn.dtype = dt;
  kn.m = m; kn.n = n; kn.k = k; kn.batch = batch;
  const double b = static_cast<double>(batch);
  kn.flops = Flops(2.0 * b * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
  kn.bytes = Bytes(b * dtype_bytes(dt) *
                   (static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n));
  return kn;
}

Kernel memory_kernel(KernelKind kind, Bytes bytes, Flops flops, DType dt) {
  Kernel kn;
  kn.kind = kind;
  kn.dtype = dt;
  kn.bytes = bytes;
  kn.flops = flops;
  return kn;
}

}  // namespace hcsim
