#pragma once
// Test helper: build a compute device from a registered preset with JSON overrides, the
// way the scenario layer does (overrides merged over preset.values, then build).
#include <string>

#include <gtest/gtest.h>

#include "models/compute/compute_device.hpp"

namespace hcsim::testing_helpers {

inline std::unique_ptr<ComputeDevice> build_preset(const std::string& name,
                                                   const nlohmann::json& overrides = nlohmann::json::object()) {
  register_builtin_compute_devices();
  const Preset* p = compute_presets().find(name);
  if (p == nullptr) {
    ADD_FAILURE() << "missing preset " << name;
    return nullptr;
  }
  nlohmann::json v = p->values;
  for (const auto& [k, x] : overrides.items()) v[k] = x;
  Diagnostics d;
  auto dev = compute_devices().build(p->type, v, "/device", d);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.issues()[0].path + ": " + d.issues()[0].message);
  return dev;
}

}  // namespace hcsim::testing_helpers
