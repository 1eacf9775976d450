#pragma once
// Shared by the compression tests: build a codec from its JSON description, and print a
// measured figure so the test output reports it.

#include <cstdio>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/compression/codec.hpp"

namespace hcsim::testing {

inline std::unique_ptr<Codec> make_codec(const nlohmann::json& desc) {
  register_builtin_codecs();
  Diagnostics diag;
  auto codec = codecs().build(desc.at("type").get<std::string>(), desc, "/compression", diag);
  EXPECT_TRUE(diag.ok()) << (diag.ok() ? "" : diag.issues()[0].path + ": " + diag.issues()[0].message);
  return codec;
}

inline void report(const std::string& what, double value) {
  std::printf("[ measured ] %s = %.6g\n", what.c_str(), value);
}

}  // namespace hcsim::testing
