#pragma once
// The session database's schema version (PRAGMA user_version). Bump on every schema change and
// add a migration; files with a newer version are refused.
namespace allocscope::storage {
inline constexpr int kSchemaVersion = 1;
}  // namespace allocscope::storage
