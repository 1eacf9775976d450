#pragma once
// A strict little XML reader for tests of hcsim's XML output (JUnit): elements, attributes,
// text, the five predefined entities and decimal character references, an optional <?xml ...?> declaration. It throws on any
// malformed input (unclosed or mismatched tags, a bare '&' or '<', duplicate attributes),
// which is what "validates structurally" means in those tests.

#include <cctype>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hcsim::test {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<std::unique_ptr<XmlElement>> children;
  std::string text;  // concatenated character data

  [[nodiscard]] std::vector<const XmlElement*> all(const std::string& child) const {
    std::vector<const XmlElement*> out;
    for (const auto& c : children)
      if (c->name == child) out.push_back(c.get());
    return out;
  }
  [[nodiscard]] const std::string& attr(const std::string& key) const {
    auto it = attributes.find(key);
    if (it == attributes.end()) throw std::runtime_error("<" + name + "> has no attribute " + key);
    return it->second;
  }
};

class MiniXml {
 public:
  static std::unique_ptr<XmlElement> parse(const std::string& text) {
    MiniXml p(text);
    p.skip_space();
    if (p.peek("<?xml")) {
      const auto end = text.find("?>", p.i_);
      if (end == std::string::npos) p.fail("unterminated declaration");
      p.i_ = end + 2;
    }
    p.skip_space();
    auto root = p.element();
    p.skip_space();
    if (p.i_ != text.size()) p.fail("content after the root element");
    return root;
  }

 private:
  explicit MiniXml(const std::string& t) : t_(t) {}
  const std::string& t_;
  std::size_t i_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("XML: " + what + " at byte " + std::to_string(i_));
  }
  bool peek(const char* s) const { return t_.compare(i_, std::char_traits<char>::length(s), s) == 0; }
  void skip_space() {
    while (i_ < t_.size() && std::string(" \t\r\n").find(t_[i_]) != std::string::npos) ++i_;
  }
  std::string name() {
    const std::size_t s = i_;
    while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_' || t_[i_] == '-' ||
                              t_[i_] == ':' || t_[i_] == '.'))
      ++i_;
    if (i_ == s) fail("expected a name");
    return t_.substr(s, i_ - s);
  }
  std::string decode(const std::string& raw) const {
    std::string out;
    for (std::size_t k = 0; k < raw.size(); ++k) {
      if (raw[k] == '<') throw std::runtime_error("XML: bare '<' in text");
      if (raw[k] != '&') {
        out += raw[k];
        continue;
      }
      const auto semi = raw.find(';', k);
      if (semi == std::string::npos) throw std::runtime_error("XML: bare '&'");
      const std::string ent = raw.substr(k + 1, semi - k - 1);
      if (ent.size() > 1 && ent[0] == '#') {  // numeric reference, decimal (the writer's &#10;)
        out += static_cast<char>(std::stoi(ent.substr(1)));
        k = semi;
        continue;
      }
      static const std::map<std::string, char> known{{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
      auto it = known.find(ent);
      if (it == known.end()) throw std::runtime_error("XML: unknown entity &" + ent + ";");
      out += it->second;
      k = semi;
    }
    return out;
  }
  std::unique_ptr<XmlElement> element() {
    if (!peek("<")) fail("expected '<'");
    ++i_;
    auto e = std::make_unique<XmlElement>();
    e->name = name();
    for (;;) {
      skip_space();
      if (peek("/>")) {
        i_ += 2;
        return e;
      }
      if (peek(">")) {
        ++i_;
        break;
      }
      const std::string key = name();
      skip_space();
      if (!peek("=")) fail("expected '='");
      ++i_;
      skip_space();
      if (!peek("\"")) fail("expected '\"'");
      const auto end = t_.find('"', i_ + 1);
      if (end == std::string::npos) fail("unterminated attribute");
      if (!e->attributes.emplace(key, decode(t_.substr(i_ + 1, end - i_ - 1))).second) fail("duplicate attribute " + key);
      i_ = end + 1;
    }
    for (;;) {
      const auto lt = t_.find('<', i_);
      if (lt == std::string::npos) fail("unclosed <" + e->name + ">");
      e->text += decode(t_.substr(i_, lt - i_));
      i_ = lt;
      if (peek("</")) {
        i_ += 2;
        if (name() != e->name) fail("mismatched closing tag for <" + e->name + ">");
        skip_space();
        if (!peek(">")) fail("expected '>'");
        ++i_;
        return e;
      }
      e->children.push_back(element());
    }
  }
};

}  // namespace hcsim::test
