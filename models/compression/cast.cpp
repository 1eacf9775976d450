// "none", "fp16" and "bf16": the gradient travels dense, so one in-place all-reduce carries it.
// A cast writes 2 bytes per element (IEEE 754 binary16, or bfloat16: Kalamkar et al. 2019,
// arXiv 1905.12322), both round to nearest even. With N elements of e bytes:
//   wire = 2N; encode = N conversions, decode = N conversions (one operation each)
//   encode traffic = N e + 2N; decode traffic = 2N + N e; extra memory = 2N (the 16-bit buffer)
#include "models/compression/builtin.hpp"
#include "models/compression/two_phase.hpp"

namespace hcsim::compression {

namespace {

class NoneCodec final : public Codec {
 public:
  [[nodiscard]] std::string_view type() const override { return "none"; }
  [[nodiscard]] bool in_place_allreduce() const override { return true; }

 private:
  [[nodiscard]] CodecCost compute_cost(const CodecInput& in) const override { return uncompressed_cost(in); }
};

class CastCodec final : public Codec {
 public:
  explicit CastCodec(std::string type) : type_(std::move(type)) {}
  [[nodiscard]] std::string_view type() const override { return type_; }
  [[nodiscard]] bool in_place_allreduce() const override { return true; }

 private:
  [[nodiscard]] CodecCost compute_cost(const CodecInput& in) const override {
    const double n = static_cast<double>(in.elements());
    CodecCost k;
    k.compressed = true;
    k.uncompressed_bytes = Bytes(n * in.elem_bytes);
    k.wire_bytes_per_rank = Bytes(2 * n);
    k.plan = allreduce_plan(k.wire_bytes_per_rank);
    k.encode_flops = Flops(n);
    k.decode_flops = Flops(n);
    k.encode_memory_traffic = k.uncompressed_bytes + k.wire_bytes_per_rank;
    k.decode_memory_traffic = k.wire_bytes_per_rank + k.uncompressed_bytes;
    k.extra_memory = k.wire_bytes_per_rank;
    return k;
  }
  std::string type_;
};

}  // namespace

void register_cast_codecs(Registry<Codec>& r) {
  r.add({.type = "none",
         .help = "no compression: one in-place all-reduce of the gradient in its own dtype",
         .params = {},
         .make = [](const Params&) { return std::make_unique<NoneCodec>(); },
         .source = "ring all-reduce volume 2(n-1)/n S: NCCL-tests doc/PERFORMANCE.md"});
  r.add({.type = "fp16",
         .help = "cast to IEEE 754 binary16 (round to nearest even), 2 bytes per element, summed in place",
         .params = {},
         .make = [](const Params&) { return std::make_unique<CastCodec>("fp16"); },
         .source = "IEEE 754-2008 binary16; Micikevicius et al. 2018, arXiv 1710.03740"});
  r.add({.type = "bf16",
         .help = "cast to bfloat16 (round to nearest even), 2 bytes per element, summed in place",
         .params = {},
         .make = [](const Params&) { return std::make_unique<CastCodec>("bf16"); },
         .source = "Kalamkar et al. 2019, arXiv 1905.12322"});
}

}  // namespace hcsim::compression
