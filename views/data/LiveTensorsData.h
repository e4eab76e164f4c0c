#pragma once
// The Live tensors table: every block live at one event of a run (allocated, or freed and waiting
// for another stream), one row each. Filled by app/ from storage's LiveBlocks.
#include <QString>
#include <QtGlobal>

#include <vector>

namespace allocscope::views {

struct LiveTensorRow {
    quint64 address = 0;
    quint64 size = 0;       // block bytes
    quint64 requested = 0;  // what the program asked for
    QString topFrame;       // "name (file:line)" of the innermost user frame, or "no stack recorded"
    QString stackText;      // the whole stack, innermost first, one frame a line (tooltip)
    bool hasStack = false;
    qint64 age = -1;        // events since the block was allocated; -1: allocated before the recorded history
    qint64 allocEvent = -1; // -1: not in the recorded history
    quint64 stream = 0;
    QString pool;           // "default pool", "graph pool (1,0)", ...
    quint64 segment = 0;    // the segment's address
    bool pendingFree = false;  // freed by the program, waiting for another stream's work
};

struct LiveTensorsData {
    bool valid = false;
    int run = 0;
    qint64 event = -1;
    QString noStackWhy;  // why a block without frames reads "no stack recorded" (its tooltip)
    std::vector<LiveTensorRow> rows;  // by address
};

}  // namespace allocscope::views
