#include "transformer.hpp"

#include <fmt/format.h>

namespace hcsim {

double TransformerConfig::mlp_params(std::int64_t inner) const {
  const double h = static_cast<double>(hidden), f = static_cast<double>(inner);
  if (inner <= 0) return 0;
  // SwiGLU: gate, up and down matrices, no biases; GELU MLP: 2hf and biases f + h.
  return family == "llama" ? 3 * h * f : 2 * h * f + f + h;
}

double TransformerConfig::attention_params() const {
  const double h = static_cast<double>(hidden), a = static_cast<double>(heads);
  if (is_mla()) {
    // Queries: h q_rank + q_rank (norm) + q_rank a (nope + rope), or h a (nope + rope) direct;
    // keys and values: h (kv_rank + rope) + kv_rank (norm) + kv_rank a (nope + v); output a v h.
    const double q = static_cast<double>(mla.q_rank), kv = static_cast<double>(mla.kv_rank);
    const double qk = static_cast<double>(mla.nope_dim + mla.rope_dim), v = static_cast<double>(mla.v_dim);
    const double query = mla.q_rank > 0 ? h * q + q + q * a * qk : h * a * qk;
    return query + h * (kv + static_cast<double>(mla.rope_dim)) + kv + kv * a * (static_cast<double>(mla.nope_dim) + v) +
           a * v * h;
  }
  const double kvw = static_cast<double>(kv_heads * head_dim()), qw = static_cast<double>(q_width());
  // LLaMA: q, o h a d_head each (h^2 when d_head = h / a); k, v h kv d_head each; no biases.
  // GPT/BERT: QKV 3h^2 + 3h, projection h^2 + h.
  return family == "llama" ? 2 * h * qw + 2 * h * kvw : 3 * h * h + 3 * h + h * h + h;
}

double TransformerConfig::layer_params() const {
  const double h = static_cast<double>(hidden);
  // LLaMA: SwiGLU 3 h f and two RMSNorm weights; GPT/BERT (Narayanan eq. 2): MLP 2hf + f + h
  // and two LayerNorms 4h.
  return attention_params() + mlp_params(ffn_hidden) + (family == "llama" ? 2 * h : 4 * h);
}

double TransformerConfig::moe_dense_params() const {
  // The dense layer without its MLP, plus the router (h x E, no bias) and the shared experts.
  return layer_params() - mlp_params(ffn_hidden) + static_cast<double>(hidden) * static_cast<double>(moe.experts) +
         mlp_params(moe.shared_ffn);
}

std::int64_t TransformerConfig::moe_layers(std::int64_t first, std::int64_t count) const {
  if (!is_moe() || count <= 0) return 0;
  // Layers i >= first_dense with (i - first_dense) % every == 0, among [first, first + count).
  auto upto = [&](std::int64_t end) {  // MoE layers among [0, end)
    const std::int64_t span = end - moe.first_dense;
    return span <= 0 ? std::int64_t{0} : (span + moe.every - 1) / moe.every;
  };
  return upto(first + count) - upto(first);
}

double TransformerConfig::active_params() const {
  const std::int64_t n_moe = moe_layers(0, layers);
  double p = total_params();
  if (n_moe > 0)
    p -= static_cast<double>(n_moe) * static_cast<double>(moe.experts - moe.top_k) * mlp_params(moe.expert_ffn);
  return p;
}

double TransformerConfig::embedding_params() const {
  const double h = static_cast<double>(hidden);
  double p = static_cast<double>(vocab) * h;
  if (learned_positions) p += static_cast<double>(seq_len) * h;
  return p;
}

double TransformerConfig::total_params() const {
  const std::int64_t n_moe = moe_layers(0, layers);
  double p = static_cast<double>(layers - n_moe) * layer_params() +
             static_cast<double>(n_moe) * (moe_dense_params() + moe_expert_params()) + embedding_params();
  if (!tied_embeddings) p += static_cast<double>(vocab) * static_cast<double>(hidden);
  return p;
}

namespace {

ParamTable transformer_params(const char* family) {
  const bool llama = std::string(family) == "llama";
  const bool bert = std::string(family) == "bert";
  ParamTable t = {
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
      {.name = "tied_embeddings", .kind = ParamKind::boolean, .def = nullptr,
       .help = "the LM head shares the embedding matrix (default: true for gpt and bert, as GPT-2/3 and BERT; "
               "false for llama); over pipeline stages the two copies' gradients are all-reduced"},
  };
  if (bert) return t;
  // Mixture of experts (transformer.hpp): absent or experts = 0, a dense model.
  const ParamTable moe = {
      {.name = "experts", .kind = ParamKind::integer, .def = 0, .min = 0, .max = 1 << 16,
       .help = "routed experts E of each MoE layer (0: a dense model)"},
      {.name = "top_k", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1 << 10,
       .help = "experts each token is routed to (MoE; default 2)"},
      {.name = "expert_ffn_hidden", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1 << 22,
       .help = "inner size of one routed expert (MoE; default ffn_hidden)"},
      {.name = "shared_ffn_hidden", .kind = ParamKind::integer, .def = nullptr, .min = 0, .max = 1 << 22,
       .help = "inner size of the shared experts together, which every token passes through (MoE; default 0: none)"},
      {.name = "moe_first_dense", .kind = ParamKind::integer, .def = nullptr, .min = 0, .max = 100000,
       .help = "the first layers that stay dense (MoE; default 0)"},
      {.name = "moe_every", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 100000,
       .help = "after them every k-th layer is an MoE layer (MoE; default 1: all; GShard and Switch: 2)"},
      {.name = "capacity_factor", .kind = ParamKind::number, .def = nullptr, .min = 0, .max = 64,
       .help = "expert capacity as a multiple of its even share: pads and drops (MoE; default 0: dropless)"},
      {.name = "router_skew", .kind = ParamKind::number, .def = nullptr, .min = 0, .max = 8,
       .help = "Zipf exponent of the routing distribution, expert j's share ~ (j+1)^-skew (MoE; default 0: uniform)"},
      {.name = "max_nodes_per_token", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1 << 16,
       .help = "node-limited routing: a token's experts on at most this many nodes of its expert group (MoE; "
               "DeepSeek-V3: 4; default no limit); sets the DeepEP dispatch's bytes"},
  };
  t.insert(t.end(), moe.begin(), moe.end());
  if (!llama) return t;
  // A per-head dimension set apart from h / a (Qwen3, GPT-OSS), then multi-head latent
  // attention (transformer.hpp), DeepSeek's configuration names.
  const ParamTable mla = {
      {.name = "head_dim", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1 << 14,
       .help = "per-head dimension when it is not hidden/heads (Qwen3: 128; default hidden/heads)"},
      {.name = "kv_lora_rank", .kind = ParamKind::integer, .def = 0, .min = 0, .max = 1 << 20,
       .help = "multi-head latent attention: key/value compression d_c (0: standard attention)"},
      {.name = "q_lora_rank", .kind = ParamKind::integer, .def = nullptr, .min = 0, .max = 1 << 20,
       .help = "MLA query compression d_c' (default 0: queries projected directly)"},
      {.name = "qk_nope_head_dim", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1 << 14,
       .help = "MLA per-head query/key dimension without rotary positions (default 128)"},
      {.name = "qk_rope_head_dim", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1 << 14,
       .help = "MLA decoupled rotary query/key dimension (default 64)"},
      {.name = "v_head_dim", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1 << 14,
       .help = "MLA per-head value dimension (default 128)"},
  };
  t.insert(t.end(), mla.begin(), mla.end());
  return t;
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
  c.tied_embeddings = p.has("tied_embeddings") ? p.boolean("tied_embeddings") : fam != "llama";
  c.causal = fam != "bert";
  if (fam != "bert" && p.integer("experts") > 0) {
    MoeConfig& m = c.moe;
    m.experts = p.integer("experts");
    m.top_k = p.has("top_k") ? static_cast<int>(p.integer("top_k")) : 2;
    m.expert_ffn = p.has("expert_ffn_hidden") ? p.integer("expert_ffn_hidden") : c.ffn_hidden;
    m.shared_ffn = p.has("shared_ffn_hidden") ? p.integer("shared_ffn_hidden") : 0;
    m.first_dense = p.has("moe_first_dense") ? static_cast<int>(p.integer("moe_first_dense")) : 0;
    m.every = p.has("moe_every") ? static_cast<int>(p.integer("moe_every")) : 1;
    m.capacity_factor = p.has("capacity_factor") ? p.number("capacity_factor") : 0.0;
    m.skew = p.has("router_skew") ? p.number("router_skew") : 0.0;
    m.max_nodes = p.has("max_nodes_per_token") ? static_cast<int>(p.integer("max_nodes_per_token")) : 0;
  }
  if (fam == "llama" && p.has("head_dim")) c.head_size = p.integer("head_dim");
  if (fam == "llama" && p.integer("kv_lora_rank") > 0) {
    MlaConfig& a = c.mla;
    a.kv_rank = p.integer("kv_lora_rank");
    if (p.has("q_lora_rank")) a.q_rank = p.integer("q_lora_rank");
    if (p.has("qk_nope_head_dim")) a.nope_dim = p.integer("qk_nope_head_dim");
    if (p.has("qk_rope_head_dim")) a.rope_dim = p.integer("qk_rope_head_dim");
    if (p.has("v_head_dim")) a.v_dim = p.integer("v_head_dim");
  }
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
  // Mixtures of experts.
  add_preset("mixtral-8x7b", "llama",
             {{"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"kv_heads", 8}, {"ffn_hidden", 14336},
              {"vocab", 32000}, {"seq_len", 4096}, {"experts", 8}, {"top_k", 2}},
             "Jiang et al. 2024, Mixtral of Experts (arXiv 2401.04088), Table 1 (46.7B parameters, 12.9B active); "
             "sequence 4,096 as NVIDIA's NeMo performance tables train it");
  add_preset("mixtral-8x22b", "llama",
             {{"layers", 56}, {"hidden", 6144}, {"heads", 48}, {"kv_heads", 8}, {"ffn_hidden", 16384},
              {"vocab", 32768}, {"seq_len", 4096}, {"experts", 8}, {"top_k", 2}},
             "Mistral AI, Mixtral 8x22B model card and release note, April 2024 (141B parameters, 39B active)");
  add_preset("qwen1.5-moe-a2.7b", "llama",
             {{"layers", 24}, {"hidden", 2048}, {"heads", 16}, {"kv_heads", 16}, {"ffn_hidden", 5632},
              {"vocab", 151936}, {"seq_len", 8192}, {"experts", 60}, {"top_k", 4}, {"expert_ffn_hidden", 1408},
              {"shared_ffn_hidden", 5632}},
             "Qwen Team, Qwen1.5-MoE: Matching 7B Model Performance with 1/3 Activated Parameters (March 2024) and "
             "its model configuration: 60 routed experts of 1,408, top-4, shared experts of 5,632 (14.3B parameters, "
             "2.7B active); the attention's QKV biases and the shared experts' gate (h + 3h per layer) not counted");
  // Qwen3 MoE: every layer an MoE layer of 128 experts, top-8, no shared expert; the
  // attention's head dimension (128) set apart from h / a; untied embeddings.
  add_preset("qwen3-30b-a3b", "llama",
             {{"layers", 48}, {"hidden", 2048}, {"heads", 32}, {"kv_heads", 4}, {"head_dim", 128},
              {"ffn_hidden", 6144}, {"vocab", 151936}, {"seq_len", 4096}, {"experts", 128}, {"top_k", 8},
              {"expert_ffn_hidden", 768}},
             "Qwen Team 2025, Qwen3 Technical Report (arXiv 2505.09388), Table 2, and the Qwen/Qwen3-30B-A3B "
             "config.json: 48 layers, h 2,048, 32 query and 4 key/value heads of 128, 128 experts of 768, top-8, "
             "vocabulary 151,936, untied embeddings (30.5B parameters, 3.3B active); sequence 4,096 as NVIDIA's "
             "Megatron-Bridge performance tables train it; the per-head query/key RMSNorms (2 x 128 weights per "
             "layer) not counted");
  add_preset("qwen3-235b-a22b", "llama",
             {{"layers", 94}, {"hidden", 4096}, {"heads", 64}, {"kv_heads", 4}, {"head_dim", 128},
              {"ffn_hidden", 12288}, {"vocab", 151936}, {"seq_len", 4096}, {"experts", 128}, {"top_k", 8},
              {"expert_ffn_hidden", 1536}},
             "Qwen Team 2025, Qwen3 Technical Report (arXiv 2505.09388), Table 2, and the Qwen/Qwen3-235B-A22B "
             "config.json: 94 layers, h 4,096, 64 query and 4 key/value heads of 128, 128 experts of 1,536, top-8, "
             "vocabulary 151,936, untied embeddings (235B parameters, 22B active); sequence 4,096 as NVIDIA's "
             "Megatron-Bridge performance tables train it; the per-head query/key RMSNorms not counted");
  add_preset("deepseek-v3", "llama",
             {{"layers", 61}, {"hidden", 7168}, {"heads", 128}, {"kv_heads", 128}, {"ffn_hidden", 18432},
              {"vocab", 129280}, {"seq_len", 4096}, {"experts", 256}, {"top_k", 8}, {"expert_ffn_hidden", 2048},
              {"shared_ffn_hidden", 2048}, {"moe_first_dense", 3}, {"kv_lora_rank", 512}, {"q_lora_rank", 1536},
              {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128}, {"max_nodes_per_token", 4}},
             "DeepSeek-AI 2024, DeepSeek-V3 Technical Report (arXiv 2412.19437), sections 2.1 and 4.2: 61 layers, "
             "h 7,168, MLA (128 heads, d_c 512, d_c' 1,536, 128 + 64 query/key and 128 value dimensions), the first 3 "
             "layers dense (18,432), then 1 shared and 256 routed experts of 2,048, top-8 on at most 4 nodes (section "
             "2.1.2); sequence 4,096 as "
             "pre-trained (671B parameters, 37B active; the multi-token-prediction module not included)");
  add_preset("gshard-gpt-1.1t", "gpt",
             {{"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"vocab", 51200}, {"seq_len", 2048}, {"experts", 512},
              {"top_k", 2}, {"moe_every", 2}},
             "Artetxe et al. 2022, Efficient Large Scale Language Modeling with Mixtures of Experts (arXiv "
             "2112.10684), Table 1: the 1.1T model, GPT-3 6.7B's dimensions with 512 experts in every other layer, "
             "GShard's top-2 gating");
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
