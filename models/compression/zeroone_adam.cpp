// "zeroone-adam": 0/1 Adam (Lu et al. 2022, arXiv 2202.06009), as DeepSpeed's ZeroOneAdam.
// Every communication after the first steps is 1-bit (onebit.hpp), with no long warm-up:
//  - variance phase (step < var_freeze_step): the variance is refreshed at steps t = step + 1
//    that are multiples of an interval I; I starts at 1 and doubles after every
//    var_update_scaler refreshes. A refresh step all-reduces the gradient uncompressed; every
//    other step all-reduces the 1-bit compressed gradient (two-phase, two_phase.hpp);
//  - frozen phase (step >= var_freeze_step, u = step - var_freeze_step): local steps; the
//    accumulated update is reduced (1-bit, two-phase) once per window of
//    L = min(local_steps, 2^floor(u / local_step_scaler)) steps, on the window's last step,
//    (u + 1) mod L = 0; other steps send nothing.
// Memory kept (the peak): worker residual 4P, server residual 4c, buffers, and the momentum
// accumulator 4N (DeepSpeed's momentum_accumulator, the paper's u).
// The paper's algorithm is followed with clean step boundaries; DeepSpeed switches phase one
// step after var_freeze_step and counts steps from 1 (we use t = step + 1 for that reason).
#include <algorithm>

#include "models/compression/builtin.hpp"
#include "models/compression/onebit.hpp"

namespace hcsim::compression {

namespace {

// Whether 1-based step t refreshes the variance: intervals 1, 2, 4, ..., each for `scaler`
// refreshes at its multiples after the previous interval's last refresh.
bool variance_refresh(std::int64_t t, std::int64_t scaler) {
  std::int64_t last = 0, interval = 1;
  for (;;) {
    const std::int64_t first = (last / interval + 1) * interval;
    const std::int64_t end = first + (scaler - 1) * interval;
    if (t <= end) return t % interval == 0;
    last = end;
    interval *= 2;
  }
}

class ZeroOneAdamCodec final : public Codec {
 public:
  explicit ZeroOneAdamCodec(const Params& p)
      : freeze_(p.integer("var_freeze_step")),
        var_scaler_(p.integer("var_update_scaler")),
        local_scaler_(p.integer("local_step_scaler")),
        local_max_(p.integer("local_steps")) {}
  [[nodiscard]] std::string_view type() const override { return "zeroone-adam"; }
  [[nodiscard]] bool in_place_allreduce() const override { return false; }
  [[nodiscard]] std::string why_not_in_place() const override {
    return "its packed signs carry one fp32 scale per chunk and rank, so they do not add element-wise; the "
           "compressed all-reduce is all-to-all + all-gather";
  }

 private:
  [[nodiscard]] CodecCost compute_cost(const CodecInput& in) const override { return staged(in, false); }
  [[nodiscard]] CodecCost compute_allgather_cost(const CodecInput& in) const override { return staged(in, true); }

  [[nodiscard]] std::int64_t local_window(std::int64_t u) const {
    const std::int64_t doublings = u / local_scaler_;
    if (doublings >= 62) return local_max_;
    return std::min<std::int64_t>(local_max_, std::int64_t{1} << doublings);
  }

  [[nodiscard]] CodecCost staged(const CodecInput& in, bool allgather) const {
    const ChunkFormat f = sign_format(in, true);
    CodecCost compressed = allgather ? two_phase_allgather_cost(f, in) : two_phase_cost(f, in);
    compressed.extra_memory += Bytes(4.0 * static_cast<double>(in.elements()));
    if (in.step < freeze_) {
      if (!variance_refresh(in.step + 1, var_scaler_)) return compressed;
      CodecCost full = uncompressed_cost(in);
      full.extra_memory = compressed.extra_memory;
      return full;
    }
    const std::int64_t u = in.step - freeze_;
    if ((u + 1) % local_window(u) == 0) return compressed;
    CodecCost local;
    local.compressed = true;
    local.uncompressed_bytes = compressed.uncompressed_bytes;
    local.extra_memory = compressed.extra_memory;
    return local;
  }

  std::int64_t freeze_, var_scaler_, local_scaler_, local_max_;
};

}  // namespace

void register_zeroone_adam_codec(Registry<Codec>& r) {
  r.add({.type = "zeroone-adam",
         .help = "0/1 Adam: 1-bit gradients with exponentially spaced full-precision variance refreshes, then "
                 "frozen variance and 1-bit sync every few local steps",
         .params = {{.name = "var_freeze_step",
                     .kind = ParamKind::integer,
                     .def = 100000,
                     .min = 0,
                     .help = "steps before the variance is frozen (DeepSpeed default 100000)"},
                    {.name = "var_update_scaler",
                     .kind = ParamKind::integer,
                     .def = 16,
                     .min = 1,
                     .help = "variance refreshes before the refresh interval doubles (DeepSpeed default 16)"},
                    {.name = "local_step_scaler",
                     .kind = ParamKind::integer,
                     .def = 32678,
                     .min = 1,
                     .help = "frozen-phase steps before the sync interval doubles (DeepSpeed default 32678)"},
                    {.name = "local_steps",
                     .kind = ParamKind::integer,
                     .def = 16,
                     .min = 1,
                     .help = "largest sync interval k: sync every k steps once grown (DeepSpeed local_step_clipper, "
                             "default 16)"}},
         .make = [](const Params& p) { return std::make_unique<ZeroOneAdamCodec>(p); },
         .source = "Lu et al. 2022, arXiv 2202.06009; DeepSpeed ZeroOneAdam"});
}

}  // namespace hcsim::compression
