#include "storage/session/EventCodec.h"

#include <vector>

#include "storage/session/ByteCodec.h"

namespace allocscope::storage {

namespace {

// The most bytes one event takes: the pool marker, the head byte, seven varints and two for a
// private pool.
constexpr std::size_t kMaxEventBytes = 2 + 9 * kMaxVarintBytes;

}  // namespace

void EventCodec::encode(const alloc::Event* events, std::size_t count, std::string& out) {
    // A scratch buffer for the worst case that stays with the thread (growing a string to it
    // would zero-fill 92 bytes per event on every call), then one copy of what was written.
    thread_local std::vector<std::uint8_t> scratch;
    if (scratch.size() < count * kMaxEventBytes) scratch.resize(count * kMaxEventBytes);
    std::uint8_t* const begin = scratch.data();
    std::uint8_t* p = begin;
    std::uint64_t prevOp = 0;
    std::uint64_t prevAddress = 0;
    std::uint64_t prevStream = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const alloc::Event& e = events[i];
        const bool privatePool = !e.poolId.isDefault();
        if (privatePool) *p++ = kPoolMarker;
        *p++ = static_cast<std::uint8_t>(static_cast<unsigned>(e.action) | (static_cast<unsigned>(e.cause) << 4) |
                                         (e.pool == alloc::PoolKind::Small ? 0x80u : 0u));
        p = putVarint(p, e.opIndex - prevOp);
        p = putSvarint(p, static_cast<std::int64_t>(e.address - prevAddress));
        p = putVarint(p, e.size);
        p = putSvarint(p, static_cast<std::int64_t>(e.roundedSize - e.size));
        p = putSvarint(p, static_cast<std::int64_t>(e.stream - prevStream));
        p = putSvarint(p, static_cast<std::int64_t>(e.address - e.segment));
        p = putVarint(p, e.stackId);
        if (privatePool) {
            p = putVarint(p, e.poolId.first);
            p = putVarint(p, e.poolId.second);
        }
        prevOp = e.opIndex;
        prevAddress = e.address;
        prevStream = e.stream;
    }
    out.assign(reinterpret_cast<const char*>(begin), static_cast<std::size_t>(p - begin));
}

void EventCodec::decode(std::string_view blob, std::uint64_t firstSeq, std::size_t count, std::vector<alloc::Event>& out) {
    ByteReader r(blob, "event chunk");
    std::uint64_t prevOp = 0;
    std::uint64_t prevAddress = 0;
    std::uint64_t prevStream = 0;
    out.reserve(out.size() + count);
    for (std::size_t i = 0; i < count; ++i) {
        alloc::Event e;
        std::uint8_t head = r.byte();
        const bool privatePool = head == kPoolMarker;
        if (privatePool) head = r.byte();
        const unsigned action = head & 0x0f;
        const unsigned cause = (head >> 4) & 0x07;
        if (action >= static_cast<unsigned>(alloc::kEventActionCount) || cause >= static_cast<unsigned>(alloc::kEventCauseCount)) {
            r.damaged();
        }
        e.seq = firstSeq + i;
        e.action = static_cast<alloc::EventAction>(action);
        e.cause = static_cast<alloc::EventCause>(cause);
        e.pool = (head & 0x80) != 0 ? alloc::PoolKind::Small : alloc::PoolKind::Large;
        e.opIndex = prevOp + r.varint();
        e.address = prevAddress + static_cast<std::uint64_t>(r.svarint());
        e.size = r.varint();
        e.roundedSize = e.size + static_cast<std::uint64_t>(r.svarint());
        e.stream = prevStream + static_cast<std::uint64_t>(r.svarint());
        e.segment = e.address - static_cast<std::uint64_t>(r.svarint());
        const std::uint64_t stack = r.varint();
        if (stack > 0xffffffffu) r.damaged();
        e.stackId = static_cast<std::uint32_t>(stack);
        if (privatePool) {
            e.poolId.first = r.varint();
            e.poolId.second = r.varint();
            // The marker is written only for a private pool: (0, 0) here is a damaged chunk.
            if (e.poolId.isDefault()) r.damaged();
        }
        prevOp = e.opIndex;
        prevAddress = e.address;
        prevStream = e.stream;
        out.push_back(e);
    }
    if (!r.atEnd()) r.damaged();
}

}  // namespace allocscope::storage
