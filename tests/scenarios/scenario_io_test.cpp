// Regression tests for reading scenario files and applying --set overrides
// (scenarios/scenario_io.cpp) on bad input: every problem is an InputError with its
// pointer -- not a silently kept duplicate, not an allocation of gigabytes, not an
// exception of the JSON library escaping as exit code 1.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"

namespace hcsim {
namespace {

using json = nlohmann::json;

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/hcsim-io-test-XXXXXX";
    const int fd = ::mkstemp(name);
    EXPECT_GE(fd, 0);
    ::close(fd);
    path_ = name;
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The one issue of the InputError `f` throws.
template <class F>
Issue only_issue_io(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    EXPECT_EQ(e.issues().size(), 1u) << e.what();
    if (!e.issues().empty()) return e.issues()[0];
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

TEST(ReadJsonFile, DuplicateKeyIsRefusedAtItsPointer) {
  // The JSON parser keeps the last of two equal keys; a scenario must not run with a value
  // its author may not have meant.
  TempFile f(R"({"strategy": {"tp": 4, "pp": 2, "tp": 8}, "cluster": {"pools": [{"a": 1, "a": 2}]}})");
  try {
    (void)read_json_file(f.path());
    ADD_FAILURE() << "duplicate keys accepted";
  } catch (const InputError& e) {
    ASSERT_EQ(e.issues().size(), 2u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "/strategy/tp");
    EXPECT_EQ(e.issues()[1].path, "/cluster/pools/0/a");
  }
}

TEST(ReadJsonFile, EqualKeysInDifferentObjectsAreFine) {
  TempFile f(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})");
  EXPECT_NO_THROW((void)read_json_file(f.path()));
}

TEST(ReadJsonFile, NumberBeyondDoubleIsInvalidJson) {
  TempFile f(R"({"pue": 1e400})");
  const Issue i = only_issue_io([&] { (void)read_json_file(f.path()); });
  EXPECT_EQ(i.path, "");
  EXPECT_EQ(i.message, "invalid JSON: number overflow parsing '1e400'");
}

TEST(ReadJsonFile, SyntaxErrorGivesLineAndColumnOnce) {
  TempFile f("{\n  \"a\": 1,\n}\n");  // the '}' on line 3 cannot follow a comma
  const Issue i = only_issue_io([&] { (void)read_json_file(f.path()); });
  EXPECT_TRUE(i.message.starts_with("invalid JSON at line 3, column 1: syntax error")) << i.message;
  EXPECT_EQ(i.message.find("parse error at line"), std::string::npos) << i.message;
}

// Comments, as JSON-with-comments editors write them, are skipped; brackets and quotes
// inside them count for nothing, and a syntax error after them is still placed exactly.
TEST(ReadJsonFile, CommentsAreAllowed) {
  TempFile f("// a scenario\n{\n  /* the \"strategy\" { [ */ \"strategy\": {\"tp\": 4}, // tp \"}\n  \"a\": [1, /* ] */ 2]\n}\n");
  const json doc = read_json_file(f.path());
  EXPECT_EQ(doc, json::parse(R"({"strategy": {"tp": 4}, "a": [1, 2]})"));
}

TEST(ReadJsonFile, SyntaxErrorAfterCommentsGivesItsLineAndColumn) {
  TempFile f("{\n  // one\n  /* two\n     three */\n  \"a\": 1,\n}\n");  // the '}' on line 6
  const Issue i = only_issue_io([&] { (void)read_json_file(f.path()); });
  EXPECT_TRUE(i.message.starts_with("invalid JSON at line 6, column 1: syntax error")) << i.message;
}

TEST(ReadJsonFile, UnclosedCommentIsInvalidJson) {
  TempFile f("{\n  /* never closed\n  \"a\": 1\n}\n");
  const Issue i = only_issue_io([&] { (void)read_json_file(f.path()); });
  EXPECT_TRUE(i.message.starts_with("invalid JSON at line ")) << i.message;
  EXPECT_NE(i.message.find("comment"), std::string::npos) << i.message;
}

TEST(ReadJsonFile, DuplicateKeyAfterACommentIsStillRefused) {
  TempFile f("{\"a\": 1, /* \"a\" again: */ \"a\": 2}");
  const Issue i = only_issue_io([&] { (void)read_json_file(f.path()); });
  EXPECT_EQ(i.path, "/a");
}

TEST(ReadJsonFile, DirectoryIsNamedAsSuch) {
  const Issue i = only_issue_io([] { (void)read_json_file("/tmp"); });
  EXPECT_EQ(i.message, "is a directory, not a scenario file");
}

TEST(ApplyOverride, IndexFarPastAnArrayIsRefused) {
  json doc = {{"cluster", {{"pools", json::array({json::object()})}}}};
  const Issue i = only_issue_io([&] { apply_override(doc, "/cluster/pools/999999999/count=1"); });
  EXPECT_EQ(i.path, "/cluster/pools/999999999/count");
  EXPECT_EQ(doc["cluster"]["pools"].size(), 1u);  // nothing grown
  // Appending one past the end, or with "-", is still an ordinary override.
  EXPECT_NO_THROW(apply_override(doc, "/cluster/pools/1={\"count\": 2}"));
  EXPECT_NO_THROW(apply_override(doc, "/cluster/pools/-={\"count\": 3}"));
  EXPECT_EQ(doc["cluster"]["pools"].size(), 3u);
}

TEST(ApplyOverride, NumberBeyondDoubleBecomesAString) {
  json doc = {{"strategy", json::object()}};
  apply_override(doc, "/strategy/tp=1e400");
  EXPECT_EQ(doc["strategy"]["tp"], "1e400");  // then refused by the field's own check
}

TEST(ApplyOverride, MalformedPointersAreInputErrors) {
  json doc = {{"cluster", {{"pools", json::array({json::object()})}}}, {"strategy", {{"tp", 4}}}};
  for (const char* bad : {"/cluster/pools/abc=1", "/strategy/tp/x=1", "/a~2b=1", "strategy/tp=1"})
    EXPECT_THROW(apply_override(doc, bad), InputError) << bad;
}

}  // namespace
}  // namespace hcsim
