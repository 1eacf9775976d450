#include "models/compression/codec.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace hcsim {

std::string_view wire_op_name(WireOp op) {
  switch (op) {
    case WireOp::all_reduce: return "all_reduce";
    case WireOp::all_gather: return "all_gather";
    case WireOp::all_to_all: return "all_to_all";
  }
  return "?";
}

bool CollectivePlan::in_place() const {
  for (const auto& ph : phases)
    if (ph.op != WireOp::all_reduce) return false;
  return true;
}

Bytes bytes_sent_per_rank(const CollectivePlan& plan, int ranks) {
  HCSIM_ASSERT(ranks >= 1, "a collective needs at least one rank");
  const double n = ranks;
  Bytes sent{};
  for (const auto& ph : plan.phases)
    sent += ph.buffer * ((ph.op == WireOp::all_reduce ? 2.0 : 1.0) * (n - 1) / n);
  return sent;
}

namespace {
void check_input(const CodecInput& in) {
  HCSIM_ASSERT(in.rows >= 0 && in.cols >= 0, "a tensor has no negative dimension");
  HCSIM_ASSERT(in.elem_bytes > 0, "an element has a positive size");
  HCSIM_ASSERT(in.ranks >= 1, "a reduction needs at least one rank");
  HCSIM_ASSERT(in.step >= 0, "training steps count from 0");
}
}  // namespace

CodecCost Codec::cost(const CodecInput& in) const {
  check_input(in);
  return compute_cost(in);
}

CodecCost Codec::cost(std::int64_t elements, double elem_bytes, int ranks, std::int64_t step) const {
  return cost(CodecInput{elements, 1, elem_bytes, ranks, step});
}

CodecCost Codec::allgather_cost(const CodecInput& in) const {
  check_input(in);
  return in_place_allreduce() ? compute_cost(in) : compute_allgather_cost(in);
}

ParamSpec on_incompatible_param() {
  return {.name = "on_incompatible",
          .kind = ParamKind::choice,
          .def = "error",
          .choices = {"error", "allgather"},
          .help = "when the strategy needs an in-place ring all-reduce and the codec cannot be summed in place: "
                  "report an error, or let each rank all-gather every rank's encoded gradient"};
}

OnIncompatible on_incompatible_from(std::string_view name) {
  if (name == "error") return OnIncompatible::error;
  HCSIM_ASSERT(name == "allgather", "on_incompatible was not checked against its declaration");
  return OnIncompatible::allgather;
}

CodecCost cost_for_in_place_allreduce(const Codec& codec, const CodecInput& in, OnIncompatible policy,
                                      const std::string& path) {
  if (codec.in_place_allreduce()) return codec.cost(in);
  if (policy == OnIncompatible::error)
    throw InputError(path, fmt::format("compression codec \"{}\" cannot be carried by an in-place ring all-reduce: "
                                       "{}; set \"on_incompatible\": \"allgather\" to all-gather the encoded "
                                       "gradients instead, or choose a codec that sums in place",
                                       codec.type(), codec.why_not_in_place()));
  return codec.allgather_cost(in);
}

std::optional<CompressionConfig> resolve_compression(const nlohmann::json& desc, const std::string& path,
                                                     Diagnostics& diag, nlohmann::json* resolved) {
  register_builtin_codecs();
  if (!desc.is_object()) {
    diag.error(path, "expected an object such as {\"type\": \"fp16\"}, got " + desc.dump());
    return std::nullopt;
  }
  auto type = desc.find("type");
  if (type == desc.end() || !type->is_string()) {
    diag.error(json_child(path, "type"), type == desc.end() ? "required key is missing"
                                                            : "expected a string, got " + type->dump());
    return std::nullopt;
  }
  bool ok = true;
  CompressionConfig out;
  if (auto it = desc.find("on_incompatible"); it != desc.end()) {
    Diagnostics local;
    auto v = resolve_value(on_incompatible_param(), *it, json_child(path, "on_incompatible"), local);
    for (const auto& i : local.issues()) diag.error(i.path, i.message);
    if (v) out.on_incompatible = on_incompatible_from(v->get<std::string>());
    ok = v.has_value();
  }
  out.codec = codecs().build(type->get<std::string>(), desc, path, diag, {"type", "on_incompatible"}, resolved);
  if (!ok || !out.codec) return std::nullopt;
  if (resolved) {
    (*resolved)["type"] = *type;
    if (desc.contains("on_incompatible")) (*resolved)["on_incompatible"] = desc.at("on_incompatible");
  }
  return out;
}

}  // namespace hcsim
