// The layout rules (see layout.hpp): one copy, read by the parser, the driver and the search.
#include "workloads/layout.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "workloads/transformer.hpp"

namespace hcsim {

void DeviceGroup::devices(std::vector<int>& out) const {
  out.resize(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) out[static_cast<std::size_t>(k)] = device(k);
}

void DeviceGroup::sibling_offsets(std::vector<int>& out) const {
  out.clear();
  for (int i = 0; i < sib[0].count; ++i)
    for (int j = 0; j < sib[1].count; ++j)
      if (i > 0 || j > 0) out.push_back(i * sib[0].stride + j * sib[1].stride);
}

std::shared_ptr<const std::vector<int>> SiblingLists::of(const DeviceGroup& g) {
  auto& list = lists_[{g.sib[0].count, g.sib[0].stride, g.sib[1].count, g.sib[1].stride}];
  if (!list) {
    std::vector<int> offsets;
    g.sibling_offsets(offsets);
    list = std::make_shared<const std::vector<int>>(std::move(offsets));
  }
  return list->empty() ? nullptr : list;
}

std::string_view layout_issue_text(LayoutIssue i) {
  switch (i) {
    case LayoutIssue::none: return "valid";
    case LayoutIssue::degrees: return "tp, pp, dp, cp and micro_batch must be at least 1";
    case LayoutIssue::too_many_devices: return "dp*cp*tp*pp is not the cluster's device count";
    case LayoutIssue::heads: return "attention heads not divisible by tp";
    case LayoutIssue::kv_heads: return "key/value heads cannot be split over tp";
    case LayoutIssue::ffn: return "MLP size not divisible by tp";
    case LayoutIssue::schedule:
      return "unknown pipeline schedule, or a pp it cannot run (interleaved: < 2; dualpipe: odd)";
    case LayoutIssue::interleave: return "interleave > 1 needs the interleaved schedule";
    case LayoutIssue::batch: return "global batch not divisible by micro_batch*dp";
    case LayoutIssue::interleaved_batch:
      return "micro-batches per replica the schedule cannot run (interleaved: not a multiple of pp; dualpipe: odd or < "
             "2 pp)";
    case LayoutIssue::too_many_micro_batches: return "more than 65535 micro-batches per replica";
    case LayoutIssue::layers: return "fewer layers than pp*interleave model chunks";
    case LayoutIssue::uneven_layers: return "layers not divisible by pp*interleave (and no layers_per_stage for this pp)";
    case LayoutIssue::zero: return "ZeRO stage outside 0..3";
    case LayoutIssue::context: return "sequence not divisible for context parallelism";
    case LayoutIssue::placement: return "a pipeline stage straddles two device pools";
    case LayoutIssue::experts:
      return "expert parallelism does not fit the model or the layout";
  }
  return "";
}

namespace {

template <class Rule>
bool a2a_overlap_rules(const LayoutRequest& r, Rule& rule);

// Expert parallelism (layout.hpp); true when a broken rule stops the check.
template <class Broken>
bool expert_rules(const LayoutRequest& r, Broken& broken) {
  const Layout& l = r.layout;
  const TransformerConfig& c = *r.model;
  auto rule = [&](std::string_view path, const std::function<std::string()>& msg) {
    return broken(LayoutIssue::experts, path, msg);
  };
  if (!c.is_moe()) {
    if (r.moe_a2a_overlap && rule("/strategy/moe_a2a_overlap", [] {
          return std::string("overlaps the experts' all-to-alls: it needs an MoE model (\"experts\" > 0 in the model)");
        }))
      return true;
    if (l.ep != 1 && rule("/strategy/ep", [&] {
          return fmt::format("ep = {} needs an MoE model (\"experts\" > 0 in the model)", l.ep);
        }))
      return true;
    return l.etp != 1 && rule("/strategy/etp", [&] {
             return fmt::format("etp = {} needs an MoE model (\"experts\" > 0 in the model)", l.etp);
           });
  }
  if (c.moe.experts % l.ep != 0)
    return rule("/strategy/ep", [&] {
      return fmt::format("the model's {} experts are not divisible by ep = {}", c.moe.experts, l.ep);
    });
  if (l.per_stage() % l.ep != 0)
    return rule("/strategy/ep", [&] {
      return fmt::format("ep = {} does not divide the {} devices of a stage (dp*cp*tp = {}*{}*{})", l.ep, l.per_stage(),
                         l.dp, l.cp, l.tp);
    });
  if (c.moe.expert_ffn % l.etp != 0)
    return rule("/strategy/etp", [&] {
      return fmt::format("the experts' MLP size {} is not divisible by etp = {}", c.moe.expert_ffn, l.etp);
    });
  if (l.per_stage() % (static_cast<std::int64_t>(l.ep) * l.etp) != 0)
    return rule("/strategy/etp", [&] {
      return fmt::format("ep*etp = {}*{} does not divide the {} devices of a stage (dp*cp*tp = {}*{}*{})", l.ep, l.etp,
                         l.per_stage(), l.dp, l.cp, l.tp);
    });
  if (c.moe.shared_ffn % l.tp != 0)
    return rule("/strategy/tp", [&] {
      return fmt::format("the shared experts' size {} is not divisible by tp = {}", c.moe.shared_ffn, l.tp);
    });
  if (l.tp > 1 && !r.sequence_parallel)
    return rule("/strategy/sequence_parallel", [] {
      return std::string(
          "an MoE model with tp > 1 needs \"sequence_parallel\": true (tokens enter the experts on "
          "their sequence-parallel shard, as in Megatron-Core)");
    });
  if (r.zero >= 3 && l.dp * l.cp > 1)
    return rule("/strategy/zero",
                [] { return std::string("ZeRO-3 / FSDP of an MoE model is not modelled; use zero 0, 1 or 2"); });
  if (r.recompute == Recompute::op)
    return rule("/strategy/recompute", [] {
      return std::string(
          "\"selective-op\" (per-op selective checkpointing) is modelled for dense layers only; use none, "
          "selective or full with an MoE model");
    });
  return r.moe_a2a_overlap && a2a_overlap_rules(r, rule);
}

// The MoE all-to-all overlap's needs (Megatron-Core's checks of
// overlap_moe_expert_parallel_comm in transformer_config.py); true when a broken rule stops.
template <class Rule>
bool a2a_overlap_rules(const LayoutRequest& r, Rule& rule) {
  const Layout& l = r.layout;
  if (l.ep < 2)
    return rule("/strategy/moe_a2a_overlap", [&] {
      return fmt::format(
          "overlaps the expert-parallel all-to-alls with another micro-batch's compute: it needs ep > 1, "
          "got ep = {}",
          l.ep);
    });
  if (r.recompute == Recompute::full)
    return rule("/strategy/moe_a2a_overlap", [] {
      return std::string("is not run with full recomputation (Megatron-Core refuses the combination)");
    });
  if (r.zero >= 3)
    return rule("/strategy/moe_a2a_overlap",
                [] { return std::string("is not modelled with ZeRO-3 / FSDP parameter sharding"); });
  if (l.pp > 1 ? !r.interleaved : !r.interleaved && r.schedule != "1f1b")
    return rule("/strategy/schedule", [&] {
      return l.pp > 1 ? fmt::format(
                            "moe_a2a_overlap with pp = {} needs the interleaved-1f1b schedule (Megatron-Core "
                            "requires virtual pipeline stages), got {}",
                            l.pp, r.schedule)
                      : fmt::format(
                            "moe_a2a_overlap pairs the passes of a 1F1B order: it needs 1f1b or "
                            "interleaved-1f1b, got {}",
                            r.schedule);
    });
  return false;
}

// How a message names the model chunks: pp*interleave, or the chunks a schedule keeps
// without the interleave key (ZB-V's two).
std::string chunks_name(const LayoutRequest& r) {
  return r.chunks > 1 && !r.interleaved ? "pp*chunks" : "pp*interleave";
}

}  // namespace

void check_layout(const LayoutRequest& r, const LayoutSink& sink) {
  const Layout& l = r.layout;
  const TransformerConfig& c = *r.model;
  // Each rule: if broken, report; stop when the sink says so.
  auto broken = [&](LayoutIssue code, std::string_view path, const std::function<std::string()>& msg) {
    return !sink(code, path, msg);
  };
  const std::int64_t layout = l.devices();
  if (layout != r.devices &&
      broken(LayoutIssue::too_many_devices, l.cp > 1 ? "/strategy/cp" : "/strategy", [&] {
        return l.cp > 1 ? fmt::format("dp*cp*tp*pp = {}*{}*{}*{} = {} must equal the cluster's {} devices", l.dp, l.cp,
                                      l.tp, l.pp, layout, r.devices)
                        : fmt::format("dp*tp*pp = {}*{}*{} = {} must equal the cluster's {} devices", l.dp, l.tp, l.pp,
                                      layout, r.devices);
      }))
    return;
  // Context parallelism: each rank holds s/cp tokens; a causal model's load-balanced
  // assignment (Megatron-Core) splits the sequence into 2*cp chunks, rank i taking chunks i
  // and 2*cp-1-i, so s must be a multiple of 2*cp.
  const std::int64_t s = c.seq_len;
  if (l.cp > 1 && s > 0) {
    if (s % l.cp != 0) {
      if (broken(LayoutIssue::context, "/strategy/cp", [&] {
            return fmt::format("the sequence length {} is not divisible by cp = {}", s, l.cp);
          }))
        return;
    } else if (c.causal && (s / l.cp) % 2 != 0) {
      if (broken(LayoutIssue::context, "/strategy/cp", [&] {
            return fmt::format("s/cp = {}/{} = {} tokens per rank must be even: the load-balanced causal split gives "
                               "each rank two of 2*cp chunks",
                               s, l.cp, s / l.cp);
          }))
        return;
    }
  }
  if (c.heads > 0 && c.heads % l.tp != 0) {
    if (broken(LayoutIssue::heads, "/strategy/tp", [&] {
          return fmt::format("the model's {} attention heads are not divisible by tp = {}", c.heads, l.tp);
        }))
      return;
  } else if (c.kv_heads > 0 && c.kv_heads % l.tp != 0 && l.tp % c.kv_heads != 0) {
    if (broken(LayoutIssue::kv_heads, "/strategy/tp", [&] {
          return fmt::format("the model's {} key/value heads cannot be split over tp = {}", c.kv_heads, l.tp);
        }))
      return;
  }
  if (c.ffn_hidden > 0 && c.ffn_hidden % l.tp != 0 &&
      broken(LayoutIssue::ffn, "/strategy/tp",
             [&] { return fmt::format("the MLP size {} is not divisible by tp = {}", c.ffn_hidden, l.tp); }))
    return;
  if (expert_rules(r, broken)) return;
  const int v = r.chunks;
  if (r.interleave > 1 && !r.interleaved &&
      broken(LayoutIssue::interleave, "/strategy/interleave",
             [] { return std::string("interleave > 1 needs \"schedule\": \"interleaved-1f1b\""); }))
    return;
  if (r.interleaved && l.pp < 2 &&
      broken(LayoutIssue::schedule, "/strategy/schedule",
             [] { return std::string("the interleaved schedule needs pp >= 2"); }))
    return;
  if (l.pp % r.needs.pp_multiple != 0 && broken(LayoutIssue::schedule, "/strategy/pp", [&] {
        return fmt::format("the {} schedule needs pp to be a multiple of {}, got {}", r.schedule, r.needs.pp_multiple,
                           l.pp);
      }))
    return;
  const std::int64_t m = r.global_batch / (r.micro_batch * l.dp);
  if (r.global_batch % (r.micro_batch * l.dp) != 0) {
    if (broken(LayoutIssue::batch, "/workload/global_batch", [&] {
          return fmt::format("global batch {} is not divisible by micro_batch*dp = {}*{}", r.global_batch,
                             r.micro_batch, l.dp);
        }))
      return;
  } else if (m % r.needs.batch_multiple != 0 || m < static_cast<std::int64_t>(r.needs.min_batch_per_stage) * l.pp) {
    if (broken(LayoutIssue::interleaved_batch, "/workload/global_batch", [&] {
          return fmt::format(
              "the {} schedule needs the micro-batches per replica to be a multiple of {} and at least "
              "{}*pp = {}, got {}",
              r.schedule, r.needs.batch_multiple, r.needs.min_batch_per_stage, r.needs.min_batch_per_stage * l.pp, m);
        }))
      return;
  } else if (r.interleaved && m % l.pp != 0) {
    if (broken(LayoutIssue::interleaved_batch, "/workload/global_batch", [&] {
          return fmt::format("the interleaved schedule needs the {} micro-batches per replica to be a multiple of pp = {}",
                             m, l.pp);
        }))
      return;
  }
  if (m > 65535 && broken(LayoutIssue::too_many_micro_batches, "/workload/global_batch", [&] {
        return fmt::format("{} micro-batches per replica; at most 65535 supported", m);
      }))
    return;
  if (c.layers > 0 && c.layers < static_cast<std::int64_t>(l.pp) * v &&
      broken(LayoutIssue::layers, "/strategy/pp", [&] {
        return fmt::format("{} layers cannot fill {} = {}*{} model chunks", c.layers, chunks_name(r), l.pp, v);
      }))
    return;
  if (r.layers_per_stage && !r.layers_per_stage->empty()) {
    const auto& given = *r.layers_per_stage;
    const std::int64_t sum = std::accumulate(given.begin(), given.end(), std::int64_t{0});
    bool stop = false;
    if (static_cast<int>(given.size()) != l.pp) {
      stop = broken(LayoutIssue::uneven_layers, "/strategy/layers_per_stage",
                    [&] { return fmt::format("{} entries given for pp = {} stages", given.size(), l.pp); });
    } else if (sum != c.layers) {
      stop = broken(LayoutIssue::uneven_layers, "/strategy/layers_per_stage",
                    [&] { return fmt::format("entries sum to {}, the model has {} layers", sum, c.layers); });
    } else if (std::any_of(given.begin(), given.end(), [&](int x) { return x < v; })) {
      stop = broken(LayoutIssue::uneven_layers, "/strategy/layers_per_stage",
                    [&] { return fmt::format("every stage needs at least {} layers (one per chunk)", v); });
    }
    if (stop) return;
  }
  if (!r.pools) return;
  // Placement by device order: stage s holds devices [s * n, (s + 1) * n), n = dp * cp * tp,
  // and must sit inside one pool.
  const int n = l.per_stage();
  const std::int64_t total = r.pools->empty() ? 0 : r.pools->back().first + r.pools->back().count;
  for (int s = 0; s < l.pp; ++s) {
    const std::int64_t a = static_cast<std::int64_t>(s) * n, b = a + n - 1;
    if (b >= total) return;  // the device-count rule reported it
    const int pa = pool_index(*r.pools, a), pb = pool_index(*r.pools, b);
    if (pa != pb && broken(LayoutIssue::placement, "/strategy/pp", [&] {
          return fmt::format("pipeline stage {} (devices {}..{}) straddles pools \"{}\" and \"{}\"; make each pool "
                             "hold whole stages",
                             s, a, b, (*r.pools)[static_cast<std::size_t>(pa)].name,
                             (*r.pools)[static_cast<std::size_t>(pb)].name);
        }))
      return;
  }
}

int pool_index(const std::vector<PoolSpan>& pools, std::int64_t device) {
  for (std::size_t k = 0; k < pools.size(); ++k)
    if (device >= pools[k].first && device < pools[k].first + pools[k].count) return static_cast<int>(k);
  return -1;
}

std::vector<int> stage_pools(const Layout& l, const std::vector<PoolSpan>& pools) {
  std::vector<int> out;
  for (int s = 0; s < l.pp; ++s) out.push_back(pool_index(pools, l.first_device(s)));
  return out;
}

void check_layer_split(const LayoutRequest& r, const LayoutSink& sink) {
  if ((r.layers_per_stage && !r.layers_per_stage->empty()) || !r.uniform_stages) return;
  const int v = r.chunks;
  const std::int64_t chunks = static_cast<std::int64_t>(r.layout.pp) * v;
  if (r.model->layers % chunks == 0) return;
  sink(LayoutIssue::uneven_layers, "/strategy/pp", [&] {
    return fmt::format("{} layers are not divisible by {} = {}*{}; give \"layers_per_stage\"", r.model->layers,
                       chunks_name(r), r.layout.pp, v);
  });
}

LayoutIssue first_layout_issue(const LayoutRequest& r) {
  LayoutIssue first = LayoutIssue::none;
  const LayoutSink sink = [&](LayoutIssue code, std::string_view, const std::function<std::string()>&) {
    first = code;
    return false;
  };
  check_layout(r, sink);
  if (first == LayoutIssue::none) check_layer_split(r, sink);
  return first;
}

}  // namespace hcsim
