#pragma once
// The answer to "why did my run go out of memory, and would a setting have avoided it?", for the
// OOM tab (OomAnswerView): the failed request, the memory limit it ran under (a point or an
// interval, and how it was inferred), the allocator's bytes at the failure and whether that was
// fragmentation or a really full GPU, who held the memory, PyTorch's own message, and the what-if
// over the configs `recommend` tries at that limit. Plain numbers and texts: app/ fills it from
// the domain's OOM analysis; the view words the numbers.
#include <QString>
#include <QStringList>
#include <QtGlobal>

#include <vector>

namespace allocscope::views {

// Why the request could not be served, as the bytes at the failure tell it.
enum class OomVerdict : quint8 {
    Unknown,        // not enough known to say (no state at the failure)
    Fragmentation,  // enough cached free bytes for the request, but no free block big enough
    ReallyFull,     // not even the cached free bytes together would have served it
};

// The memory limit the run ran under. Recorded runs rarely say it: it is inferred (from the
// device's total memory and the memory fraction, or bracketed by the largest reservation that
// succeeded and the one that failed), so it may be an interval [low, high].
struct OomLimit {
    quint64 low = 0;    // bytes; low == high: a point
    quint64 high = 0;   // 0 = not known at all
    QString how;        // "device total 23.6 GiB × memory fraction 0.30", "between the last reservation that succeeded and the one that failed"
    bool known() const { return high > 0; }
    bool isInterval() const { return high > low; }
};

// One block live at the failure: what it is, and the call stack that allocated it.
struct OomHolderRow {
    quint64 address = 0;
    quint64 size = 0;       // block bytes (what reserved memory holds for it)
    quint64 requested = 0;  // what the program asked for
    QString topFrame;       // the innermost user frame ("train.py:42 forward"); "" = no stack recorded
    QStringList stack;      // innermost first; empty = no stack recorded
};

// One config of the what-if, replayed at the inferred limit.
struct OomWhatIfRow {
    QString config;                // "expandable_segments:True", "" = the defaults
    bool recorded = false;         // the config the run itself used
    bool oom = false;              // OOMs at the limit (the interval's low end when it is one)
    QString where;                 // oom: where it fails ("op 4,812: 256 MiB on stream 0"); else ""
    qint64 peakReserved = -1;      // bytes; -1 = not known
    qint64 headroom = -1;          // limit (low end) - peak reserved, when it did not OOM; -1 = not known
    // How the answer holds over a limit interval: "no OOM at any limit in it", "OOMs below
    // 6.10 GiB", "OOMs at every limit in it"; "" when the limit is a point.
    QString overInterval;
    bool holdsOverInterval = true;  // the same answer at every limit of the interval (or a point limit)
};

struct OomAnswerData {
    int run = 0;                 // the session's run number
    QString runName;
    QString config;              // the run's PYTORCH_CUDA_ALLOC_CONF ("" = defaults)
    qint64 oomCount = 0;         // the run's OOMs; the answer is about the first
    // The first line: the seed question answered ("Yes: expandable_segments:True avoids this OOM
    // at the inferred limit", "No: every config tried OOMs", ...). The domain words it so the CLI
    // and the view say the same.
    QString headline;

    // The failed request.
    quint64 requestBytes = 0;    // the size the allocator tried to serve (rounded)
    quint64 stream = 0;
    qint64 op = -1;              // program op of the failure; -1 = not known
    qint64 event = -1;           // event (seq) of the oom; -1 = not known (no jump to Stacks)

    OomLimit limit;

    // The allocator at the failure; -1 = not known.
    qint64 reserved = -1;
    qint64 allocated = -1;
    qint64 cachedFree = -1;      // reserved but not allocated: free blocks in the cache
    qint64 largestFree = -1;     // the largest of them
    OomVerdict verdict = OomVerdict::Unknown;

    // Who held the memory, largest first; holdersOmitted more (of holdersOmittedBytes) not listed.
    std::vector<OomHolderRow> holders;
    qint64 holdersOmitted = 0;
    quint64 holdersOmittedBytes = 0;

    QString pytorchMessage;      // as PyTorch printed it; "" = not known

    std::vector<OomWhatIfRow> whatIf;  // in `recommend`'s grid order
    // While the what-if still runs (it replays the program once per config): a note instead of rows.
    QString whatIfNote;
};

}  // namespace allocscope::views
