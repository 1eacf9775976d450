#include "pipeline_schedule.hpp"

#include "workloads/strategy.hpp"

#include <algorithm>

namespace hcsim {
namespace {

class GPipe final : public PipelineSchedule {
 public:
  std::string_view type() const override { return "gpipe"; }
  std::vector<PipeOp> order(int, int, int m, int) const override {
    std::vector<PipeOp> out;
    for (int i = 0; i < m; ++i) out.push_back({false, i, 0});
    for (int i = 0; i < m; ++i) out.push_back({true, i, 0});
    return out;
  }
  double in_flight(int, int, int m, int) const override { return m; }
};

class OneFOneB final : public PipelineSchedule {
 public:
  std::string_view type() const override { return "1f1b"; }
  std::vector<PipeOp> order(int stage, int p, int m, int) const override {
    const int warm = std::min(p - stage - 1, m);
    std::vector<PipeOp> out;
    for (int i = 0; i < warm; ++i) out.push_back({false, i, 0});
    for (int i = 0; i < m - warm; ++i) {
      out.push_back({false, warm + i, 0});
      out.push_back({true, i, 0});
    }
    for (int i = m - warm; i < m; ++i) out.push_back({true, i, 0});
    return out;
  }
  double in_flight(int stage, int p, int m, int) const override { return std::min(p - stage, m); }
};

// Megatron-LM's interleaved schedule: forward micro-step k runs chunk (k / p) mod v of
// micro-batch (k / (p v)) p + k mod p; backward runs chunks in reverse. Requires m % p == 0.
class Interleaved final : public PipelineSchedule {
 public:
  std::string_view type() const override { return "interleaved-1f1b"; }
  bool interleaved() const override { return true; }
  static PipeOp step(int k, int p, int v, bool backward) {
    const int group = k / (p * v);
    int chunk = (k / p) % v;
    if (backward) chunk = v - 1 - chunk;
    return {backward, group * p + k % p, chunk};
  }
  std::vector<PipeOp> order(int stage, int p, int m, int v) const override {
    const int total = m * v;
    const int warm = std::min((p - stage - 1) * 2 + (v - 1) * p, total);
    std::vector<PipeOp> out;
    int f = 0, b = 0;
    for (; f < warm; ++f) out.push_back(step(f, p, v, false));
    while (f < total) {
      out.push_back(step(f++, p, v, false));
      out.push_back(step(b++, p, v, true));
    }
    while (b < total) out.push_back(step(b++, p, v, true));
    return out;
  }
  // Korthikanti eq. 5: stage 0 holds p micro-batches times (1 + (p-1)/(p v)) of its layers.
  double in_flight(int stage, int p, int m, int v) const override {
    const int warm = std::min((p - stage - 1) * 2 + (v - 1) * p, m * v);
    return static_cast<double>(warm + 1) / v;
  }
};

template <class S>
void add_schedule(const char* help) {
  pipeline_schedules().add({S().type().data(), help, {}, [](const Params&) { return std::make_unique<S>(); },
                            "Huang et al. 2019 (GPipe); Narayanan et al. 2021 (PipeDream-Flush); SC21 §2.2"});
}

}  // namespace

Registry<PipelineSchedule>& pipeline_schedules() {
  static Registry<PipelineSchedule> r("pipeline schedule");
  return r;
}

void register_builtin_schedules() {
  static bool done = false;
  if (done) return;
  done = true;
  add_schedule<GPipe>("all forwards, then all backwards; stage keeps m micro-batches of activations");
  add_schedule<OneFOneB>("PipeDream-Flush: p-s-1 warm-up forwards, then one forward one backward; keeps p-s");
  add_schedule<Interleaved>("interleaved 1F1B with v chunks per device; bubble (p-1)/(v m); needs m divisible by p");
}

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

}  // namespace hcsim
