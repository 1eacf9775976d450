// "int8": linear 8-bit quantisation with one fp32 scale per bucket of B elements
// (scale = max|x| / 127 over the bucket, q = round(x / scale); bucket-wise scaling after
// Dettmers et al. 2022, arXiv 2110.02861). Per-element error <= scale / 2.
// Every rank's scales differ, so int8 values do not add in place: the reduction is the
// two-phase all-to-all + all-gather of two_phase.hpp (the scheme of DeepSpeed 1-bit Adam,
// Tang et al. 2021, arXiv 2102.02888), with c = ceil(N / n) elements per chunk and buckets
// restarting at each chunk:
//   message m = c + 4 ceil(c / B) bytes
//   encode: 4 operations per element (magnitude, running max, multiply by 1/scale, round)
//   decode: 1 operation per element (multiply by scale), plus the accumulate
#include <fmt/format.h>

#include "models/compression/builtin.hpp"
#include "models/compression/two_phase.hpp"

namespace hcsim::compression {

namespace {

class Int8Codec final : public Codec {
 public:
  explicit Int8Codec(std::int64_t bucket) : bucket_(bucket) {}
  [[nodiscard]] std::string_view type() const override { return "int8"; }
  [[nodiscard]] bool in_place_allreduce() const override { return false; }
  [[nodiscard]] std::string why_not_in_place() const override {
    return fmt::format("each rank's int8 values carry their own fp32 scale per bucket of {} elements, so they do "
                       "not add element-wise; int8 reduces by all-to-all + all-gather",
                       bucket_);
  }

 private:
  [[nodiscard]] ChunkFormat format(const CodecInput& in) const {
    ChunkFormat f;
    f.geo = even_geometry(in.elements(), in.ranks);
    const std::int64_t buckets = (f.geo.chunk + bucket_ - 1) / bucket_;
    f.message = Bytes(static_cast<double>(f.geo.chunk + 4 * buckets));
    f.encode_ops = 4;
    f.decode_ops = 1;
    return f;
  }
  [[nodiscard]] CodecCost compute_cost(const CodecInput& in) const override { return two_phase_cost(format(in), in); }
  [[nodiscard]] CodecCost compute_allgather_cost(const CodecInput& in) const override {
    return two_phase_allgather_cost(format(in), in);
  }
  std::int64_t bucket_;
};

}  // namespace

void register_int8_codec(Registry<Codec>& r) {
  r.add({.type = "int8",
         .help = "int8 values with one fp32 scale (max|x|/127) per bucket; reduced by all-to-all + all-gather",
         .params = {{.name = "bucket_size",
                     .kind = ParamKind::integer,
                     .def = 2048,
                     .min = 1,
                     .help = "elements sharing one fp32 scale (2048: the block size of Dettmers et al. 2022)"}},
         .make = [](const Params& p) { return std::make_unique<Int8Codec>(p.integer("bucket_size")); },
         .source = "Dettmers et al. 2022, arXiv 2110.02861 (block-wise scales); two-phase reduction of "
                   "Tang et al. 2021, arXiv 2102.02888"});
}

}  // namespace hcsim::compression
