#pragma once
// The `heatmap` table: one precomputed whole-run grid per complete run. Column events and the
// axis are varint lists; the five share planes (HeatShare order, each column-major like the
// grid) are stored back to back with runs of zero cells collapsed, since most cells of the
// rounding-waste, pending-free and unmapped planes are empty (a 2,048 x 1,024 grid is ~10 MB
// raw, a few hundred KB encoded for a typical run).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/session/SessionTypes.h"
#include "storage/session/SqliteDb.h"

namespace allocscope::storage {

class HeatmapTable {
public:
    static void write(SqliteDb& db, std::int64_t run, const HeatmapGrid& grid);
    // nullopt when the run has no row; a row that does not decode to its own size throws
    // SessionError ("damaged"). With `layoutOnly`, the share planes are neither read nor checked
    // (the schema 2 -> 3 migration reads an old row's columns and axis to recompute its shares).
    static std::optional<HeatmapGrid> read(SqliteDb& db, int run, bool layoutOnly = false);

    static std::string encodeShares(const HeatmapGrid& grid);
    // Fills grid.shares from `bytes`; throws SessionError ("damaged") unless they hold exactly
    // cellCount() cells per plane.
    static void decodeShares(std::string_view bytes, HeatmapGrid& grid);
};

}  // namespace allocscope::storage
