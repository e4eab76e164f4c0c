#pragma once
// The time × address fragmentation grid. Each cell holds, for the bytes of its address range over
// its time range, the share in each state. Shares are stored as 1/255ths in five bytes per cell
// (a whole-run grid of 2000 × 1000 cells is 10 MB, not 40+). Whatever the shares leave to 255 is
// address space that was not reserved at that time.
#include <QString>
#include <QtGlobal>

#include <array>
#include <vector>

namespace allocscope::views {

enum class HeatState : quint8 {
    Requested = 0,  // allocated bytes the program asked for
    RoundingWaste,  // allocated bytes beyond the request (rounding, unsplit remainder)
    Inactive,       // cached, free
    PendingFree,    // freed, waiting for stream events
    Unmapped,       // expandable segment pages not backed by memory
};
inline constexpr int kHeatStateCount = 5;

using HeatCell = std::array<quint8, kHeatStateCount>;  // shares in 1/255ths; sum <= 255

// One stretch of address space shown on the axis. Ranges are laid end to end; the virtual
// address gap between a range and the previous one is squeezed out and marked.
struct AddressRange {
    quint64 start = 0;
    quint64 size = 0;
    quint64 gapBefore = 0;  // bytes squeezed out between the previous range's end and start
};

struct HeatmapData {
    int timeBins = 0;
    int addressBins = 0;
    // Row-major by time: cells[t * addressBins + a]. Address bin 0 is the lowest address.
    std::vector<HeatCell> cells;
    // The first event index of each time bin (ascending, size == timeBins); bin t covers
    // [columnFirstEvent[t], columnFirstEvent[t + 1]) and the last bin ends at eventCount.
    std::vector<qint64> columnFirstEvent;
    qint64 eventCount = 0;
    // The address axis. In raw-address mode there is one range from the lowest to the highest
    // address and no gaps; otherwise gaps are squeezed out.
    std::vector<AddressRange> ranges;
    bool rawAddresses = false;

    quint64 axisBytes() const {
        quint64 total = 0;
        for (const AddressRange& r : ranges) total += r.size;
        return total;
    }
    const HeatCell& cell(int timeBin, int addressBin) const {
        return cells[static_cast<std::size_t>(timeBin) * static_cast<std::size_t>(addressBins) +
                     static_cast<std::size_t>(addressBin)];
    }
    bool isValid() const {
        return timeBins > 0 && addressBins > 0 &&
               cells.size() == static_cast<std::size_t>(timeBins) * static_cast<std::size_t>(addressBins) &&
               columnFirstEvent.size() == static_cast<std::size_t>(timeBins);
    }
};

}  // namespace allocscope::views
