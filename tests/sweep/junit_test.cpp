// JUnit XML of `hcsim check` (sim/sweep/junit.cpp), parsed back and checked element by
// element against the JUnit schema's structure (testsuites > testsuite > testcase,
// failure/error children, count attributes that agree with the children).
#include <gtest/gtest.h>

#include "sim/sweep/check_runner.hpp"
#include "support/mini_xml.hpp"

namespace hcsim::sweep {
namespace {

CheckResult sample() {
  CheckResult r;
  r.file = "tests/expectations/guards.json";
  r.outcomes = {{"interleaved < 1f1b", "/expectations/0", "pass", "ok"},
                {"step time <= 0.5 & \"fast\"", "/expectations/1", "fail", "expected a < b; got b < a\nby 3 %"},
                {"bad", "/expectations/2", "error", "scenario x could not be simulated: \x01 control"}};
  r.passed = 1;
  r.failed = 1;
  r.errors = 1;
  r.seconds = 1.25;
  return r;
}

TEST(JUnit, ParsesBackWithConsistentCounts) {
  const auto root = test::MiniXml::parse(junit_xml(sample()));
  EXPECT_EQ(root->name, "testsuites");
  EXPECT_EQ(root->attr("tests"), "3");
  EXPECT_EQ(root->attr("failures"), "1");
  EXPECT_EQ(root->attr("errors"), "1");
  const auto suites = root->all("testsuite");
  ASSERT_EQ(suites.size(), 1u);
  const auto& suite = *suites[0];
  EXPECT_EQ(suite.attr("name"), "tests/expectations/guards.json");
  EXPECT_EQ(suite.attr("skipped"), "0");
  EXPECT_EQ(suite.attr("time"), "1.250");
  const auto cases = suite.all("testcase");
  ASSERT_EQ(cases.size(), 3u);
  std::size_t failures = 0, errors = 0;
  for (const auto* c : cases) {
    EXPECT_EQ(c->attr("classname"), "hcsim.check.guards");
    EXPECT_FALSE(c->attr("time").empty());
    failures += c->all("failure").size();
    errors += c->all("error").size();
  }
  EXPECT_EQ(std::to_string(failures), suite.attr("failures"));
  EXPECT_EQ(std::to_string(errors), suite.attr("errors"));
  EXPECT_EQ(std::to_string(cases.size()), suite.attr("tests"));
}

TEST(JUnit, FailureAndErrorCarryTheMessageEscaped) {
  const auto root = test::MiniXml::parse(junit_xml(sample()));
  const auto cases = root->all("testsuite")[0]->all("testcase");
  EXPECT_TRUE(cases[0]->children.empty());
  EXPECT_EQ(cases[1]->attr("name"), "step time <= 0.5 & \"fast\"");
  const auto* f = cases[1]->all("failure").at(0);
  EXPECT_EQ(f->attr("message"), "expected a < b; got b < a\nby 3 %");
  EXPECT_EQ(f->attr("type"), "expectation");
  EXPECT_EQ(f->text, "/expectations/1: expected a < b; got b < a\nby 3 %");
  const auto* e = cases[2]->all("error").at(0);
  EXPECT_EQ(e->attr("message"), "scenario x could not be simulated:  control");  // control character dropped
}

TEST(JUnit, TheReaderRejectsMalformedXml) {
  EXPECT_THROW(test::MiniXml::parse("<a><b></a>"), std::runtime_error);
  EXPECT_THROW(test::MiniXml::parse("<a x=\"1\" x=\"2\"/>"), std::runtime_error);
  EXPECT_THROW(test::MiniXml::parse("<a>1 & 2</a>"), std::runtime_error);
  EXPECT_EQ(xml_escape("<&>\"'"), "&lt;&amp;&gt;&quot;&apos;");
}

}  // namespace
}  // namespace hcsim::sweep
