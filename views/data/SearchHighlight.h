#pragma once
// What a search asks the views to highlight: the blocks whose stack has a matching frame (their
// stack ids, found by app/ in the session), or the block that contains a hex address. Plain values.
#include <QSet>
#include <QString>
#include <QtGlobal>

#include <optional>
#include <vector>

namespace allocscope::views {

struct SearchHighlight {
    QString query;                     // as typed; empty = nothing highlighted
    QSet<quint32> stackIds;            // a frame search: the matching stacks
    std::optional<quint64> address;    // an address search ("0x7f3a...")

    bool active() const { return !query.isEmpty(); }
    bool matches(quint64 blockAddress, quint64 size, quint32 stackId) const {
        if (address) return *address >= blockAddress && *address < blockAddress + size;
        return stackId != 0 && stackIds.contains(stackId);
    }
};

// A matching allocation on the heatmap: its lifetime (events [firstEvent, lastEvent)) and its
// address range, outlined over the grid.
struct HeatHighlight {
    qint64 firstEvent = 0;
    qint64 lastEvent = 0;
    quint64 address = 0;
    quint64 size = 0;
};

}  // namespace allocscope::views
