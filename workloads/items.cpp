// A chunk's item lists (workloads/items.hpp): build_chunk_items over the builder
// (item_builder.hpp), the backward split into B and W, the optimizer's kernel, and which
// layers a virtual stage holds.
#include "items.hpp"

#include <vector>

#include "workloads/item_builder.hpp"

namespace hcsim {

using items_detail::ItemBuilder;

void split_backward(const std::vector<Item>& bwd, std::vector<Item>& input, std::vector<Item>& weight) {
  input.clear();
  weight.clear();
  for (std::size_t i = 0; i < bwd.size(); ++i) {
    const Item& it = bwd[i];
    if ((it.kind == Item::Kind::compute && it.weight_grad) || it.kind == Item::Kind::bucket) {
      weight.push_back(it);
      continue;
    }
    input.push_back(it);
    if (it.kind == Item::Kind::tp_comm && it.overlap_next) {
      // The compute item it ran beside: the next one of the whole backward.
      std::size_t j = i + 1;
      while (j < bwd.size() && bwd[j].kind != Item::Kind::compute) ++j;
      if (j < bwd.size() && bwd[j].weight_grad) input.back().overlap_next = false;
    }
  }
}

ChunkItems build_chunk_items(const LoweringInput& in, const ComputeDevice& dev, int layers, bool embedding, bool head,
                             int first_layer) {
  ChunkItems out = ItemBuilder(in, dev).build(layers, embedding, head, first_layer);
  out.first_layer = first_layer;
  return out;
}

Kernel optimizer_kernel(double shard, double params, DType precision, double grad_e) {
  const double e = dtype_bytes(storage_dtype(precision));
  const bool mixed = precision != DType::fp32 && precision != DType::tf32;  // fp32 master weights apart
  double per_param = 28.0 + 4.0;                                            // Adam, gradient norm
  int passes = 3;                                                           // + zeroing
  if (mixed && grad_e < 4.0) per_param += e + 4.0, ++passes;                // cast to fp32 main gradients
  if (precision == DType::fp16) per_param += 8.0, ++passes;                 // unscale and inf check
  if (mixed) per_param += 4.0 + e, ++passes;                                // fp32 weights back to the model's
  Kernel k = memory_kernel(KernelKind::optimizer, Bytes(shard * per_param + params * grad_e), Flops(0), DType::fp32);
  k.launches = passes;
  return k;
}

int chunk_layers(int stage_layers, int v, int c) { return stage_layers / v + (c < stage_layers % v ? 1 : 0); }

int vstage_layers(const std::vector<int>& layers_per_stage, const Placement& placement, int vs) {
  if (placement.layer_chunks() == 1) return layers_per_stage[static_cast<std::size_t>(placement.model_stage(vs))];
  return chunk_layers(layers_per_stage[static_cast<std::size_t>(placement.stage(vs))], placement.v,
                      placement.chunk(vs));
}

int first_chunk_layer(const std::vector<int>& layers_per_stage, const Placement& placement, int vs) {
  int first = 0;
  for (int u = vs - placement.model_stage(vs); u < vs; ++u) first += vstage_layers(layers_per_stage, placement, u);
  return first;
}

}  // namespace hcsim
