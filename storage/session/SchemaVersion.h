#pragma once
// The session database's schema version (PRAGMA user_version). Bump on every schema change and
// add a migration; files with a newer version are refused.
namespace allocscope::storage {
// 1: first release. 2: the phase table (a run's named regions). 3: heatmap share planes
// (requested, rounding waste, inactive, pending free, unmapped) instead of active / reserved.
inline constexpr int kSchemaVersion = 3;
// PRAGMA application_id of every session file ("ALSC"): tells our databases from any other
// application's SQLite file before a single table is read.
inline constexpr int kApplicationId = 0x414C5343;
}  // namespace allocscope::storage
