// The prediction suite (scenarios/predictions, docs/validation.md, "Prediction table"):
// published end-to-end training runs the presets were not fitted to. Each case's drift from
// its recorded error is guarded by suite_guard_test.cpp; this file checks the suite's shape.
// Expected values: each case's source in expected.json (Korthikanti et al. 2022 Table 5;
// Smith et al. 2022 section 2.4; BigScience tr11-176B-ml README; Llama 3 paper Table 4;
// IBM fms-fsdp README; MosaicML llm-foundry's benchmark tables; TorchTitan's benchmark
// tables).
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../cli/hcsim_child.hpp"

namespace hcsim::test {
namespace {

const std::string kSuite = std::string(HCSIM_SOURCE_DIR) + "/scenarios/predictions";

nlohmann::json expected() { return nlohmann::json::parse(read_file(kSuite + "/expected.json")); }

// The suite is what docs/validation.md says it is: forty-one runs from seven sources, none of
// them the calibration sets (Megatron-LM SC21 Table 1, NVIDIA's Megatron-Bridge/NeMo
// performance tables), each naming its source, its step time and its software stack.
TEST(PredictionSuiteShape, FortyOneCitedRunsOffTheCalibrationSets) {
  const nlohmann::json doc = expected();
  ASSERT_EQ(doc.at("cases").size(), 41u);
  std::set<std::string> ids;
  int megatron = 0;
  for (const auto& [file, c] : doc.at("cases").items()) {
    SCOPED_TRACE(file);
    EXPECT_TRUE(ids.insert(c.at("case").get<std::string>()).second) << "case ids are unique";
    EXPECT_EQ(c.at("metric").get<std::string>(), "/step_time_s");
    EXPECT_GT(c.at("value").get<double>(), 0.0);
    const std::string source = c.at("source").get<std::string>();
    const bool cited =
        source.find("2205.05198") != std::string::npos || source.find("2201.11990") != std::string::npos ||
        source.find("tr11-176B-ml") != std::string::npos || source.find("2407.21783") != std::string::npos ||
        source.find("fms-fsdp") != std::string::npos || source.find("llm-foundry") != std::string::npos ||
        source.find("torchtitan") != std::string::npos;
    EXPECT_TRUE(cited) << source;
    EXPECT_EQ(source.find("2104.04473"), std::string::npos) << "SC21 Table 1 is the calibration set";
    const std::string notes = c.at("notes").get<std::string>();
    const bool megatron_stack = notes.rfind("Megatron-LM stack.", 0) == 0;
    EXPECT_TRUE(megatron_stack || notes.rfind("Other stack", 0) == 0) << "notes open with the stack: " << notes;
    megatron += megatron_stack ? 1 : 0;
  }
  EXPECT_EQ(megatron, 7) << "docs/validation.md reports the Megatron-LM runs and the other stacks separately";
}

}  // namespace
}  // namespace hcsim::test
