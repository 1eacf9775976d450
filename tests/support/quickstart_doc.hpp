#pragma once
// tests/bad_scenarios' base as a JSON document: scenarios/quickstart.json (16 A100s,
// dp 2 x tp 4 x pp 2), for tests that edit one field and parse.
#include <nlohmann/json.hpp>

namespace hcsim::test {

inline nlohmann::json quickstart_doc() {
  return nlohmann::json::parse(R"({
    "cluster": {
      "pools": [{"name": "a100", "preset": "nvidia-a100-80gb-sxm", "count": 16}],
      "topology": {"type": "nvswitch-cluster", "gpus_per_node": 8}
    },
    "workload": {"model": {"preset": "gpt3-1.3b"}, "global_batch": 64, "micro_batch": 4},
    "strategy": {"dp": 2, "tp": 4, "pp": 2}
  })");
}

}  // namespace hcsim::test
