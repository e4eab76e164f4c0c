#pragma once
// Reshapes a current (schema 3) session file into the previous release's layout: the heatmap
// table with only active / reserved shares (zeroed: a migration must recompute them) and user
// version 2. What every user file of that release looks like to the migration.
#include <string>

#include "storage/session/SqliteDb.h"

namespace storagetest {

inline void rewriteAsSchemaTwo(const std::string& path) {
    allocscope::storage::SqliteDb db(path, allocscope::storage::SqliteDb::Mode::ReadWriteCreate);
    db.exec("ALTER TABLE heatmap RENAME TO heatmap_v3;"
            "CREATE TABLE heatmap (run INTEGER PRIMARY KEY REFERENCES run(id), columns INTEGER NOT NULL, "
            "rows INTEGER NOT NULL, column_events BLOB NOT NULL, axis BLOB NOT NULL, active BLOB NOT NULL, "
            "reserved BLOB NOT NULL);"
            "INSERT INTO heatmap SELECT run, columns, rows, column_events, axis, zeroblob(columns * rows), "
            "zeroblob(columns * rows) FROM heatmap_v3;"
            "DROP TABLE heatmap_v3; PRAGMA user_version = 2");
}

}  // namespace storagetest
