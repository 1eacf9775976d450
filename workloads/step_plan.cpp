// The step plan (see step_plan.hpp): the layout's stages, each stage's schedule order and
// chunks, then one builder per concern.
#include "workloads/step_plan.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "sim/core/error.hpp"

namespace hcsim {

struct ChunkCache::Impl {
  // (model, device) by address: the caller keeps both alive and unchanged while the cache lives.
  // The last four: ZeRO-3 / FSDP's unit markers (sharded, unit kind, bucket, persistence).
  // Then the first layer, ep, etp, and whether the forward's block times are kept
  // (ChunkTotals::marker_forward).
  using Key = std::tuple<std::uintptr_t, std::uintptr_t, int, bool, bool, std::int64_t, int, bool, bool, Recompute,
                         DType, int, bool, ShardUnit, double, double, int, int, int, bool>;
  std::map<Key, ChunkTotals> chunks;
};

ChunkCache::ChunkCache() : impl_(std::make_unique<Impl>()) {}
ChunkCache::~ChunkCache() = default;

const ChunkTotals& ChunkCache::get(const LoweringInput& in, const ComputeDevice& dev, int layers, bool embedding,
                                   bool head, int first_layer) {
  // A dense model's chunks of equal length are equal wherever they start.
  if (!in.model->is_moe()) first_layer = 0;
  const StrategySpec& st = *in.strategy;
  const Impl::Key key{reinterpret_cast<std::uintptr_t>(in.model),
                      reinterpret_cast<std::uintptr_t>(&dev),
                      layers,
                      embedding,
                      head,
                      in.workload->micro_batch,
                      st.tp,
                      st.sequence_parallel,
                      st.flash_attention,
                      st.recompute,
                      in.workload->precision,
                      st.cp,
                      sharded_parameters(st),
                      st.sharding.unit,
                      st.sharding.prefetch_bucket,
                      st.sharding.persistence_threshold,
                      first_layer,
                      st.ep,
                      st.etp,
                      st.overlap_param_gather && st.zero >= 1 && st.zero <= 2};
  auto& chunks = impl_->chunks;
  auto it = chunks.find(key);
  if (it == chunks.end()) it = chunks.emplace(key, chunk_totals(in, dev, layers, embedding, head, first_layer)).first;
  return it->second;
}

StepPlan build_step_plan(const LoweringInput& in, PlanDetail detail, ChunkCache* cache) {
  HCSIM_ASSERT(in.model && in.strategy && in.workload && in.schedule, "step plan input incomplete");
  const StrategySpec& st = *in.strategy;
  HCSIM_ASSERT(static_cast<int>(in.stage_device.size()) == st.pp, "one device model per stage");
  HCSIM_ASSERT(static_cast<int>(in.layers_per_stage.size()) == st.pp, "layers for every stage");
  StepPlan plan;
  plan.layout = st.layout();
  plan.placement = in.schedule->placement(st.pp, st.interleave);
  plan.v = plan.placement.v;
  plan.m = static_cast<int>(in.workload->micro_batches(st.dp));
  plan.act_bytes = Bytes(static_cast<double>(in.workload->micro_batch * (in.model->seq_len / st.cp) * in.model->hidden) *
                         dtype_bytes(storage_dtype(in.workload->precision)));
  plan.tp_class = st.sequence_parallel ? CommClass::sp : CommClass::tp;
  plan.grad_class = st.zero >= 1 ? CommClass::zero : CommClass::dp;
  plan.reduce_every_microbatch = st.zero == 2 && plan.m > 1;
  if (detail == PlanDetail::totals && !cache) {
    plan.own_cache = std::make_shared<ChunkCache>();
    cache = plan.own_cache.get();
  }
  const int p = st.pp;
  const bool split = in.schedule->splits_backward();
  // ZeRO-3 / FSDP reduce-scatter each unit's gradients as its backward ends; with the
  // weight gradients moved to a later W pass that point is in another pass.
  if (split && sharded_parameters(st))
    throw InputError("/strategy/schedule", std::string(in.schedule->type()) +
                                               " splits the backward into B and W passes, which is not modelled "
                                               "with ZeRO-3 / FSDP parameter sharding");
  plan.stages.resize(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    StagePlan& sp = plan.stages[static_cast<std::size_t>(s)];
    sp.stage = s;
    sp.device = in.stage_device[static_cast<std::size_t>(s)];
    if (detail == PlanDetail::items) sp.order = in.schedule->order(s, p, plan.m, plan.v);
    for (int c = 0; c < plan.v; ++c) {
      const int vs = plan.vstage(s, c);
      const int layers = vstage_layers(in.layers_per_stage, plan.placement, vs);
      const bool embedding = plan.placement.first(vs), head = plan.placement.last(vs);
      // The chunk's first layer (the totals of a dense model need none).
      const int first = detail == PlanDetail::items || in.model->is_moe()
                            ? first_chunk_layer(in.layers_per_stage, plan.placement, vs)
                            : 0;
      if (detail == PlanDetail::items) {
        sp.chunks.push_back(build_chunk_items(in, *sp.device, layers, embedding, head, first));
        if (split) split_backward(sp.chunks.back().bwd, sp.chunks.back().bwd_input, sp.chunks.back().bwd_weight);
        sp.grad_bytes += sp.chunks.back().grad_bytes;
        sp.expert_grad_bytes += sp.chunks.back().expert_grad_bytes;
      } else {
        sp.totals.push_back(&cache->get(in, *sp.device, layers, embedding, head, first));
        sp.grad_bytes += sp.totals.back()->grad_bytes;
        sp.expert_grad_bytes += sp.totals.back()->expert_grad_bytes;
      }
    }
    plan_optimizer(in, sp);
    sp.sharding = plan_sharding(in, sp);
  }
  plan_pipeline_sends(in, plan, plan.stages);
  for (StagePlan& sp : plan.stages) sp.buckets = plan_buckets(in, plan, sp, detail);
  // Megatron-LM all-reduces the word embedding's gradients over its embedding group (the
  // first and last pipeline ranks; training.py of 2021, finalize_model_grads.py's
  // _allreduce_word_embedding_grads in Megatron-Core) after the data-parallel reduction.
  const int first = plan.placement.stage(0), last = plan.placement.stage(plan.placement.path_stages() - 1);
  if (in.model->tied_embeddings && first != last && plan.placement.copy_stage(first) < 0 && !sharded_parameters(st)) {
    plan.tied_first = std::min(first, last);
    plan.tied_last = std::max(first, last);
    plan.tied_bytes = Bytes(static_cast<double>(in.model->vocab) * static_cast<double>(in.model->hidden) / st.tp *
                            grad_element_bytes(st, in.workload->precision));
  }
  return plan;
}

}  // namespace hcsim
