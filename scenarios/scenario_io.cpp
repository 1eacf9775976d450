// Reading scenario files and applying command-line overrides.
#include <array>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "scenario.hpp"
#include "yaml_io.hpp"

namespace hcsim {
namespace {

// Keys given twice in one object: the JSON parser keeps the last one silently, so a
// scenario saying "tp": 4 and later "tp": 8 would run with 8 unnoticed. Fed the parser's
// events, this reports every repeat at its JSON pointer.
class DuplicateKeys {
 public:
  bool on_event(nlohmann::json::parse_event_t ev, const nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (ev) {
      case E::object_start: frames_.push_back({true, {}, {}, 0}); break;
      case E::array_start: frames_.push_back({false, {}, {}, 0}); break;
      case E::key:
        frames_.back().key = parsed.get<std::string>();
        if (!frames_.back().keys.insert(frames_.back().key).second)
          diag_.error(pointer(), "key given twice; the later value would silently replace the earlier one");
        break;
      case E::object_end:
      case E::array_end: frames_.pop_back(); element_done(); break;
      case E::value: element_done(); break;
    }
    return true;
  }
  [[nodiscard]] const Diagnostics& diag() const { return diag_; }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;
    std::size_t index;
  };
  void element_done() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  [[nodiscard]] std::string pointer() const {
    std::string p;
    for (const auto& f : frames_) p = f.object ? json_child(p, f.key) : json_child(p, f.index);
    return p;
  }
  std::vector<Frame> frames_;
  Diagnostics diag_;
};

}  // namespace

nlohmann::json read_json_file(const std::string& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw InputError("", "is a directory, not a scenario file", file);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError("", "cannot open the file", file);
  // Read in chunks and stop past the limit: a device such as /dev/zero never ends.
  constexpr std::size_t kMaxBytes = 64u * 1024u * 1024u;
  std::string text;
  std::array<char, 1 << 16> chunk{};
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxBytes) throw InputError("", "file larger than 64 MiB", file);
  }
  if (is_yaml_file(file)) return parse_yaml(text, file);
  try {
    // Depth is bounded by the parser's own recursion on pathological nesting; reject it
    // early with a clear message instead.
    int depth = 0, max_depth = 0;
    bool in_string = false, escape = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char ch = text[i];
      if (in_string) {
        if (escape) escape = false;
        else if (ch == '\\') escape = true;
        else if (ch == '"') in_string = false;
        continue;
      }
      if (ch == '/' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '*')) {
        // A comment: its brackets and quotes are not the document's (the parser checks it is closed).
        const auto end = text[i + 1] == '/' ? text.find('\n', i) : text.find("*/", i + 2);
        if (end == std::string::npos) break;
        i = text[i + 1] == '/' ? end : end + 1;
        continue;
      }
      if (ch == '"') in_string = true;
      else if (ch == '{' || ch == '[') max_depth = std::max(max_depth, ++depth);
      else if (ch == '}' || ch == ']') --depth;
    }
    if (max_depth > 64) throw InputError("", fmt::format("JSON nested {} levels deep; at most 64 allowed", max_depth), file);
    DuplicateKeys dups;
    // Comments (// and /* */) are allowed, as editors of JSON-with-comments files write them.
    nlohmann::json doc = nlohmann::json::parse(
        text, [&dups](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) { return dups.on_event(ev, parsed); },
        /*allow_exceptions=*/true, /*ignore_comments=*/true);
    if (!dups.diag().ok()) throw InputError(dups.diag().issues(), file);
    return doc;
  } catch (const nlohmann::json::parse_error& e) {
    // Turn the byte offset into line:column for the user.
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < e.byte - (e.byte > 0 ? 1 : 0) && i < text.size(); ++i) {
      if (text[i] == '\n') { ++line; col = 1; } else { ++col; }
    }
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 3, column 1: syntax error ...":
    // keep what follows the parser's own position, given above.
    auto pos = what.find("parse error");
    if (pos != std::string::npos) what = what.substr(pos);
    if (auto colon = what.find(": "); what.starts_with("parse error at ") && colon != std::string::npos)
      what = what.substr(colon + 2);
    throw InputError("", fmt::format("invalid JSON at line {}, column {}: {}", line, col, what), file);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond double range ("1e400"): the parser gives no position.
    std::string what = e.what();
    auto pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError("", "invalid JSON: " + what, file);
  }
}

void apply_override(nlohmann::json& doc, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0 || assignment[0] != '/')
    throw InputError("", "--set expects /json/pointer=value, got \"" + assignment + "\"");
  const std::string ptr = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    value = text;  // a bare word: a string such as 1f1b or "600 GB/s" (or a number beyond range)
  }
  try {
    nlohmann::json::json_pointer jp(ptr);
    // Missing parent objects are created (e.g. /simulation/mode without a "simulation"
    // section); a misspelt key then fails validation as an unknown key.
    // An index past an array's end would grow the array up to it: a typo such as
    // /cluster/pools/100000000 would allocate gigabytes of nulls.
    for (auto p = jp; !p.empty(); p = p.parent_pointer()) {
      const auto parent = p.parent_pointer();
      if (!doc.contains(parent) || !doc.at(parent).is_array()) continue;
      const std::string tok = p.back();
      if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos) continue;  // nlohmann checks it
      const std::size_t size = doc.at(parent).size();
      if (tok.size() > 9 || std::stoul(tok) > size)
        throw InputError(ptr, fmt::format("--set: index {} is past the end of an array of {}", tok, size));
    }
    doc[jp] = value;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(ptr, std::string("--set: ") + e.what());
  }
}

Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides) {
  nlohmann::json doc = read_json_file(file);
  try {
    for (const auto& o : overrides) apply_override(doc, o);
    return parse_scenario(doc, file);
  } catch (const InputError& e) {
    throw e.with_file(file);
  }
}

}  // namespace hcsim
