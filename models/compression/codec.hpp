#pragma once
// The gradient / activation compression family: for each codec, the bytes it puts on the
// wire, its encode and decode work and memory traffic, the memory it keeps resident
// (error-feedback residuals, communication buffers) and the collectives that can carry it.
//
//   wire_bytes_per_rank = sum over the plan's phases of the bytes this rank's encoder hands
//                         to the collective (its encoded messages, exactly as serialised by
//                         the reference kernels in reference.hpp)
//   plan                = the collectives that reduce the encoded data, in order:
//                         one in-place all-reduce (dense formats: none, fp16, bf16),
//                         two in-place all-reduces (PowerSGD: P then Q),
//                         one all-gather (sparse values + indices: top-k, random-k),
//                         all-to-all + all-gather (formats with per-rank scales, which do not
//                         add in place: int8, and the 1-bit family as in DeepSpeed 1-bit Adam).
//
// Codecs and sources (equations and cost formulas in docs/compression.md):
//   none, fp16, bf16   casting (IEEE 754 binary16; bfloat16 as in Kalamkar et al. 2019, arXiv 1905.12322)
//   int8               linear int8 with one fp32 scale per bucket (bucketing after Dettmers et al. 2022,
//                      arXiv 2110.02861); two-phase reduction as in 1-bit Adam
//   topk, randomk      sparsification with error feedback (Stich et al. 2018, arXiv 1809.07599;
//                      Lin et al. 2018, arXiv 1712.01887)
//   onebit-adam        Tang et al. 2021, arXiv 2102.02888 (DeepSpeed OnebitAdam)
//   onebit-lamb        Li et al. 2021, arXiv 2104.06069 (DeepSpeed OnebitLamb)
//   zeroone-adam       Lu et al. 2022, arXiv 2202.06009 (DeepSpeed ZeroOneAdam)
//   powersgd           Vogels et al. 2019, arXiv 1905.13727 (PyTorch PowerSGD communication hook)
//
// Pure cost functions: no SimGrid, no state other than the registry.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/params.hpp"
#include "sim/core/registry.hpp"
#include "sim/core/units.hpp"

namespace hcsim {

// What is compressed: one gradient (or activation) tensor seen as a rows x cols matrix. A flat
// buffer is {elements, 1}; only PowerSGD uses the shape (a vector is not compressed by it).
struct CodecInput {
  std::int64_t rows = 0;
  std::int64_t cols = 1;
  double elem_bytes = 4;  // bytes per element of the uncompressed tensor: fp32 4, bf16 2
  int ranks = 1;          // size of the group that reduces it (data-parallel degree)
  std::int64_t step = 0;  // 0-based training step: warm-up, variance freezing, local steps

  [[nodiscard]] std::int64_t elements() const { return rows * cols; }
};

// Collectives a plan uses. Same names and meaning as hcsim::CollectiveOp in
// sim/collectives/schedule.hpp, which models/ may not include (layers depend downward):
//   WireOp::all_reduce -> CollectiveOp::all_reduce
//   WireOp::all_gather -> CollectiveOp::all_gather
//   WireOp::all_to_all -> CollectiveOp::all_to_all
enum class WireOp : std::uint8_t { all_reduce, all_gather, all_to_all };
std::string_view wire_op_name(WireOp op);

struct CollectivePhase {
  WireOp op = WireOp::all_reduce;
  Bytes contribution{};  // bytes this rank's encoder hands to the collective
  // The collective's size in schedule.hpp's convention (Schedule::elements, in bytes):
  // all-reduce: the vector (= contribution); all-gather: the gathered result
  // (= ranks x contribution); all-to-all: the send buffer of `ranks` blocks (= contribution).
  Bytes buffer{};
};

struct CollectivePlan {
  std::vector<CollectivePhase> phases;  // run one after the other
  [[nodiscard]] bool empty() const { return phases.empty(); }
  // True when every phase is an in-place all-reduce (also true for an empty plan).
  [[nodiscard]] bool in_place() const;
};

// Bytes one rank sends over its links for the plan, with bandwidth-optimal algorithms
// (NCCL-tests PERFORMANCE.md bus-bandwidth factors): all-reduce 2(n-1)/n * buffer,
// all-gather and all-to-all (n-1)/n * buffer.
Bytes bytes_sent_per_rank(const CollectivePlan& plan, int ranks);

struct CodecCost {
  bool compressed = false;         // false: warm-up step, or a tensor the codec leaves alone
  Bytes uncompressed_bytes{};      // elements x elem_bytes
  Bytes wire_bytes_per_rank{};     // sum of plan.phases[i].contribution
  Flops encode_flops{};            // arithmetic and compare/convert operations, one per op
  Flops decode_flops{};
  Bytes encode_memory_traffic{};   // device-memory bytes, each operand read or written once
  Bytes decode_memory_traffic{};
  Bytes extra_memory{};            // resident: error feedback, warm-start and communication buffers
                                   // (the peak over the run; the same at every step)
  CollectivePlan plan;
};

class Codec {
 public:
  virtual ~Codec() = default;
  [[nodiscard]] virtual std::string_view type() const = 0;

  // Cost of compressing and reducing one tensor with the codec's own plan.
  [[nodiscard]] CodecCost cost(const CodecInput& in) const;
  // The same for a flat buffer: {elements, 1}.
  [[nodiscard]] CodecCost cost(std::int64_t elements, double elem_bytes, int ranks, std::int64_t step) const;
  // Cost when each rank's encoded message travels by one all-gather and every rank decodes and
  // sums all `ranks` messages itself: the fallback for "on_incompatible": "allgather". A codec
  // that sums in place never needs it and returns cost(in).
  [[nodiscard]] CodecCost allgather_cost(const CodecInput& in) const;

  // Whether the compressed form sums element-wise, so an in-place (ring) all-reduce can carry it.
  [[nodiscard]] virtual bool in_place_allreduce() const = 0;
  // Why it does not, for messages ("" when it does).
  [[nodiscard]] virtual std::string why_not_in_place() const { return {}; }

 private:
  [[nodiscard]] virtual CodecCost compute_cost(const CodecInput& in) const = 0;
  [[nodiscard]] virtual CodecCost compute_allgather_cost(const CodecInput& in) const { return compute_cost(in); }
};

Registry<Codec>& codecs();
// Fills codecs(); idempotent.
void register_builtin_codecs();

// What to do when the strategy needs an in-place ring all-reduce of the gradients and the codec
// cannot be summed in place ("on_incompatible" in the compression object).
enum class OnIncompatible : std::uint8_t { error, allgather };
ParamSpec on_incompatible_param();
// "error" or "allgather" (already checked against on_incompatible_param()).
OnIncompatible on_incompatible_from(std::string_view name);

// Cost for a caller that can only run in-place all-reduces (a strategy configured for ring
// all-reduce, in-network reduction); other callers use Codec::cost(), whose plan already says
// which collectives carry the codec. A codec that sums in place gets its own cost. Otherwise
// `error` throws InputError at `path` naming the codec and the reason, and `allgather` returns
// allgather_cost(in).
CodecCost cost_for_in_place_allreduce(const Codec& codec, const CodecInput& in, OnIncompatible policy,
                                      const std::string& path);

// A compression object as written in a scenario:
//   {"type": "topk", "ratio": 0.01, "on_incompatible": "allgather"}
struct CompressionConfig {
  std::unique_ptr<Codec> codec;
  OnIncompatible on_incompatible = OnIncompatible::error;
};
// Every problem goes to `diag` under `path`; nullopt when there was one. With `resolved`,
// the object with every parameter stated (defaults filled) is stored there.
std::optional<CompressionConfig> resolve_compression(const nlohmann::json& desc, const std::string& path,
                                                     Diagnostics& diag, nlohmann::json* resolved = nullptr);

}  // namespace hcsim
