#pragma once
// What the segment map draws: the reserved segments of one device at one moment, each with its
// blocks in address order. Plain values, filled by app/ from the allocator's snapshot; views never
// see allocator types (DESIGN.md, "The GUI").
#include <QString>
#include <QtGlobal>

#include <vector>

namespace allocscope::views {

// The state of a block's bytes, in PyTorch's words.
enum class BlockState : quint8 {
    Allocated,    // active_allocated: handed to the program (requestedSize of it asked for)
    PendingFree,  // active_pending_free: freed by the program, waiting for stream events
    Inactive,     // inactive: cached, free for reuse
    Unmapped,     // expandable segment pages with no physical memory behind them
};

enum class PoolKind : quint8 { Small, Large };

struct ViewBlock {
    quint64 address = 0;
    quint64 size = 0;
    // Bytes the program asked for; size - requestedSize is rounding waste. Only meaningful for
    // Allocated and PendingFree blocks (0 otherwise).
    quint64 requestedSize = 0;
    BlockState state = BlockState::Inactive;
    qint64 stream = 0;
    qint64 id = -1;   // the program's allocation id (workload op id), -1 = none
    quint32 stackId = 0;  // the session's stack id of its allocation (0 = none): what a search matches
    QString label;    // optional: tensor name, op name, ... shown in the tooltip
};

struct ViewSegment {
    quint64 address = 0;
    quint64 totalSize = 0;  // reserved bytes (for expandable segments: the mapped range reserved)
    PoolKind pool = PoolKind::Large;
    qint64 stream = 0;
    bool expandable = false;
    // Which memory pool owns the segment, in words: "" for the default pool, else
    // "graph pool (1,0)", "MemPool (0,1)" or "private pool (a,b)" (app's poolLabel()).
    QString poolLabel;
    std::vector<ViewBlock> blocks;  // in address order, covering [address, address + totalSize)
};

struct SegmentMapData {
    std::vector<ViewSegment> segments;  // drawn top to bottom in this order
};

}  // namespace allocscope::views
