#pragma once
// The closest of a list of names to a misspelt one, for "did you mean ...?" hints: the
// Levenshtein distance (insertions, deletions and substitutions, each costing 1).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace hcsim {

std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `word` (ties: the first in name order), or nullopt when even the
// nearest is more than `max_distance` edits away (another word, not a slip).
std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& candidates,
                                        std::size_t max_distance);

}  // namespace hcsim
