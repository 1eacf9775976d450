#pragma once
// The builder of a chunk's item lists (workloads/items.hpp): the layer's ops from
// workloads/transformer_ops.cpp costed on the stage's device, in pass order, with the
// communication items and gradient-bucket markers between them. Used by build_chunk_items
// (items.cpp) and chunk_totals (chunk_totals.cpp), which builds one layer of each kind.

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"
#include "workloads/items.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim::items_detail {

inline Kernel backward_gemm(const Kernel& f, bool weight_grad) {
  // dX = dY W^T is (m x k) from (m x n)(n x k); dW = X^T dY is (k x n) from (k x m)(m x n).
  return weight_grad ? gemm_kernel(f.k, f.n, f.m, f.dtype, f.batch) : gemm_kernel(f.m, f.k, f.n, f.dtype, f.batch);
}

// HBM traffic of a memory-bound or attention kernel's backward pass. In general: read the
// saved inputs and the output gradient, write the input gradients: twice the forward's.
// Unfused attention (Megatron's core attention, e bytes per element) per score element:
// dP = dO·Vᵀ written (e), P' read for dV (e), dropout backward reads dP' and the mask and
// writes dP (2e + 1), softmax backward reads dP and P and writes dS (3e), dQ and dK read
// dS (2e): 9e + 1, where the forward moves 6e + 1 (see transformer_ops.cpp); the Q, K, V,
// O tensors twice, as in general.
inline Bytes backward_bytes(const Kernel& f) {
  if (f.kind != KernelKind::attention || f.fused) return f.bytes * 2.0;
  const double e = dtype_bytes(f.dtype);
  const double scores = static_cast<double>(f.batch) * static_cast<double>(f.m) * static_cast<double>(f.n);
  const Bytes io = f.bytes - Bytes(scores * (6.0 * e + 1.0));
  return 2.0 * io + Bytes(scores * (9.0 * e + 1.0));
}

class ItemBuilder {
 public:
  ItemBuilder(const LoweringInput& in, const ComputeDevice& dev) : dev_(dev), st_(*in.strategy), c_(*in.model) {
    shape_ = shard_shape(*in.workload, st_);
    shape_.fp8_transposes = dev.fp8_transposed_copies();
    grad_e_ = grad_element_bytes(st_, in.workload->precision);
    // Tensor-parallel collectives carry this rank's s/cp tokens.
    act_bytes_ = Bytes(static_cast<double>(shape_.micro_batch * (c_.seq_len / st_.cp) * c_.hidden) *
                       dtype_bytes(storage_dtype(shape_.dtype)));
    // Ring attention step: the local K and V blocks, 2 b (s/cp) h_kv / t elements.
    kv_block_bytes_ = Bytes(2.0 * static_cast<double>(shape_.micro_batch * (c_.seq_len / st_.cp)) *
                            static_cast<double>(c_.kv_width() / 2 / st_.tp) * dtype_bytes(storage_dtype(shape_.dtype)));
    layer_ops_ = transformer_layer_ops(c_, shape_);
    if (sharded_parameters(st_)) units_ = layer_units(c_, st_.sharding, layer_ops_, st_.tp);
    if (c_.is_moe()) {
      moe_ops_ = moe_layer_ops(c_, shape_);
      // Attention, norms, router and shared experts split over tp; the routed experts over
      // ep, each over etp.
      moe_dense_params_ = c_.moe_dense_params() / st_.tp;
      moe_expert_params_ = c_.moe_expert_params() / (st_.ep * st_.etp);
    }
  }

  [[nodiscard]] Bytes act_bytes() const { return act_bytes_; }

  // The chunk's layers first_layer .. first_layer + layers - 1 (kinds: MoE or dense).
  ChunkItems build(int layers, bool embedding, bool head, int first_layer = 0) {
    std::vector<bool> moe(static_cast<std::size_t>(layers));
    for (int l = 0; l < layers; ++l) moe[static_cast<std::size_t>(l)] = c_.moe_layer(first_layer + l);
    return build_kinds(moe, embedding, head);
  }

  // A chunk whose layer l is an MoE layer where moe[l].
  ChunkItems build_kinds(const std::vector<bool>& moe, bool embedding, bool head) {
    const int layers = static_cast<int>(moe.size());
    ChunkItems out;
    const double head_params = (!c_.tied_embeddings || !embedding)
                                   ? static_cast<double>(c_.vocab) * static_cast<double>(c_.hidden) / st_.tp
                                   : 0.0;
    const double emb_params = c_.embedding_params() / st_.tp;
    const std::vector<LayerUnit> whole{{0, 0, 0}};  // one unit of the end's own parameters
    // ZeRO-1/2 with overlap_param_gather: a marker before each block whose parameters have a
    // bucket marker in the backward (the embedding, each layer, the head), where the first
    // micro-batch's forward waits for its parameter bucket (ParamGather, step_plan.hpp).
    const bool gathers = st_.overlap_param_gather && st_.zero >= 1 && st_.zero <= 2;
    auto block = [&] {
      if (!gathers) return;
      Item m;
      m.kind = Item::Kind::bucket;
      out.fwd.push_back(m);
    };
    if (embedding) {
      block();
      forward_ops(embedding_ops(c_, shape_), out.fwd, Phase::forward, units(whole, emb_params));
    }
    auto ops = [&](int l) -> const std::vector<LayerOp>& {
      return moe[static_cast<std::size_t>(l)] ? moe_ops_ : layer_ops_;
    };
    for (int l = 0; l < layers; ++l) {
      block();
      forward_ops(ops(l), out.fwd, Phase::forward, units_, l);
    }
    if (head) {
      block();
      forward_ops(head_ops(c_, shape_), out.fwd, Phase::forward, units(whole, head_params));
    }

    if (head) {
      backward_ops(head_ops(c_, shape_), out.bwd, units(whole, head_params));
      accumulate(out.bwd, head_params, 1);
      bucket(out, Bytes(head_params * grad_e_));
    }
    for (int l = layers - 1; l >= 0; --l) {  // backward runs the layers last to first
      const bool is_moe = moe[static_cast<std::size_t>(l)];
      const double dense = is_moe ? moe_dense_params_ : c_.layer_params() / st_.tp;
      const double expert = is_moe ? moe_expert_params_ : 0.0;
      // Full recomputation runs the layer's forward again inside its backward: the whole
      // layer is gathered for both.
      if (st_.recompute == Recompute::full || st_.recompute == Recompute::op) {
        unit(out.bwd, dense, sum_gathered(units_), !units_.empty() && units_.front().fp8);
        if (st_.recompute == Recompute::full)
          forward_ops(ops(l), out.bwd, Phase::recompute, {}, l);
        else
          rerun_by_op(ops(l), out.bwd, l);
        backward_ops(ops(l), out.bwd, {}, l);
      } else {
        backward_ops(ops(l), out.bwd, units_, l);
      }
      // An MoE layer's tensors: the dense layer's, the router, and per local expert its
      // two or three matrices (and two biases for GPT).
      const auto local = static_cast<int>(c_.moe.experts / std::max(1, st_.ep));
      const int tensors = c_.layer_tensors() + (is_moe ? 1 + local * (c_.gated_mlp ? 3 : 4) : 0);
      accumulate(out.bwd, dense + expert, tensors);
      bucket(out, Bytes(dense * grad_e_), Bytes(expert * grad_e_));
    }
    if (embedding) {
      // The embedding's backward computes only its weight gradient (no input gradient to
      // send): all of it is W.
      const std::size_t first = out.bwd.size();
      backward_ops(embedding_ops(c_, shape_), out.bwd, units(whole, emb_params));
      for (std::size_t i = first; i < out.bwd.size(); ++i)
        if (out.bwd[i].kind == Item::Kind::compute) out.bwd[i].weight_grad = true;
      accumulate(out.bwd, emb_params, c_.learned_positions ? 2 : 1);
      bucket(out, Bytes(emb_params * grad_e_));
    }
    return out;
  }

 private:
  // The unit list of an embedding or head: one unit of `params`, all sharded (none without
  // ZeRO-3 / FSDP).
  std::vector<LayerUnit> units(std::vector<LayerUnit> one, double params) const {
    if (units_.empty()) return {};
    one.front().params = one.front().gathered = params;
    one.front().fp8 = false;  // the embedding and the head are gathered in the model's datatype
    return one;
  }
  static double sum_gathered(const std::vector<LayerUnit>& u) {
    double g = 0;
    for (const LayerUnit& x : u) g += x.gathered;
    return g;
  }
  void unit(std::vector<Item>& out, double params, double gathered, bool fp8) {
    if (units_.empty()) return;
    const double e = fp8 ? 1.0 : dtype_bytes(storage_dtype(shape_.dtype));
    Item it;
    it.kind = Item::Kind::unit;
    it.comm_bytes = Bytes(gathered * e);
    it.grad_bytes = Bytes(params * grad_e_);
    out.push_back(it);
  }
  // Separate gradient accumulation (GradAccumulation::separate): after the backward of
  // `tensors` parameter tensors of `params` elements, one add kernel each reads the new
  // gradient (model datatype) and reads and writes the accumulator (grad_e_ bytes), every
  // micro-batch. ZeRO-3 / FSDP reduce-scatter each micro-batch's gradients instead
  // (plan_sharding.cpp), so there is nothing to add here.
  void accumulate(std::vector<Item>& out, double params, int tensors) {
    if (st_.grad_accumulation != GradAccumulation::separate || !units_.empty() || params <= 0) return;
    Kernel k = memory_kernel(KernelKind::elementwise,
                             Bytes(params * (dtype_bytes(storage_dtype(shape_.dtype)) + 2.0 * grad_e_)), Flops(0),
                             DType::fp32);
    k.launches = tensors;
    compute(out, k, Phase::backward, Flops{});
    out.back().weight_grad = true;
  }
  // A bucket marker: `grad_bytes` of gradients ready (of which `expert` are routed experts'
  // gradients, reduced over the expert replica group).
  void bucket(ChunkItems& out, Bytes grad_bytes, Bytes expert = Bytes{}) {
    Item b;
    b.kind = Item::Kind::bucket;
    b.grad_bytes = grad_bytes;
    b.expert_grad_bytes = expert;
    out.bwd.push_back(b);
    out.grad_bytes += grad_bytes;
    out.markers.push_back(grad_bytes);
    if (c_.is_moe()) {
      out.expert_grad_bytes += expert;
      out.expert_markers.push_back(expert);
    }
  }
  // An MoE dispatch or combine over the expert-parallel group (all_to_all; none with
  // ep = 1), or the expert tensor group's gather or reduce-scatter of the dispatched tokens
  // (none with etp = 1).
  void ep_comm(std::vector<Item>& out, Bytes bytes, CollectiveOp op = CollectiveOp::all_to_all) {
    if ((op == CollectiveOp::all_to_all ? st_.ep : st_.etp) <= 1 || bytes <= Bytes{}) return;
    Item it;
    it.kind = Item::Kind::ep_comm;
    it.op = op;
    it.comm_bytes = bytes;
    out.push_back(it);
  }
  // An op's expert collectives in forward (before it: reduce-scatter, dispatch or combine,
  // gather) or after its backward (the reverse: gather's gradient reduce-scattered, the
  // all-to-all back, the reduce-scatter's gradient gathered).
  void expert_comms(std::vector<Item>& out, const LayerOp& op, bool forward) {
    ep_comm(out, forward ? op.etp_reduce_scatter : op.etp_all_gather, CollectiveOp::reduce_scatter);
    ep_comm(out, forward ? op.ep_all_to_all : op.ep_all_to_all_grad);
    ep_comm(out, forward ? op.etp_all_gather : op.etp_reduce_scatter, CollectiveOp::all_gather);
  }

  void compute(std::vector<Item>& out, const Kernel& k, Phase phase, Flops model_flops) {
    Item it;
    it.phase = phase;
    it.t = dev_.time(k);
    it.flops = k.flops;
    it.model_flops = model_flops;
    it.bytes = k.bytes;
    it.energy = dev_.dynamic_energy(k);
    out.push_back(it);
  }

  // A GEMM under Transformer Engine's userbuffers ring exchange: tp GEMMs of m/tp token
  // rows one after another, each beside one step of the ring (ring_exchange method: copy
  // engines, one SM), so each pays its own launch and tile and wave quantisation.
  void compute_chunked(std::vector<Item>& out, const Kernel& k, Phase phase, Flops model_flops) {
    const std::int64_t t = st_.tp;
    const Kernel c = gemm_kernel((k.m + t - 1) / t, k.n, k.k, k.dtype, k.batch);
    compute(out, c, phase, model_flops);
    Item& it = out.back();
    it.t = it.t * static_cast<double>(t);
    it.flops = c.flops * static_cast<double>(t);
    it.bytes = c.bytes * static_cast<double>(t);
    it.energy = it.energy * static_cast<double>(t);
  }

  // The attention core: under context parallelism a ring of cp - 1 steps of `step_bytes`.
  void attention(std::vector<Item>& out, const Kernel& k, Phase phase, Flops model_flops, Bytes step_bytes) {
    compute(out, k, phase, model_flops);
    if (st_.cp <= 1) return;
    out.back().kind = Item::Kind::cp_ring;
    out.back().comm_bytes = step_bytes;
  }

  [[nodiscard]] bool userbuffers() const {
    return (st_.tp_overlap == TpOverlap::full || st_.tp_overlap == TpOverlap::micro_pipeline) && st_.sequence_parallel;
  }

  // PyTorch's fused matmul-reduce-scatter (TpOverlap::micro_pipeline): the sum of the tp
  // stacked partial outputs, read b s h and write b s h / tp elements of the activations.
  void sum_partials(std::vector<Item>& out, Phase phase) {
    const double t = static_cast<double>(st_.tp);
    compute(out,
            memory_kernel(KernelKind::elementwise, act_bytes_ * (1.0 + 1.0 / t), Flops{}, storage_dtype(shape_.dtype)),
            phase, Flops{});
  }

  void comm(std::vector<Item>& out, CollectiveOp op, bool overlap_next = false) {
    if (st_.tp <= 1) return;
    Item it;
    it.kind = Item::Kind::tp_comm;
    it.op = op;
    it.comm_bytes = act_bytes_;
    it.overlap_next = overlap_next;
    out.push_back(it);
  }

  // `units`: the unit markers to place, unit k before op units[k].first_op (none: no marker).
  // `layer`: the layer within the chunk that `ops` are of (-1: the embedding or the head).
  void forward_ops(const std::vector<LayerOp>& ops, std::vector<Item>& out, Phase phase,
                   const std::vector<LayerUnit>& units, int layer = -1) {
    std::size_t next = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const LayerOp& op = ops[i];
      const std::size_t first = out.size();
      if (next < units.size() && units[next].first_op == i) {
        unit(out, units[next].params, units[next].gathered, units[next].fp8);
        ++next;
      }
      // Userbuffers (TpOverlap::full): the all-gather beside the GEMM it feeds, the
      // reduce-scatter beside the GEMM it reduces, the GEMM run in tp token chunks.
      const bool ub = userbuffers();
      if (op.column_parallel && st_.sequence_parallel) comm(out, CollectiveOp::all_gather, ub);
      if (ub && op.tp_allreduce_after) comm(out, CollectiveOp::reduce_scatter, true);
      expert_comms(out, op, true);
      const Flops mf = phase == Phase::forward ? op.kernel.flops * op.model_work : Flops{};
      if (op.attention_core)
        attention(out, op.kernel, phase, mf, kv_block_bytes_);
      else if (ub && (op.column_parallel || op.tp_allreduce_after))
        compute_chunked(out, op.kernel, phase, mf);
      else
        compute(out, op.kernel, phase, mf);
      if (ub && op.tp_allreduce_after && st_.tp_overlap == TpOverlap::micro_pipeline) sum_partials(out, phase);
      name_from(out, first, op.name, layer);
      if (op.tp_allreduce_after && !ub)
        comm(out, st_.sequence_parallel ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce);
    }
  }

  // Selective recomputation by op (transformer_ops.cpp, select_by_op): the layer's forward
  // rerun before its backward, but for what the policy saved: the fused attention, the
  // matmuls not in op_recompute_cols, the sequence-parallel reduce-scatters. The all-gathers
  // (and without sequence parallelism the all-reduces) are collectives the policy does not
  // save, so they run again.
  void rerun_by_op(const std::vector<LayerOp>& ops, std::vector<Item>& out, int layer) {
    for (const LayerOp& op : ops) {
      const std::size_t first = out.size();
      if (op.column_parallel && st_.sequence_parallel) comm(out, CollectiveOp::all_gather);
      if (op.attention_core) continue;
      if (op.kernel.kind != KernelKind::gemm) {
        compute(out, op.kernel, Phase::recompute, Flops{});
      } else {
        for (const std::int64_t cols : op.op_recompute_cols)
          if (cols > 0)
            compute(out, gemm_kernel(op.kernel.m, cols, op.kernel.k, op.kernel.dtype, op.kernel.batch),
                    Phase::recompute, Flops{});
      }
      name_from(out, first, op.name, layer);
      if (op.tp_allreduce_after && !st_.sequence_parallel) comm(out, CollectiveOp::all_reduce);
    }
  }

  // Names the op's compute items: those pushed from index `first` on.
  static void name_from(std::vector<Item>& out, std::size_t first, const char* name, int layer) {
    for (std::size_t i = first; i < out.size(); ++i) {
      if (out[i].kind != Item::Kind::compute && out[i].kind != Item::Kind::cp_ring) continue;
      out[i].op_name = name;
      out[i].layer = static_cast<std::int16_t>(layer);
    }
  }

  // Backward runs the units in reverse: unit k's marker before the backward of its last op.
  void backward_ops(const std::vector<LayerOp>& ops, std::vector<Item>& out, const std::vector<LayerUnit>& units,
                    int layer = -1) {
    std::size_t next = units.size();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const LayerOp& op = *it;
      const auto i = static_cast<std::size_t>(ops.rend() - it) - 1;
      const std::size_t first = out.size();
      if (next > 0 && i >= units[next - 1].first_op) {
        --next;
        unit(out, units[next].params, units[next].gathered, units[next].fp8);
      }
      // A row-parallel GEMM's output gradient, all-gathered under sequence parallelism for
      // its input-gradient GEMM (beside it with userbuffers).
      if (op.tp_allreduce_after && st_.sequence_parallel) comm(out, CollectiveOp::all_gather, userbuffers());
      if (op.attention_core && st_.recompute == Recompute::selective) {
        attention(out, op.kernel, Phase::recompute, Flops{}, kv_block_bytes_);
        // The core attention's forward rerun whole: under context parallelism its ring merges too.
        if (i + 1 < ops.size() && std::string_view(ops[i + 1].name) == "cp_merge")
          compute(out, ops[i + 1].kernel, Phase::recompute, Flops{});
      }
      const Kernel& f = op.kernel;
      if (f.kind == KernelKind::gemm) {
        // A column-parallel GEMM: under sequence parallelism its input was kept on s/t tokens
        // and is all-gathered again for the weight gradient (Korthikanti et al. 2022 section
        // 4.2.2); the input gradient is all-reduced (reduce-scattered) across the tp ranks.
        const bool async = op.column_parallel && st_.tp_overlap != TpOverlap::none;
        const CollectiveOp grad_op = st_.sequence_parallel ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce;
        if (op.column_parallel && st_.sequence_parallel) comm(out, CollectiveOp::all_gather, async);
        const Flops mf = f.flops * op.model_work;
        if (op.tp_allreduce_after && userbuffers())
          compute_chunked(out, backward_gemm(f, false), Phase::backward, mf);
        else
          compute(out, backward_gemm(f, false), Phase::backward, mf);
        if (async) comm(out, grad_op, true);
        compute(out, backward_gemm(f, true), Phase::backward, mf);
        out.back().weight_grad = true;
        if (op.column_parallel && !async) comm(out, grad_op);
      } else {
        Kernel b = f;
        // dQ, dK, dV, dP: twice the forward matrix work; a fused (FlashAttention) backward
        // also recomputes S = QK^T from the kept Q and K, five matrix products instead of
        // four (Dao et al. 2022, arXiv 2205.14135, section 3.1 and Algorithm 4): 2.5 times
        // the forward, of which the recomputation is hardware, not model, work.
        const Flops model = f.flops * 2.0 * op.model_work;
        b.flops = f.kind == KernelKind::attention && f.fused ? f.flops * 2.5 : model;
        b.bytes = op.backward_bytes > Bytes{} ? op.backward_bytes : backward_bytes(f);
        if (op.backward_launches > 0) b.launches = op.backward_launches;
        // Ring attention backward: K, V and the dK, dV accumulators travel, twice the bytes.
        if (op.attention_core)
          attention(out, b, Phase::backward, model, 2.0 * kv_block_bytes_);
        else
          compute(out, b, Phase::backward, model);
      }
      // The gradient of a dispatch or combine goes back the way the tokens came.
      expert_comms(out, op, false);
      name_from(out, first, op.name, layer);
    }
  }

  const ComputeDevice& dev_;
  const StrategySpec& st_;
  const TransformerConfig& c_;
  ShardShape shape_;
  Bytes act_bytes_{}, kv_block_bytes_{};
  double grad_e_ = 2;  // bytes of a gradient element (MainGrads)
  std::vector<LayerOp> layer_ops_;
  std::vector<LayerOp> moe_ops_;                         // of an MoE layer (MoE models)
  double moe_dense_params_ = 0, moe_expert_params_ = 0;  // of an MoE layer on this device
  std::vector<LayerUnit> units_;                         // of one layer; empty without ZeRO-3 / FSDP
};

}  // namespace hcsim::items_detail
