// `hcsim list` prints every registry (style principles 1 and 17): each test walks a
// registry itself, so an entry the listing leaves out, or a family it forgets, fails it.
// The expected text of an entry is the format of sim/cli/list.cpp: "  NAME — HELP", its
// source, then its parameters as describe_params writes them (sim/core/params.cpp).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hcsim_child.hpp"
#include "models/compression/codec.hpp"
#include "sim/cli/list.hpp"
#include "sim/collectives/algorithms.hpp"

namespace hcsim::test {
namespace {

template <class Entry>
std::string entry_text(const std::string& name, const Entry& e) {
  std::string out = "  " + name + " — " + e.help + "\n";
  if (!e.source.empty()) out += "    source: " + e.source + "\n";
  return out;
}

std::string params_text(const ParamTable& t) { return t.empty() ? "    no parameters\n" : describe_params(t, "    "); }

TEST(CliList, CodecsNamesEveryRegisteredCodecWithItsParameters) {
  register_builtin_codecs();
  const std::string out = list_registries("codecs");
  ASSERT_FALSE(codecs().entries().empty());
  EXPECT_TRUE(out.starts_with("compression codecs\n")) << out;
  for (const auto& [name, e] : codecs())
    EXPECT_NE(out.find(entry_text(name, e) + params_text(e.params)), std::string::npos) << name << "\n" << out;
}

TEST(CliList, AlgorithmsNamesEveryRegisteredAlgorithmAndHowAutoUsesIt) {
  const std::string out = list_registries("algorithms");
  ASSERT_FALSE(collective_algorithms().entries().empty());
  EXPECT_TRUE(out.starts_with("collective algorithms")) << out;
  for (const auto& [name, a] : collective_algorithms()) {
    const std::size_t at = out.find(entry_text(name, a));
    ASSERT_NE(at, std::string::npos) << name << "\n" << out;
    // The line after the source says whether "auto" tries it (auto_priority in algorithms.cpp).
    const std::size_t facts = at + entry_text(name, a).size();
    const std::string line = out.substr(facts, out.find('\n', facts) - facts + 1);
    if (a.auto_priority)
      EXPECT_NE(line.find("\"auto\" tries it (priority " + std::to_string(*a.auto_priority) + ")"), std::string::npos)
          << name << ": " << line;
    else
      EXPECT_NE(line.find("used only when named"), std::string::npos) << name << ": " << line;
    EXPECT_EQ(out.substr(facts + line.size(), params_text(a.params).size()), params_text(a.params)) << name;
  }
}

TEST(CliList, AllPrintsEveryFamily) {
  const ChildResult r = run_hcsim({"list"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
  for (const auto& family : list_families()) {
    if (family != "all") {
      EXPECT_NE(r.out.find(list_registries(family)), std::string::npos) << family;
    }
  }
}

TEST(CliList, OneFamilyPrintsOnlyItself) {
  for (const char* family : {"codecs", "algorithms"}) {
    const ChildResult r = run_hcsim({"list", family});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, list_registries(family)) << family;
  }
}

TEST(CliList, UnknownFamilyNamesTheValidOnes) {
  // The families of sim/cli/list.cpp, one per registry, and "all".
  const std::vector<std::string> want{"all",    "scenario",  "devices", "links",      "topologies",
                                      "models", "schedules", "codecs",  "algorithms", "cluster"};
  EXPECT_EQ(list_families(), want);
  const ChildResult r = run_hcsim({"list", "foo"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(lines_of(r.err).size(), 1u) << describe(r);
  EXPECT_NE(r.err.find("unknown list \"foo\"; valid ones are: all, scenario, devices, links, topologies, models, "
                       "schedules, codecs, algorithms, cluster"),
            std::string::npos)
      << describe(r);
}

}  // namespace
}  // namespace hcsim::test
