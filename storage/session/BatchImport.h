#pragma once
// Imports many snapshots / RMM CSVs into one session (a distributed job's per-rank snapshots):
// whole files are read, judged and replayed on N worker threads, and the session's one writer
// thread (SessionWriter) writes what they record.
//
// Run numbers follow the order of `files`, whatever order the workers finish in: a worker that
// has read and judged file i waits until every earlier file has created its runs (or was
// refused), creates file i's runs (one per device), lets file i+1 go on, and only then replays.
// Files are handed out in order and a worker holds one file at a time, so at most N files are in
// memory at once and the waiting never deadlocks (the earliest unfinished file always proceeds).
//
// A file that cannot be read or is refused (bad format, invalid recorded settings, nothing to
// replay, the session itself) is reported by name in its result and creates no run; the other
// files still land. A session that cannot be written stops the whole import (SessionError).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionTypes.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::storage {

struct BatchFileResult {
    std::string file;
    std::vector<ImportedRun> runs;  // one per device, in device order (none when refused or not started)
    std::string error;              // refused: "<what> (<file>[: <where inside>])"; the others still land
    std::optional<RunRank> rank;    // as RankRule found it
    bool started = false;           // false: the import was cancelled (or the session failed) first
};

struct BatchImportOptions {
    ImportTarget target;
    unsigned jobs = 0;  // worker threads; 0: the core count (std::thread::hardware_concurrency)
    // (done, total) over all files, each file counting 1000; called from the workers one at a
    // time. Returning false cancels: runs being replayed are kept interrupted, files not yet
    // started are not imported.
    RecordProgress progress;
};

class BatchImport {
public:
    // `writer` is called (once, by the first file that has runs to create) for the session's
    // writer: a caller may create the session only then, so that a batch of bad files leaves no
    // session behind. Results come in the order of `files`. Throws SessionError (after every
    // worker stopped) when the session could not be opened or written.
    static std::vector<BatchFileResult> run(const std::function<SessionWriter&()>& writer, const std::vector<std::string>& files,
                                            const BatchImportOptions& options);
    static unsigned defaultJobs();
};

}  // namespace allocscope::storage
