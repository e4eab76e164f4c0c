#pragma once
// What the Allocations view draws (PyTorch's "active memory timeline"): the largest allocations
// of a run, each a band over event index, stacked in allocation order on top of one "smaller
// allocations" band. Plain values, filled by app/ from the session.
#include <QString>
#include <QStringList>

#include <vector>

namespace allocscope::views {

struct AllocationBandView {
    qint64 allocEvent = 0;
    qint64 freeEvent = 0;      // the free_requested event, or the run's event count (live at the end)
    bool liveAtEnd = false;
    quint64 address = 0;
    quint64 size = 0;          // block bytes
    quint64 requested = 0;
    quint64 stream = 0;
    int site = -1;             // index into AllocationsData::sites; -1: no stack recorded
    quint32 stackId = 0;       // the session's stack id (what a search matches)
    QString pool;              // "default pool", "graph pool (1,0)", ...
    QString phase;             // the innermost phase its alloc event is in ("" = none)
};

// A call site: the top user frame of the allocations' stacks (the frame the colour follows).
struct AllocationSite {
    QString label;             // "forward (model.py:98)"
    QStringList frames;        // the first stack seen there, innermost first (for tooltips)
    quint64 bytes = 0;         // bytes of the site's bands (for the legend's order)
};

struct AllocationsData {
    qint64 eventCount = 0;
    std::vector<AllocationBandView> bands;  // largest first
    std::vector<AllocationSite> sites;
    // Allocated bytes of the whole run: bucket k covers events [k * bucketEvents, (k+1) * bucketEvents).
    qint64 bucketEvents = 1;
    std::vector<qint64> allocatedMax;
    bool anyStack = false;                  // false: the recording carries no frames
    bool computedFromEvents = false;        // an older session: ranked when opened
};

}  // namespace allocscope::views
