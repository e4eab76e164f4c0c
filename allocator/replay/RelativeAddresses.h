#pragma once
// Addresses of one run expressed so that two processes can be compared: (the ordinal of the
// segment or expandable reservation that holds the address, in creation order; the offset in it).
// Two runs of one program under the same decisions create segments in the same order, whatever
// virtual addresses their drivers handed out, so equal positions mean equal decisions.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "allocator/core/Event.h"

namespace allocscope::alloc {

struct RelativePosition {
    std::size_t ordinal = 0;   // creation order of the segment / reservation (from 0)
    std::uint64_t offset = 0;  // bytes from its base
    bool operator==(const RelativePosition&) const = default;
};

class RelativeAddresses {
public:
    // `reservationSize`: the extent of an expandable reservation (9/8 of total memory in pages).
    explicit RelativeAddresses(std::uint64_t reservationSize) : reservationSize_(reservationSize) {}
    // Follows a segment event (segment_alloc / segment_free / segment_map / segment_unmap).
    void note(EventAction action, std::uint64_t address, std::uint64_t size);
    std::optional<RelativePosition> locate(std::uint64_t address) const;
    static std::string describe(const std::optional<RelativePosition>& position);

private:
    struct Range {
        std::uint64_t size = 0;
        std::size_t ordinal = 0;
    };
    std::uint64_t reservationSize_;
    std::map<std::uint64_t, Range> live_;  // base -> extent, ordinal
    std::size_t next_ = 0;
};

}  // namespace allocscope::alloc
