// YAML files (scenarios/yaml_io.cpp): the same JSON value as the JSON file, so every check
// and pointer is the same; quoted scalars stay strings, plain ones that read as numbers,
// booleans or null become those; a syntax error is one line with its line and column.
#include "scenarios/yaml_io.hpp"

#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"

namespace hcsim {
namespace {

using json = nlohmann::json;

Issue only_issue_yaml(const std::string& text) {
  try {
    (void)parse_yaml(text, "s.yaml");
  } catch (const InputError& e) {
    EXPECT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.file(), "s.yaml");
    if (!e.issues().empty()) return e.issues()[0];
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

TEST(Yaml, ScalarsTakeTheirJsonTypes) {
  const json doc = parse_yaml(
      "a: 1\nb: -2.5e3\nc: \"3\"\nd: '600 GB/s'\ne: 600 GB/s\nf: true\ng: \"true\"\nh: ~\ni: null\nj:\n"
      "k: [1, x, 0.5]\nl: {m: n}\no: 1f1b\np: 18446744073709551615\nq: +1\nr: 0x10\n",
      "s.yaml");
  const json want = json::parse(R"({"a": 1, "b": -2.5e3, "c": "3", "d": "600 GB/s", "e": "600 GB/s", "f": true,
      "g": "true", "h": null, "i": null, "j": null, "k": [1, "x", 0.5], "l": {"m": "n"}, "o": "1f1b",
      "p": 18446744073709551615, "q": "+1", "r": "0x10"})");
  EXPECT_EQ(doc, want);
  EXPECT_TRUE(doc["a"].is_number_integer());
  EXPECT_TRUE(doc["b"].is_number_float());
}

TEST(Yaml, SyntaxErrorGivesLineAndColumn) {
  const Issue i = only_issue_yaml("cluster:\n  pools: [1, 2\nworkload: {}\n");
  EXPECT_EQ(i.path, "");
  EXPECT_TRUE(i.message.starts_with("invalid YAML at line 3, column ")) << i.message;
}

TEST(Yaml, DuplicateKeyIsRefusedAtItsPointer) {
  const Issue i = only_issue_yaml("strategy:\n  tp: 4\n  tp: 8\n");
  EXPECT_EQ(i.path, "/strategy/tp");
}

TEST(Yaml, NumberBeyondDoubleIsRefused) {
  const Issue i = only_issue_yaml("cluster:\n  pue: 1e400\n");
  EXPECT_EQ(i.path, "/cluster/pue");
}

TEST(Yaml, AliasesCannotExpandWithoutBound) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 12; ++i)
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + ", *a" +
            std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  const Issue i = only_issue_yaml(text);  // 8 * 4^11 = 33 million strings from 400 bytes
  EXPECT_NE(i.message.find("aliases"), std::string::npos) << i.message;
}

TEST(Yaml, OnlyYamlNamesAreReadAsYaml) {
  EXPECT_TRUE(is_yaml_file("a/s.yaml"));
  EXPECT_TRUE(is_yaml_file("s.yml"));
  EXPECT_FALSE(is_yaml_file("s.json"));
  EXPECT_FALSE(is_yaml_file("yaml"));
}

}  // namespace
}  // namespace hcsim
