#include "storage/session/AllocationBandTable.h"

namespace allocscope::storage {
namespace {

constexpr const char* kCreateSql = R"SQL(
CREATE TABLE IF NOT EXISTS allocation_band (
    run INTEGER NOT NULL REFERENCES run(id),
    rank INTEGER NOT NULL,              -- 0 = the largest allocation of the run
    alloc_seq INTEGER NOT NULL,
    free_seq INTEGER,                   -- the free_requested event; NULL: live at the run's end
    address INTEGER NOT NULL,
    size INTEGER NOT NULL,              -- block bytes
    requested INTEGER NOT NULL,
    stream INTEGER NOT NULL,
    stack_id INTEGER NOT NULL,
    pool_a INTEGER NOT NULL,            -- segment_pool_id
    pool_b INTEGER NOT NULL,
    PRIMARY KEY (run, rank)
) WITHOUT ROWID;
)SQL";

}  // namespace

void AllocationBandTable::write(SqliteDb& db, std::int64_t runId, const std::vector<AllocationBand>& bands) {
    db.exec(kCreateSql);
    SqliteStatement stmt = db.prepare(
        "INSERT OR REPLACE INTO allocation_band(run, rank, alloc_seq, free_seq, address, size, requested, stream, stack_id, "
        "pool_a, pool_b) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    std::int64_t rank = 0;
    for (const AllocationBand& b : bands) {
        stmt.bind(1, runId).bind(2, rank++).bind(3, static_cast<std::int64_t>(b.allocSeq));
        if (b.freeSeq) {
            stmt.bind(4, static_cast<std::int64_t>(*b.freeSeq));
        } else {
            stmt.bindNull(4);
        }
        stmt.bind(5, static_cast<std::int64_t>(b.address)).bind(6, static_cast<std::int64_t>(b.size));
        stmt.bind(7, static_cast<std::int64_t>(b.requested)).bind(8, static_cast<std::int64_t>(b.stream));
        stmt.bind(9, static_cast<std::int64_t>(b.stackId)).bind(10, static_cast<std::int64_t>(b.pool.first));
        stmt.bind(11, static_cast<std::int64_t>(b.pool.second));
        stmt.run();
    }
}

std::vector<AllocationBand> AllocationBandTable::read(const SqliteDb& db, std::int64_t runId) {
    std::vector<AllocationBand> out;
    if (!db.hasTable("allocation_band")) return out;
    SqliteStatement stmt = db.prepare(
        "SELECT alloc_seq, free_seq, address, size, requested, stream, stack_id, pool_a, pool_b FROM allocation_band "
        "WHERE run = ? ORDER BY rank");
    stmt.bind(1, runId);
    while (stmt.step()) {
        AllocationBand b;
        b.allocSeq = static_cast<std::uint64_t>(stmt.columnInt(0));
        if (!stmt.columnIsNull(1)) b.freeSeq = static_cast<std::uint64_t>(stmt.columnInt(1));
        b.address = static_cast<std::uint64_t>(stmt.columnInt(2));
        b.size = static_cast<std::uint64_t>(stmt.columnInt(3));
        b.requested = static_cast<std::uint64_t>(stmt.columnInt(4));
        b.stream = static_cast<std::uint64_t>(stmt.columnInt(5));
        b.stackId = static_cast<std::uint32_t>(stmt.columnInt(6));
        b.pool = alloc::PoolId{static_cast<std::uint64_t>(stmt.columnInt(7)), static_cast<std::uint64_t>(stmt.columnInt(8))};
        out.push_back(b);
    }
    return out;
}

}  // namespace allocscope::storage
