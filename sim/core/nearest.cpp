#include "nearest.hpp"

#include <algorithm>

namespace hcsim {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& candidates,
                                        std::size_t max_distance) {
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_d || (d == best_d && c < *best)) best = c, best_d = d;
  }
  if (!best || best_d > max_distance) return std::nullopt;
  return best;
}

}  // namespace hcsim
