// Enumerating a sweep's points: the cartesian product of the axes, derived values, constraints.
#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sweep_spec.hpp"

namespace hcsim::sweep {
namespace {

constexpr double kMaxGridPoints = 10'000'000;

std::string describe(const nlohmann::ordered_json& params) {
  std::string out;
  for (const auto& [k, v] : params.items()) out += (out.empty() ? "" : ", ") + k + " = " + v.dump();
  return out;
}

// Applies the derived values of one point to `doc` and `params`; false when a constraint fails.
bool complete_point(const SweepSpec& spec, nlohmann::json& doc, nlohmann::ordered_json& params) {
  for (const auto& dv : spec.derived) {
    try {
      nlohmann::json v = dv.expr.evaluate_json(doc);
      doc[nlohmann::json::json_pointer(dv.pointer)] = v;
      params[dv.pointer] = v;
    } catch (const ExprError& e) {
      throw InputError(dv.path, fmt::format("{} (at the point {})", e.what(), describe(params)), spec.file);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(dv.path, fmt::format("cannot set {}: {}", dv.pointer, e.what()), spec.file);
    }
  }
  for (const auto& c : spec.constraints) {
    try {
      if (!c.expr.holds(doc)) return false;
    } catch (const ExprError& e) {
      throw InputError(c.path, fmt::format("{} (at the point {})", e.what(), describe(params)), spec.file);
    }
  }
  return true;
}

}  // namespace

std::vector<SweepPoint> enumerate_points(const SweepSpec& spec) {
  double grid = 1;
  for (const auto& a : spec.axes) grid *= static_cast<double>(a.choices.size());
  if (grid > kMaxGridPoints)
    throw InputError("/axes", fmt::format("the axes span {:.3g} points, more than {:.0f}; split the sweep", grid,
                                          kMaxGridPoints), spec.file);
  std::vector<SweepPoint> points;
  std::vector<std::size_t> digit(spec.axes.size(), 0);
  for (bool more = !spec.axes.empty(); more;) {
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      for (const auto& [k, v] : spec.axes[a].choices[digit[a]].items()) params[k] = v;
    nlohmann::json doc = spec.base.doc;
    try {
      apply_assignments(doc, params);
    } catch (const nlohmann::json::exception& e) {
      throw InputError("/axes", fmt::format("cannot apply {} to the base scenario: {}", describe(params), e.what()),
                       spec.file);
    }
    if (complete_point(spec, doc, params)) points.push_back({points.size(), std::move(params)});
    // Next combination: the last axis varies fastest.
    more = false;
    for (std::size_t a = spec.axes.size(); a-- > 0;) {
      if (++digit[a] < spec.axes[a].choices.size()) {
        more = true;
        break;
      }
      digit[a] = 0;
    }
  }
  return points;
}

nlohmann::json point_document(const SweepSpec& spec, const SweepPoint& point) {
  nlohmann::json doc = spec.base.doc;
  apply_assignments(doc, point.params);
  return doc;
}

}  // namespace hcsim::sweep
