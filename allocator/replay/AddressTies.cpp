#include "allocator/replay/AddressTies.h"

#include "allocator/core/FormatSize.h"
#include "allocator/core/HexAddress.h"

namespace allocscope::alloc {

std::string AddressTies::describe() const {
    std::string text = std::to_string(modelled) + " of " + std::to_string(total) +
                       " best-fit ties between equal free blocks were broken by a modelled segment address";
    if (!firstModelled) return text + (total == 0 ? "" : " (every tie was broken by recorded addresses)");
    const AddressTie& first = *firstModelled;
    const BestFitTie& t = first.tie;
    auto segment = [](std::uint64_t base, bool guessed) {
        return "segment " + hexAddress(base) + (guessed ? ", modelled" : ", recorded");
    };
    return text + "; the first at op " + std::to_string(t.opIndex) + " (trace entry " + std::to_string(first.entryIndex) +
           "): a " + formatSize(t.requestSize) + " request took the " + formatSize(t.blockSize) + " block at " +
           hexAddress(t.chosen) + " (" + segment(t.chosenSegment, first.chosenModelled) + ") over " + hexAddress(t.other) + " (" +
           segment(t.otherSegment, first.otherModelled) + ")";
}

}  // namespace allocscope::alloc
