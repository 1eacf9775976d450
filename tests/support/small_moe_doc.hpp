#pragma once
// A small MoE scenario the MoE tests share: 4 Llama-style layers (h 2,048, 16 heads, 4
// key/value heads, FFN 4,096), 16 routed experts, top-2, s 2,048, on H100 nodes of 8 with
// NVSwitch and RoCE; batch 64 of micro-batch 1; tp 1, the other degrees given.
#include <nlohmann/json.hpp>

namespace hcsim::testing {

inline nlohmann::json small_moe_doc(int gpus, int dp, int pp, int ep, double router_skew = 0) {
  return {{"cluster",
           {{"pools", {{{"preset", "nvidia-h100-sxm5"}, {"count", gpus}}}},
            {"topology",
             {{"type", "nvswitch-cluster"},
              {"gpus_per_node", 8},
              {"nvlink", {{"preset", "nvlink4"}}},
              {"nic", {{"preset", "roce-400g"}}}}}}},
          {"workload",
           {{"model",
             {{"type", "llama"},
              {"overrides",
               {{"layers", 4},
                {"hidden", 2048},
                {"heads", 16},
                {"kv_heads", 4},
                {"ffn_hidden", 4096},
                {"vocab", 32000},
                {"seq_len", 2048},
                {"experts", 16},
                {"top_k", 2},
                {"router_skew", router_skew}}}}},
            {"global_batch", 64},
            {"micro_batch", 1}}},
          {"strategy", {{"dp", dp}, {"tp", 1}, {"pp", pp}, {"ep", ep}}}};
}

}  // namespace hcsim::testing
