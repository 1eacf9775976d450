#include "workloads/span_labels.hpp"

#include <string>

namespace hcsim {

std::uint32_t SpanLabels::label(const Item& first, const Item& last, Phase phase, int first_layer) {
  const int a = first.layer < 0 ? -1 : first_layer + first.layer;
  const int b = last.layer < 0 ? -1 : first_layer + last.layer;
  const std::string_view fo(first.op_name), lo(last.op_name);
  auto k = std::make_tuple(a, fo, b, lo, static_cast<int>(phase));
  if (auto it = labels_.find(k); it != labels_.end()) return it->second;
  auto name = [](int layer, std::string_view op) {
    return layer < 0 ? std::string(op) : "L" + std::to_string(layer) + " " + std::string(op);
  };
  std::string text = name(a, fo);
  if (a == b && fo != lo) text += ".." + std::string(lo);
  else if (a != b || fo != lo) text += ".." + name(b, lo);
  text += phase == Phase::forward ? " fwd" : phase == Phase::backward ? " bwd" : " recompute";
  return labels_[k] = g_.intern_label(text);
}

}  // namespace hcsim
