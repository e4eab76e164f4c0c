#pragma once
// "Did you mean ...": the nearest valid key (or value) to a misspelt one.
//
// Plain edit distance is not enough: `garbage_interval` is 16 edits from
// `garbage_collection_threshold` and closer to several unrelated keys. So candidates are ranked
// first by how many underscore-separated words they share (a word matches when it is within one
// edit, ignoring case), then by case-insensitive edit distance. Unit words ("mb", "on") carry no
// weight. A candidate that shares no word must be within a third of the length in edits.
#include <string>
#include <string_view>
#include <vector>

namespace allocscope::alloc {

class KeySuggester {
public:
    // "" when nothing is plausibly meant.
    static std::string nearest(std::string_view word, const std::vector<std::string_view>& candidates);
    static std::size_t editDistance(std::string_view a, std::string_view b);  // Damerau (adjacent swaps)
};

}  // namespace allocscope::alloc
