#pragma once
// The GPU race's fidelity checks: AllocScope's statistics (all 122 keys) and segment/block
// layout (sizes, states, order; addresses aside) against c10's, as "MATCH (...)" or the first
// difference. Header-only, CUDA-free.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/SegmentInfo.h"

namespace allocscope::gpu {

inline std::string compareStats(const alloc::DeviceStats& ours, const alloc::DeviceStats& theirs) {
    const auto a = ours.flatten();
    const auto b = theirs.flatten();
    if (a.size() != b.size()) return "DIFF key count " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] != b[i]) {
            return "DIFF " + a[i].first + ": allocscope " + std::to_string(a[i].second) + ", c10 " +
                   std::to_string(b[i].second);
        }
    }
    return "MATCH (" + std::to_string(a.size()) + " keys)";
}

// The segments in an order that does not depend on where the driver put them: by stream, pool,
// kind, size, then block by block (size, state, requested size). The race's allocators draw
// segments from one driver at once, interleaved, so the same decisions can end in a different
// address order; every segment and block must still match one for one.
inline std::vector<alloc::SegmentInfo> canonicalOrder(std::vector<alloc::SegmentInfo> segments) {
    auto key = [](const alloc::SegmentInfo& s) {
        std::vector<std::uint64_t> k = {s.stream, static_cast<std::uint64_t>(s.pool), s.isExpandable ? 1u : 0u, s.totalSize,
                                        s.allocatedSize, s.activeSize, s.requestedSize};
        for (const alloc::BlockInfo& b : s.blocks) {
            k.push_back(b.size);
            k.push_back(static_cast<std::uint64_t>(b.state));
            k.push_back(b.requestedSize);
        }
        return k;
    };
    std::stable_sort(segments.begin(), segments.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    return segments;
}

inline std::string compareLayouts(const std::vector<alloc::SegmentInfo>& ours, const std::vector<alloc::SegmentInfo>& theirs) {
    auto field = [](std::size_t s, const std::string& what, std::uint64_t a, std::uint64_t b) {
        return "DIFF segment " + std::to_string(s) + " " + what + ": allocscope " + std::to_string(a) + ", c10 " +
               std::to_string(b);
    };
    if (ours.size() != theirs.size()) return field(0, "count", ours.size(), theirs.size());
    std::size_t blocks = 0;
    for (std::size_t s = 0; s < ours.size(); ++s) {
        const alloc::SegmentInfo& a = ours[s];
        const alloc::SegmentInfo& b = theirs[s];
        if (a.totalSize != b.totalSize) return field(s, "total_size", a.totalSize, b.totalSize);
        if (a.pool != b.pool) return field(s, "is_large", a.pool == alloc::PoolKind::Large, b.pool == alloc::PoolKind::Large);
        if (a.isExpandable != b.isExpandable) return field(s, "is_expandable", a.isExpandable, b.isExpandable);
        if (a.allocatedSize != b.allocatedSize) return field(s, "allocated_size", a.allocatedSize, b.allocatedSize);
        if (a.activeSize != b.activeSize) return field(s, "active_size", a.activeSize, b.activeSize);
        if (a.requestedSize != b.requestedSize) return field(s, "requested_size", a.requestedSize, b.requestedSize);
        if (a.stream != b.stream) return field(s, "stream", a.stream, b.stream);
        if (a.blocks.size() != b.blocks.size()) return field(s, "block count", a.blocks.size(), b.blocks.size());
        for (std::size_t k = 0; k < a.blocks.size(); ++k) {
            const std::string where = "block " + std::to_string(k) + " ";
            if (a.blocks[k].size != b.blocks[k].size) return field(s, where + "size", a.blocks[k].size, b.blocks[k].size);
            if (a.blocks[k].state != b.blocks[k].state) {
                return "DIFF segment " + std::to_string(s) + " " + where + "state: allocscope " +
                       std::string(alloc::blockStateName(a.blocks[k].state)) + ", c10 " +
                       std::string(alloc::blockStateName(b.blocks[k].state));
            }
            if (a.blocks[k].requestedSize != b.blocks[k].requestedSize) {
                return field(s, where + "requested_size", a.blocks[k].requestedSize, b.blocks[k].requestedSize);
            }
        }
        blocks += a.blocks.size();
    }
    return "MATCH (" + std::to_string(ours.size()) + " segments, " + std::to_string(blocks) + " blocks)";
}

}  // namespace allocscope::gpu
