#pragma once
// One row of the run list (left dock): what a run is and the two numbers people compare first,
// peak reserved and OOMs. Filled by app/ from the session's run table.
#include <QString>
#include <QtGlobal>

#include <vector>

namespace allocscope::views {

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
};

using RunListData = std::vector<RunListRow>;

}  // namespace allocscope::views
