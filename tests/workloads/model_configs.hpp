#pragma once
// GPT-style model dimensions shared by the workload tests.
#include <cstdint>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "workloads/transformer.hpp"

namespace hcsim::test {

// A GPT layer stack: multi-head attention (kv heads = heads), MLP of 4h.
inline TransformerConfig gpt_config(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t vocab,
                                    std::int64_t seq_len) {
  TransformerConfig c;
  c.family = "gpt";
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.kv_heads = heads;
  c.ffn_hidden = 4 * hidden;
  c.vocab = vocab;
  c.seq_len = seq_len;
  return c;
}

// GPT-3 175B (Brown et al. 2020), Korthikanti et al.'s own example (5as/h = 80).
inline TransformerConfig gpt3_175b() { return gpt_config(96, 12288, 96, 51200, 2048); }

// A small grouped-query Llama: h 1024, 16 query heads and 4 key/value heads of 64 (h_kv =
// 256), SwiGLU MLP of 2816, V 1024, s 1024.
inline TransformerConfig llama_gqa(int layers) {
  TransformerConfig c = gpt_config(layers, 1024, 16, 1024, 1024);
  c.family = "llama";
  c.kv_heads = 4;
  c.ffn_hidden = 2816;
  c.gated_mlp = true;
  c.rmsnorm = true;
  c.learned_positions = false;
  c.tied_embeddings = false;
  return c;
}

// The op of a layer's list with this name (a test failure, and the first op, when none).
inline const LayerOp& layer_op(const std::vector<LayerOp>& ops, std::string_view name) {
  for (const LayerOp& o : ops)
    if (name == o.name) return o;
  ADD_FAILURE() << "no op " << name;
  return ops.front();
}

}  // namespace hcsim::test
