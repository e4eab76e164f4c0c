#pragma once
// Events of one chunk as one BLOB: ~12 bytes an event instead of a ~90-byte row. Each field is
// a varint, most as a delta from the previous event (op indexes grow, the stream rarely
// changes, a block's segment is just below its address). The event's seq is implicit:
// the chunk's first_seq + position.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/core/Event.h"

namespace allocscope::storage {

class EventCodec {
public:
    static void encode(const alloc::Event* events, std::size_t count, std::string& out);
    // Appends the decoded events to `out`, numbering them from firstSeq. Throws SessionError
    // when the BLOB does not hold exactly `count` well-formed events.
    static void decode(std::string_view blob, std::uint64_t firstSeq, std::size_t count, std::vector<alloc::Event>& out);
};

}  // namespace allocscope::storage
