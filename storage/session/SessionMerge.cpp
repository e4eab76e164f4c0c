#include "storage/session/SessionMerge.h"

#include <filesystem>
#include <map>

#include "storage/session/ByteCodec.h"
#include "storage/session/NewSessionFile.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SqliteDb.h"

namespace allocscope::storage {
namespace {

// The tables every run shares, merged by hand: the run rows themselves (renumbered) and the
// stack tables (StackCopier). Every other table with a `run` column holds rows a run owns
// (event_chunk, keyframe, stats_fixup, summary, heatmap, phase, run_verdict, history_start, and
// whatever optional table a later build adds): they are copied as they are, with `run` set to
// the new number, and created in the output from the input's own definition when missing.
constexpr const char* kRunColumns =
    "name, source_kind, source, config, gpu, total_memory, memory_fraction, status, created_at, event_count, "
    "keyframe_interval, initial_stats, divergence";
bool sharedTable(const std::string& name) {
    return name == "meta" || name == "run" || name == "frame" || name == "stack_key" || name == "run_stack";
}

struct OwnedTable {
    std::string name;
    std::string columns;  // every column but `run`, comma-separated
};

// The input's tables of run-owned rows, each created in the output if it has none yet. A table
// without a `run` column that this build does not know cannot be merged safely (its rows may
// hold ids of the input): the merge is refused rather than dropping it.
std::vector<OwnedTable> ownedTables(SqliteDb& out, const std::string& input) {
    std::vector<std::pair<std::string, std::string>> definitions;  // name, CREATE statement
    {
        SqliteStatement list = out.prepare(
            "SELECT name, sql FROM src.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
        while (list.step()) definitions.emplace_back(list.columnText(0), list.columnText(1));
    }
    std::vector<OwnedTable> tables;
    for (const auto& [name, sql] : definitions) {
        if (sharedTable(name)) continue;
        OwnedTable table{name, {}};
        bool hasRun = false;
        SqliteStatement info = out.prepare("SELECT name FROM pragma_table_info(?, 'src')");
        info.bind(1, std::string_view(name));
        while (info.step()) {
            const std::string column = info.columnText(0);
            if (column == "run") {
                hasRun = true;
                continue;
            }
            if (!table.columns.empty()) table.columns += ", ";
            table.columns += "\"" + column + "\"";
        }
        if (!hasRun) throw SessionError("cannot merge the table '" + name + "', which this build does not know", input);
        if (!out.hasTable(name)) out.exec(sql);  // an unqualified CREATE makes main's
        tables.push_back(std::move(table));
    }
    return tables;
}

void copyOwned(SqliteDb& out, const OwnedTable& table, std::int64_t from, std::int64_t to) {
    const std::string columns = table.columns.empty() ? "" : ", " + table.columns;
    SqliteStatement copy = out.prepare("INSERT INTO main.\"" + table.name + "\"(run" + columns + ") SELECT ?" + columns +
                                       " FROM src.\"" + table.name + "\" WHERE run = ?");
    copy.bind(1, to).bind(2, from);
    copy.run();
}

// Frames and stacks are stored once per file and referenced by id, so the ids of an input mean
// nothing in the output: each stack is rebuilt from its frames' text and de-duplicated against
// what the output already holds.
class StackCopier {
public:
    explicit StackCopier(SqliteDb& out)
        : sourceFrame_(out.prepare("SELECT filename, line, name FROM src.frame WHERE id = ?")),
          insertFrame_(out.prepare("INSERT OR IGNORE INTO main.frame(filename, line, name) VALUES (?, ?, ?)")),
          findFrame_(out.prepare("SELECT id FROM main.frame WHERE filename = ? AND line = ? AND name = ?")),
          insertStack_(out.prepare("INSERT OR IGNORE INTO main.stack_key(frames) VALUES (?)")),
          findStack_(out.prepare("SELECT id FROM main.stack_key WHERE frames = ?")),
          path_(out.path()) {}

    // The output's stack_key id for an input's stack key (its frame ids, varints).
    std::int64_t stack(std::string_view sourceFrames) {
        ByteReader ids(sourceFrames, "stack");
        ByteWriter key;
        while (!ids.atEnd()) key.varint(static_cast<std::uint64_t>(frame(static_cast<std::int64_t>(ids.varint()))));
        insertStack_.bindBlob(1, key.bytes().data(), key.bytes().size());
        insertStack_.run();
        findStack_.bindBlob(1, key.bytes().data(), key.bytes().size());
        findStack_.step();
        const std::int64_t id = findStack_.columnInt(0);
        findStack_.reset();
        return id;
    }
private:
    std::int64_t frame(std::int64_t sourceId) {
        if (auto it = frames_.find(sourceId); it != frames_.end()) return it->second;
        sourceFrame_.bind(1, sourceId);
        if (!sourceFrame_.step()) throw SessionError("the session file is damaged: a stack names a missing frame", path_);
        const std::string filename = sourceFrame_.columnText(0);
        const std::int64_t line = sourceFrame_.columnInt(1);
        const std::string name = sourceFrame_.columnText(2);
        sourceFrame_.reset();
        insertFrame_.bind(1, std::string_view(filename)).bind(2, line).bind(3, std::string_view(name));
        insertFrame_.run();
        findFrame_.bind(1, std::string_view(filename)).bind(2, line).bind(3, std::string_view(name));
        findFrame_.step();
        const std::int64_t id = findFrame_.columnInt(0);
        findFrame_.reset();
        frames_.emplace(sourceId, id);
        return id;
    }

    SqliteStatement sourceFrame_, insertFrame_, findFrame_, insertStack_, findStack_;
    std::string path_;
    std::map<std::int64_t, std::int64_t> frames_;
};

void copyStacks(SqliteDb& out, StackCopier& stacks, std::int64_t from, std::int64_t to) {
    SqliteStatement links = out.prepare(
        "SELECT r.stack_id, k.frames FROM src.run_stack r JOIN src.stack_key k ON k.id = r.stack WHERE r.run = ? "
        "ORDER BY r.stack_id");
    links.bind(1, from);
    SqliteStatement link = out.prepare("INSERT INTO main.run_stack(run, stack_id, stack) VALUES (?, ?, ?)");
    while (links.step()) {
        link.bind(1, to).bind(2, links.columnInt(0)).bind(3, stacks.stack(links.columnBlob(1)));
        link.run();
    }
}

}  // namespace

std::vector<SessionMerge::MergedRun> SessionMerge::merge(const std::vector<std::string>& inputs, const std::string& output) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(output, ec))) {
        throw SessionError("the merge output already exists; merge never overwrites, choose a new name", output);
    }
    if (inputs.empty()) throw SessionError("nothing to merge: no input sessions", output);
    // Every input is judged before a byte is written: what it is, its schema, every page.
    for (const std::string& input : inputs) SessionReader check(input, true);

    std::vector<MergedRun> merged;
    NewSessionFile fresh(output);  // removed again unless published
    {
        SqliteDb out(fresh.temporaryPath(), SqliteDb::Mode::ReadWriteCreate);
        for (const std::string& input : inputs) {
            out.attachReadOnly(input, "src");
            try {
                out.exec("BEGIN IMMEDIATE");
                const std::vector<OwnedTable> owned = ownedTables(out, input);
                StackCopier stacks(out);
                SqliteStatement runs = out.prepare("SELECT id, name FROM src.run ORDER BY id");
                SqliteStatement insertRun = out.prepare(std::string("INSERT INTO main.run(") + kRunColumns + ") SELECT " +
                                                        kRunColumns + " FROM src.run WHERE id = ?");
                while (runs.step()) {
                    const std::int64_t from = runs.columnInt(0);
                    insertRun.bind(1, from);
                    insertRun.run();
                    const std::int64_t to = out.lastInsertRowId();
                    for (const OwnedTable& table : owned) copyOwned(out, table, from, to);
                    copyStacks(out, stacks, from, to);
                    merged.push_back(MergedRun{static_cast<int>(to), input, static_cast<int>(from), runs.columnText(1)});
                }
                out.exec("COMMIT");
            } catch (const SessionError& e) {
                try {
                    out.exec("ROLLBACK");
                } catch (const SessionError&) {
                }
                // SQLite names the connection's own file (a temporary name): say what was being done.
                throw SessionError(e.problem(), "merging " + input + " into " + output);
            }
            out.exec("DETACH DATABASE src");
        }
    }
    // Kept only when the result opens as an intact session with every run.
    {
        SessionReader check(fresh.temporaryPath(), true);
        if (check.runs().size() != merged.size()) throw SessionError("the merged session lost runs; nothing was kept", output);
    }
    if (!fresh.publish()) {
        throw SessionError("the merge output appeared while merging; it was left as it is and nothing was written", output);
    }
    return merged;
}

}  // namespace allocscope::storage
