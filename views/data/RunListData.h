#pragma once
// One row of the run list (left dock): what a run is and the two numbers people compare first,
// peak reserved and OOMs. Filled by app/ from the session's run table.
#include <QString>
#include <QtGlobal>

#include <vector>

namespace allocscope::views {

// Whether the run was compared with a recording (storage's RunVerdict, in view terms).
enum class RunVerdictKind : quint8 {
    Unknown,    // no verdict stored (an older session, a cancelled replay): not known to be exact
    Exact,      // replayed under its recorded settings and equal to the recording
    Diverged,   // replayed under its recorded settings and different from the recording
    WhatIf,     // a trace under another config: nothing to compare with
    Simulated,  // a workload run: simulated, no recording
};

struct RunListRow {
    int number = 0;          // the session's run number (from 1)
    QString name;            // "fragmentation-101"
    QString source;          // "demo", "snapshot", "csv" + what it came from
    QString config;          // PYTORCH_CUDA_ALLOC_CONF ("" = defaults)
    QString gpu;             // preset or device name
    QString status;          // "complete", "interrupted", "recording"
    qint64 eventCount = 0;
    qint64 peakReserved = -1;  // bytes; -1 = unknown (run not complete)
    qint64 ooms = -1;          // -1 = unknown
    QString divergence;        // imports: how the replay differed from the recording
    // Imports whose recorded history starts mid-run (a ring buffer that overflowed, a state-only
    // snapshot): what was live when it starts. "" = the recording starts with the program.
    QString historyStart;
    RunVerdictKind verdict = RunVerdictKind::Unknown;
    QString verdictText;       // the full verdict ("diverged at trace entry K: ..."); "" when Unknown
    qint64 divergedEntry = -1;  // Diverged: the trace entry of the first difference, -1 = not known
};

using RunListData = std::vector<RunListRow>;

}  // namespace allocscope::views
