#pragma once
// Mixture-of-experts models for the workload tests: a preset's configuration, a small
// Mixtral-like model, the model FLOPs of a layer's GEMMs, and a one-stage step of it.
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "test_device.hpp"
#include "test_lowering.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/transformer.hpp"

namespace hcsim::testing {

inline TransformerConfig moe_preset(const char* name) {
  register_builtin_transformers();
  const Preset* p = transformer_presets().find(name);
  EXPECT_NE(p, nullptr) << name;
  Diagnostics diag;
  auto m = transformer_models().build(p->type, p->values, "/m", diag);
  EXPECT_TRUE(m) << name;
  return m->config;
}

// A small Mixtral-like model: 4 layers, 16 experts, top 2.
inline TransformerConfig small_moe() {
  TransformerConfig c = moe_preset("mixtral-8x7b");
  c.layers = 4;
  c.hidden = 1024;
  c.heads = 8;
  c.kv_heads = 8;
  c.ffn_hidden = 2048;
  c.vocab = 4096;
  c.seq_len = 1024;
  c.moe.experts = 16;
  c.moe.expert_ffn = 2048;
  return c;
}

// Model FLOPs of the GEMMs of `ops` (each kernel's FLOPs times its model work).
inline double gemm_model_flops(const std::vector<LayerOp>& ops) {
  double f = 0;
  for (const LayerOp& op : ops)
    if (op.kernel.kind == KernelKind::gemm) f += op.kernel.flops.value() * op.model_work;
  return f;
}

// A step of small_moe() on one stage of dp test devices (1F1B, global batch 16, one sequence
// per micro-batch) with ep and etp as given; `in` reads `st`, so a test may change it.
struct MoeStep {
  TransformerConfig c = small_moe();
  WorkloadSpec w;
  StrategySpec st;
  TestDevice dev;
  std::unique_ptr<PipelineSchedule> sched;
  LoweringInput in;
  MoeStep(int dp, int ep, int etp = 1) {
    register_builtin_schedules();
    w.global_batch = 16;
    st.dp = dp;
    st.ep = ep;
    st.etp = etp;
    sched = pipeline_schedules().get("1f1b", "").make(Params());
    in = uniform_lowering(c, st, w, *sched, dev);
  }
};

}  // namespace hcsim::testing
