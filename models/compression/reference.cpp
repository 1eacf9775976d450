// Reference encoders and decoders of the element-wise formats (half, int8, sparse, sign) and
// error feedback; see reference.hpp for the wire layouts.
#include "models/compression/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include "sim/core/error.hpp"

namespace hcsim::codec_reference {

namespace {

template <class T>
void put(Buffer& b, T v) {
  const std::size_t at = b.size();
  b.resize(at + sizeof(T));
  std::memcpy(b.data() + at, &v, sizeof(T));
}

template <class T>
T get(const Buffer& b, std::size_t at) {
  HCSIM_ASSERT(at + sizeof(T) <= b.size(), "read past the end of an encoded buffer");
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

bool wide_indices(std::int64_t elements) { return elements > std::numeric_limits<std::int32_t>::max(); }

}  // namespace

Eigen::VectorXf student_t_vector(std::int64_t elements, double dof, double scale, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::student_t_distribution<double> t(dof);
  Eigen::VectorXf x(elements);
  for (std::int64_t i = 0; i < elements; ++i) x[i] = static_cast<float>(scale * t(rng));
  return x;
}

Eigen::MatrixXf student_t_matrix(std::int64_t rows, std::int64_t cols, double dof, double scale, std::uint64_t seed) {
  Eigen::VectorXf v = student_t_vector(rows * cols, dof, scale, seed);
  return Eigen::Map<Eigen::MatrixXf>(v.data(), rows, cols);
}

Buffer encode_half(const Eigen::VectorXf& x, HalfFormat f) {
  Buffer b;
  b.reserve(static_cast<std::size_t>(x.size()) * 2);
  for (float v : x)
    put<std::uint16_t>(b, f == HalfFormat::fp16 ? Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(v))
                                                : Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(v)));
  return b;
}

Eigen::VectorXf decode_half(const Buffer& b, HalfFormat f) {
  HCSIM_ASSERT(b.size() % 2 == 0, "a half buffer holds 2 bytes per element");
  Eigen::VectorXf x(static_cast<Eigen::Index>(b.size() / 2));
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const auto bits = get<std::uint16_t>(b, static_cast<std::size_t>(i) * 2);
    x[i] = f == HalfFormat::fp16 ? static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits))
                                 : static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(bits));
  }
  return x;
}

Buffer encode_int8(const Eigen::VectorXf& x, std::int64_t bucket) {
  HCSIM_ASSERT(bucket >= 1, "an int8 bucket holds at least one element");
  const std::int64_t n = x.size(), buckets = (n + bucket - 1) / bucket;
  std::vector<float> scales(static_cast<std::size_t>(buckets));
  for (std::int64_t k = 0; k < buckets; ++k) {
    const std::int64_t len = std::min(bucket, n - k * bucket);
    scales[k] = x.segment(k * bucket, len).cwiseAbs().maxCoeff() / 127.0f;
  }
  Buffer b;
  b.reserve(static_cast<std::size_t>(n + 4 * buckets));
  for (float s : scales) put<float>(b, s);
  for (std::int64_t i = 0; i < n; ++i) {
    const double s = scales[i / bucket];
    const double q = s > 0 ? std::clamp(std::round(static_cast<double>(x[i]) / s), -127.0, 127.0) : 0.0;
    put<std::int8_t>(b, static_cast<std::int8_t>(q));
  }
  return b;
}

Eigen::VectorXf decode_int8(const Buffer& b, std::int64_t elements, std::int64_t bucket) {
  const std::int64_t buckets = (elements + bucket - 1) / bucket;
  HCSIM_ASSERT(static_cast<std::int64_t>(b.size()) == elements + 4 * buckets, "int8 buffer of the wrong size");
  Eigen::VectorXf x(elements);
  for (std::int64_t i = 0; i < elements; ++i) {
    const float s = get<float>(b, static_cast<std::size_t>(4 * (i / bucket)));
    x[i] = static_cast<float>(get<std::int8_t>(b, static_cast<std::size_t>(4 * buckets + i))) * s;
  }
  return x;
}

std::vector<std::int64_t> topk_indices(const Eigen::VectorXf& x, std::int64_t k) {
  HCSIM_ASSERT(k >= 0 && k <= x.size(), "top-k needs 0 <= k <= elements");
  std::vector<std::int64_t> idx(static_cast<std::size_t>(x.size()));
  std::iota(idx.begin(), idx.end(), 0);
  auto larger = [&](std::int64_t a, std::int64_t b) {
    const float ma = std::fabs(x[a]), mb = std::fabs(x[b]);
    return ma != mb ? ma > mb : a < b;
  };
  std::nth_element(idx.begin(), idx.begin() + k, idx.end(), larger);
  idx.resize(static_cast<std::size_t>(k));
  std::sort(idx.begin(), idx.end());
  return idx;
}

std::vector<std::int64_t> randomk_indices(std::int64_t elements, std::int64_t k, std::uint64_t seed) {
  HCSIM_ASSERT(k >= 0 && k <= elements, "random-k needs 0 <= k <= elements");
  std::vector<std::int64_t> idx(static_cast<std::size_t>(elements));
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::int64_t i = 0; i < k; ++i) {  // partial Fisher-Yates
    std::uniform_int_distribution<std::int64_t> pick(i, elements - 1);
    std::swap(idx[i], idx[pick(rng)]);
  }
  idx.resize(static_cast<std::size_t>(k));
  std::sort(idx.begin(), idx.end());
  return idx;
}

Buffer encode_sparse(const Eigen::VectorXf& x, const std::vector<std::int64_t>& indices) {
  const bool wide = wide_indices(x.size());
  Buffer b;
  b.reserve(indices.size() * (wide ? 12 : 8));
  for (std::int64_t i : indices) put<float>(b, x[i]);
  for (std::int64_t i : indices) {
    if (wide) put<std::int64_t>(b, i);
    else put<std::int32_t>(b, static_cast<std::int32_t>(i));
  }
  return b;
}

Eigen::VectorXf decode_sparse(const Buffer& b, std::int64_t elements) {
  const std::size_t entry = wide_indices(elements) ? 12 : 8;
  HCSIM_ASSERT(b.size() % entry == 0, "sparse buffer of the wrong size");
  const std::size_t k = b.size() / entry;
  Eigen::VectorXf x = Eigen::VectorXf::Zero(elements);
  for (std::size_t j = 0; j < k; ++j) {
    const std::size_t at = 4 * k + j * (entry - 4);
    const std::int64_t i = entry == 12 ? get<std::int64_t>(b, at) : get<std::int32_t>(b, at);
    HCSIM_ASSERT(i >= 0 && i < elements, "sparse index out of range");
    x[i] += get<float>(b, 4 * j);
  }
  return x;
}

Buffer encode_sign(const Eigen::VectorXf& x) {
  HCSIM_ASSERT(x.size() % 8 == 0, "packed signs need a multiple of 8 elements");
  Buffer b(static_cast<std::size_t>(x.size() / 8), 0);
  double squares = 0;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (x[i] >= 0) b[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
    squares += static_cast<double>(x[i]) * x[i];
  }
  put<float>(b, x.size() ? static_cast<float>(std::sqrt(squares / static_cast<double>(x.size()))) : 0.0f);
  return b;
}

Eigen::VectorXf decode_sign(const Buffer& b, std::int64_t elements) {
  HCSIM_ASSERT(static_cast<std::int64_t>(b.size()) == elements / 8 + 4, "sign buffer of the wrong size");
  const float scale = get<float>(b, static_cast<std::size_t>(elements / 8));
  Eigen::VectorXf x(elements);
  for (std::int64_t i = 0; i < elements; ++i) x[i] = (b[i / 8] >> (i % 8)) & 1u ? scale : -scale;
  return x;
}

VectorCodec sign_codec() {
  return {[](const Eigen::VectorXf& x) { return encode_sign(x); },
          [](const Buffer& b, std::int64_t n) { return decode_sign(b, n); }};
}

VectorCodec int8_codec(std::int64_t bucket) {
  return {[bucket](const Eigen::VectorXf& x) { return encode_int8(x, bucket); },
          [bucket](const Buffer& b, std::int64_t n) { return decode_int8(b, n, bucket); }};
}

Eigen::VectorXf ErrorFeedback::apply(const Eigen::VectorXf& x, const VectorCodec& codec, Buffer* wire) {
  HCSIM_ASSERT(x.size() == residual_.size(), "error feedback on a vector of another size");
  const Eigen::VectorXf compensated = x + residual_;
  Buffer b = codec.encode(compensated);
  Eigen::VectorXf decoded = codec.decode(b, x.size());
  residual_ = compensated - decoded;
  if (wire) *wire = std::move(b);
  return decoded;
}

}  // namespace hcsim::codec_reference
