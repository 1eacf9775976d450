// Expert tensor parallelism (etp; workloads/layout.hpp, items.hpp, memory.hpp): its groups,
// the experts' GEMMs split over it, the gather and reduce-scatter around the experts in
// both passes, its memory and its layout rules. (Mixture of experts and expert parallelism
// without etp: moe_test.cpp.)
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

// Expert tensor parallelism (Megatron-Core's expert_tensor_parallel_size, layout.hpp): the
// expert layout tp-ep-dp over the stage, expert tensor rank fastest. 8 devices, ep 2, etp 2:
// device i has expert tensor rank i % 2, expert rank (i / 2) % 2, expert-data-parallel rank
// i / 4.
TEST(ExpertTensorParallel, GroupsFoldEtpFastestThenEpThenExpertDataParallel) {
  Layout l;
  l.dp = 8;
  l.ep = 2;
  l.etp = 2;
  EXPECT_EQ(l.expert_replicas(), 2);  // 8 / (2 * 2)
  EXPECT_EQ(l.expert_groups(), 4);    // 8 / 2
  auto members = [](const DeviceGroup& g) {
    std::vector<int> d;
    g.devices(d);
    return d;
  };
  // All-to-all groups: the ep devices of one expert tensor rank, stride etp.
  EXPECT_EQ(members(l.expert_group(0, 0)), (std::vector<int>{0, 2}));
  EXPECT_EQ(members(l.expert_group(0, 1)), (std::vector<int>{1, 3}));
  EXPECT_EQ(members(l.expert_group(0, 2)), (std::vector<int>{4, 6}));
  EXPECT_EQ(members(l.expert_group(0, 3)), (std::vector<int>{5, 7}));
  // Expert tensor groups: etp consecutive devices; replica groups: stride ep * etp.
  EXPECT_EQ(members(l.expert_tensor_group(0, 1)), (std::vector<int>{2, 3}));
  EXPECT_EQ(members(l.expert_replica_group(0, 1)), (std::vector<int>{1, 5}));
  EXPECT_EQ(members(l.expert_replica_group(0, 2)), (std::vector<int>{2, 6}));
  // Each kind partitions the stage; a group and its siblings are the kind's groups.
  for (const auto& [first, count] :
       {std::pair{l.expert_group(0), l.expert_groups()}, std::pair{l.expert_tensor_group(0), 8 / l.etp},
        std::pair{l.expert_replica_group(0), l.ep * l.etp}}) {
    std::vector<int> offsets, seen = members(first);
    first.sibling_offsets(offsets);
    EXPECT_EQ(static_cast<int>(offsets.size()), count - 1);
    for (int o : offsets)
      for (int d : members(first)) seen.push_back(d + o);
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  }
  // The all-to-all group of device i holds it.
  for (int i = 0; i < 8; ++i) {
    const std::vector<int> g = members(l.expert_group(0, l.expert_group_of(i)));
    EXPECT_NE(std::find(g.begin(), g.end(), i), g.end()) << i;
  }
}

TEST(ExpertTensorParallel, ExpertGemmsHalveTheirWidthOnTwiceTheTokens) {
  const TransformerConfig c = testing::small_moe();
  ShardShape s;
  s.micro_batch = 2;
  s.ep = 4;
  const double n = 2 * 1024, h = 1024, f = 2048, k = 2;
  auto op = [&](const char* name) {
    for (const LayerOp& o : moe_layer_ops(c, s))
      if (std::string_view(o.name) == name) return o;
    ADD_FAILURE() << name;
    return LayerOp{};
  };
  const LayerOp up1 = op("expert_up"), down1 = op("expert_down");
  s.etp = 2;
  const LayerOp up2 = op("expert_up"), down2 = op("expert_down"), combine = op("unpermute");
  // Even routing, 16 / 4 = 4 local experts: n k / 4 tokens each at etp 1; at etp 2 the two
  // ranks' tokens gathered (2 n k / 4) through f / 2 of each expert's columns (SwiGLU's up
  // GEMM: 2 f wide) and rows.
  auto i64 = [](double x) { return static_cast<std::int64_t>(x); };
  EXPECT_EQ(up1.kernel.m, i64(n * k / 4));
  EXPECT_EQ(up2.kernel.m, i64(2 * n * k / 4));
  EXPECT_EQ(up1.kernel.n, i64(2 * f));
  EXPECT_EQ(up2.kernel.n, i64(2 * f / 2));
  EXPECT_EQ(down2.kernel.k, i64(f / 2));
  EXPECT_EQ(up2.kernel.batch, 4);
  // The FLOPs per token of the expert GEMMs halve (2 m n k / m: 2 * 2f/etp * h); per rank they
  // stay 2 (n k)(2 f) h for up, as the rank computes twice the tokens.
  auto per_token = [](const LayerOp& o) {
    return o.kernel.flops.value() / static_cast<double>(o.kernel.m * o.kernel.batch);
  };
  EXPECT_DOUBLE_EQ(per_token(up2), 2 * (2 * f / 2) * h);
  EXPECT_DOUBLE_EQ(per_token(up1), 2 * (2 * f) * h);
  EXPECT_DOUBLE_EQ(up2.kernel.flops.value(), 2 * n * k * 2 * f * h);
  EXPECT_DOUBLE_EQ(up2.kernel.flops.value(), up1.kernel.flops.value());
  EXPECT_DOUBLE_EQ(down2.kernel.flops.value(), down1.kernel.flops.value());
  // Model FLOPs of the layer: unchanged (6 n k h f of the experts, as at etp 1).
  ShardShape s1 = s;
  s1.etp = 1;
  EXPECT_NEAR(testing::gemm_model_flops(moe_layer_ops(c, s)), testing::gemm_model_flops(moe_layer_ops(c, s1)),
              1e-12 * testing::gemm_model_flops(moe_layer_ops(c, s1)));
  // The dispatch all-to-all carries the rank's n k tokens (bf16); the gather and the
  // reduce-scatter the two ranks' 2 n k, on the experts' first op and on the combine.
  EXPECT_DOUBLE_EQ(up2.ep_all_to_all.value(), n * k * h * 2);
  EXPECT_DOUBLE_EQ(up2.etp_all_gather.value(), 2 * n * k * h * 2);
  EXPECT_DOUBLE_EQ(up2.etp_reduce_scatter.value(), 0);
  EXPECT_DOUBLE_EQ(combine.etp_reduce_scatter.value(), 2 * n * k * h * 2);
  EXPECT_DOUBLE_EQ(up1.etp_all_gather.value(), 0);
  // The experts' kept inputs: the gathered tokens (g (2 n k) h), then f / 2 wide.
  EXPECT_DOUBLE_EQ(up2.saved_bytes.value(), 2 * (2 * n * k) * h);
  EXPECT_DOUBLE_EQ(down2.saved_bytes.value(), 2 * (2 * n * k) * (f / 2));
}

TEST(ExpertTensorParallel, GatherAndReduceScatterWrapTheExpertsInBothPasses) {
  testing::MoeStep step(16, 4, 2);
  const auto& [c, w, st, dev, sched, in] = step;
  const ChunkItems ci = build_chunk_items(in, dev, 4, true, true);
  // Per rank: the all-to-alls carry its n k tokens (n = s = 1,024, k = 2, bf16 h = 1,024);
  // the gather and reduce-scatter both ranks' (etp 2).
  const double a2a = 1024.0 * 2 * 1024 * 2, gathered = 2 * a2a;
  using Op = CollectiveOp;
  auto sequence = [](const std::vector<Item>& pass) {
    std::vector<std::pair<Op, double>> out;
    for (const Item& it : pass)
      if (it.kind == Item::Kind::ep_comm) out.emplace_back(it.op, it.comm_bytes.value());
    return out;
  };
  // Forward per MoE layer: dispatch, gather | experts | reduce-scatter, combine; backward
  // the reverse: the combine's gradient back, gathered, then reduce-scattered, dispatched back.
  const std::vector<std::pair<Op, double>> fwd = {
      {Op::all_to_all, a2a}, {Op::all_gather, gathered}, {Op::reduce_scatter, gathered}, {Op::all_to_all, a2a}};
  const std::vector<std::pair<Op, double>> bwd = {
      {Op::all_to_all, a2a}, {Op::all_gather, gathered}, {Op::reduce_scatter, gathered}, {Op::all_to_all, a2a}};
  std::vector<std::pair<Op, double>> f4, b4;
  for (int l = 0; l < 4; ++l) {
    f4.insert(f4.end(), fwd.begin(), fwd.end());
    b4.insert(b4.end(), bwd.begin(), bwd.end());
  }
  EXPECT_EQ(sequence(ci.fwd), f4);
  EXPECT_EQ(sequence(ci.bwd), b4);
  // The closed forms count the same: 8 all-to-alls, 4 gathers, 4 reduce-scatters per pass.
  const ChunkTotals t = chunk_totals(in, dev, 4, true, true);
  for (const auto* pass : {&t.fwd, &t.bwd}) {
    std::map<Op, std::pair<int, double>> by_op;
    for (const EpComm& e : pass->ep) by_op[e.op] = {e.count, e.bytes.value()};
    EXPECT_EQ(by_op[Op::all_to_all], (std::pair{8, a2a}));
    EXPECT_EQ(by_op[Op::all_gather], (std::pair{4, gathered}));
    EXPECT_EQ(by_op[Op::reduce_scatter], (std::pair{4, gathered}));
  }
  // Gradients: 16 / 4 = 4 experts per layer, half of each (fp32 main gradients, 4 B), reduced
  // over the 16 / (4 * 2) = 2 expert replicas: devices 0 and 8.
  EXPECT_DOUBLE_EQ(ci.expert_grad_bytes.value(), 4 * 4 * c.mlp_params(2048) / 2 * 4);
  EXPECT_DOUBLE_EQ(t.expert_grad_bytes.value(), ci.expert_grad_bytes.value());
  step.st.overlap_dp = false;
  const StepPlan plan = build_step_plan(in);
  ASSERT_EQ(plan.stages[0].buckets.size(), 1u);
  EXPECT_EQ(plan.stages[0].buckets[0].expert.bytes, plan.stages[0].expert_grad_bytes);
  const DeviceGroup replicas = plan.layout.expert_replica_group(0);
  EXPECT_EQ(replicas.stride, 8);
  EXPECT_EQ(replicas.count, 2);
  // Without expert tensor parallelism there is nothing to gather.
  step.st.etp = 1;
  for (const Item& it : build_chunk_items(in, dev, 4, true, true).fwd)
    if (it.kind == Item::Kind::ep_comm) { EXPECT_EQ(it.op, Op::all_to_all); }
}

}  // namespace
}  // namespace hcsim
