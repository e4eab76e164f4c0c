#include "storage/session/HeatmapTable.h"

#include "storage/session/ByteCodec.h"
#include "storage/session/SqliteStatement.h"

namespace allocscope::storage {

std::string HeatmapTable::encodeShares(const HeatmapGrid& grid) {
    // Per plane: (zero cells, literal cells, the literal bytes) repeated until the plane is full.
    ByteWriter out;
    for (const auto& plane : grid.shares) {
        std::size_t i = 0;
        while (i < plane.size()) {
            std::size_t zeros = 0;
            while (i + zeros < plane.size() && plane[i + zeros] == 0) ++zeros;
            std::size_t literal = 0;
            // A literal run ends at the first stretch of 4+ zeros (shorter ones cost less inline).
            while (i + zeros + literal < plane.size()) {
                std::size_t z = 0;
                while (i + zeros + literal + z < plane.size() && z < 4 && plane[i + zeros + literal + z] == 0) ++z;
                if (z == 4 || (z > 0 && i + zeros + literal + z == plane.size())) break;
                literal += z == 0 ? 1 : z;
            }
            out.varint(zeros);
            out.varint(literal);
            for (std::size_t k = 0; k < literal; ++k) out.byte(plane[i + zeros + k]);
            i += zeros + literal;
        }
    }
    return std::move(out.bytes());
}

void HeatmapTable::decodeShares(std::string_view bytes, HeatmapGrid& grid) {
    const std::size_t cells = grid.cellCount();
    ByteReader in(bytes, "heatmap share plane");
    for (auto& plane : grid.shares) {
        plane.assign(cells, 0);
        std::size_t i = 0;
        while (i < cells) {
            const std::uint64_t zeros = in.varint();
            const std::uint64_t literal = in.varint();
            // Runs past the plane, or an empty run (which would never end), are damage.
            if (zeros > cells - i || literal > cells - i - zeros || (zeros == 0 && literal == 0)) in.damaged();
            i += zeros;
            for (std::uint64_t k = 0; k < literal; ++k) plane[i++] = in.byte();
        }
    }
    if (!in.atEnd()) in.damaged();
}

void HeatmapTable::write(SqliteDb& db, std::int64_t run, const HeatmapGrid& grid) {
    ByteWriter events;
    for (std::uint64_t seq : grid.columnEvents) events.varint(seq);
    ByteWriter axis;
    for (const AxisRange& r : grid.axis) {
        axis.varint(r.address);
        axis.varint(r.size);
    }
    const std::string shares = encodeShares(grid);
    SqliteStatement heat = db.prepare(
        "INSERT OR REPLACE INTO heatmap(run, columns, rows, column_events, axis, shares) VALUES (?, ?, ?, ?, ?, ?)");
    heat.bind(1, run).bind(2, static_cast<std::int64_t>(grid.columns)).bind(3, static_cast<std::int64_t>(grid.rows));
    heat.bindBlob(4, events.bytes().data(), events.bytes().size()).bindBlob(5, axis.bytes().data(), axis.bytes().size());
    heat.bindBlob(6, shares.data(), shares.size());
    heat.run();
}

std::optional<HeatmapGrid> HeatmapTable::read(SqliteDb& db, int run, bool layoutOnly) {
    SqliteStatement s = db.prepare(layoutOnly ? "SELECT columns, rows, column_events, axis FROM heatmap WHERE run = ?"
                                              : "SELECT columns, rows, column_events, axis, shares FROM heatmap WHERE run = ?");
    s.bind(1, static_cast<std::int64_t>(run));
    if (!s.step()) return std::nullopt;
    HeatmapGrid grid;
    grid.columns = static_cast<int>(s.columnInt(0));
    grid.rows = static_cast<int>(s.columnInt(1));
    ByteReader events(s.columnBlob(2), "heatmap");
    if (grid.columns < 0 || grid.rows < 0 || grid.columns > (1 << 24) || grid.rows > (1 << 24)) events.damaged();
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
    if (!layoutOnly) decodeShares(s.columnBlob(4), grid);
    return grid;
}

}  // namespace allocscope::storage
