#pragma once
// The numbers of memory_summary() at one event: the formatted text (PyTorch's 77-column table)
// and the rows of the compact current/peak table.
#include <QString>
#include <QtGlobal>

#include <vector>

namespace allocscope::views {

struct SummaryRow {
    QString metric;        // "Allocated memory", "Reserved memory", "cudaMalloc retries", ...
    bool isBytes = true;   // bytes are shown as KiB/MiB/GiB, counts as plain numbers
    qint64 current = 0;
    qint64 peak = 0;
    qint64 allocated = 0;  // cumulative (PyTorch's "Tot Alloc")
    qint64 freed = 0;      // cumulative (PyTorch's "Tot Freed")
    bool counter = false;  // a num_* counter (retries, OOMs, cudaMalloc calls): its current is a count too
};

struct SummaryTableData {
    std::vector<SummaryRow> rows;
    QString text;  // memory_summary() verbatim
    // The run replays a history that starts mid-run (a ring buffer that overflowed): peaks, totals
    // and counters count only the recorded window. The line that says so; "" for a whole history.
    QString windowNote;
};

}  // namespace allocscope::views
