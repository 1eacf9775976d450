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

// The distance a slip of a name may have: 2 edits, or a third of the name's length if longer
// (1 for a word of two or three letters, 0 for one letter).
std::size_t slip_distance(const std::string& word);

// `did you mean "X"?` when `word` begins exactly one name (and no other), or when exactly
// one name is nearest to it and a slip away; else "valid ones are: a, b, c" (names in the
// order given). For unknown keys, choices, presets and types (sim/core/params.cpp,
// registry.hpp).
std::string suggest(const std::string& word, const std::vector<std::string>& names);

}  // namespace hcsim
