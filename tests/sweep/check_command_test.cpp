// `hcsim check` end to end (sim/cli/check_command.cpp): an expectation broken on purpose
// fails with exit code 1 and says expected, got and by how much; the JUnit file parses and
// its counts agree; bad input is exit code 2. The broken claim is the opposite of the
// shipped guard "selective recompute beats full recompute" (tests/expectations/).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/mini_xml.hpp"
#include "support/run_binary.hpp"
#include "../support/paths.hpp"

namespace hcsim::test {
namespace {

using ::testing::HasSubstr;

TEST(CheckCommand, ABrokenExpectationFailsWithAReadableDiffAndJUnit) {
  ScratchDir dir("hcsim-check-broken");
  spit(dir / "expect.json", R"J({
    "scenarios": {
      "selective": {"base": ")J" + kTiny + R"J(", "set": {"/strategy/recompute": "selective"}},
      "full": {"base": ")J" + kTiny + R"J(", "set": {"/strategy/recompute": "full"}}
    },
    "expectations": [
      {"name": "full recompute beats selective (broken on purpose)", "faster": "full", "than": "selective",
       "by_at_least": "5 %"},
      {"name": "selective recompute beats full", "faster": "selective", "than": "full"}
    ]
  })J");
  const RunResult r = hcsim({"check", dir / "expect.json", "--junit", dir / "junit.xml", "-j", "2"}, dir);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL  full recompute beats selective (broken on purpose)\n      expected full to beat "
                               "selective in /step_time_s (lower is better) by at least 5.00 %; got full = "));
  EXPECT_THAT(r.out, HasSubstr(": worse by "));
  EXPECT_THAT(r.out, HasSubstr("PASS  selective recompute beats full"));
  EXPECT_THAT(r.out, HasSubstr("check: 2 expectations, 1 passed, 1 failed, 0 errors"));

  const auto root = MiniXml::parse(slurp(dir / "junit.xml"));
  ASSERT_EQ(root->name, "testsuites");
  EXPECT_EQ(root->attr("tests"), "2");
  EXPECT_EQ(root->attr("failures"), "1");
  EXPECT_EQ(root->attr("errors"), "0");
  const auto suite = root->all("testsuite");
  ASSERT_EQ(suite.size(), 1u);
  const auto cases = suite[0]->all("testcase");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0]->attr("name"), "full recompute beats selective (broken on purpose)");
  ASSERT_EQ(cases[0]->all("failure").size(), 1u);
  EXPECT_THAT(cases[0]->all("failure")[0]->attr("message"), HasSubstr("expected full to beat selective"));
  EXPECT_TRUE(cases[1]->children.empty());
}

TEST(CheckCommand, BadInputIsExitCodeTwo) {
  ScratchDir dir("hcsim-check-bad");
  spit(dir / "expect.json", R"({"expectations": [{"faster": "nowhere.json", "than": ")" + kTiny + R"("}]})");
  RunResult r = hcsim({"check", dir / "expect.json"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("expect.json:/expectations/0/faster: scenario " + dir.path() +
                               "/nowhere.json: cannot open the file"));
  // A scenario that cannot be simulated makes its expectations errors: bad input as well.
  spit(dir / "expect.json", R"({"expectations": [{"scenario": {"base": ")" + kTiny +
                                R"(", "set": {"/strategy/tp": 3}}, "metric": "/step_time_s", "at_most": 1}]})");
  r = hcsim({"check", dir / "expect.json", "--junit", dir / "j.xml"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.out, HasSubstr("ERROR expectation 1\n      scenario"));
  EXPECT_THAT(r.out, HasSubstr("could not be simulated: "));
  EXPECT_EQ(MiniXml::parse(slurp(dir / "j.xml"))->attr("errors"), "1");
}

}  // namespace
}  // namespace hcsim::test
