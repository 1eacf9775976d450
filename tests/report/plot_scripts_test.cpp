// The plotting scripts at scale and beside the run report: plot_report.py aggregates the
// timeline and the power panel per stage past a few devices and says so when analytical
// mode has no timeline; plot_pareto.py draws screened layouts beside confirmed ones;
// plot_sweep.py draws a line per value of the other axes; plot_compare.py two reports side
// by side. Each writes a real PNG. Skipped where /usr/bin/python3 has no matplotlib.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "report_fixture.hpp"

namespace hcsim {
namespace {

namespace fs = std::filesystem;

const std::string kScripts = std::string(HCSIM_SOURCE_DIR) + "/scripts/";

bool has_matplotlib() { return std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0; }

struct Scratch {
  fs::path dir;
  Scratch() {
    char tmpl[] = "/tmp/hcsim-plots-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) ADD_FAILURE() << "mkdtemp";
    dir = tmpl;
  }
  ~Scratch() { fs::remove_all(dir); }
  [[nodiscard]] std::string operator/(const std::string& name) const { return (dir / name).string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name, std::ios::binary) << text; }
};

// Standard output of a shell command; its exit status in `rc`.
std::string capture(const std::string& cmd, int& rc) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  rc = ::pclose(p);
  return out;
}

// A PNG: its 8-byte signature and more than a few KB (an empty figure saves to ~8 KB).
bool is_png(const std::string& path, std::uintmax_t min_bytes = 12000) {
  std::ifstream in(path, std::ios::binary);
  char sig[8] = {};
  if (!in.read(sig, 8)) return false;
  return std::string(sig, 8) == std::string("\x89PNG\r\n\x1a\n", 8) && fs::file_size(path) > min_bytes;
}

// One /usr/bin/python3 process running `code` with scripts/ on its path (each script's
// main and grouping functions in one process: matplotlib is imported once).
std::string python(const std::string& code, int& rc) {
  return capture("/usr/bin/python3 -c \"import sys; sys.path.insert(0, '" + kScripts + "'); " + code + "\" 2>&1", rc);
}

// The run's report and trace in `s`.
void write_run(const Scratch& s, const testing::Run& r) {
  s.write("report.json", r.report.dump(2));
  s.write("trace.json", chrome_trace(r.sc, r.out));
}

TEST(PlotScripts, ReportAggregatesPerStagePastAFewDevicesAndNotesAnalyticalMode) {
  if (!has_matplotlib()) GTEST_SKIP() << "/usr/bin/python3 has no matplotlib";
  // 8 simulated devices over 2 stages: power past 4 devices is per stage (2 series); the
  // timeline stays per device (2 threads each at least) up to 16, per stage past a limit.
  // Then an analytical run: its timeline figure says why it is empty. One Python process
  // for both (matplotlib is imported once).
  const auto r = testing::run_doc(testing::small_doc(2, 2, 2, testing::nvlink3()));
  nlohmann::json doc = testing::small_doc(1, 2, 2, testing::nvlink3());
  doc["simulation"]["mode"] = "analytical";
  const auto analytical = testing::run_doc(doc);
  Scratch s;
  write_run(s, *r);
  s.write("analytical.json", analytical->report.dump(2));
  s.write("empty_trace.json", R"({"traceEvents": []})");
  int rc = -1;
  const std::string out = python(
      "import json, plot_report as p; "
      "p.main(['plot_report.py', '" + (s / "report.json") + "', '" + (s / "trace.json") + "', '" + (s / "plots") + "']); "
      "import os; os.makedirs('" + (s / "analytical") + "'); "
      "print('timeline rows: %d' % p.plot_timeline(json.load(open('" + (s / "empty_trace.json") + "')), "
      "json.load(open('" + (s / "analytical.json") + "')), '" + (s / "analytical") + "')[0]); "
      "t = json.load(open('" + (s / "trace.json") + "')); r = json.load(open('" + (s / "report.json") + "')); "
      "per, rows = p.timeline_rows(t, r, max_devices=4); "
      "print(per, len(rows), [l for l, _ in rows]); print(len(p.power_groups(t, r, max_devices=8)))",
      rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("power series: 2 (per stage)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("timeline rows: "), std::string::npos) << out;
  EXPECT_NE(out.find(" (per device)\n"), std::string::npos) << out;  // the timeline: 8 <= 16 devices
  for (const char* png : {"timeline.png", "memory.png", "power.png"})
    EXPECT_TRUE(is_png(s / ("plots/" + std::string(png)))) << png;
  // The grouping functions with lower limits: a compute and a comm row per stage; a power
  // series per device up to the limit.
  EXPECT_NE(out.find("True 4 ['stage 0 (4 devices) · compute', 'stage 0 (4 devices) · comm', "
                     "'stage 1 (4 devices) · compute', 'stage 1 (4 devices) · comm']\n8\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("timeline note: analytical mode: no timeline; run with fidelity event\ntimeline rows: 0"),
            std::string::npos)
      << out;
  EXPECT_TRUE(is_png(s / "analytical/timeline.png", 9000));
}

TEST(PlotScripts, ParetoSweepAndComparePlots) {
  if (!has_matplotlib()) GTEST_SKIP() << "/usr/bin/python3 has no matplotlib";
  Scratch s;
  // Pareto: 4 confirmed layouts (3 on the front), 3 only screened.
  s.write("points.csv",
          "devices,step_time_s,energy_per_token_j,on_front,confirmed,label\n"
          "8,1.0,0.5,1,1,tp8 pp1\n16,0.6,0.7,1,1,tp8 pp2\n32,0.5,0.9,1,1,tp8 pp4\n16,0.9,0.8,0,1,tp4 pp4\n"
          "8,1.4,0.6,0,0,tp2 pp4\n32,0.7,1.1,0,0,tp2 pp16\n64,0.45,1.5,0,0,tp8 pp8\n");
  // Sweep: tp x pp, one point infeasible.
  std::string jsonl;
  int i = 0;
  for (int pp : {1, 2, 4})
    for (int tp : {1, 2, 4, 8}) {
      const bool ok = !(pp == 4 && tp == 8);
      nlohmann::ordered_json rec{{"index", i++}, {"status", ok ? "ok" : "infeasible"},
                                 {"params", {{"/strategy/tp", tp}, {"/strategy/pp", pp}}}};
      if (ok) rec["metrics"] = {{"step_time_s", 1.0 / tp + 0.1 * pp}, {"mfu", 0.3}};
      jsonl += rec.dump() + "\n";
    }
  s.write("results.jsonl", jsonl);
  // Compare: two small runs' reports.
  s.write("a.json", testing::run_doc(testing::small_doc(1, 2, 2, testing::nvlink3()))->report.dump(2));
  s.write("b.json", testing::run_doc(testing::small_doc(2, 1, 2, testing::nvlink3()))->report.dump(2));
  int rc = -1;
  const std::string out = python(
      "import plot_pareto, plot_sweep, plot_compare; "
      "print(plot_pareto.main(['plot_pareto.py', '" + (s / "points.csv") + "', '" + (s / "pareto.png") + "'])); "
      "c, sc, f = plot_pareto.read_points('" + (s / "points.csv") + "'); "
      "print(len(c), len(sc), [r['label'] for r in f]); "
      "plot_sweep.main(['plot_sweep.py', '" + (s / "results.jsonl") + "', '" + (s / "sweep.png") + "', 'step_time_s', 'tp']); "
      "m, x, lines, left = plot_sweep.sweep_lines(plot_sweep.read_records('" + (s / "results.jsonl") +
      "'), 'mfu', '/strategy/pp'); print(m, x, [l for l, _ in lines], left); "
      "print(plot_compare.main(['plot_compare.py', '" + (s / "a.json") + "', '" + (s / "b.json") + "', '" +
      (s / "compare.png") + "']))",
      rc);
  ASSERT_EQ(rc, 0) << out;
  // The front by step time; against tp a line per pp (1, 2, 4); against pp a line per tp,
  // the infeasible point left out.
  EXPECT_EQ(out,
            "0\n4 3 ['tp8 pp4', 'tp8 pp2', 'tp8 pp1']\n"
            "lines: 3\nmfu /strategy/pp ['tp=1', 'tp=2', 'tp=4', 'tp=8'] 1\n"
            "0\n");
  EXPECT_TRUE(is_png(s / "pareto.png"));
  EXPECT_TRUE(is_png(s / "sweep.png"));
  EXPECT_TRUE(is_png(s / "compare.png", 20000));
}

}  // namespace
}  // namespace hcsim
