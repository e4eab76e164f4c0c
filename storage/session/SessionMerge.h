#pragma once
// Merging sessions: the runs of several session files copied into one new file, with everything
// a run owns (events, timeline samples, keyframes, statistics fixups, heatmap, summary, phases,
// stacks, verdict, where its history starts). This is how per-node sessions of a cluster job
// become one file. The inputs are only read; the output appears complete or not at all.
#include <cstdint>
#include <string>
#include <vector>

namespace allocscope::storage {

class SessionMerge {
public:
    struct MergedRun {
        int number = 0;          // its number in the merged session
        std::string input;       // the session it came from
        int sourceNumber = 0;    // its number there
        std::string name;
    };

    // Copies every run of `inputs`, input by input and each input's runs in their order, into a
    // new session at `output`. Every input is checked first (an intact session of this schema:
    // an older one must be migrated first, a damaged one is refused by name) and nothing is
    // written before all of them pass. `output` must not exist; a merge that fails leaves nothing
    // there. Throws SessionError (what + which file).
    static std::vector<MergedRun> merge(const std::vector<std::string>& inputs, const std::string& output);
};

}  // namespace allocscope::storage
