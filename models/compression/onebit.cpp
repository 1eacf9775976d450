// "onebit-adam" (Tang et al. 2021, arXiv 2102.02888) and "onebit-lamb" (Li et al. 2021,
// arXiv 2104.06069), as implemented by DeepSpeed's OnebitAdam and OnebitLamb.
// Warm-up: for steps < warmup_steps the optimizer is plain Adam / LAMB and the gradient goes
// through one uncompressed in-place all-reduce. Afterwards the optimizer freezes the variance
// and reduces the momentum (fp32) by the two-phase compressed all-reduce (two_phase.hpp) of
// 1-bit chunks (onebit.hpp), with worker and server error feedback:
//   wire = (n + 1)(c/8 + 4), c = P / n, P = N padded to a multiple of n lcm(n, 8)
// Memory kept (the peak, reported at every step): worker residual 4P, server residual 4c and
// the communication buffers; 1-bit LAMB also keeps a fresh variance and the previous step's
// momentum, 8N (fp32 each: DeepSpeed OnebitLamb's exp_avg_sq_fresh and exp_avg_last_step).
#include "models/compression/onebit.hpp"

#include "models/compression/builtin.hpp"

namespace hcsim::compression {

ChunkFormat sign_format(const CodecInput& in, bool error_feedback) {
  ChunkFormat f;
  f.geo = sign_geometry(in.elements(), in.ranks);
  f.message = Bytes(static_cast<double>(f.geo.chunk / 8 + 4));
  f.encode_ops = error_feedback ? 6 : 3;
  f.decode_ops = 1;
  f.error_feedback = error_feedback;
  return f;
}

ParamSpec sign_error_feedback_param() {
  return {.name = "error_feedback",
          .kind = ParamKind::boolean,
          .def = true,
          .help = "carry each 1-bit encode's residual (worker: N, server: N/n fp32 elements) into the next step"};
}

namespace {

class OnebitCodec final : public Codec {
 public:
  OnebitCodec(std::string type, std::int64_t warmup, bool ef, bool lamb)
      : type_(std::move(type)), warmup_(warmup), ef_(ef), lamb_(lamb) {}
  [[nodiscard]] std::string_view type() const override { return type_; }
  [[nodiscard]] bool in_place_allreduce() const override { return false; }
  [[nodiscard]] std::string why_not_in_place() const override {
    return "after warm-up its packed signs carry one fp32 scale per chunk and rank, so they do not add "
           "element-wise; the compressed all-reduce is all-to-all + all-gather";
  }

 private:
  [[nodiscard]] CodecCost compute_cost(const CodecInput& in) const override { return staged(in, false); }
  [[nodiscard]] CodecCost compute_allgather_cost(const CodecInput& in) const override { return staged(in, true); }

  [[nodiscard]] CodecCost staged(const CodecInput& in, bool allgather) const {
    const ChunkFormat f = sign_format(in, ef_);
    CodecCost compressed = allgather ? two_phase_allgather_cost(f, in) : two_phase_cost(f, in);
    if (lamb_) compressed.extra_memory += Bytes(8.0 * static_cast<double>(in.elements()));
    if (in.step >= warmup_) return compressed;
    CodecCost warm = uncompressed_cost(in);
    warm.extra_memory = compressed.extra_memory;
    return warm;
  }

  std::string type_;
  std::int64_t warmup_;
  bool ef_;
  bool lamb_;
};

ParamSpec warmup_param(const char* optimizer) {
  return {.name = "warmup_steps",
          .kind = ParamKind::integer,
          .def = 100000,
          .min = 0,
          .help = std::string("steps of uncompressed ") + optimizer +
                  " before compression starts (DeepSpeed freeze_step, default 100000)"};
}

}  // namespace

void register_onebit_codecs(Registry<Codec>& r) {
  r.add({.type = "onebit-adam",
         .help = "1-bit Adam: uncompressed warm-up, then 1-bit momentum with error feedback by all-to-all + "
                 "all-gather",
         .params = {warmup_param("Adam"), sign_error_feedback_param()},
         .make = [](const Params& p) {
           return std::make_unique<OnebitCodec>("onebit-adam", p.integer("warmup_steps"), p.boolean("error_feedback"),
                                                false);
         },
         .source = "Tang et al. 2021, arXiv 2102.02888; DeepSpeed OnebitAdam and NcclBackend.compressed_allreduce"});
  r.add({.type = "onebit-lamb",
         .help = "1-bit LAMB: uncompressed warm-up, then 1-bit momentum as 1-bit Adam, plus a fresh variance "
                 "and the previous momentum kept",
         .params = {warmup_param("LAMB"), sign_error_feedback_param()},
         .make = [](const Params& p) {
           return std::make_unique<OnebitCodec>("onebit-lamb", p.integer("warmup_steps"), p.boolean("error_feedback"),
                                                true);
         },
         .source = "Li et al. 2021, arXiv 2104.06069; DeepSpeed OnebitLamb"});
}

}  // namespace hcsim::compression
