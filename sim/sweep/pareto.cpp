#include "pareto.hpp"

namespace hcsim::sweep {
namespace {

bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
  bool strictly = false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k] > b[k]) return false;
    if (a[k] < b[k]) strictly = true;
  }
  return strictly;
}

}  // namespace

std::vector<std::size_t> pareto_front(const std::vector<std::vector<double>>& objectives) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < objectives.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < objectives.size() && !dominated; ++j)
      dominated = j != i && dominates(objectives[j], objectives[i]);
    if (!dominated) front.push_back(i);
  }
  return front;
}

}  // namespace hcsim::sweep
