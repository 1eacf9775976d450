// Stage layout (see stage_layout.hpp).
#include "workloads/stage_layout.hpp"

#include <algorithm>
#include <optional>

#include "workloads/items.hpp"
#include "workloads/transformer.hpp"

namespace hcsim {

std::vector<int> balance_layers(const TransformerConfig& c, const StrategySpec& st, const WorkloadSpec& w,
                                const std::vector<const ComputeDevice*>& stage_device, const Placement& place) {
  const int p = static_cast<int>(stage_device.size());
  const int v = place.layer_chunks();
  const ShardShape sh = shard_shape(w, st);
  // Forward + backward (2x) time of one layer, and of the embedding (stage 0) and the head
  // (last stage), on each stage's device.
  auto pass_time = [&](const std::vector<LayerOp>& ops, const ComputeDevice& dev) {
    Seconds t{};
    for (const auto& op : ops) t += 3.0 * dev.time(op.kernel);
    return t;
  };
  std::vector<Seconds> per_layer(static_cast<std::size_t>(p)), fixed(static_cast<std::size_t>(p));
  // An MoE model's layer: the mean over its dense and MoE layers.
  const double moe_share = static_cast<double>(c.moe_layers(0, c.layers)) / static_cast<double>(c.layers);
  // The layer's ops as a stage's device runs them, with or without the transposed fp8 copies
  // (ComputeDevice::fp8_transposed_copies): built once for each setting a stage's device has.
  struct LayerLists {
    std::vector<LayerOp> dense, moe;
  };
  auto lists = [&](bool transposes) {
    ShardShape x = sh;
    x.fp8_transposes = transposes;
    return LayerLists{transformer_layer_ops(c, x), c.is_moe() ? moe_layer_ops(c, x) : std::vector<LayerOp>{}};
  };
  std::optional<LayerLists> built[2];  // only the settings some stage's device has
  for (int s = 0; s < p; ++s) {
    const bool transposes = stage_device[s]->fp8_transposed_copies();
    std::optional<LayerLists>& b = built[transposes ? 1 : 0];
    if (!b) b = lists(transposes);
    const LayerLists& l = *b;
    per_layer[s] = (1 - moe_share) * pass_time(l.dense, *stage_device[s]) +
                   (moe_share > 0 ? moe_share * pass_time(l.moe, *stage_device[s]) : Seconds{});
  }
  for (int vs = 0; vs < place.vstages(); ++vs) {
    const auto s = static_cast<std::size_t>(place.stage(vs));
    if (place.first(vs)) fixed[s] += pass_time(embedding_ops(c, sh), *stage_device[s]);
    if (place.last(vs)) fixed[s] += pass_time(head_ops(c, sh), *stage_device[s]);
  }
  // Min-max apportionment: each stage starts with v layers (one per chunk); every further
  // layer goes to the stage whose time grows least, which minimises the slowest stage. With
  // two copies (DualPipe) stage s's share also sits on its copy stage, which runs it too.
  std::vector<int> out(static_cast<std::size_t>(p), v);
  auto time = [&](int s, int extra) {
    const int copy = place.copy_stage(s);
    return fixed[s] + (out[s] + extra + (copy >= 0 ? out[copy] : 0)) * per_layer[s];
  };
  for (int given = p * v; given < static_cast<int>(c.layers); ++given) {
    int best = 0;
    Seconds best_t{};
    for (int s = 0; s < p; ++s) {
      const int copy = place.copy_stage(s);
      const Seconds t = copy >= 0 && copy != s ? max(time(s, 1), time(copy, 1)) : time(s, 1);
      if (s == 0 || t < best_t) { best = s; best_t = t; }
    }
    ++out[best];
  }
  return out;
}

std::vector<StageShape> stage_shapes(const LoweringInput& in) {
  const int p = in.strategy->pp;
  const Placement place = in.schedule->placement(p, in.strategy->interleave);
  const int v = place.v;
  const int m = static_cast<int>(in.workload->micro_batches(in.strategy->dp));
  std::vector<StageShape> out;
  for (int s = 0; s < p; ++s) {
    StageShape sh;
    sh.stage = s;
    sh.chunks = v;
    // The layers of the stage's chunks (DualPipe: two model stages), of which MoE layers.
    for (int c = 0; c < v; ++c) {
      const int vs = place.vstage(s, c), layers = vstage_layers(in.layers_per_stage, place, vs);
      sh.layers += layers;
      if (in.model->is_moe())
        sh.moe_layers +=
            static_cast<double>(in.model->moe_layers(first_chunk_layer(in.layers_per_stage, place, vs), layers));
      sh.has_embedding = sh.has_embedding || place.first(vs);
      sh.has_head = sh.has_head || place.last(vs);
    }
    sh.in_flight = in.schedule->in_flight(s, p, m, v);
    out.push_back(sh);
  }
  return out;
}

}  // namespace hcsim
