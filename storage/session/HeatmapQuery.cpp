#include "storage/session/HeatmapQuery.h"

#include <algorithm>

#include "storage/session/ByteCodec.h"
#include "storage/session/HeatmapRaster.h"
#include "storage/session/StateCursor.h"

namespace allocscope::storage {

std::optional<HeatmapGrid> HeatmapQuery::stored(SessionReader& reader, int run) {
    SqliteStatement s = reader.db().prepare(
        "SELECT columns, rows, column_events, axis, active, reserved FROM heatmap WHERE run = ?");
    s.bind(1, static_cast<std::int64_t>(run));
    if (!s.step()) return std::nullopt;
    HeatmapGrid grid;
    grid.columns = static_cast<int>(s.columnInt(0));
    grid.rows = static_cast<int>(s.columnInt(1));
    ByteReader events(s.columnBlob(2), "heatmap");
    for (int c = 0; c < grid.columns; ++c) grid.columnEvents.push_back(events.varint());
    ByteReader axis(s.columnBlob(3), "heatmap axis");
    while (!axis.atEnd()) {
        AxisRange range;
        range.address = axis.varint();
        range.size = axis.varint();
        range.offset = grid.axisBytes;
        grid.axisBytes += range.size;
        grid.axis.push_back(range);
    }
    const std::string_view active = s.columnBlob(4);
    const std::string_view reserved = s.columnBlob(5);
    const auto cells = static_cast<std::size_t>(grid.columns) * static_cast<std::size_t>(grid.rows);
    if (grid.columns < 0 || grid.rows < 0 || active.size() != cells || reserved.size() != cells) events.damaged();
    grid.active.assign(active.begin(), active.end());
    grid.reserved.assign(reserved.begin(), reserved.end());
    return grid;
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
    out.active.assign(static_cast<std::size_t>(out.columns) * static_cast<std::size_t>(out.rows), 0);
    out.reserved.assign(out.active.size(), 0);
    for (int c = 0; c < columns; ++c) {
        const std::uint64_t end = first + (static_cast<std::uint64_t>(c) + 1) * length / static_cast<std::uint64_t>(columns) - 1;
        auto it = std::upper_bound(in.columnEvents.begin(), in.columnEvents.end(), end);
        std::size_t source = it == in.columnEvents.begin() ? 0 : static_cast<std::size_t>(it - in.columnEvents.begin()) - 1;
        out.columnEvents.push_back(in.columnEvents.empty() ? end : in.columnEvents[source]);
        if (in.rows == 0 || in.columns == 0) continue;
        for (int r = 0; r < out.rows; ++r) {
            const int r0 = static_cast<int>(static_cast<std::int64_t>(r) * in.rows / out.rows);
            const int r1 = std::max(r0 + 1, static_cast<int>(static_cast<std::int64_t>(r + 1) * in.rows / out.rows));
            unsigned a = 0, v = 0;
            for (int k = r0; k < r1; ++k) {
                const std::size_t cell = source * static_cast<std::size_t>(in.rows) + static_cast<std::size_t>(k);
                a += in.active[cell];
                v += in.reserved[cell];
            }
            const std::size_t cell = static_cast<std::size_t>(c) * static_cast<std::size_t>(out.rows) + static_cast<std::size_t>(r);
            const auto n = static_cast<unsigned>(r1 - r0);
            out.active[cell] = static_cast<std::uint8_t>((a + n / 2) / n);
            out.reserved[cell] = static_cast<std::uint8_t>((v + n / 2) / n);
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
    // column's last event (stats fixups do not change the layout, so they are not needed).
    auto columnEnd = [&](int c) {
        return first + (static_cast<std::uint64_t>(c) + 1) * length / static_cast<std::uint64_t>(columns) - 1;
    };
    StateCursor cursor(reader, run);
    cursor.loadModel(columnEnd(0));
    SegmentStateModel model = cursor.model();
    std::vector<HeatmapSample> samples;
    samples.reserve(static_cast<std::size_t>(columns));
    samples.push_back(HeatmapRaster::sample(model, columnEnd(0)));
    int next = 1;
    if (next < columns) {
        reader.forEachChunk(run, columnEnd(0) + 1, last, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
            for (const alloc::Event& e : events) {
                if (e.seq <= columnEnd(0)) continue;
                if (e.seq > last) return false;
                model.apply(e);
                while (next < columns && e.seq == columnEnd(next)) samples.push_back(HeatmapRaster::sample(model, columnEnd(next++)));
            }
            return next < columns;
        });
    }
    return HeatmapRaster::rasterize(samples, rows);
}

}  // namespace allocscope::storage
