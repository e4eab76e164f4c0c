#pragma once
// What the block inspector shows for one block at the current event: its size and where it
// lives, the events that allocated and freed it (each with the cause of the release, in words)
// and the stack of its allocation. Filled by app/ from SessionReader::blockHistory.
#include <QString>
#include <QStringList>
#include <QtGlobal>

#include <optional>
#include <vector>

namespace allocscope::views {

struct InspectorEvent {
    QString action;   // "alloc", "free_requested", "free_completed" (PyTorch's words)
    qint64 seq = -1;  // event index in the run
    qint64 op = -1;   // program op index
    QString cause;    // "requested by the program", "released by garbage collection", ...
};

struct StackFrameText {
    QString function;
    QString file;
    std::optional<qint64> line = 0;  // std::nullopt: unknown (a compiled program's frame), shown "file:?"
};

struct BlockInspectorData {
    bool valid = false;        // false: nothing selected
    quint64 address = 0;
    quint64 size = 0;
    quint64 requested = 0;
    qint64 stream = 0;
    quint64 segment = 0;       // address of the segment (or expandable reservation) it is in
    QString state;             // "active_allocated", "active_pending_free", "inactive"
    QString pool;              // "small" / "large"
    QString memoryPool;        // the segment's pool: "default", "graph pool (1,0)", "MemPool (0,1)", ...
    std::vector<InspectorEvent> events;  // in event order
    std::vector<StackFrameText> stack;   // innermost first
};

}  // namespace allocscope::views
