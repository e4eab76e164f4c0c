#include "storage/session/EventCodec.h"

#include "storage/session/ByteCodec.h"

namespace allocscope::storage {

void EventCodec::encode(const alloc::Event* events, std::size_t count, std::string& out) {
    ByteWriter w;
    w.bytes().reserve(count * 14);
    std::uint64_t prevOp = 0;
    std::uint64_t prevAddress = 0;
    std::uint64_t prevStream = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const alloc::Event& e = events[i];
        const bool privatePool = !e.poolId.isDefault();
        if (privatePool) w.byte(kPoolMarker);
        w.byte(static_cast<std::uint8_t>(static_cast<unsigned>(e.action) | (static_cast<unsigned>(e.cause) << 4) |
                                         (e.pool == alloc::PoolKind::Small ? 0x80u : 0u)));
        w.varint(e.opIndex - prevOp);
        w.svarint(static_cast<std::int64_t>(e.address - prevAddress));
        w.varint(e.size);
        w.svarint(static_cast<std::int64_t>(e.roundedSize - e.size));
        w.svarint(static_cast<std::int64_t>(e.stream - prevStream));
        w.svarint(static_cast<std::int64_t>(e.address - e.segment));
        w.varint(e.stackId);
        if (privatePool) {
            w.varint(e.poolId.first);
            w.varint(e.poolId.second);
        }
        prevOp = e.opIndex;
        prevAddress = e.address;
        prevStream = e.stream;
    }
    out = std::move(w.bytes());
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
