#pragma once
// Reference kernels of the compression codecs, executed on real tensors (Eigen, fp32) so the
// cost models of codec.hpp can be checked against something independent: every encoder writes
// the exact byte layout that travels on the wire (its size must equal the modelled wire bytes),
// every decoder reads it back, and the reductions run on several ranks' buffers.
//
// Wire layouts (little-endian, as the host writes them):
//   half     2 bytes per element: IEEE 754 binary16 or bfloat16, round to nearest even
//   int8     [fp32 scale per bucket][int8 per element]; scale = max|x| / 127 over the bucket,
//            q = round(x / scale)  =>  |x - q scale| <= scale / 2
//   sparse   [fp32 value x k][index x k]; indices int32, int64 above 2^31 - 1 elements
//   sign     [packed signs, bit i % 8 of byte i / 8 set when x_i >= 0][fp32 scale = ||x||_2 / sqrt(len)]
// Error feedback after Seide et al. 2014 (1-bit SGD) and Karimireddy et al. 2019, arXiv 1901.09847:
// the residual (input + residual - decoded) of one step is added to the next step's input.
// The two-phase reduction is DeepSpeed's compressed_allreduce (Tang et al. 2021, arXiv 2102.02888);
// PowerSGD is Vogels et al. 2019, arXiv 1905.13727, Algorithm 1.
// Synthetic gradients are heavy-tailed (Student-t), drawn from std::mt19937_64 with a given seed.

#include <cstdint>
#include <functional>
#include <vector>

#include <Eigen/Dense>

namespace hcsim::codec_reference {

using Buffer = std::vector<std::uint8_t>;

// scale * Student-t(dof) samples.
Eigen::VectorXf student_t_vector(std::int64_t elements, double dof, double scale, std::uint64_t seed);
Eigen::MatrixXf student_t_matrix(std::int64_t rows, std::int64_t cols, double dof, double scale,
                                 std::uint64_t seed);

enum class HalfFormat : std::uint8_t { fp16, bf16 };
Buffer encode_half(const Eigen::VectorXf& x, HalfFormat f);
Eigen::VectorXf decode_half(const Buffer& b, HalfFormat f);

Buffer encode_int8(const Eigen::VectorXf& x, std::int64_t bucket);
Eigen::VectorXf decode_int8(const Buffer& b, std::int64_t elements, std::int64_t bucket);

// Positions of the k largest |x| (ties to the lower index), ascending.
std::vector<std::int64_t> topk_indices(const Eigen::VectorXf& x, std::int64_t k);
// k distinct uniformly drawn positions in [0, elements), ascending.
std::vector<std::int64_t> randomk_indices(std::int64_t elements, std::int64_t k, std::uint64_t seed);
Buffer encode_sparse(const Eigen::VectorXf& x, const std::vector<std::int64_t>& indices);
Eigen::VectorXf decode_sparse(const Buffer& b, std::int64_t elements);

// x.size() must be a multiple of 8.
Buffer encode_sign(const Eigen::VectorXf& x);
Eigen::VectorXf decode_sign(const Buffer& b, std::int64_t elements);

// One codec on one vector.
struct VectorCodec {
  std::function<Buffer(const Eigen::VectorXf&)> encode;
  std::function<Eigen::VectorXf(const Buffer&, std::int64_t elements)> decode;
};
VectorCodec sign_codec();
VectorCodec int8_codec(std::int64_t bucket);

class ErrorFeedback {
 public:
  explicit ErrorFeedback(std::int64_t elements) : residual_(Eigen::VectorXf::Zero(elements)) {}
  // Encodes x + residual, keeps the new residual, returns the decoded vector; `wire` gets the message.
  Eigen::VectorXf apply(const Eigen::VectorXf& x, const VectorCodec& codec, Buffer* wire = nullptr);
  [[nodiscard]] const Eigen::VectorXf& residual() const { return residual_; }

 private:
  Eigen::VectorXf residual_;
};

// Two-phase compressed all-reduce over inputs.size() ranks, each input padded with zeros to
// ranks * chunk elements: all-to-all of encoded chunks, decode + average on the chunk's owner,
// re-encode, all-gather, decode. Returns the mean (first N elements) every rank ends with.
struct TwoPhaseErrorFeedback {
  std::vector<ErrorFeedback> worker;  // one per rank, ranks * chunk elements
  std::vector<ErrorFeedback> server;  // one per rank, chunk elements
  TwoPhaseErrorFeedback(int ranks, std::int64_t chunk);
};
struct TwoPhaseResult {
  Eigen::VectorXf mean;
  std::int64_t alltoall_bytes = 0;   // bytes one rank hands to the all-to-all (same on every rank)
  std::int64_t allgather_bytes = 0;  // bytes one rank hands to the all-gather
};
TwoPhaseResult two_phase_allreduce(const std::vector<Eigen::VectorXf>& inputs, std::int64_t chunk,
                                   const VectorCodec& codec, TwoPhaseErrorFeedback* ef);

// PowerSGD across ranks, rank r, warm-started Q shared by all ranks.
struct PowerSgdState {
  Eigen::MatrixXf q;                   // cols x r
  std::vector<Eigen::MatrixXf> error;  // per rank, rows x cols
};
PowerSgdState powersgd_state(std::int64_t rows, std::int64_t cols, int rank, int ranks, std::uint64_t seed);
struct PowerSgdResult {
  Eigen::MatrixXf mean;      // P Q^T, the same on every rank
  std::int64_t p_bytes = 0;  // bytes of one rank's serialised P (first all-reduce)
  std::int64_t q_bytes = 0;  // bytes of one rank's serialised Q (second all-reduce)
};
PowerSgdResult powersgd_allreduce(const std::vector<Eigen::MatrixXf>& grads, PowerSgdState& state,
                                  bool error_feedback);
// Modified Gram-Schmidt on the columns, in order (PyTorch's _orthogonalize_gram_schmidt).
void orthogonalize(Eigen::MatrixXf& p);

}  // namespace hcsim::codec_reference
