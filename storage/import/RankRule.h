#pragma once
// Which rank of a distributed job a snapshot came from. A job writes one snapshot per rank, and
// the rank is either in the file's name or in the `user_metadata` the program set with
// torch.cuda.memory._set_memory_metadata (PyTorch copies it onto every later trace entry).
//
// The rule (the README quotes it):
//   user_metadata: the word `rank` (not preceded by a letter, any case), then at most four of
//     ` "'_-:=`, then digits: "rank=3", "rank: 3", {"rank": 3}, "global_rank 3".
//   file name (its last path component), when no metadata carries one: `rank` (not preceded by a
//     letter, any case), an optional `_`, `-` or `.`, then digits: rank3, rank_3, RANK-03,
//     trace.rank.7.pickle; else `r` right after the start or a `_`, `-`, `.`, then digits, then
//     `_`, `-`, `.` or the end: run_r3_x.pickle, snap-r12.pickle, r5.json.
// The first match wins; a number over 9 digits is not a rank. The metadata wins over the name:
// the program said it, a launcher may name files by another numbering.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace allocscope::storage {

struct FoundRank {
    int rank = 0;
    bool fromMetadata = false;  // user_metadata; false: the file name
};

class RankRule {
public:
    static std::optional<int> fromFileName(std::string_view path);
    static std::optional<int> fromMetadata(std::string_view metadata);
    // The metadata strings in order (the first that carries a rank), else the file's name.
    static std::optional<FoundRank> find(std::string_view path, const std::vector<std::string>& metadata);
};

}  // namespace allocscope::storage
