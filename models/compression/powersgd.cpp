// "powersgd": rank-r PowerSGD (Vogels et al. 2019, arXiv 1905.13727, Algorithm 1 with error
// feedback and warm start), as PyTorch's powerSGD_hook. For a gradient matrix G of n rows and
// m columns (e bytes per element), M = G + E (error feedback), and with the previous Q (m x r):
//   P = M Q; P <- all-reduce(P); P <- orthogonalise(P); Q = M^T P; Q <- all-reduce(Q);
//   M^ = P Q^T; E = M - M^
// P and Q are dense and sum in place: two in-place all-reduces of n r e and m r e bytes.
// r = min(rank, n, m). A matrix is compressed only when (n + m) r min_compression_rate < n m
// (PyTorch's rule; a vector, m = 1, never is) and only from step warmup_steps on; otherwise it
// takes one uncompressed all-reduce.
//   encode flops = 4 n m r (two GEMMs) + 3 n r + 2 n r (r - 1) (modified Gram-Schmidt)
//                  [+ n m: M = G + E]
//   decode flops = 2 n m r (M^ = P Q^T) [+ n m: E = M - M^]
//   encode traffic = e (2 n m + 4 n r + 2 m r) [+ 3 n m e]; decode traffic = e (n r + m r + n m) [+ 2 n m e]
//   extra memory = (n + m) r e (P buffer, warm-start Q) [+ n m e residual]
#include <algorithm>

#include "models/compression/builtin.hpp"
#include "models/compression/two_phase.hpp"

namespace hcsim::compression {

namespace {

class PowerSgdCodec final : public Codec {
 public:
  explicit PowerSgdCodec(const Params& p)
      : rank_(p.integer("rank")),
        warmup_(p.integer("warmup_steps")),
        min_rate_(p.number("min_compression_rate")),
        ef_(p.boolean("error_feedback")) {}
  [[nodiscard]] std::string_view type() const override { return "powersgd"; }
  [[nodiscard]] bool in_place_allreduce() const override { return true; }

 private:
  [[nodiscard]] bool worth(std::int64_t n, std::int64_t m, std::int64_t r) const {
    return static_cast<double>(n + m) * static_cast<double>(r) * min_rate_ <
           static_cast<double>(n) * static_cast<double>(m);
  }
  [[nodiscard]] CodecCost compressed(const CodecInput& in, std::int64_t rank) const;
  [[nodiscard]] CodecCost compute_cost(const CodecInput& in) const override {
    const std::int64_t r = std::min({rank_, in.rows, in.cols});
    if (r < 1 || !worth(in.rows, in.cols, r)) return uncompressed_cost(in);
    CodecCost c = compressed(in, r);
    if (in.step >= warmup_) return c;
    CodecCost warm = uncompressed_cost(in);
    warm.extra_memory = c.extra_memory;
    return warm;
  }
  std::int64_t rank_, warmup_;
  double min_rate_;
  bool ef_;
};

CodecCost PowerSgdCodec::compressed(const CodecInput& in, std::int64_t rank) const {
  const double n = static_cast<double>(in.rows), m = static_cast<double>(in.cols), r = static_cast<double>(rank);
  const double e = in.elem_bytes, nm = n * m;
  CodecCost c;
  c.compressed = true;
  c.uncompressed_bytes = Bytes(nm * e);
  const Bytes p_bytes = Bytes(n * r * e), q_bytes = Bytes(m * r * e);
  c.plan.phases = {{WireOp::all_reduce, p_bytes, p_bytes}, {WireOp::all_reduce, q_bytes, q_bytes}};
  c.wire_bytes_per_rank = p_bytes + q_bytes;
  c.encode_flops = Flops(4 * nm * r + 3 * n * r + 2 * n * r * (r - 1) + (ef_ ? nm : 0));
  c.decode_flops = Flops(2 * nm * r + (ef_ ? nm : 0));
  c.encode_memory_traffic = Bytes(e * (2 * nm + 4 * n * r + 2 * m * r + (ef_ ? 3 * nm : 0)));
  c.decode_memory_traffic = Bytes(e * (n * r + m * r + nm + (ef_ ? 2 * nm : 0)));
  c.extra_memory = p_bytes + q_bytes + Bytes(ef_ ? nm * e : 0);
  return c;
}

}  // namespace

void register_powersgd_codec(Registry<Codec>& r) {
  r.add({.type = "powersgd",
         .help = "rank-r PowerSGD: P (rows x r) and Q (cols x r) all-reduced in place, with error feedback",
         .params = {{.name = "rank",
                     .kind = ParamKind::integer,
                     .def = 1,
                     .min = 1,
                     .help = "approximation rank r (PyTorch matrix_approximation_rank, default 1)"},
                    {.name = "warmup_steps",
                     .kind = ParamKind::integer,
                     .def = 1000,
                     .min = 0,
                     .help = "steps of uncompressed all-reduce first (PyTorch start_powerSGD_iter, default 1000)"},
                    {.name = "min_compression_rate",
                     .kind = ParamKind::number,
                     .def = 2.0,
                     .min = 1,
                     .help = "compress a matrix only when rows*cols exceeds this times (rows+cols)*r (PyTorch "
                             "default 2)"},
                    {.name = "error_feedback",
                     .kind = ParamKind::boolean,
                     .def = true,
                     .help = "keep the residual M - P Q^T (rows*cols elements) for the next step"}},
         .make = [](const Params& p) { return std::make_unique<PowerSgdCodec>(p); },
         .source = "Vogels et al. 2019, arXiv 1905.13727; PyTorch torch.distributed.algorithms.ddp_comm_hooks."
                   "powerSGD_hook"});
}

}  // namespace hcsim::compression
