#pragma once
// The OOM tab's view data (views::OomAnswerData) from the domain, in two steps, so the facts are
// on screen at once and the what-if (a replay per config) follows:
//   fromSession: what the session itself holds about the run's first OOM -- the oom event (the
//     request, its stream and op), the allocator's state right after it (reserved, allocated,
//     cached free, the largest free block) and the live blocks with their stacks;
//   applyAnalysis: alloc::OomAnswer (OomAnalyzer, the same answer `allocscope-cli oom` prints)
//     on top -- the headline, the inferred limit, PyTorch's message and the what-if rows.
// Pure functions: tests call them on known inputs, OomAnswerController off the GUI thread.
#include <QString>

#include <cstdint>
#include <functional>
#include <vector>

#include "allocator/compare/OomAnswer.h"
#include "allocator/core/Event.h"
#include "allocator/core/StackTable.h"
#include "storage/session/LiveBlocks.h"
#include "storage/session/SessionTypes.h"
#include "views/data/OomAnswerData.h"

namespace allocscope::app {

struct OomAnswerAdapter {
    using StackOf = std::function<alloc::Stack(std::uint32_t stackId)>;
    static constexpr std::size_t kHolders = 20;  // the largest live blocks listed; the rest summed

    static views::OomAnswerData fromSession(const storage::RunRow& run, const alloc::Event& oom, const storage::StateAtEvent& state,
                                            const std::vector<storage::LiveBlock>& live, const StackOf& stackOf);
    static void applyAnalysis(views::OomAnswerData& data, const alloc::OomAnswer& answer);

    // The headline when there is no what-if to answer from: the verdict in one line.
    static QString headlineFromFacts(const views::OomAnswerData& data);
    // The limit a simulated run ran under, from its device (total memory × memory fraction when
    // there is one, else what was reserved plus what the device still had free at the failure).
    static views::OomLimit limitOfRun(const storage::RunRow& run, const alloc::Event& oom, std::uint64_t reserved);
};

}  // namespace allocscope::app
