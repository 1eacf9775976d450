#pragma once
// The nearest valid name to a misspelt one, for "did you mean" hints: unknown keys, choices,
// presets, registry types (sim/core/params.cpp, registry.hpp) and sweep or check pointers
// (sim/sweep/sweep_checks.cpp). One edit distance for all of them.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace hcsim {

// Levenshtein distance: insertions, deletions and substitutions, each costing one.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `word` when it is at most `max_distance` edits away; ties go to
// the first in name order.
std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& candidates,
                                   std::size_t max_distance);

// The distance a slip of a name may have: 2 edits, or a third of the name's length if longer
// (1 for a word of two or three letters, 0 for one letter).
std::size_t slip_distance(const std::string& word);

// `did you mean "X"?` when `word` begins exactly one name (and no other), or when exactly
// one name is nearest to it and a slip away; else "valid ones are: a, b, c" (names in the
// order given).
std::string suggest(const std::string& word, const std::vector<std::string>& names);

}  // namespace hcsim
