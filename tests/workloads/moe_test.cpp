// Mixture-of-experts models and expert parallelism (workloads/transformer.hpp, layout.hpp):
// the presets' parameter counts, total and active, against the models' papers; which
// layers are MoE layers; an MoE layer's model FLOPs in closed form; the routing's load per
// rank (Zipf shares, capacity factor); the dispatch and combine bytes of the plan; the
// experts' memory sharded over ep and, under ZeRO-1, over the expert replica group; the
// layout rules. Expert tensor parallelism: expert_tensor_parallel_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "../support/moe_config.hpp"
#include "../support/test_device.hpp"
#include "../support/test_lowering.hpp"
#include "sim/core/error.hpp"
#include "workloads/items.hpp"
#include "workloads/layout.hpp"
#include "workloads/memory.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim {
namespace {

// The published totals are rounded: the tolerance is half the last digit given.
TEST(MoeModels, ParametersTotalAndActiveMatchTheirPapers) {
  struct Row {
    const char* name;
    double total, active, half_digit;  // parameters, in units of 1e9
  };
  for (const Row& r : {
           // Jiang et al. 2024 (Mixtral of Experts) and Mistral AI's release: 46.7B, 12.9B.
           Row{"mixtral-8x7b", 46.7, 12.9, 0.05},
           // Mistral AI, Mixtral 8x22B release (April 2024): 141B, 39B.
           Row{"mixtral-8x22b", 141, 39, 0.5},
           // Qwen Team, Qwen1.5-MoE-A2.7B (March 2024): 14.3B, 2.7B activated.
           Row{"qwen1.5-moe-a2.7b", 14.3, 2.7, 0.05},
           // Qwen3 Technical Report (arXiv 2505.09388), Table 2, and the model card:
           // Qwen3-235B-A22B 235B total, 22B activated.
           Row{"qwen3-235b-a22b", 235, 22, 0.5},
       }) {
    const TransformerConfig c = testing::moe_preset(r.name);
    EXPECT_NEAR(c.total_params() / 1e9, r.total, r.half_digit) << r.name;
    EXPECT_NEAR(c.active_params() / 1e9, r.active, r.half_digit) << r.name;
  }
  // Qwen/Qwen3-30B-A3B model card: 30.5B total, 29.9B without the embeddings, 3.3B activated;
  // Qwen3-235B-A22B: 234B without the embeddings. hcsim's active count is 3.353B with both
  // (untied) embedding matrices: the card's 3.3B is read as truncated, so it is checked to
  // 0.06 rather than half its last digit.
  const TransformerConfig q30 = testing::moe_preset("qwen3-30b-a3b"), q235 = testing::moe_preset("qwen3-235b-a22b");
  auto non_embedding = [](const TransformerConfig& c) {
    return c.total_params() - 2.0 * static_cast<double>(c.vocab) * static_cast<double>(c.hidden);
  };
  EXPECT_NEAR(q30.total_params() / 1e9, 30.5, 0.05);
  EXPECT_NEAR(non_embedding(q30) / 1e9, 29.9, 0.05);
  EXPECT_NEAR(q30.active_params() / 1e9, 3.3, 0.06);
  EXPECT_NEAR(non_embedding(q235) / 1e9, 234, 0.5);
  // Artetxe et al. 2022, Table 1: 1.1T (GPT-3 6.7B with 512 experts in 16 of 32 layers).
  const TransformerConfig g = testing::moe_preset("gshard-gpt-1.1t");
  EXPECT_NEAR(g.total_params() / 1e12, 1.1, 0.05);
  // Active: the dense 6.7B model plus, per MoE layer, one more expert (top-2: 8h^2 + 5h)
  // and the router (512 h).
  const TransformerConfig dense = testing::moe_preset("gpt3-6.7b");
  const double h = 4096;
  EXPECT_NEAR(g.active_params(), dense.total_params() + 16 * (8 * h * h + 4 * h + h + 512 * h), 1.0);
}

TEST(MoeModels, DeepSeekV3WithLatentAttentionMatchesItsReport) {
  // DeepSeek-V3 Technical Report (arXiv 2412.19437), sections 2.1.1 and 4.2. Per layer, MLA:
  // W_DQ 7168 x 1536, its norm 1536, W_UQ and W_QR 1536 x 128 (128 + 64), W_DKV and W_KR
  // 7168 x (512 + 64), its norm 512, W_UK and W_UV 512 x 128 (128 + 128), W_O 128 128 x 7168.
  const TransformerConfig c = testing::moe_preset("deepseek-v3");
  const double mla = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512 + 512.0 * 128 * 256 +
                     128.0 * 128 * 7168;
  EXPECT_DOUBLE_EQ(c.attention_params(), mla);
  // "671B total parameters with 37B activated for each token" (abstract; the 14B of the
  // multi-token-prediction module apart). hcsim: 671.03 B; active 37.55 B counting both
  // embedding matrices (36.6 B without the input embedding, of which a token reads one row):
  // the report's rounding convention is not stated, so its 37 B is checked to the unit.
  EXPECT_NEAR(c.total_params() / 1e9, 671, 0.5);
  EXPECT_NEAR(c.active_params() / 1e9, 37, 0.6);
  EXPECT_EQ(c.moe_layers(0, 61), 58);
  // K and V per token: 128 heads of (128 + 64) and 128.
  EXPECT_EQ(c.kv_width(), 128 * (192 + 128));
}

TEST(MoeModels, LatentAttentionFlopsAreItsProjectionsAndScores) {
  // Per token, MLA's GEMMs: 2 (h d_c' + d_c' a (nope + rope) + h (d_c + rope) + d_c a (nope + v)
  // + a v h); the scores and values 2 s a (nope + rope + v) per token over all s keys (model
  // FLOPs: the full square).
  TransformerConfig c = testing::moe_preset("deepseek-v3");
  c.seq_len = 1024;
  ShardShape s;
  double gemm = 0, attention = 0;
  for (const LayerOp& op : transformer_layer_ops(c, s)) {
    if (op.kernel.kind == KernelKind::gemm) gemm += op.kernel.flops.value();
    if (op.kernel.kind == KernelKind::attention) attention += op.kernel.flops.value() * op.model_work;
  }
  const double n = 1024, h = 7168, a = 128;
  const double proj = 2 * n * (h * 1536 + 1536 * a * 192 + h * 576 + 512 * a * 256 + a * 128 * h);
  const double mlp = 6 * n * h * 18432;
  EXPECT_NEAR(gemm, proj + mlp, 1e-9 * gemm);
  EXPECT_NEAR(attention, 2 * n * n * a * (192 + 128), 1e-9 * attention);
}

TEST(MoeModels, MixtralParameterCountInClosedForm) {
  // Per layer: q, o 2h^2; k, v 2 h (8 * 128); 8 SwiGLU experts 8 * 3 h f; router h * 8;
  // two RMSNorms 2h. Untied embeddings 2 V h.
  const TransformerConfig c = testing::moe_preset("mixtral-8x7b");
  const double h = 4096, f = 14336, kv = 1024, V = 32000;
  const double layer = 2 * h * h + 2 * h * kv + 8 * 3 * h * f + 8 * h + 2 * h;
  EXPECT_DOUBLE_EQ(c.total_params(), 32 * layer + 2 * V * h);
  EXPECT_DOUBLE_EQ(c.active_params(), 32 * (layer - 6 * 3 * h * f) + 2 * V * h);
}

TEST(MoeModels, Qwen3HeadDimensionIsSetApartFromTheHiddenSize) {
  // Qwen/Qwen3-30B-A3B config.json: h 2,048, 32 query heads and 4 key/value heads of 128
  // (head_dim 128, not h / a = 64). Per layer: q and o 2 h (32 * 128); k and v 2 h (4 * 128);
  // 128 SwiGLU experts of 768, 128 * 3 h f; router h * 128; two RMSNorms 2h. Untied
  // embeddings 2 V h.
  const TransformerConfig c = testing::moe_preset("qwen3-30b-a3b");
  const double h = 2048, q = 32 * 128, kv = 4 * 128, f = 768, V = 151936;
  EXPECT_EQ(c.head_dim(), 128);
  EXPECT_EQ(c.q_width(), 4096);
  EXPECT_EQ(c.kv_width(), 2 * 4 * 128);
  EXPECT_DOUBLE_EQ(c.attention_params(), 2 * h * q + 2 * h * kv);
  const double layer = 2 * h * q + 2 * h * kv + 128 * 3 * h * f + 128 * h + 2 * h;
  EXPECT_DOUBLE_EQ(c.total_params(), 48 * layer + 2 * V * h);
  EXPECT_DOUBLE_EQ(c.active_params(), 48 * (layer - 120 * 3 * h * f) + 2 * V * h);
  // The attention's GEMMs: QKV from h to q + 2 kv, the output projection from q back to h,
  // and the scores and values 2 s^2 a d_head each (model FLOPs: the full square).
  TransformerConfig small = c;
  small.seq_len = 1024;
  double qkv = 0, proj = 0, attention = 0;
  for (const LayerOp& op : transformer_layer_ops(small, ShardShape{})) {
    if (op.name == std::string("qkv")) qkv = op.kernel.flops.value();
    if (op.name == std::string("attn_proj")) proj = op.kernel.flops.value();
    if (op.kernel.kind == KernelKind::attention) attention = op.kernel.flops.value() * op.model_work;
  }
  const double n = 1024;
  EXPECT_DOUBLE_EQ(qkv, 2 * n * h * (q + 2 * kv));
  EXPECT_DOUBLE_EQ(proj, 2 * n * q * h);
  EXPECT_NEAR(attention, 4 * n * n * 32 * 128, 1e-9 * attention);
}

TEST(MoeModels, LayerKindsFollowFirstDenseAndEvery) {
  TransformerConfig c = testing::moe_preset("mixtral-8x7b");
  c.layers = 61;
  c.moe.first_dense = 3;  // DeepSeek-V3's three dense layers
  EXPECT_FALSE(c.moe_layer(2));
  EXPECT_TRUE(c.moe_layer(3));
  EXPECT_EQ(c.moe_layers(0, 61), 58);
  EXPECT_EQ(c.moe_layers(0, 4), 1);
  c.moe.first_dense = 0;
  c.moe.every = 2;  // GShard: every other layer, from the first
  EXPECT_TRUE(c.moe_layer(0));
  EXPECT_FALSE(c.moe_layer(1));
  EXPECT_EQ(c.moe_layers(0, 32), 16);
  EXPECT_EQ(c.moe_layers(1, 3), 1);  // layers 1, 2, 3: only 2
  EXPECT_EQ(c.moe_layers(5, 0), 0);
}

TEST(MoeLoad, UniformRoutingIsEvenAndZipfLoadsTheFirstRank) {
  MoeConfig m;
  m.experts = 8;
  const MoeLoad even = moe_load(m, 4);
  ASSERT_EQ(even.rank_share.size(), 4u);
  for (double x : even.rank_share) EXPECT_DOUBLE_EQ(x, 0.25);
  EXPECT_DOUBLE_EQ(even.load, 1.0);
  // Zipf, exponent 1: expert j's share (1/(j+1)) / H_8; rank 0 holds experts 0 and 1.
  m.skew = 1;
  const double h8 = 1 + 1 / 2. + 1 / 3. + 1 / 4. + 1 / 5. + 1 / 6. + 1 / 7. + 1 / 8.;
  const MoeLoad zipf = moe_load(m, 4);
  EXPECT_NEAR(zipf.rank_share[0], 1.5 / h8, 1e-15);
  EXPECT_NEAR(zipf.rank_share[3], (1 / 7. + 1 / 8.) / h8, 1e-15);
  EXPECT_NEAR(zipf.load, 4 * 1.5 / h8, 1e-14);
  EXPECT_DOUBLE_EQ(zipf.dropped, 0.0);
  // Capacity factor 1.25: every expert padded to 1.25/8 of the tokens; experts 0 and 1
  // (shares 1/H_8 and 1/(2 H_8)) drop what is beyond it.
  m.capacity_factor = 1.25;
  const MoeLoad cap = moe_load(m, 4);
  EXPECT_DOUBLE_EQ(cap.load, 1.25);
  EXPECT_NEAR(cap.dropped, (1 / h8 - 1.25 / 8) + (0.5 / h8 - 1.25 / 8), 1e-15);
}

TEST(MoeLayer, ModelFlopsAreTheDenseHalfPlusRouterPlusKExperts) {
  TransformerConfig c = testing::small_moe();
  ShardShape s;
  s.micro_batch = 2;
  const double n = 2 * 1024, h = 1024, f = 2048, k = 2, e = 16;
  TransformerConfig no_mlp = c;
  // The dense layer's GEMMs less its MLP (6 n h f for SwiGLU), plus the router 2 n h E and
  // k SwiGLU experts per token, 6 n k h f: the skew and ep change who computes, not this.
  const double dense = testing::gemm_model_flops(transformer_layer_ops(c, s));
  const double expect = dense - 6 * n * h * f + 2 * n * h * e + 6 * n * k * h * f;
  EXPECT_NEAR(testing::gemm_model_flops(moe_layer_ops(c, s)), expect, 1e-6 * expect);
  c.moe.skew = 1.2;
  s.ep = 4;
  EXPECT_NEAR(testing::gemm_model_flops(moe_layer_ops(c, s)), expect, 1e-6 * expect);
  // The busiest rank's grouped GEMM computes load * n k tokens (up to rounding per expert).
  const MoeLoad load = moe_load(c.moe, 4);
  for (const LayerOp& op : moe_layer_ops(c, s))
    if (std::string_view(op.name) == "expert_up") {
      EXPECT_EQ(op.kernel.batch, 4);  // 16 experts over ep 4
      EXPECT_EQ(op.kernel.m, static_cast<std::int64_t>(std::ceil(load.load * n * k / 4)));
      EXPECT_DOUBLE_EQ(op.ep_all_to_all.value(), load.load * n * k * h * 2);  // bf16 tokens
    }
}

// The memory-bound ops of an MoE layer move the bytes docs/models.md ("Ops of an MoE
// layer") states, e = 2 (bf16), N = 2,048 tokens, k = 2 of E = 16 experts, h = 1,024, SwiGLU
// experts of f = 2,048, uniform routing on one rank (N k rows into the experts): the top-k
// pass reads N E logits and writes fp32 probabilities, then k indices and weights per token;
// the permute reads and writes N k h; the activation reads 2f and writes f per row; the
// un-permute reads N k h and writes N h.
TEST(MoeLayer, MemoryBoundOpsMoveTheBytesTheModelStates) {
  const TransformerConfig c = testing::small_moe();
  ShardShape s;
  s.micro_batch = 2;
  const double n = 2 * 1024, h = 1024, f = 2048, k = 2, experts = 16, e = 2;
  const std::vector<LayerOp> ops = moe_layer_ops(c, s);
  auto bytes = [&](std::string_view name) {
    for (const LayerOp& op : ops)
      if (name == op.name) return op.kernel.bytes.value();
    ADD_FAILURE() << "no op " << name;
    return 0.0;
  };
  EXPECT_DOUBLE_EQ(bytes("router_topk"), n * experts * (e + 4) + n * k * 12);
  EXPECT_DOUBLE_EQ(bytes("permute"), 2 * n * k * h * e);
  EXPECT_DOUBLE_EQ(bytes("expert_activation"), n * k * f * 3 * e);
  EXPECT_DOUBLE_EQ(bytes("unpermute"), (n * k + n) * h * e);
}

TEST(ExpertParallel, DispatchAndCombineAreTwoAllToAllsPerMoeLayerAndPass) {
  testing::MoeStep step(8, 8);
  const auto& [c, w, st, dev, sched, in] = step;
  const ChunkItems ci = build_chunk_items(in, dev, 4, true, true);
  // Per rank and all-to-all: its n k tokens of h bf16 elements, n = s (b = 1).
  const double bytes = 1024.0 * 2 * 1024 * 2;
  for (const auto* pass : {&ci.fwd, &ci.bwd}) {
    int count = 0;
    for (const Item& it : *pass)
      if (it.kind == Item::Kind::ep_comm) {
        ++count;
        EXPECT_EQ(it.op, CollectiveOp::all_to_all);
        EXPECT_DOUBLE_EQ(it.comm_bytes.value(), bytes);
      }
    EXPECT_EQ(count, 2 * 4);
  }
  // The closed forms see the same: 8 all-to-alls of these bytes each way.
  const ChunkTotals t = chunk_totals(in, dev, 4, true, true);
  ASSERT_EQ(t.fwd.ep.size(), 1u);
  EXPECT_EQ(t.fwd.ep[0].count, 8);
  EXPECT_EQ(t.bwd.ep[0].count, 8);
  // Gradients: each layer's attention, norms and router whole (dense part), its 16/8 = 2
  // experts apart (fp32 main gradients: 4 B each).
  EXPECT_DOUBLE_EQ(ci.expert_grad_bytes.value(), 4 * 2 * c.mlp_params(2048) * 4);
  EXPECT_DOUBLE_EQ(t.expert_grad_bytes.value(), ci.expert_grad_bytes.value());
  EXPECT_EQ(t.expert_markers, ci.expert_markers);
  EXPECT_EQ(t.markers, ci.markers);
  // Without expert parallelism there is nothing to exchange.
  step.st.ep = 1;
  for (const Item& it : build_chunk_items(in, dev, 4, true, true).fwd) EXPECT_NE(it.kind, Item::Kind::ep_comm);
}

TEST(ExpertParallel, Fp8DispatchSendsTheTokensTowardTheExpertsInFp8) {
  // DeepSeek-V3 report §3.3.2: the dispatch and the gradient sent back to the experts'
  // outputs (the combine's backward) in FP8, one byte per value plus an fp32 scale per 128
  // (1 + 4/128 B); the combine and the dispatch's backward in the bf16 activations (2 B).
  // Per rank and layer: n k tokens of h values, n = s (b = 1). Forward: dispatch, combine;
  // backward (layers reversed): the combine's gradient first, then the dispatch's.
  testing::MoeStep step(8, 8);
  step.st.fp8_dispatch = true;
  step.w.precision = DType::fp8;
  step.in = testing::uniform_lowering(step.c, step.st, step.w, *step.sched, step.dev);
  const ChunkItems ci = build_chunk_items(step.in, step.dev, 4, true, true);
  const double tokens = 1024.0 * 2 * 1024, fp8 = tokens * (1 + 4.0 / 128), bf16 = tokens * 2;
  auto a2a = [](const std::vector<Item>& pass) {
    std::vector<double> out;
    for (const Item& it : pass)
      if (it.kind == Item::Kind::ep_comm) out.push_back(it.comm_bytes.value());
    return out;
  };
  std::vector<double> fwd, bwd;
  for (int layer = 0; layer < 4; ++layer) {
    fwd.insert(fwd.end(), {fp8, bf16});
    bwd.insert(bwd.end(), {fp8, bf16});
  }
  EXPECT_EQ(a2a(ci.fwd), fwd);
  EXPECT_EQ(a2a(ci.bwd), bwd);
  // The closed forms count the same: 4 of each size each way.
  const ChunkTotals t = chunk_totals(step.in, step.dev, 4, true, true);
  ASSERT_EQ(t.fwd.ep.size(), 2u);
  for (const EpComm& e : t.fwd.ep) EXPECT_EQ(e.count, 4);
}

TEST(ExpertParallel, ExpertGradientsReduceOverTheExpertReplicaGroup) {
  testing::MoeStep step(8, 4);
  step.st.overlap_dp = false;
  const StepPlan plan = build_step_plan(step.in);
  const StagePlan& sp = plan.stages[0];
  ASSERT_EQ(sp.buckets.size(), 1u);
  EXPECT_EQ(sp.buckets[0].reduction.bytes, sp.grad_bytes);
  EXPECT_EQ(sp.buckets[0].expert.bytes, sp.expert_grad_bytes);
  // Expert replica group of rank 1: devices 1, 5 (stride ep, dp / ep = 2 of them).
  const DeviceGroup g = plan.layout.expert_replica_group(0, 1);
  EXPECT_EQ(g.first, 1);
  EXPECT_EQ(g.stride, 4);
  EXPECT_EQ(g.count, 2);
  const DeviceGroup a2a = plan.layout.expert_group(0, 1);
  EXPECT_EQ(a2a.first, 4);
  EXPECT_EQ(a2a.count, 4);
}

TEST(ExpertParallel, MemoryShardsTheExpertsOverEpAndEtpAndTheirStateOverTheExpertReplicas) {
  const TransformerConfig c = testing::small_moe();
  WorkloadSpec w;
  StrategySpec st;
  st.dp = 16;
  StageShape sh{0, 4, false, false, 1, 4};
  const double dense = 4 * c.moe_dense_params(), experts = 4 * c.moe_expert_params();
  EXPECT_DOUBLE_EQ(stage_params_per_device(c, st, sh), dense + experts);
  st.ep = 8;
  EXPECT_DOUBLE_EQ(stage_params_per_device(c, st, sh), dense + experts / 8);
  EXPECT_DOUBLE_EQ(stage_expert_params_per_device(c, st, sh), experts / 8);
  // ZeRO-1: Adam's 12 B per parameter over dp = 16 for the dense part, over the 16 / 8 = 2
  // expert replicas for the experts.
  st.zero = 1;
  EXPECT_DOUBLE_EQ(stage_memory(c, st, w, sh).optimizer.value(), 12 * (dense / 16 + experts / 8 / 2));
  // Expert tensor parallelism at ep 4: 16 / 4 experts per layer, half of each with etp 2
  // (experts / 8 on the device), so weights (the model's datatype), gradients (their element
  // size) and Adam's 12 B per parameter (memory.hpp) lose half the experts' share.
  st.zero = 0;
  st.ep = 4;
  const MemoryBreakdown m1 = stage_memory(c, st, w, sh);
  st.etp = 2;
  EXPECT_DOUBLE_EQ(stage_expert_params_per_device(c, st, sh), experts / 8);
  EXPECT_DOUBLE_EQ(stage_params_per_device(c, st, sh), dense + experts / 8);
  const MemoryBreakdown m2 = stage_memory(c, st, w, sh);
  const double half = experts / 4 - experts / 8;
  EXPECT_NEAR(m1.weights.value() - m2.weights.value(), dtype_bytes(storage_dtype(w.precision)) * half, 1e-3);
  EXPECT_NEAR(m1.gradients.value() - m2.gradients.value(), grad_element_bytes(st, w.precision) * half, 1e-3);
  EXPECT_NEAR(m1.optimizer.value() - m2.optimizer.value(), 12 * half, 1e-3);
  // ZeRO-1: the experts' optimizer state over the 16 / (4 * 2) = 2 expert replicas.
  st.zero = 1;
  EXPECT_DOUBLE_EQ(stage_memory(c, st, w, sh).optimizer.value(), 12 * (dense / 16 + experts / 8 / 2));
}

TEST(ExpertParallel, LayoutRulesNameTheirField) {
  const TransformerConfig moe = testing::small_moe(), dense = testing::moe_preset("gpt3-1.3b");
  LayoutRequest r;
  r.model = &moe;
  r.layout = {8, 1, 1, 1, 8};
  r.devices = 8;
  r.global_batch = 8;
  EXPECT_EQ(first_layout_issue(r), LayoutIssue::none);
  std::string path, text;
  auto issue = [&](const LayoutRequest& q) {
    LayoutIssue got = LayoutIssue::none;
    check_layout(q, [&](LayoutIssue i, std::string_view p, const std::function<std::string()>& m) {
      got = i;
      path = p;
      text = m();
      return false;
    });
    return got;
  };
  LayoutRequest q = r;
  q.layout.ep = 32;  // more than 16 experts
  EXPECT_EQ(issue(q), LayoutIssue::experts);
  EXPECT_EQ(path, "/strategy/ep");
  q = r;
  q.layout = {6, 1, 1, 1, 4};  // 4 does not divide the stage's 6 devices
  q.devices = 6;
  q.global_batch = 6;
  EXPECT_EQ(issue(q), LayoutIssue::experts);
  q = r;
  q.layout = {4, 2, 1, 1, 8};  // tp 2 without sequence parallelism
  EXPECT_EQ(issue(q), LayoutIssue::experts);
  EXPECT_EQ(path, "/strategy/sequence_parallel");
  q.sequence_parallel = true;
  EXPECT_EQ(issue(q), LayoutIssue::none);
  q.zero = 3;
  EXPECT_EQ(issue(q), LayoutIssue::experts);
  EXPECT_EQ(path, "/strategy/zero");
  q = r;
  q.model = &dense;
  q.global_batch = 64;
  EXPECT_EQ(issue(q), LayoutIssue::experts);
  EXPECT_EQ(path, "/strategy/ep");
  // Expert tensor parallelism: ep * etp divides the stage, etp the experts' MLP, and only an
  // MoE model has experts to split.
  q = r;
  q.layout = {8, 1, 1, 1, 4, 2};
  EXPECT_EQ(issue(q), LayoutIssue::none);
  q.layout.etp = 4;  // ep * etp = 16 > 8 devices of the stage
  EXPECT_EQ(issue(q), LayoutIssue::experts);
  EXPECT_EQ(path, "/strategy/etp");
  EXPECT_EQ(text, "ep*etp = 4*4 does not divide the 8 devices of a stage (dp*cp*tp = 8*1*1)");
  q = r;
  q.layout = {6, 1, 1, 1, 1, 3};  // 2,048 % 3
  q.devices = 6;
  q.global_batch = 6;
  EXPECT_EQ(issue(q), LayoutIssue::experts);
  EXPECT_EQ(path, "/strategy/etp");
  EXPECT_EQ(text, "the experts' MLP size 2048 is not divisible by etp = 3");
  q = r;
  q.model = &dense;
  q.layout = {8, 1, 1, 1, 1, 2};
  q.global_batch = 64;
  EXPECT_EQ(issue(q), LayoutIssue::experts);
  EXPECT_EQ(path, "/strategy/etp");
  EXPECT_EQ(text, "etp = 2 needs an MoE model (\"experts\" > 0 in the model)");
}

}  // namespace
}  // namespace hcsim
