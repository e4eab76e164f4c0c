#pragma once
// Events of one chunk as one BLOB: ~12 bytes an event instead of a ~90-byte row. Each field is
// a varint, most as a delta from the previous event (op indexes grow, the stream rarely
// changes, a block's segment is just below its address). The event's seq is implicit:
// the chunk's first_seq + position.
//
// An event with a private pool id (alloc::Event::poolId, set on the segment events of CUDA-graph
// and MemPool segments) is written as the marker byte kPoolMarker, the usual fields, then the
// pool id's two components as varints. The marker's action nibble (15) is one no event has, so
// every chunk written before pool ids existed decodes unchanged (its events in the default pool),
// and a run without private pools is stored byte for byte as before. A build older than the
// marker rejects a chunk holding one as damaged rather than misreading it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/core/Event.h"

namespace allocscope::storage {

class EventCodec {
public:
    static constexpr std::uint8_t kPoolMarker = 0x0f;
    static void encode(const alloc::Event* events, std::size_t count, std::string& out);
    // Appends the decoded events to `out`, numbering them from firstSeq. Throws SessionError
    // when the BLOB does not hold exactly `count` well-formed events.
    static void decode(std::string_view blob, std::uint64_t firstSeq, std::size_t count, std::vector<alloc::Event>& out);
};

}  // namespace allocscope::storage
