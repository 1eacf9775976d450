#pragma once
// The labels of the lowering's compute tasks (workloads/lowering_pass.cpp): the model ops a task
// runs, from the first to the last in execution order, with their layers' indices in the
// model ("L3 attention fwd", "L3 norm2..mlp_down fwd", "L0 norm1..L11 dropout_residual2 fwd",
// "embedding fwd"), interned once each in the task graph (the trace names slices by them).

#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>

#include "workloads/items.hpp"
#include "workloads/task_graph.hpp"

namespace hcsim {

class SpanLabels {
 public:
  explicit SpanLabels(TaskGraph& g) : g_(g) {}
  // The label of a task that runs `first` .. `last` of a chunk whose first layer is the
  // model's layer `first_layer`.
  std::uint32_t label(const Item& first, const Item& last, Phase phase, int first_layer);

 private:
  TaskGraph& g_;
  // (first layer, first op, last layer, last op, phase) -> label
  std::map<std::tuple<int, std::string_view, int, std::string_view, int>, std::uint32_t> labels_;
};

}  // namespace hcsim
