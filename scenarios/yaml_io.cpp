#include "yaml_io.hpp"

#include <regex>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

constexpr int kMaxDepth = 64;

// A plain (unquoted) scalar as JSON: YAML 1.2's core schema for null and booleans, JSON's
// grammar for numbers (so "1e400" fails as it does in a JSON file); anything else a string.
nlohmann::json plain_scalar(const std::string& s, const std::string& path) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  static const std::regex number(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
  if (!std::regex_match(s, number)) return s;
  try {
    return nlohmann::json::parse(s);
  } catch (const nlohmann::json::exception&) {
    throw InputError(path, "number " + s + " is beyond the range of a double");
  }
}

// `budget`: nodes left to convert; aliases can make a short file name exponentially many
// (a "billion laughs" document), so the value may hold only a few nodes per byte of text.
nlohmann::json to_json(const YAML::Node& n, const std::string& path, int depth, Diagnostics& diag,
                       std::size_t& budget) {
  if (budget-- == 0) throw InputError("", "YAML aliases expand to more than 8 nodes per byte of the file");
  if (depth > kMaxDepth)
    throw InputError("", fmt::format("YAML nested more than {} levels deep; at most {} allowed", kMaxDepth, kMaxDepth));
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null: return nullptr;
    case YAML::NodeType::Scalar:
      // yaml-cpp tags a plain scalar "?" and a quoted one "!".
      return n.Tag() == "!" ? nlohmann::json(n.Scalar()) : plain_scalar(n.Scalar(), path);
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (std::size_t i = 0; i < n.size(); ++i) a.push_back(to_json(n[i], json_child(path, i), depth + 1, diag, budget));
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) {
          diag.error(path, "a key that is not a string (a YAML sequence or mapping)");
          continue;
        }
        const std::string key = kv.first.Scalar();
        const std::string at = json_child(path, key);
        if (o.contains(key)) {
          diag.error(at, "key given twice; the later value would silently replace the earlier one");
          continue;
        }
        o[key] = to_json(kv.second, at, depth + 1, diag, budget);
      }
      return o;
    }
  }
  return nullptr;
}

}  // namespace

bool is_yaml_file(const std::string& file) { return file.ends_with(".yaml") || file.ends_with(".yml"); }

nlohmann::json parse_yaml(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() > 1) throw InputError("", "more than one YAML document in the file", file);
    if (!docs.empty()) root = docs.front();
  } catch (const YAML::Exception& e) {
    // yaml-cpp's marks count from 0; editors count from 1.
    throw InputError("", fmt::format("invalid YAML at line {}, column {}: {}", e.mark.line + 1, e.mark.column + 1,
                                     e.msg),
                     file);
  }
  Diagnostics diag;
  nlohmann::json doc;
  try {
    std::size_t budget = 8 * text.size() + 64;
    doc = to_json(root, "", 0, diag, budget);
  } catch (const InputError& e) {
    throw e.with_file(file);
  }
  if (!diag.ok()) throw InputError(diag.issues(), file);
  return doc;
}

}  // namespace hcsim
