// Layout-search throughput of the fast analytical path (sim/driver/fast_analytical):
// every valid (tp, pp, dp, micro-batch, schedule, recomputation) of a base scenario's model
// within a device budget, evaluated on one core.
//
//   hcsim_bench_search BASE.json DEVICES
//
// The base is parsed and its cluster grown to DEVICES once (setup), then the layouts are
// enumerated and each valid one evaluated (memory; step time, MFU and energy where it fits,
// as `hcsim search` screens). Sequence
// parallelism is on whenever tp > 1 and ZeRO-1 whenever dp > 1 (so neither is a search
// dimension). Prints a RESULT line for scripts/bench.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/core/replace_new.inc"  // large blocks on huge pages, as in the hcsim executable
#include "sim/driver/fast_analytical.hpp"

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

struct Tally {
  std::size_t valid = 0, fits = 0;
  hcsim::FastResult best;
  hcsim::FastLayout best_layout;
};

// Every layout the parser's rules allow, enumerated so that each loop level skips what
// cannot divide (dp divides the batch, pp the layers); evaluate() checks the full rules.
void search(hcsim::FastAnalytical& fast, const hcsim::Scenario& base, int budget, Tally& t) {
  using hcsim::Recompute;
  const std::int64_t layers = base.model.layers, gb = base.workload.global_batch;
  const std::vector<int> tps{1, 2, 4, 8, 16, 32, 64, 128};
  const std::vector<std::pair<std::string_view, int>> schedules{
      {"gpipe", 1}, {"1f1b", 1}, {"interleaved-1f1b", 2}, {"interleaved-1f1b", 3}, {"interleaved-1f1b", 4},
      {"interleaved-1f1b", 5}, {"interleaved-1f1b", 6}, {"interleaved-1f1b", 7}, {"interleaved-1f1b", 8}};
  for (int tp : tps)
    for (int pp = 1; pp <= layers && tp * pp <= budget; ++pp) {
      if (layers % pp != 0) continue;
      for (int dp = 1; static_cast<long>(tp) * pp * dp <= budget; ++dp) {
        if (gb % dp != 0) continue;
        for (int mb = 1; mb <= 8; ++mb) {
          if (gb % (static_cast<std::int64_t>(mb) * dp) != 0) continue;
          for (const auto& [sched, v] : schedules)
            for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
              const hcsim::FastLayout l{tp, pp, dp, mb, sched, v, rc, dp > 1 ? 1 : 0, tp > 1};
              // As `hcsim search` screens: a layout that does not fit is refused untimed.
              const hcsim::FastResult r = fast.evaluate(l, hcsim::FastAnalytical::Timed::fitting_only);
              if (!r.valid()) continue;
              ++t.valid;
              if (!r.fits) continue;
              ++t.fits;
              if (r.tokens_per_s > t.best.tokens_per_s) {
                t.best = r;
                t.best_layout = l;
              }
            }
        }
      }
    }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: hcsim_bench_search BASE.json DEVICES\n");
    return 2;
  }
  try {
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    const hcsim::Scenario parsed = hcsim::load_scenario(argv[1]);
    const hcsim::Scenario base = hcsim::resized_cluster(parsed, std::stoi(argv[2]));
    hcsim::FastAnalytical fast(base);
    const auto w1 = std::chrono::steady_clock::now();
    const double c1 = cpu_seconds();
    Tally t;
    search(fast, base, base.device_count(), t);
    const auto w2 = std::chrono::steady_clock::now();
    const double c2 = cpu_seconds();
    const double setup = std::chrono::duration<double>(w1 - w0).count();
    const double run = std::chrono::duration<double>(w2 - w1).count();
    const auto& b = t.best_layout;
    std::printf("%s", fmt::format("{} on up to {} devices: {} valid layouts ({} fit in memory), {} collective "
                                  "estimates cached\nsetup {:.3f} s wall ({:.3f} s CPU), search {:.3f} s wall ({:.3f} s "
                                  "CPU): {:.0f} layouts/s wall, {:.0f} layouts/s CPU\n"
                                  "fastest that fits: tp {} pp {} dp {} mb {} {} v{} recompute {} -> {:.3f} s/step, "
                                  "MFU {:.1f} %, {} devices\n",
                                  parsed.model_preset, base.device_count(), t.valid, t.fits, fast.cached_collectives(),
                                  setup, c1 - c0, run, c2 - c1, t.valid / run, t.valid / (c2 - c1), b.tp, b.pp, b.dp,
                                  b.micro_batch, b.schedule, b.interleave, hcsim::recompute_name(b.recompute),
                                  t.best.step_time.value(), 100 * t.best.mfu, t.best.devices)
                          .c_str());
    std::printf("RESULT configs=%zu fits=%zu setup_wall_s=%.4f search_wall_s=%.4f search_cpu_s=%.4f rss_kib=%ld\n",
                t.valid, t.fits, setup, run, c2 - c1, peak_rss_kib());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
