// `hcsim run --html` and `--out DIR` (report.html) on the quickstart, opened by a headless
// Chromium: the page's sections are in the DOM it builds, its inline script ran to the end
// (data-ready="1") and recorded no error (data-errors), and the console logged no error.
// Skipped, with the reason, where /usr/bin/chromium is absent (Debian package chromium).
#include <unistd.h>

#include "hcsim_child.hpp"

namespace hcsim::test {
namespace {

const std::string kChromium = "/usr/bin/chromium";

TEST(HtmlReport, ChromiumRendersTheQuickstartReportWithoutErrors) {
  if (::access(kChromium.c_str(), X_OK) != 0) GTEST_SKIP() << kChromium << " is absent (Debian package chromium)";
  TempDir dir;
  const std::string html = dir.file("report.html");
  const ChildResult run = run_hcsim({"run", std::string(HCSIM_SOURCE_DIR) + "/scenarios/quickstart.json", "--html", html,
                                     "--out", dir.file("out")});
  ASSERT_EQ(run.exit_code, 0) << describe(run);
  const std::string page = read_file(html);
  ASSERT_FALSE(page.empty());
  EXPECT_EQ(read_file(dir.file("out/report.html")), page);  // --out writes the same page

  // A profile of its own (no shared state, nothing read from $HOME); the DOM after the load
  // event on stdout, the console on stderr.
  const std::string cmd = "timeout -k 5 60 " + kChromium +
                          " --headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions"
                          " --user-data-dir=" + shell_quote(dir.file("profile")) +
                          " --enable-logging=stderr --v=0 --dump-dom " + shell_quote("file://" + html) + " >" +
                          shell_quote(dir.file("dom")) + " 2>" + shell_quote(dir.file("console"));
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir.file("console"));
  const std::string dom = read_file(dir.file("dom"));
  const std::string console = read_file(dir.file("console"));
  for (const char* id : {"summary", "breakdown", "memory", "energy", "plots", "timeline", "breakdown-bars",
                         "memory-bars"})
    EXPECT_NE(dom.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(dom.find("data-ready=\"1\""), std::string::npos) << "the inline script did not finish";
  EXPECT_EQ(dom.find("data-errors="), std::string::npos) << dom.substr(0, 400);
  EXPECT_NE(dom.find("data-sections=\"5\""), std::string::npos);
  // Chromium logs page errors as "Uncaught ..." console messages (source file://...).
  EXPECT_EQ(console.find("Uncaught"), std::string::npos) << console;
  EXPECT_EQ(console.find("CONSOLE"), std::string::npos) << console;
}

TEST(HtmlReport, DiffWritesTheComparisonAsAPage) {
  // `hcsim diff A B --html FILE` prints its table and writes the page: the compared rows
  // and the paired bars, nothing external.
  TempDir dir;
  const std::string a = std::string(HCSIM_SOURCE_DIR) + "/tests/golden/quickstart.json";
  const std::string b = std::string(HCSIM_SOURCE_DIR) + "/tests/golden/gpt3-175b-a100-1024.json";
  const ChildResult r = run_hcsim({"diff", a, b, "--html", dir.file("diff.html")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("step time"), std::string::npos);
  const std::string page = read_file(dir.file("diff.html"));
  for (const char* id : {"summary", "plots", "diff-breakdown", "diff-memory"})
    EXPECT_NE(page.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(page.find("<td>step time</td>"), std::string::npos);
  EXPECT_EQ(page.find(" src="), std::string::npos);
}

}  // namespace
}  // namespace hcsim::test
