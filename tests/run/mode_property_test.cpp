// One model of the step, read three ways (workloads/step_plan.hpp): on random valid layouts
// of two shipped scenarios, the analytical closed forms and the flow-mode simulation agree
// with the event-mode simulation within 2 % (docs/architecture.md's promise), and symmetry
// (identical ranks simulated once) gives the full simulation's step time.
//
// The layouts are drawn by a seeded generator over every strategy axis the step plan
// reads: dp, tp, pp, cp, the pipeline schedules with v, recomputation, ZeRO 0-3, sequence
// parallelism, flash attention, data-parallel overlap and the micro-batch. Layouts the
// parser refuses are redrawn; memory is not checked (a layout that would not fit still has
// a step to agree on). The largest differences found are printed and recorded in
// docs/performance.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scenarios/scenario.hpp"
#include "sim/core/error.hpp"
#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

struct Worst {
  double diff = 0;
  std::string layout;
  void note(double d, const std::string& l) {
    if (std::abs(d) > std::abs(diff)) {
      diff = d;
      layout = l;
    }
  }
};

// A deterministic draw in [0, n) (the generator's raw output, so the sequence does not
// depend on the standard library's distributions).
int pick(std::mt19937_64& rng, int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// A random layout of `base` (its cluster, model and batch kept); empty when the draw is
// not a valid scenario.
nlohmann::json draw(const nlohmann::json& base, int devices, std::mt19937_64& rng, std::string& text) {
  nlohmann::json doc = base;
  const std::vector<int> divs = divisors(devices);
  const int tp = divs[static_cast<std::size_t>(pick(rng, static_cast<int>(divs.size())))];
  const std::vector<int> rest = divisors(devices / tp);
  const int cp = pick(rng, 3) == 0 ? rest[static_cast<std::size_t>(pick(rng, static_cast<int>(rest.size())))] : 1;
  const std::vector<int> rest2 = divisors(devices / tp / cp);
  const int pp = rest2[static_cast<std::size_t>(pick(rng, static_cast<int>(rest2.size())))];
  const int dp = devices / tp / cp / pp;
  static const char* const schedules[] = {"gpipe", "1f1b", "interleaved-1f1b"};
  const std::string schedule = schedules[pick(rng, 3)];
  const int v = schedule == "interleaved-1f1b" ? 2 + pick(rng, 2) : 1;
  static const char* const recomputes[] = {"none", "selective", "full"};
  const std::string recompute = recomputes[pick(rng, 3)];
  const int zero = pick(rng, 4);
  const bool sp = tp > 1 && pick(rng, 2) == 0;
  const bool flash = pick(rng, 2) == 0;
  const bool overlap = pick(rng, 4) != 0;
  const int micro_batch = 1 << pick(rng, 3);
  auto& st = doc["strategy"];
  st = {{"dp", dp}, {"tp", tp}, {"pp", pp}, {"cp", cp}, {"schedule", schedule}, {"interleave", v},
        {"recompute", recompute}, {"zero", zero}, {"sequence_parallel", sp}, {"flash_attention", flash},
        {"overlap_dp", overlap}};
  doc["workload"]["micro_batch"] = micro_batch;
  doc["simulation"] = {{"check_memory", false}};
  text = fmt::format("dp {} tp {} pp {} cp {} {} v {} recompute {} zero {} sp {} flash {} overlap {} mb {}", dp, tp,
                     pp, cp, schedule, v, recompute, zero, sp, flash, overlap, micro_batch);
  try {
    parse_scenario(doc, "property.json");
  } catch (const InputError&) {
    return nullptr;
  }
  return doc;
}

double step(nlohmann::json doc, const char* mode, bool symmetry) {
  doc["simulation"]["mode"] = mode;
  doc["simulation"]["symmetry"] = symmetry;
  return run_scenario(parse_scenario(doc, "property.json")).metrics.step_time_s;
}

TEST(ModeProperty, AnalyticalAndFlowWithinTwoPercentOfEventSymmetryExact) {
  struct Base {
    const char* file;
    int layouts;
  };
  // 300 layouts in all: 180 of the 16-GPU quickstart, 120 of the 8-GPU tiny GPT.
  const Base bases[] = {{"scenarios/quickstart.json", 180}, {"scenarios/sweeps/tiny-gpt.json", 120}};
  std::mt19937_64 rng(20261201);
  Worst analytical, flow, symmetry;
  int checked = 0;
  for (const Base& b : bases) {
    const nlohmann::json base = read_json_file(std::string(HCSIM_SOURCE_DIR) + "/" + b.file);
    const int devices = base["cluster"]["pools"][0]["count"].get<int>();
    for (int n = 0; n < b.layouts;) {
      std::string text;
      const nlohmann::json doc = draw(base, devices, rng, text);
      if (doc.is_null()) continue;
      ++n;
      ++checked;
      const std::string where = std::string(b.file) + ": " + text;
      const double event = step(doc, "event", true);
      const double a = step(doc, "analytical", true) / event - 1.0;
      const double f = step(doc, "flow", true) / event - 1.0;
      const double full = step(doc, "event", false) / event - 1.0;
      analytical.note(a, where);
      flow.note(f, where);
      symmetry.note(full, where);
      EXPECT_LE(std::abs(a), 0.02) << where;
      EXPECT_LE(std::abs(f), 0.02) << where;
      EXPECT_LE(std::abs(full), 1e-9) << where;
    }
  }
  EXPECT_EQ(checked, 300);
  std::printf("largest analytical/event - 1: %+.4f%% (%s)\n", 100 * analytical.diff, analytical.layout.c_str());
  std::printf("largest flow/event - 1:       %+.2e (%s)\n", flow.diff, flow.layout.c_str());
  std::printf("largest symmetric/full - 1:   %+.2e (%s)\n", symmetry.diff, symmetry.layout.c_str());
}

}  // namespace
}  // namespace hcsim
