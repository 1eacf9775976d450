// Metrics agree with each other and with closed forms: the time breakdown partitions the
// step per rank, the bubble follows Narayanan et al.'s (p-1)/(m+p-1), throughput and MFU
// follow from the step time, and replicas (symmetry) carry their twin's figures.
#include <cfloat>

#include <gtest/gtest.h>

#include "report_fixture.hpp"
#include "workloads/formulas.hpp"

namespace hcsim {
namespace {

using testing::quickstart;
using testing::run_doc;
using testing::small_doc;

// The sweep adds up to a few thousand pieces per bucket; each addition rounds by at most
// 2^-53 of the partial sum, so the four buckets sum to the step to ~1e-13 relative.
constexpr double kSumRoundingMetrics = 1e-12;

void expect_partition(const Metrics& m) {
  const double step = m.step_time.value();
  ASSERT_GT(step, 0);
  for (const auto& d : m.devices) {
    EXPECT_GE(d.compute.value(), 0);
    EXPECT_GE(d.bubble.value(), 0);
    EXPECT_GE(d.idle.value(), 0);
    for (Seconds x : d.exposed_comm) EXPECT_GE(x.value(), 0);
    EXPECT_NEAR(d.compute.value() + d.exposed_comm_total().value() + d.bubble.value() + d.idle.value(), step,
                kSumRoundingMetrics * step)
        << "device " << d.device;
  }
  for (const auto& s : m.stages) {
    double comm = 0;
    for (Seconds x : s.exposed_comm) comm += x.value();
    EXPECT_NEAR(s.compute.value() + comm + s.bubble.value() + s.idle.value(), step, kSumRoundingMetrics * step)
        << "stage " << s.stage;
  }
}

TEST(TimeBreakdown, AddsUpToStepTimePerRankQuickstart) { expect_partition(quickstart()->out.metrics); }

TEST(TimeBreakdown, AddsUpToStepTimePerRankEveryRankSimulated) {
  const auto r = run_doc(small_doc(2, 2, 2, testing::nvlink3()));
  const Metrics& m = r->out.metrics;
  EXPECT_EQ(m.simulated_devices, 8);
  expect_partition(m);
  // Tensor and pipeline parallelism expose communication; compute dominates.
  EXPECT_GT(m.devices[0].exposed_comm[static_cast<std::size_t>(CommClass::tp)].value(), 0);
  EXPECT_GT(m.devices[0].compute.value(), 0.5 * m.step_time.value());
}

TEST(TimeBreakdown, JsonPerDeviceRowsAddUpToStepTime) {
  const auto& rep = quickstart()->report;
  const double step = rep["step_time_s"].get<double>();
  for (const auto& d : rep["per_device"]) {
    double sum = d["compute_s"].get<double>() + d["bubble_s"].get<double>() + d["idle_s"].get<double>();
    for (const auto& [k, v] : d["exposed_comm_s"].items()) sum += v.get<double>();
    EXPECT_NEAR(sum, step, kSumRoundingMetrics * step);
  }
}

TEST(TimeBreakdown, BubbleMatchesClosedFormOnUniformStages) {
  // Free network, negligible head (vocab 8), equal layers per stage: the setting of the
  // closed form (p-1)/(m+p-1) for 1F1B (Narayanan et al. SC21 §2.2.1). 2e-3 relative as in
  // tests/engine/pipeline_test.cpp (embedding and optimizer tasks are not quite free;
  // measured 3.8e-4 for the mean, 5.8e-4 for a stage).
  nlohmann::json doc = small_doc(1, 1, 4, {{"type", "electrical"}, {"bandwidth", "1 EB/s"}, {"latency", 0}});
  doc["workload"]["model"]["overrides"]["vocab"] = 8;
  doc["workload"]["model"]["overrides"]["layers"] = 8;
  const auto r = run_doc(doc);
  const double expect = formulas::bubble_fraction(4, 8, 1);
  EXPECT_NEAR(r->out.metrics.bubble_fraction, expect, 2e-3 * expect);
  // Stage 0 waits for the drain of the last backward passes, the last stage for the fill.
  for (double f : r->out.metrics.stage_bubble_fraction) EXPECT_NEAR(f, expect, 2e-3 * expect);
}

TEST(TimeBreakdown, NoPipelineNoBubble) {
  const auto r = run_doc(small_doc(2, 1, 1, testing::nvlink3()));
  for (const auto& d : r->out.metrics.devices) EXPECT_EQ(d.bubble.value(), 0);
  EXPECT_EQ(r->out.metrics.bubble_fraction, 0);
}

TEST(Throughput, FollowsFromStepTime) {
  const auto q = quickstart();
  const Metrics& m = q->out.metrics;
  // quickstart: global batch 64 sequences of 2048 tokens.
  EXPECT_DOUBLE_EQ(m.tokens_per_step, 64.0 * 2048.0);
  EXPECT_DOUBLE_EQ(m.tokens_per_s * m.step_time.value(), 64.0 * 2048.0);
  EXPECT_DOUBLE_EQ(m.samples_per_s * m.step_time.value(), 64.0);
  // Default N = 300e9 tokens (GPT-3, Brown et al. 2020).
  EXPECT_DOUBLE_EQ(m.train_tokens, 300e9);
  EXPECT_DOUBLE_EQ(m.time_to_train.value(), 300e9 / m.tokens_per_s);
  // Peak: 16 x A100 dense BF16 312 TFLOPS (A100 datasheet, hardware.md §1).
  EXPECT_DOUBLE_EQ(m.peak_flops_rate.value(), 16 * 312e12);
  EXPECT_DOUBLE_EQ(m.mfu, m.model_flops.value() / (m.step_time.value() * 16 * 312e12));
  // HFU counts the FLOPs executed: with fused causal attention that is less than the model's
  // full-square count (workloads/transformer_ops.cpp), so HFU may sit below MFU.
  EXPECT_DOUBLE_EQ(m.hfu, m.hardware_flops.value() / (m.step_time.value() * 16 * 312e12));
}

TEST(Throughput, ModelFlopsOfAllRanksMatchKorthikanti) {
  // Replicas are counted through their twins: the cluster's model FLOPs are the step's,
  // 72 B l s h^2 (1 + s/(6h) + V/(12 h l)) (Korthikanti et al. 2022 eq. 8), to rounding as
  // in tests/workloads/flops_test.cpp. quickstart: GPT-3 1.3B, B = 64.
  const Metrics& m = quickstart()->out.metrics;
  EXPECT_LT(m.simulated_devices, static_cast<int>(m.devices.size()));
  const double expect = formulas::model_flops(64, 2048, 24, 2048, 51200).value();
  EXPECT_NEAR(m.model_flops.value() / expect, 1.0, 1e-9);
}

TEST(Throughput, AttachedPimStacksAreNotPeakDevices) {
  // 8 A100s carrying HBM-PIM stacks: the stacks are part of each GPU's memory, not devices
  // of the layout; the peak is the GPUs' 8 x 312 TFLOPS (A100 datasheet, hardware.md §1).
  register_builtins();
  const Scenario sc = load_scenario(std::string(HCSIM_SOURCE_DIR) + "/scenarios/gpu-with-hbm-pim.json");
  const Metrics m = run_scenario(sc).metrics;
  EXPECT_EQ(m.devices.size(), 8u);
  EXPECT_DOUBLE_EQ(m.peak_flops_rate.value(), 8 * 312e12);
  EXPECT_LE(m.mfu, 1.0);
}

TEST(CompleteMetrics, EverythingElseFromPerDeviceFigures) {
  // The analytical path gives only per-device time, work and dynamic energy; the rest must
  // follow as it does from a timeline, except what needs one (link bytes, power shape).
  const auto r = run_doc(small_doc(2, 2, 2, testing::nvlink3()));
  const Metrics& full = r->out.metrics;
  Metrics partial;
  partial.step_time = full.step_time;
  partial.devices = full.devices;
  const Metrics m = complete_metrics(r->sc, partial, r->out.shapes);
  expect_partition(m);
  EXPECT_EQ(m.stage_bubble_fraction, full.stage_bubble_fraction);
  EXPECT_DOUBLE_EQ(m.bubble_fraction, full.bubble_fraction);
  EXPECT_DOUBLE_EQ(m.mfu, full.mfu);
  EXPECT_DOUBLE_EQ(m.time_to_train.value(), full.time_to_train.value());
  EXPECT_DOUBLE_EQ(m.device_dynamic.value(), full.device_dynamic.value());
  EXPECT_DOUBLE_EQ(m.device_static.value(), full.device_static.value());
  EXPECT_EQ(m.network_dynamic.value(), 0);
  EXPECT_EQ(m.stages.size(), 2u);
  // Flat power: every sample is the mean.
  ASSERT_FALSE(m.power.empty());
  for (Watts p : m.power) EXPECT_NEAR(p.value(), m.average_power.value(), 1e-9 * m.average_power.value());
  EXPECT_NEAR(m.peak_power.value(), m.average_power.value(), 1e-9 * m.average_power.value());
}

// Without the power curve (the search's confirmations) every figure of the report is the
// same but peak power, which stays 0, and the curve, which stays empty.
TEST(CompleteMetrics, WithoutThePowerCurveOnlyPeakPowerAndTheCurveAreLeftOut) {
  const auto q = quickstart();
  const RunOutput out = run_scenario(q->sc, {.power_curve = false});
  nlohmann::json without = report_json(q->sc, out), with = q->report;
  EXPECT_EQ(without["energy"]["peak_power_w"].get<double>(), 0.0);
  EXPECT_GT(with["energy"]["peak_power_w"].get<double>(), with["energy"]["average_power_w"].get<double>());
  EXPECT_TRUE(without["power"]["it_w"].empty());
  EXPECT_EQ(with["power"]["it_w"].size(), 100u);
  for (nlohmann::json* j : {&without, &with}) {
    (*j)["energy"].erase("peak_power_w");
    (*j)["power"].erase("it_w");
    (*j)["power"].erase("interval_s");
    for (auto& d : (*j)["per_device"]) d.erase("peak_power_w");
  }
  EXPECT_EQ(without, with);
}

TEST(CommVolume, DataParallelAllReduceCarriesTheGradients) {
  // dp = 2, no tp/pp: one gradient all-reduce of S = 4 bytes x P per rank (bf16 reduces
  // its fp32 main gradients, Megatron-LM's rule), with P = l (12 h^2 + 13 h) + V h + s h
  // (Narayanan et al. eq. 2, tied embeddings); with main_grads "model", 2 bytes x P.
  auto doc = small_doc(2, 1, 1, testing::nvlink3());
  const auto r = run_doc(doc);
  doc["strategy"]["main_grads"] = "model";
  const auto r16 = run_doc(doc);
  const double h = 1024, l = 4, V = 1024, s = 512;
  const double S = 4.0 * (l * (12 * h * h + 13 * h) + V * h + s * h);
  const Metrics& m = r->out.metrics;
  EXPECT_NEAR(m.comm_bytes[static_cast<std::size_t>(CommClass::dp)].value(), 2 * S, 1e-9 * S);
  EXPECT_NEAR(r16->out.metrics.comm_bytes[static_cast<std::size_t>(CommClass::dp)].value(), S, 1e-9 * S);
  for (CommClass c : {CommClass::tp, CommClass::pp, CommClass::zero})
    EXPECT_EQ(m.comm_bytes[static_cast<std::size_t>(c)].value(), 0);
  // Link utilisation = bytes / (links x 2 directions x bandwidth x step); NVLink3 300 GB/s
  // per direction (A100 datasheet, hardware.md §3).
  ASSERT_EQ(m.links.size(), 1u);
  EXPECT_DOUBLE_EQ(m.links[0].utilisation, m.links[0].bytes.value() / (2 * 2 * 300e9 * m.step_time.value()));
}

TEST(Memory, TiersAndHeadroom) {
  const Metrics& m = quickstart()->out.metrics;
  for (const auto& d : m.devices) {
    const auto& hbm = d.tiers[static_cast<std::size_t>(MemoryTier::hbm)];
    EXPECT_EQ(hbm.used.value(), d.memory.total().value());
    EXPECT_EQ(hbm.capacity.value(), 80e9);  // A100 80 GB (datasheet, hardware.md §1)
    EXPECT_EQ(d.headroom().value(), 80e9 - d.memory.total().value());
    EXPECT_EQ(d.tiers[static_cast<std::size_t>(MemoryTier::host_dram)].used.value(), 0);
    EXPECT_EQ(d.tiers[static_cast<std::size_t>(MemoryTier::cxl_pool)].used.value(), 0);
  }
  EXPECT_EQ(m.tiers[static_cast<std::size_t>(MemoryTier::hbm)].capacity.value(), 16 * 80e9);
  // Stage 0 keeps p = 2 micro-batches in flight under 1F1B, stage 1 one: it needs more.
  EXPECT_GT(m.stages[0].memory.activations, m.stages[1].memory.activations);
}

// Under symmetry a device that ran no compute task takes the figures of its twin: by default
// the first simulated device of its stage, else the one MetricsOptions::twin names; the
// replicas hold no figures of their own (one class per simulated device).
TEST(Symmetry, ReplicasTakeTheirTwinsFigures) {
  // dp 2 · cp 2 · pp 2: symmetry builds the first replica's context-parallel ring, two
  // simulated devices of the four of each stage.
  nlohmann::json doc = small_doc(2, 2, 2, testing::nvlink3());
  doc["strategy"]["tp"] = 1;
  doc["strategy"]["cp"] = 2;
  doc["simulation"]["symmetry"] = true;
  const auto r = run_doc(doc);
  const auto check = [&](const Metrics& m, const std::vector<int>& expected_twin) {
    ASSERT_EQ(m.devices.size(), 8u);
    EXPECT_EQ(m.devices.classes(), static_cast<std::size_t>(m.simulated_devices));
    for (std::size_t d = 0; d < m.devices.size(); ++d) {
      const DeviceMetrics dm = m.devices[d];
      EXPECT_EQ(dm.device, d);
      EXPECT_EQ(dm.twin, expected_twin[d]) << d;
      const DeviceMetrics tw = m.devices[static_cast<std::size_t>(dm.twin)];
      EXPECT_TRUE(tw.simulated);
      EXPECT_EQ(dm.simulated, dm.twin == static_cast<int>(d));
      EXPECT_EQ(dm.stage, tw.stage);
      EXPECT_EQ(dm.compute.value(), tw.compute.value());
      EXPECT_EQ(dm.exposed_comm, tw.exposed_comm);
      EXPECT_EQ(dm.bubble.value(), tw.bubble.value());
      EXPECT_EQ(dm.dynamic_energy.value(), tw.dynamic_energy.value());
      EXPECT_EQ(dm.peak_power.value(), tw.peak_power.value());
    }
  };
  // Per stage of 4 devices, its first and its last simulated device.
  const DeviceTable& t = r->out.metrics.devices;
  ASSERT_EQ(r->out.metrics.simulated_devices, 4);
  std::vector<int> stage_first(2, -1), stage_last(2, -1), first(8), last(8);
  for (std::size_t d = 0; d < 8; ++d) {
    if (!t.simulated(d)) continue;
    if (stage_first[d / 4] < 0) stage_first[d / 4] = static_cast<int>(d);
    stage_last[d / 4] = static_cast<int>(d);
  }
  for (std::size_t d = 0; d < 8; ++d) {
    first[d] = t.simulated(d) ? static_cast<int>(d) : stage_first[d / 4];
    last[d] = t.simulated(d) ? static_cast<int>(d) : stage_last[d / 4];
  }
  ASSERT_NE(first, last);
  check(r->out.metrics, first);
  MetricsOptions opt;
  opt.twin = last;
  check(compute_metrics(r->sc, r->out.graph, r->out.engine, r->out.shapes, opt), last);
}

// A class of devices reads as one DeviceMetrics per device, each with its own number: a
// stage's devices in analytical mode (all simulated, each its own twin).
TEST(DeviceTable, AClassReadsAsItsDevices) {
  DeviceTable t;
  DeviceMetrics a;
  a.stage = 0;
  a.compute = Seconds(2);
  DeviceMetrics b;
  b.stage = 1;
  b.compute = Seconds(3);
  t.append_class(a, 4);
  t.append_class(b, 2);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t.classes(), 2u);
  std::vector<std::uint32_t> numbers;
  for (const DeviceMetrics& d : t) {
    numbers.push_back(d.device);
    EXPECT_TRUE(d.simulated);
    EXPECT_EQ(d.twin, static_cast<int>(d.device));
    EXPECT_EQ(d.compute.value(), d.device < 4 ? 2.0 : 3.0);
    EXPECT_EQ(d.stage, d.device < 4 ? 0 : 1);
  }
  EXPECT_EQ(numbers, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5}));
  t.figures(t.class_of(5)).compute = Seconds(4);  // a class's figure, set once for its members
  EXPECT_EQ(t[4].compute.value(), 4.0);
}

// One NVSwitch node: every rank sees the same links, so simulating one rank per stage
// and copying it must give the totals of simulating all of them.
void expect_symmetric_totals(int dp, int tp, int pp) {
  nlohmann::json doc = small_doc(dp, tp, pp, testing::nvlink3());
  const auto full = run_doc(doc);
  doc["simulation"]["symmetry"] = true;
  const auto sym = run_doc(doc);
  const Metrics& a = full->out.metrics;
  const Metrics& b = sym->out.metrics;
  EXPECT_LT(b.simulated_devices, a.simulated_devices);
  for (const auto& d : b.devices) {
    ASSERT_GE(d.twin, 0);
    EXPECT_EQ(b.devices[static_cast<std::size_t>(d.twin)].stage, d.stage);
  }
  expect_partition(b);
  EXPECT_NEAR(b.step_time.value(), a.step_time.value(), 1e-9 * a.step_time.value());
  EXPECT_NEAR(b.model_flops.value(), a.model_flops.value(), 1e-9 * a.model_flops.value());
  EXPECT_NEAR(b.mfu, a.mfu, 1e-9);
  for (std::size_t c = 0; c < kCommClasses; ++c)
    EXPECT_NEAR(b.comm_bytes[c].value(), a.comm_bytes[c].value(), 1e-9 * a.comm_bytes[c].value())
        << comm_class_name(static_cast<CommClass>(c));
  EXPECT_NEAR(b.network_dynamic.value(), a.network_dynamic.value(), 1e-9 * a.network_dynamic.value());
  EXPECT_NEAR(b.it_energy.value(), a.it_energy.value(), 1e-9 * a.it_energy.value());
  EXPECT_NEAR(b.bubble_fraction, a.bubble_fraction, 1e-9);
}

TEST(Symmetry, ReplicasGiveTheTotalsOfAFullSimulationDpPp) { expect_symmetric_totals(2, 1, 2); }

TEST(Symmetry, ReplicasGiveTheTotalsOfAFullSimulationDpTpPp) {
  // Also needs the data-parallel collectives of the tensor-parallel ranks not built.
  expect_symmetric_totals(2, 2, 2);
}

}  // namespace
}  // namespace hcsim
