#include "TraceComparison.h"

#include "storage/formats/SnapshotReader.h"
#include "storage/import/TraceBuilder.h"
#include "storage/import/TraceImport.h"

namespace allocscope::testing {

std::vector<alloc::RecordedTrace> streamedTraces(const std::string& path) {
    storage::TraceBuilder builder;
    const formats::Snapshot rest = formats::SnapshotReader::readStreaming(path, builder);
    return builder.finish(rest);
}

std::vector<alloc::RecordedTrace> wholeTraces(const std::string& path) {
    return storage::tracesFromSnapshot(formats::SnapshotReader::readFile(path));
}

std::string traceDifference(const std::vector<alloc::RecordedTrace>& a, const std::vector<alloc::RecordedTrace>& b) {
    if (a.size() != b.size()) return "trace count " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    for (std::size_t t = 0; t < a.size(); ++t) {
        const alloc::RecordedTrace& x = a[t];
        const alloc::RecordedTrace& y = b[t];
        const std::string at = "trace " + std::to_string(t) + ": ";
        if (x.device != y.device || x.origin != y.origin || x.settings != y.settings || x.hasSegmentEvents != y.hasSegmentEvents) {
            return at + "header";
        }
        if (x.entries.size() != y.entries.size()) return at + "entry count";
        for (std::size_t i = 0; i < x.entries.size(); ++i) {
            const alloc::RecordedEntry& e = x.entries[i];
            const alloc::RecordedEntry& f = y.entries[i];
            if (e.action != f.action || e.address != f.address || e.size != f.size || x.stream(e) != y.stream(f) ||
                e.stackId != f.stackId) {
                return at + "entry " + std::to_string(i);
            }
        }
        if (x.stacks.size() != y.stacks.size()) return at + "stack count";
        for (std::uint32_t s = 0; s < x.stacks.size(); ++s) {
            if (x.stacks.stack(s) != y.stacks.stack(s)) return at + "stack " + std::to_string(s);
        }
        if (x.phases.size() != y.phases.size()) return at + "phase count";
        for (std::size_t p = 0; p < x.phases.size(); ++p) {
            if (x.phases[p].entryIndex != y.phases[p].entryIndex || x.phaseName(x.phases[p]) != y.phaseName(y.phases[p]) ||
                x.phases[p].begin != y.phases[p].begin) {
                return at + "phase " + std::to_string(p);
            }
        }
        if (x.finalSegments.has_value() != y.finalSegments.has_value()) return at + "final segments";
        if (!x.finalSegments) continue;
        if (x.finalSegments->size() != y.finalSegments->size()) return at + "final segment count";
        for (std::size_t s = 0; s < x.finalSegments->size(); ++s) {
            const alloc::SegmentInfo& g = (*x.finalSegments)[s];
            const alloc::SegmentInfo& h = (*y.finalSegments)[s];
            bool same = g.address == h.address && g.totalSize == h.totalSize && g.allocatedSize == h.allocatedSize &&
                        g.activeSize == h.activeSize && g.requestedSize == h.requestedSize && g.stream == h.stream &&
                        g.pool == h.pool && g.poolId == h.poolId && g.isExpandable == h.isExpandable &&
                        g.stackId == h.stackId && g.blocks.size() == h.blocks.size();
            for (std::size_t k = 0; same && k < g.blocks.size(); ++k) {
                const alloc::BlockInfo& u = g.blocks[k];
                const alloc::BlockInfo& v = h.blocks[k];
                same = u.address == v.address && u.size == v.size && u.requestedSize == v.requestedSize &&
                       u.state == v.state && u.stackId == v.stackId;
            }
            if (!same) return at + "final segment " + std::to_string(s);
        }
    }
    return "";
}

}  // namespace allocscope::testing
