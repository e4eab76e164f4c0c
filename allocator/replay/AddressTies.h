#pragma once
// How firm a what-if's answer is. Best fit takes the lowest address among equal free blocks
// (PyTorch 2.11), so where equal candidates lie in different segments, the segments' bases
// decided. A base is recorded when the recording created a segment of that size there in the same
// program step while every live segment of the replay was a recorded one too (the address oracle
// of an exact replay, or a placement model that reused the recording's answer before the what-if
// created anything the recording did not have: after that the real driver's state differed, and
// so may its answers). Any other base (a placement model's guess, a recorded answer reused in
// another state, the simulated device's own) is modelled, and a decision among candidates of
// which any segment is modelled rests on the model: another placement could have changed it.
//
// A replay counts them (TraceReplayer: ReplayResult::addressTies). Not counted: other
// address-ordered choices (which segments empty_cache(), GC or the OOM release free first among
// equals), which change the order of releases but not what is reserved in the shared traces.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "allocator/core/BestFitTie.h"

namespace allocscope::alloc {

struct AddressTie {
    BestFitTie tie;               // the chosen block and the first modelled candidate (or the chosen one's)
    std::size_t entryIndex = 0;   // the recorded trace entry of the step (its program event)
    bool chosenModelled = false;  // the chosen block's segment base did not come from the recording
    bool otherModelled = false;
};

struct AddressTies {
    std::uint64_t total = 0;     // best-fit decisions settled by an address (equal candidates in 2+ segments)
    std::uint64_t modelled = 0;  // ... by an address that did not come from the recording
    std::optional<AddressTie> firstModelled;

    // "0 of 12 best-fit ties ..." / "3 of 12 ... the first at op 418 (trace entry 1650): ...".
    std::string describe() const;
    // (modelled, total) read back from a text that contains describe()'s (a stored what-if
    // verdict); nullopt when it has none.
    static std::optional<std::pair<std::uint64_t, std::uint64_t>> countsIn(std::string_view text);
};

}  // namespace allocscope::alloc
