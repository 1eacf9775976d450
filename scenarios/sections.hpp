#pragma once
// The scenario's own sections, declared once: the parser, `hcsim list`, the JSON Schema
// (docs/scenario.schema.json) and docs/scenario.md all read these tables.

#include "sim/core/params.hpp"

namespace hcsim::sections {

const ParamTable& top();
const ParamTable& cluster();
const ParamTable& pool();
const ParamTable& model_ref();
const ParamTable& workload();
const ParamTable& strategy();
const ParamTable& fsdp();  // strategy.fsdp
const ParamTable& simulation();
const ParamTable& outputs();

// JSON Schema of the whole scenario document.
nlohmann::json scenario_schema();

}  // namespace hcsim::sections
