#include "nearest.hpp"

#include <algorithm>

#include "params.hpp"

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

std::size_t slip_distance(const std::string& word) {
  if (word.size() <= 3) return word.size() > 1 ? 1 : 0;  // "x" is one edit from every one-letter name
  return std::max<std::size_t>(2, word.size() / 3);
}

std::string suggest(const std::string& word, const std::vector<std::string>& names) {
  // A word that begins valid names is a shortened one ("nvidia-a100" of
  // "nvidia-a100-80gb-sxm"), not a slip of another name a few edits away ("nvidia-b200").
  std::vector<std::string> longer;
  for (const auto& n : names)
    if (n.size() > word.size() && n.starts_with(word)) longer.push_back(n);
  if (longer.size() == 1 && !word.empty()) return "did you mean \"" + longer.front() + "\"?";
  if (!longer.empty()) return valid_list(names);
  // Offered only when one name is nearest: "rs" is one edit from "os", "ws" and "is" alike.
  std::size_t best = 0, ties = 0;
  const std::string* meant = nullptr;
  for (const auto& n : names) {
    const std::size_t d = edit_distance(word, n);
    if (!meant || d < best) best = d, ties = 1, meant = &n;
    else if (d == best) ++ties;
  }
  if (meant && ties == 1 && best <= slip_distance(word)) return "did you mean \"" + *meant + "\"?";
  return valid_list(names);
}

}  // namespace hcsim
