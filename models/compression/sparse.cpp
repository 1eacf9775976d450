// "topk" and "randomk": keep k = ceil(ratio N) of N elements (at least 1), and send their values
// (in the gradient's dtype, e bytes) with their int32 indices (int64 above 2^31 - 1 elements).
// Top-k keeps the k largest magnitudes (Lin et al. 2018, arXiv 1712.01887), random-k k uniformly
// drawn positions (Stich et al. 2018, arXiv 1809.07599); both with error feedback by default
// (the residual of what was not sent is added to the next step's gradient).
// Ranks keep different positions, so the sparse vectors do not add in place: every rank
// all-gathers every rank's message and scatter-adds the n messages. With n ranks and
// entry = e + index bytes:
//   wire = k entry; plan = all-gather (k entry per rank)
//   encode flops: top-k N (1 + select_passes) (magnitude + radix-select passes), random-k 2k
//                 (index draw + gather); error feedback adds 2N (add residual, update residual)
//   decode flops = n k (scatter-add)
//   encode traffic = (error feedback ? 3 N e : top-k N e, random-k k e) + k entry
//   decode traffic = n k entry + N e
//   extra memory = (error feedback ? N e : 0) + (n + 1) k entry (send and gather buffers)
// Random-k with shared_indices draws the same positions on every rank from a shared seed, so no
// index is sent and the k values add in place: wire = k e, one all-reduce, decode = k.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "models/compression/builtin.hpp"
#include "models/compression/two_phase.hpp"

namespace hcsim::compression {

namespace {

std::int64_t kept(double ratio, std::int64_t n) {
  if (n == 0) return 0;
  const auto k = static_cast<std::int64_t>(std::ceil(ratio * static_cast<double>(n) - 1e-6));
  return std::clamp<std::int64_t>(k, 1, n);
}

double index_bytes(std::int64_t n) { return n > std::numeric_limits<std::int32_t>::max() ? 8.0 : 4.0; }

enum class Select : std::uint8_t { largest, random };

class SparseCodec final : public Codec {
 public:
  SparseCodec(Select sel, double ratio, bool ef, std::int64_t passes, bool shared)
      : sel_(sel), ratio_(ratio), ef_(ef), passes_(passes), shared_(shared) {}
  [[nodiscard]] std::string_view type() const override { return sel_ == Select::largest ? "topk" : "randomk"; }
  [[nodiscard]] bool in_place_allreduce() const override { return shared_; }
  [[nodiscard]] std::string why_not_in_place() const override {
    return shared_ ? std::string{}
                   : "its values + int32 indices are sparse vectors whose positions differ from rank to rank, so they "
                     "do not sum in place; they travel by all-gather";
  }

 private:
  [[nodiscard]] CodecCost compute_cost(const CodecInput& in) const override;
  Select sel_;
  double ratio_;
  bool ef_;
  std::int64_t passes_;
  bool shared_;
};

CodecCost SparseCodec::compute_cost(const CodecInput& in) const {
  const std::int64_t elements = in.elements();
  const double n = static_cast<double>(elements), k = static_cast<double>(kept(ratio_, elements));
  const double e = in.elem_bytes, ranks = in.ranks;
  const Bytes entry = Bytes(e + (shared_ ? 0.0 : index_bytes(elements)));
  CodecCost c;
  c.compressed = true;
  c.uncompressed_bytes = Bytes(n * e);
  c.wire_bytes_per_rank = entry * k;
  c.plan = shared_ ? allreduce_plan(c.wire_bytes_per_rank) : allgather_plan(c.wire_bytes_per_rank, in.ranks);
  c.encode_flops = Flops(sel_ == Select::largest ? n * (1.0 + static_cast<double>(passes_)) : 2.0 * k);
  c.decode_flops = Flops(shared_ ? k : ranks * k);
  const Bytes read = Bytes(ef_ ? 3.0 * n * e : (sel_ == Select::largest ? n * e : k * e));
  c.encode_memory_traffic = read + c.wire_bytes_per_rank;
  c.decode_memory_traffic = c.wire_bytes_per_rank * (shared_ ? 1.0 : ranks) + c.uncompressed_bytes;
  c.extra_memory = c.wire_bytes_per_rank * (shared_ ? 1.0 : ranks + 1.0);
  if (ef_) {
    c.encode_flops += Flops(2.0 * n);
    c.extra_memory += c.uncompressed_bytes;
  }
  return c;
}

ParamSpec ratio_param() {
  return {.name = "ratio",
          .kind = ParamKind::number,
          .def = 0.01,
          .min = 0,
          .max = 1,
          .min_exclusive = true,
          .help = "fraction of elements kept: k = ceil(ratio * N), at least 1"};
}

ParamSpec ef_param() {
  return {.name = "error_feedback",
          .kind = ParamKind::boolean,
          .def = true,
          .help = "add what was not sent to the next step's gradient (an fp residual of N elements)"};
}

}  // namespace

void register_sparse_codecs(Registry<Codec>& r) {
  r.add({.type = "topk",
         .help = "keep the k largest magnitudes; values + int32 indices travel by all-gather",
         .params = {ratio_param(), ef_param(),
                    {.name = "select_passes",
                     .kind = ParamKind::integer,
                     .def = 4,
                     .min = 1,
                     .max = 64,
                     .help = "passes of the radix select over the N keys: 32-bit keys in 8-bit digits take 4"}},
         .make = [](const Params& p) {
           return std::make_unique<SparseCodec>(Select::largest, p.number("ratio"), p.boolean("error_feedback"),
                                                p.integer("select_passes"), false);
         },
         .source = "Lin et al. 2018, arXiv 1712.01887 (DGC); Stich et al. 2018, arXiv 1809.07599"});
  r.add({.type = "randomk",
         .help = "keep k uniformly drawn elements; values + int32 indices travel by all-gather, or values alone by "
                 "all-reduce when every rank draws the same indices",
         .params = {ratio_param(), ef_param(),
                    {.name = "shared_indices",
                     .kind = ParamKind::boolean,
                     .def = false,
                     .help = "every rank draws the same positions from a shared seed: no indices are sent and the "
                             "values sum in place"}},
         .make = [](const Params& p) {
           return std::make_unique<SparseCodec>(Select::random, p.number("ratio"), p.boolean("error_feedback"), 0,
                                                p.boolean("shared_indices"));
         },
         .source = "Stich et al. 2018, arXiv 1809.07599"});
}

}  // namespace hcsim::compression
