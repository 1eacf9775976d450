// scripts/plot_report.py on the quickstart's report and trace: three PNGs, each a real
// image (PNG signature, IHDR dimensions, more than a few KB of pixels). Skipped where
// /usr/bin/python3 has no matplotlib (Debian: python3-matplotlib).
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

struct Png {
  bool ok = false;
  std::uint32_t width = 0, height = 0;
  std::uintmax_t bytes = 0;
};

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// PNG: 8-byte signature, then the IHDR chunk (length, "IHDR", width, height).
Png read_png(const fs::path& p) {
  Png png;
  std::ifstream in(p, std::ios::binary);
  unsigned char h[24] = {};
  if (!in.read(reinterpret_cast<char*>(h), sizeof h)) return png;
  const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  png.ok = std::equal(sig, sig + 8, h) && std::string(reinterpret_cast<char*>(h + 12), 4) == "IHDR";
  png.width = be32(h + 16);
  png.height = be32(h + 20);
  png.bytes = fs::file_size(p);
  return png;
}

void write(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
}

TEST(PlotReport, WritesTimelineMemoryAndPowerPngs) {
  if (std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 has no matplotlib";
  const auto q = testing::quickstart();
  char tmpl[] = "/tmp/hcsim-plot-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path dir(tmpl);
  write(dir / "report.json", q->report.dump(2));
  write(dir / "trace.json", chrome_trace(q->sc, q->out));
  const std::string cmd = "/usr/bin/python3 " + std::string(HCSIM_SOURCE_DIR) + "/scripts/plot_report.py " +
                          (dir / "report.json").string() + " " + (dir / "trace.json").string() + " " +
                          (dir / "plots").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  // Figure sizes of the script at 100 dpi: timeline 14 in wide, memory 6 x 5, power 12 x 7.
  // Empty axes of those sizes save to 8-11 KB (matplotlib 3.6, Agg): the plots hold more.
  const struct {
    const char* name;
    std::uint32_t min_w, min_h;
    std::uintmax_t min_bytes;
  } expected[] = {{"timeline.png", 1400, 300, 15000}, {"memory.png", 600, 500, 15000}, {"power.png", 1200, 700, 25000}};
  for (const auto& e : expected) {
    const Png png = read_png(dir / "plots" / e.name);
    EXPECT_TRUE(png.ok) << e.name;
    EXPECT_GE(png.width, e.min_w) << e.name;
    EXPECT_GE(png.height, e.min_h) << e.name;
    EXPECT_GT(png.bytes, e.min_bytes) << e.name;
  }
  fs::remove_all(dir);
}

TEST(PlotReport, RefusesAFileThatIsNotAReport) {
  // The inputs are checked before matplotlib is imported: no skip needed.
  char tmpl[] = "/tmp/hcsim-plot-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path dir(tmpl);
  write(dir / "scenario.json", R"({"name": "not a report"})");
  write(dir / "trace.json", R"({"traceEvents": []})");
  const std::string cmd = "/usr/bin/python3 " + std::string(HCSIM_SOURCE_DIR) + "/scripts/plot_report.py " +
                          (dir / "scenario.json").string() + " " + (dir / "trace.json").string() + " " +
                          (dir / "plots").string() + " 2>/dev/null";
  const int rc = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << rc;
  EXPECT_FALSE(fs::exists(dir / "plots" / "timeline.png"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hcsim
