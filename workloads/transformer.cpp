#include "transformer.hpp"

#include <fmt/format.h>

namespace hcsim {

double TransformerConfig::layer_params() const {
  const double h = static_cast<double>(hidden), f = static_cast<double>(ffn_hidden);
  const double kv = static_cast<double>(kv_heads * head_dim());
  if (family == "llama") {
    // q, o: h^2 each; k, v: h*kv each; SwiGLU: 3 h f; two RMSNorm weights; no biases.
    return 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h;
  }
  // GPT/BERT (Narayanan eq. 2): QKV 3h^2+3h, projection h^2+h, MLP 2hf+f+h, two LayerNorms 4h.
  return 3 * h * h + 3 * h + h * h + h + 2 * h * f + f + h + 4 * h;
}

double TransformerConfig::embedding_params() const {
  const double h = static_cast<double>(hidden);
  double p = static_cast<double>(vocab) * h;
  if (learned_positions) p += static_cast<double>(seq_len) * h;
  return p;
}

double TransformerConfig::total_params() const {
  double p = static_cast<double>(layers) * layer_params() + embedding_params();
  if (!tied_embeddings) p += static_cast<double>(vocab) * static_cast<double>(hidden);
  return p;
}

namespace {

ParamTable transformer_params(const char* family) {
  const bool llama = std::string(family) == "llama";
  const bool bert = std::string(family) == "bert";
  return {
      {.name = "layers", .kind = ParamKind::integer, .min = 1, .max = 100000, .help = "transformer layers l"},
      {.name = "hidden", .kind = ParamKind::integer, .min = 1, .max = 1 << 20, .help = "hidden size h"},
      {.name = "heads", .kind = ParamKind::integer, .min = 1, .max = 1 << 16, .help = "attention heads a"},
      {.name = "kv_heads", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1 << 16,
       .help = "key/value heads for grouped-query attention (default: heads)"},
      {.name = "ffn_hidden", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1 << 22,
       .help = "MLP inner size (default 4h; LLaMA presets give theirs)"},
      {.name = "vocab", .kind = ParamKind::integer, .def = bert ? 30522 : (llama ? 32000 : 51200), .min = 1,
       .max = 1 << 24, .help = "vocabulary size V"},
      {.name = "seq_len", .kind = ParamKind::integer, .def = bert ? 512 : 2048, .min = 1, .max = 1 << 22,
       .help = "sequence length s"},
  };
}

std::unique_ptr<TransformerModel> make_model(const char* family, const Params& p) {
  TransformerConfig c;
  c.family = family;
  c.layers = p.integer("layers");
  c.hidden = p.integer("hidden");
  c.heads = p.integer("heads");
  c.kv_heads = p.has("kv_heads") ? p.integer("kv_heads") : c.heads;
  c.ffn_hidden = p.has("ffn_hidden") ? p.integer("ffn_hidden") : 4 * c.hidden;
  c.vocab = p.integer("vocab");
  c.seq_len = p.integer("seq_len");
  const std::string fam = family;
  c.gated_mlp = fam == "llama";
  c.rmsnorm = fam == "llama";
  c.learned_positions = fam != "llama";
  c.tied_embeddings = fam != "llama";
  c.causal = fam != "bert";
  return std::make_unique<TransformerModel>(c);
}

void add_preset(const char* name, const char* type, nlohmann::json v, const char* source) {
  transformer_presets().add({name, type, std::move(v), source, ""});
}

void register_presets() {
  const char* meg = "Narayanan et al., SC21 (arXiv 2104.04473), Table 1; V = 51,200, s = 2048";
  struct Row { const char* name; int l, h, a; };
  for (const Row& r : {Row{"megatron-1.7b", 24, 2304, 24}, Row{"megatron-3.6b", 30, 3072, 32},
                       Row{"megatron-7.5b", 36, 4096, 32}, Row{"megatron-18.4b", 40, 6144, 48},
                       Row{"megatron-39.1b", 48, 8192, 64}, Row{"megatron-76.1b", 60, 10240, 80},
                       Row{"megatron-145.6b", 80, 12288, 96}, Row{"megatron-310.1b", 96, 16384, 128},
                       Row{"megatron-529.6b", 105, 20480, 128}, Row{"megatron-1t", 128, 25600, 160}})
    add_preset(r.name, "gpt", {{"layers", r.l}, {"hidden", r.h}, {"heads", r.a}, {"vocab", 51200}, {"seq_len", 2048}},
               meg);
  add_preset("gpt3-175b", "gpt", {{"layers", 96}, {"hidden", 12288}, {"heads", 96}, {"vocab", 51200}, {"seq_len", 2048}},
             "Brown et al. 2020 (arXiv 2005.14165), Table 2.1; vocabulary padded to 51,200 as in Megatron-LM");
  add_preset("gpt3-6.7b", "gpt", {{"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"vocab", 51200}, {"seq_len", 2048}},
             "Brown et al. 2020, Table 2.1");
  add_preset("gpt3-1.3b", "gpt", {{"layers", 24}, {"hidden", 2048}, {"heads", 16}, {"vocab", 51200}, {"seq_len", 2048}},
             "Brown et al. 2020, Table 2.1");
  add_preset("mt-nlg-530b", "gpt",
             {{"layers", 105}, {"hidden", 20480}, {"heads", 128}, {"vocab", 51200}, {"seq_len", 2048}},
             "Smith et al. 2022 (arXiv 2201.11990), Table 1");
  add_preset("bert-large", "bert", {{"layers", 24}, {"hidden", 1024}, {"heads", 16}, {"vocab", 30522}, {"seq_len", 512}},
             "Devlin et al. 2019 (arXiv 1810.04805), BERT-Large: L=24, H=1024, A=16");
  const char* l2 = "Touvron et al. 2023, Llama 2 (arXiv 2307.09288), Table 1 and model card";
  add_preset("llama2-7b", "llama",
             {{"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"kv_heads", 32}, {"ffn_hidden", 11008},
              {"vocab", 32000}, {"seq_len", 4096}}, l2);
  add_preset("llama2-70b", "llama",
             {{"layers", 80}, {"hidden", 8192}, {"heads", 64}, {"kv_heads", 8}, {"ffn_hidden", 28672},
              {"vocab", 32000}, {"seq_len", 4096}}, l2);
  const char* l3 = "Llama Team 2024, The Llama 3 Herd of Models (arXiv 2407.21783), Table 3";
  add_preset("llama3-8b", "llama",
             {{"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"kv_heads", 8}, {"ffn_hidden", 14336},
              {"vocab", 128256}, {"seq_len", 8192}}, l3);
  add_preset("llama3-70b", "llama",
             {{"layers", 80}, {"hidden", 8192}, {"heads", 64}, {"kv_heads", 8}, {"ffn_hidden", 28672},
              {"vocab", 128256}, {"seq_len", 8192}}, l3);
  add_preset("llama3-405b", "llama",
             {{"layers", 126}, {"hidden", 16384}, {"heads", 128}, {"kv_heads", 8}, {"ffn_hidden", 53248},
              {"vocab", 128256}, {"seq_len", 8192}}, l3);
}

}  // namespace

Registry<TransformerModel>& transformer_models() {
  static Registry<TransformerModel> r("model");
  return r;
}

PresetLibrary& transformer_presets() {
  static PresetLibrary p("model");
  return p;
}

void register_builtin_transformers() {
  static bool done = false;
  if (done) return;
  done = true;
  transformer_models().add({"gpt", "GPT decoder: LayerNorm, GELU MLP of 4h, learned positions, tied embeddings",
                            transformer_params("gpt"), [](const Params& p) { return make_model("gpt", p); },
                            "Radford et al. 2019; Brown et al. 2020; Narayanan et al. SC21"});
  transformer_models().add({"llama", "LLaMA decoder: RMSNorm, SwiGLU MLP, rotary positions, grouped-query attention",
                            transformer_params("llama"), [](const Params& p) { return make_model("llama", p); },
                            "Touvron et al. 2023 (arXiv 2302.13971, 2307.09288); Llama 3 (arXiv 2407.21783)"});
  transformer_models().add({"bert", "BERT encoder: bidirectional attention, LayerNorm, GELU MLP",
                            transformer_params("bert"), [](const Params& p) { return make_model("bert", p); },
                            "Devlin et al. 2019 (arXiv 1810.04805)"});
  register_presets();
}

}  // namespace hcsim
