// The Python module `hcsim` (pybind11, Debian's python3-pybind11), for notebooks:
//
//   import json, hcsim
//   report = hcsim.run(json.load(open("scenarios/quickstart.json")))
//   report["step_time_s"]
//
// run(scenario, sets=[], strict=False) -> dict: the report `hcsim run --format json` prints,
// as a dict. validate(...) -> None: the checks of `hcsim validate`. resolve(...) -> dict: the
// resolved scenario `--out` writes. `scenario` is a dict (the JSON document) or a path to a
// scenario file; `sets` are `--set` overrides ("/json/pointer=value"). Bad input raises
// hcsim.ScenarioError (a ValueError) whose message is the CLI's "FILE:/json/pointer: message"
// lines and whose `issues` attribute lists (pointer, message) pairs; a warning is a Python
// UserWarning ("FILE:/pointer: message"), an error with strict=True. An internal error is a
// RuntimeError. The simulation runs with the GIL released; a scenario dict is named
// "<dict>" in messages.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hcsim/version.hpp"
#include "scenarios/scenario.hpp"
#include "sim/core/error.hpp"
#include "sim/driver/run.hpp"
#include "sim/report/report.hpp"

namespace py = pybind11;

namespace {

constexpr const char* kDictName = "<dict>";

// The module's ScenarioError type, created at import.
py::object& scenario_error_type() {
  static py::object* type = nullptr;
  if (!type) type = new py::object();  // lives as long as the interpreter's module
  return *type;
}

void ensure_builtins() {
  static std::once_flag once;
  std::call_once(once, [] { hcsim::register_builtins(); });
}

// The scenario as hcsim reads it: a path is loaded as the CLI loads it, a dict goes
// through Python's json module so every value has its JSON type.
hcsim::Scenario load(const py::object& scenario, const std::vector<std::string>& sets, std::string& name) {
  ensure_builtins();
  if (py::isinstance<py::str>(scenario)) {
    name = scenario.cast<std::string>();
    return hcsim::load_scenario(name, sets);
  }
  if (!py::isinstance<py::dict>(scenario))
    throw py::type_error("hcsim: the scenario is a dict (the JSON document) or a file path");
  name = kDictName;
  const auto text = py::module_::import("json").attr("dumps")(scenario).cast<std::string>();
  nlohmann::json doc = nlohmann::json::parse(text);
  try {
    for (const auto& s : sets) hcsim::apply_override(doc, s);
    return hcsim::parse_scenario(doc, name);
  } catch (const hcsim::InputError& e) {
    throw e.with_file(name);
  }
}

[[noreturn]] void raise_input_error(const hcsim::InputError& e) {
  py::list issues;
  for (const auto& i : e.issues()) issues.append(py::make_tuple(i.path, i.message));
  py::object err = scenario_error_type()(e.render());
  err.attr("issues") = issues;
  PyErr_SetObject(scenario_error_type().ptr(), err.ptr());
  throw py::error_already_set();
}

// The warnings channel: UserWarning per warning, or with `strict` the warnings as errors.
void report(const hcsim::Scenario& sc, const std::string& name, bool strict) {
  if (sc.warnings.empty()) return;
  const hcsim::InputError as_errors(sc.warnings, name);
  if (strict) raise_input_error(as_errors);
  auto warn = py::module_::import("warnings").attr("warn");
  for (const auto& w : sc.warnings)
    warn(name + ":" + w.path + ": " + w.message, py::module_::import("builtins").attr("UserWarning"), 2);
}

py::object to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

template <typename F>
auto guarded(F&& f) {
  try {
    return f();
  } catch (const hcsim::InputError& e) {
    raise_input_error(e);
  }
}

py::object run(const py::object& scenario, const std::vector<std::string>& sets, bool strict) {
  return guarded([&] {
    std::string name;
    const hcsim::Scenario sc = load(scenario, sets, name);
    report(sc, name, strict);
    nlohmann::json rep;
    {
      py::gil_scoped_release free;
      try {
        rep = hcsim::report_json(sc, hcsim::run_scenario(sc));
      } catch (const hcsim::InputError& e) {
        throw e.with_file(name);
      }
    }
    return to_python(rep);
  });
}

void validate(const py::object& scenario, const std::vector<std::string>& sets, bool strict) {
  guarded([&] {
    std::string name;
    const hcsim::Scenario sc = load(scenario, sets, name);
    report(sc, name, strict);
    try {
      hcsim::check_scenario_memory(sc);
    } catch (const hcsim::InputError& e) {
      throw e.with_file(name);
    }
    return 0;
  });
}

py::object resolve(const py::object& scenario, const std::vector<std::string>& sets) {
  return guarded([&] {
    std::string name;
    return to_python(load(scenario, sets, name).resolved);
  });
}

}  // namespace

PYBIND11_MODULE(hcsim, m) {
  m.doc() = "hcsim: simulate a training step of a transformer on a heterogeneous cluster";
  m.attr("__version__") = hcsim::kVersion;
  scenario_error_type() = py::reinterpret_steal<py::object>(
      PyErr_NewException("hcsim.ScenarioError", PyExc_ValueError, nullptr));
  m.attr("ScenarioError") = scenario_error_type();
  m.def("run", &run, py::arg("scenario"), py::arg("sets") = std::vector<std::string>{}, py::arg("strict") = false,
        "Simulates the scenario (a dict or a file path) and returns its report as a dict, the JSON "
        "`hcsim run --format json` prints. Raises ScenarioError on bad input.");
  m.def("validate", &validate, py::arg("scenario"), py::arg("sets") = std::vector<std::string>{},
        py::arg("strict") = false,
        "The checks of `hcsim validate`: returns None, or raises ScenarioError listing every problem.");
  m.def("resolve", &resolve, py::arg("scenario"), py::arg("sets") = std::vector<std::string>{},
        "The resolved scenario (every default and preset value stated) that `hcsim run --out` writes.");
}
