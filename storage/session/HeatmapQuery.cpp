#include "storage/session/HeatmapQuery.h"

#include <algorithm>

#include "storage/session/HeatmapRaster.h"
#include "storage/session/HeatmapTable.h"
#include "storage/session/StateCursor.h"

namespace allocscope::storage {

std::optional<HeatmapGrid> HeatmapQuery::stored(SessionReader& reader, int run) {
    return HeatmapTable::read(reader.db(), run);
}

namespace {

// Picks, for each output column, the last stored column at or before the column's end event,
// and averages stored rows into the output rows.
HeatmapGrid resample(const HeatmapGrid& in, std::uint64_t first, std::uint64_t last, int columns, int rows) {
    HeatmapGrid out;
    out.axis = in.axis;
    out.axisBytes = in.axisBytes;
    out.columns = columns;
    out.rows = std::min(rows, in.rows);
    const std::uint64_t length = last - first + 1;
    for (auto& plane : out.shares) plane.assign(out.cellCount(), 0);
    for (int c = 0; c < columns; ++c) {
        const std::uint64_t end = first + (static_cast<std::uint64_t>(c) + 1) * length / static_cast<std::uint64_t>(columns) - 1;
        auto it = std::upper_bound(in.columnEvents.begin(), in.columnEvents.end(), end);
        std::size_t source = it == in.columnEvents.begin() ? 0 : static_cast<std::size_t>(it - in.columnEvents.begin()) - 1;
        out.columnEvents.push_back(in.columnEvents.empty() ? end : in.columnEvents[source]);
        if (in.rows == 0 || in.columns == 0) continue;
        for (int r = 0; r < out.rows; ++r) {
            const int r0 = static_cast<int>(static_cast<std::int64_t>(r) * in.rows / out.rows);
            const int r1 = std::max(r0 + 1, static_cast<int>(static_cast<std::int64_t>(r + 1) * in.rows / out.rows));
            const auto n = static_cast<unsigned>(r1 - r0);
            const std::size_t cell = static_cast<std::size_t>(c) * static_cast<std::size_t>(out.rows) + static_cast<std::size_t>(r);
            // Averaged cumulatively (like HeatmapRaster rounds), so shares still add up to <= 255;
            // integer arithmetic on purpose: this runs for every cell of the first view (sharing
            // HeatmapRaster's floating-point rounding made the 1,024 x 512 query 18 -> 27+ ms).
            unsigned sum = 0, previous = 0;
            for (std::size_t p = 0; p < in.shares.size(); ++p) {
                for (int k = r0; k < r1; ++k) sum += in.shares[p][source * static_cast<std::size_t>(in.rows) + static_cast<std::size_t>(k)];
                const unsigned upTo = (sum + n / 2) / n;
                out.shares[p][cell] = static_cast<std::uint8_t>(upTo - previous);
                previous = upTo;
            }
        }
    }
    return out;
}

}  // namespace

HeatmapGrid HeatmapQuery::build(SessionReader& reader, int run, std::uint64_t first, std::uint64_t last, int columns, int rows,
                                std::uint64_t replayLimit) {
    const std::uint64_t total = reader.run(run).eventCount;
    if (total == 0 || columns <= 0 || rows <= 0 || first >= total) return {};
    last = std::min(last, total - 1);
    if (last < first) return {};
    const std::uint64_t length = last - first + 1;
    columns = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(columns), length));
    if (length > replayLimit) {
        if (auto grid = stored(reader, run)) {
            const auto inWindow = std::count_if(grid->columnEvents.begin(), grid->columnEvents.end(),
                                                [&](std::uint64_t s) { return s >= first && s <= last; });
            if (inWindow >= std::min<std::int64_t>(columns, 64)) return resample(*grid, first, last, columns, rows);
        }
    }
    // Exact: replay the window once from the nearest keyframe, sampling the layout at each
    // column's last event.
    std::vector<std::uint64_t> ends;
    ends.reserve(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) ends.push_back(first + (static_cast<std::uint64_t>(c) + 1) * length / static_cast<std::uint64_t>(columns) - 1);
    const std::vector<HeatmapSample> samples = sampleAt(reader, run, ends);
    return HeatmapRaster::rasterize(samples, rows);
}

std::vector<HeatmapSample> HeatmapQuery::sampleAt(SessionReader& reader, int run, const std::vector<std::uint64_t>& seqs,
                                                  const std::function<bool(std::uint64_t seq)>& progress) {
    // Stats fixups do not change the layout, so the events alone are replayed.
    std::vector<HeatmapSample> samples;
    if (seqs.empty()) return samples;
    samples.reserve(seqs.size());
    StateCursor cursor(reader, run);
    cursor.loadModel(seqs.front());
    SegmentStateModel model = cursor.model();
    std::size_t next = 0;
    while (next < seqs.size() && seqs[next] == seqs.front()) samples.push_back(HeatmapRaster::sample(model, seqs[next++]));
    if (next < seqs.size()) {
        reader.forEachChunk(run, seqs.front() + 1, seqs.back(), [&](std::uint64_t, const std::vector<alloc::Event>& events) {
            for (const alloc::Event& e : events) {
                if (e.seq <= seqs.front()) continue;
                if (e.seq > seqs.back()) return false;
                model.apply(e);
                while (next < seqs.size() && e.seq == seqs[next]) samples.push_back(HeatmapRaster::sample(model, seqs[next++]));
            }
            if (progress && !events.empty() && !progress(events.back().seq)) return false;
            return next < seqs.size();
        });
    }
    return samples;
}

}  // namespace allocscope::storage
