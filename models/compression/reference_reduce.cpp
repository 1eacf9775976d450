// Reference reductions across ranks on real buffers: the two-phase compressed all-reduce
// (DeepSpeed compressed_allreduce) and PowerSGD (Vogels et al. 2019, Algorithm 1).
#include <cmath>
#include <cstring>
#include <random>

#include "models/compression/reference.hpp"
#include "sim/core/error.hpp"

namespace hcsim::codec_reference {

TwoPhaseErrorFeedback::TwoPhaseErrorFeedback(int ranks, std::int64_t chunk) {
  for (int i = 0; i < ranks; ++i) {
    worker.emplace_back(ranks * chunk);
    server.emplace_back(chunk);
  }
}

namespace {

Buffer encode_with(const Eigen::VectorXf& x, const VectorCodec& codec, ErrorFeedback* ef) {
  Buffer b;
  if (ef) ef->apply(x, codec, &b);
  else b = codec.encode(x);
  return b;
}

// The codec applied to `parts` equal chunks of a vector, messages concatenated in chunk order.
// Every chunk message of these formats has the same size, so the concatenation splits evenly.
VectorCodec chunked(const VectorCodec& codec, int parts) {
  return {[codec, parts](const Eigen::VectorXf& x) {
            const std::int64_t c = x.size() / parts;
            Buffer all;
            for (int j = 0; j < parts; ++j) {
              const Buffer b = codec.encode(x.segment(j * c, c));
              all.insert(all.end(), b.begin(), b.end());
            }
            return all;
          },
          [codec, parts](const Buffer& all, std::int64_t n) {
            const std::size_t m = all.size() / static_cast<std::size_t>(parts);
            const std::int64_t c = n / parts;
            Eigen::VectorXf x(n);
            for (int j = 0; j < parts; ++j)
              x.segment(j * c, c) = codec.decode(Buffer(all.begin() + j * m, all.begin() + (j + 1) * m), c);
            return x;
          }};
}

// Phase 1 for one rank: its padded input (error-compensated) cut into `ranks` encoded chunks.
std::vector<Buffer> worker_chunks(const Eigen::VectorXf& input, int ranks, std::int64_t chunk,
                                  const VectorCodec& codec, ErrorFeedback* ef) {
  Eigen::VectorXf padded = Eigen::VectorXf::Zero(ranks * chunk);
  padded.head(input.size()) = input;
  const Buffer all = encode_with(padded, chunked(codec, ranks), ef);
  HCSIM_ASSERT(all.size() % static_cast<std::size_t>(ranks) == 0, "chunk messages of unequal size");
  const std::size_t m = all.size() / static_cast<std::size_t>(ranks);
  std::vector<Buffer> out;
  for (int j = 0; j < ranks; ++j) out.emplace_back(all.begin() + j * m, all.begin() + (j + 1) * m);
  return out;
}

}  // namespace

TwoPhaseResult two_phase_allreduce(const std::vector<Eigen::VectorXf>& inputs, std::int64_t chunk,
                                   const VectorCodec& codec, TwoPhaseErrorFeedback* ef) {
  const int n = static_cast<int>(inputs.size());
  HCSIM_ASSERT(n >= 1 && chunk >= 0 && inputs[0].size() <= n * chunk, "two-phase geometry does not hold the input");
  for (const auto& x : inputs) HCSIM_ASSERT(x.size() == inputs[0].size(), "ranks reduce vectors of one size");
  std::vector<std::vector<Buffer>> sent(n);  // sent[i][j]: rank i's chunk j, delivered to rank j
  TwoPhaseResult res;
  for (int i = 0; i < n; ++i) {
    sent[i] = worker_chunks(inputs[i], n, chunk, codec, ef ? &ef->worker[i] : nullptr);
    std::int64_t bytes = 0;
    for (const auto& b : sent[i]) bytes += static_cast<std::int64_t>(b.size());
    HCSIM_ASSERT(i == 0 || bytes == res.alltoall_bytes, "ranks hand different sizes to the all-to-all");
    res.alltoall_bytes = bytes;
  }
  std::vector<Buffer> gathered(n);  // the owner's averaged, re-encoded chunk
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXf sum = Eigen::VectorXf::Zero(chunk);
    for (int i = 0; i < n; ++i) sum += codec.decode(sent[i][j], chunk);
    gathered[j] = encode_with(sum / static_cast<float>(n), codec, ef ? &ef->server[j] : nullptr);
    res.allgather_bytes = static_cast<std::int64_t>(gathered[j].size());
  }
  Eigen::VectorXf mean(n * chunk);
  for (int j = 0; j < n; ++j) mean.segment(j * chunk, chunk) = codec.decode(gathered[j], chunk);
  res.mean = mean.head(inputs[0].size());
  return res;
}

void orthogonalize(Eigen::MatrixXf& p) {
  for (Eigen::Index i = 0; i < p.cols(); ++i) {
    p.col(i) /= p.col(i).norm() + 1e-8f;
    for (Eigen::Index j = i + 1; j < p.cols(); ++j) p.col(j) -= p.col(i).dot(p.col(j)) * p.col(i);
  }
}

PowerSgdState powersgd_state(std::int64_t rows, std::int64_t cols, int rank, int ranks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  PowerSgdState s;
  s.q.resize(cols, rank);
  for (Eigen::Index i = 0; i < s.q.size(); ++i) s.q.data()[i] = static_cast<float>(normal(rng));
  s.error.assign(static_cast<std::size_t>(ranks), Eigen::MatrixXf::Zero(rows, cols));
  return s;
}

namespace {
// The bytes a rank hands to an all-reduce: the matrix serialised as fp32.
Buffer serialise(const Eigen::MatrixXf& m) {
  Buffer b(static_cast<std::size_t>(m.size()) * sizeof(float));
  std::memcpy(b.data(), m.data(), b.size());
  return b;
}
Eigen::MatrixXf deserialise(const Buffer& b, Eigen::Index rows, Eigen::Index cols) {
  HCSIM_ASSERT(b.size() == static_cast<std::size_t>(rows * cols) * sizeof(float), "matrix buffer of the wrong size");
  Eigen::MatrixXf m(rows, cols);
  std::memcpy(m.data(), b.data(), b.size());
  return m;
}
}  // namespace

PowerSgdResult powersgd_allreduce(const std::vector<Eigen::MatrixXf>& grads, PowerSgdState& state,
                                  bool error_feedback) {
  const int n = static_cast<int>(grads.size());
  HCSIM_ASSERT(n >= 1 && static_cast<int>(state.error.size()) == n, "PowerSGD state for another number of ranks");
  const Eigen::Index rows = grads[0].rows(), cols = grads[0].cols(), r = state.q.cols();
  std::vector<Eigen::MatrixXf> m(n);
  Eigen::MatrixXf p = Eigen::MatrixXf::Zero(rows, r);
  PowerSgdResult res;
  for (int i = 0; i < n; ++i) {
    m[i] = error_feedback ? Eigen::MatrixXf(grads[i] + state.error[i]) : grads[i];
    const Buffer b = serialise(m[i] * state.q);
    res.p_bytes = static_cast<std::int64_t>(b.size());
    p += deserialise(b, rows, r);  // all-reduce (sum) of P
  }
  orthogonalize(p);
  Eigen::MatrixXf q = Eigen::MatrixXf::Zero(cols, r);
  for (int i = 0; i < n; ++i) {
    const Buffer b = serialise(m[i].transpose() * p);
    res.q_bytes = static_cast<std::int64_t>(b.size());
    q += deserialise(b, cols, r);  // all-reduce (sum) of Q
  }
  q /= static_cast<float>(n);
  state.q = q;  // warm start
  res.mean = p * q.transpose();
  if (error_feedback)
    for (int i = 0; i < n; ++i) state.error[i] = m[i] - res.mean;
  return res;
}

}  // namespace hcsim::codec_reference
