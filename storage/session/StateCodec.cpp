#include "storage/session/StateCodec.h"

#include <array>

#include "storage/session/ByteCodec.h"

namespace allocscope::storage {
namespace {

using alloc::DeviceStats;

// A keyframe segment's flags: 1 small pool, 2 expandable, 4 a private pool id (two varints)
// follows. Keyframes written before pool ids never set 4, so they decode unchanged (default pool),
// and a session without private pools is stored byte for byte as before.
constexpr unsigned kPrivatePoolFlag = 4;

constexpr std::array<std::int64_t DeviceStats::*, 6> kScalars = {
    &DeviceStats::num_alloc_retries, &DeviceStats::num_ooms,        &DeviceStats::num_sync_all_streams,
    &DeviceStats::num_device_alloc,  &DeviceStats::num_device_free, &DeviceStats::max_split_size};

void writeStat(ByteWriter& w, const alloc::Stat& s) {
    w.svarint(s.current);
    w.svarint(s.peak);
    w.svarint(s.allocated);
    w.svarint(s.freed);
}
void readStat(ByteReader& r, alloc::Stat& s) {
    s.current = r.svarint();
    s.peak = r.svarint();
    s.allocated = r.svarint();
    s.freed = r.svarint();
}
void writeStats(ByteWriter& w, const DeviceStats& stats) {
    for (auto member : alloc::kStatArrays) {
        for (const alloc::Stat& s : stats.*member) writeStat(w, s);
    }
    writeStat(w, stats.oversize_allocations);
    writeStat(w, stats.oversize_segments);
    for (auto member : kScalars) w.svarint(stats.*member);
}
void readStats(ByteReader& r, DeviceStats& stats) {
    for (auto member : alloc::kStatArrays) {
        for (alloc::Stat& s : stats.*member) readStat(r, s);
    }
    readStat(r, stats.oversize_allocations);
    readStat(r, stats.oversize_segments);
    for (auto member : kScalars) stats.*member = r.svarint();
}

}  // namespace

std::string StateCodec::encodeStats(const DeviceStats& stats) {
    ByteWriter w;
    writeStats(w, stats);
    return std::move(w.bytes());
}

DeviceStats StateCodec::decodeStats(std::string_view blob) {
    ByteReader r(blob, "statistics record");
    DeviceStats stats;
    readStats(r, stats);
    if (!r.atEnd()) r.damaged();
    return stats;
}

std::string StateCodec::encodeKeyframe(const SegmentStateModel& model) {
    ByteWriter w;
    writeStats(w, model.stats());
    w.varint(model.segmentTable().size());
    std::uint64_t prev = 0;
    for (const auto& [address, seg] : model.segmentTable()) {
        w.varint(address - prev);
        prev = address;
        w.varint(seg.size);
        w.varint(seg.stream);
        w.varint(seg.stackId);
        const bool privatePool = !seg.poolId.isDefault();
        w.byte(static_cast<std::uint8_t>((seg.pool == alloc::PoolKind::Small ? 1u : 0u) | (seg.expandable ? 2u : 0u) |
                                         (privatePool ? kPrivatePoolFlag : 0u)));
        if (privatePool) {
            w.varint(seg.poolId.first);
            w.varint(seg.poolId.second);
        }
    }
    w.varint(model.blocks().size());
    prev = 0;
    for (const auto& [address, b] : model.blocks()) {
        w.varint(address - prev);
        prev = address;
        w.varint(b.size);
        w.varint(b.requested);
        w.svarint(static_cast<std::int64_t>(address - b.segment));
        w.varint(b.stream);
        w.varint(b.allocSeq);
        w.varint(b.stackId);
        w.byte(static_cast<std::uint8_t>(static_cast<unsigned>(b.state) | (b.pool == alloc::PoolKind::Small ? 4u : 0u) |
                                         (b.expandable ? 8u : 0u)));
    }
    w.varint(model.gaps().size());
    for (const auto& [address, requested] : model.gaps()) {
        w.varint(address);
        w.varint(requested);
    }
    return std::move(w.bytes());
}

void StateCodec::decodeKeyframe(std::string_view blob, std::uint64_t seq, SegmentStateModel& model) {
    ByteReader r(blob, "keyframe");
    DeviceStats stats;
    readStats(r, stats);
    auto& segments = model.mutableSegments();
    auto& blocks = model.mutableBlocks();
    segments.clear();
    blocks.clear();
    const std::uint64_t segmentCount = r.varint();
    std::uint64_t prev = 0;
    for (std::uint64_t i = 0; i < segmentCount; ++i) {
        prev += r.varint();
        ModelSegment seg;
        seg.size = r.varint();
        seg.stream = r.varint();
        seg.stackId = static_cast<std::uint32_t>(r.varint());
        const std::uint8_t flags = r.byte();
        seg.pool = (flags & 1) != 0 ? alloc::PoolKind::Small : alloc::PoolKind::Large;
        seg.expandable = (flags & 2) != 0;
        if ((static_cast<unsigned>(flags) & ~(1u | 2u | kPrivatePoolFlag)) != 0) r.damaged();
        if ((static_cast<unsigned>(flags) & kPrivatePoolFlag) != 0) {
            seg.poolId.first = r.varint();
            seg.poolId.second = r.varint();
            if (seg.poolId.isDefault()) r.damaged();
        }
        segments.emplace_hint(segments.end(), prev, seg);
    }
    const std::uint64_t blockCount = r.varint();
    prev = 0;
    for (std::uint64_t i = 0; i < blockCount; ++i) {
        prev += r.varint();
        ModelBlock b;
        b.size = r.varint();
        b.requested = r.varint();
        b.segment = prev - static_cast<std::uint64_t>(r.svarint());
        b.stream = r.varint();
        b.allocSeq = r.varint();
        b.stackId = static_cast<std::uint32_t>(r.varint());
        const std::uint8_t flags = r.byte();
        if ((flags & 3) > 2) r.damaged();
        b.state = static_cast<alloc::BlockState>(flags & 3);
        b.pool = (flags & 4) != 0 ? alloc::PoolKind::Small : alloc::PoolKind::Large;
        b.expandable = (flags & 8) != 0;
        blocks.emplace_hint(blocks.end(), prev, b);
    }
    auto& gaps = model.mutableGaps();
    gaps.clear();
    const std::uint64_t gapCount = r.varint();
    for (std::uint64_t i = 0; i < gapCount; ++i) {
        const std::uint64_t address = r.varint();
        gaps[address] = r.varint();
    }
    if (!r.atEnd()) r.damaged();
    model.setStats(stats);
    model.setApplied(seq);
    model.recount();
}

}  // namespace allocscope::storage
