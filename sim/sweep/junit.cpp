// JUnit XML for `hcsim check --junit FILE`: the element and attribute set that Jenkins,
// GitLab and GitHub test reporters read (testsuites > testsuite > testcase, with failure
// and error children carrying a message attribute and the details as text).
#include <fmt/format.h>

#include "check_runner.hpp"

namespace hcsim::sweep {

std::string xml_escape(const std::string& s, bool attribute) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      case '\r': out += attribute ? "&#13;" : "\r"; break;
      default:
        // XML 1.0 forbids other control characters, even as references.
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
  }
  return out;
}

std::string junit_xml(const CheckResult& r) {
  const std::size_t tests = r.outcomes.size();
  std::string stem = r.file.substr(r.file.find_last_of('/') == std::string::npos ? 0 : r.file.find_last_of('/') + 1);
  if (stem.size() > 5 && stem.ends_with(".json")) stem.resize(stem.size() - 5);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"hcsim check\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                     tests, r.failed, r.errors, r.seconds);
  out += fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{:.3f}\">\n",
      xml_escape(r.file, true), tests, r.failed, r.errors, r.seconds);
  for (const auto& o : r.outcomes) {
    out += fmt::format("    <testcase name=\"{}\" classname=\"hcsim.check.{}\" time=\"0\"", xml_escape(o.name, true),
                       xml_escape(stem, true));
    if (o.status == "pass") {
      out += "/>\n";
      continue;
    }
    const char* tag = o.status == "fail" ? "failure" : "error";
    out += fmt::format(">\n      <{} message=\"{}\" type=\"{}\">{}: {}</{}>\n    </testcase>\n", tag,
                       xml_escape(o.message, true), o.status == "fail" ? "expectation" : "input", xml_escape(o.path),
                       xml_escape(o.message), tag);
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace hcsim::sweep
