#pragma once
// Deterministic synthetic view data for the views tests and the screenshot gallery: what app/
// would build from a real run, in realistic proportions (2 MiB small-pool segments full of small
// blocks, 20 MiB large segments, a few big ones, an expandable segment with unmapped pages).
#include <QtGlobal>

#include <algorithm>
#include <cmath>

#include "views/data/HeatmapData.h"
#include "views/data/SegmentMapData.h"
#include "views/data/SummaryTableData.h"
#include "views/data/TimelineData.h"

namespace viewtest {

using namespace allocscope::views;

constexpr quint64 kMiB = 1024ull * 1024ull;

// A tiny LCG: the same "random" layout on every machine.
struct Lcg {
    quint64 state;
    explicit Lcg(quint64 seed) : state(seed) {}
    quint32 next() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<quint32>(state >> 33);
    }
    int below(int n) { return static_cast<int>(next() % static_cast<quint32>(n)); }
};

inline ViewSegment segmentOf(quint64 address, quint64 size, PoolKind pool, Lcg& rng, int blocks, bool expandable = false) {
    ViewSegment seg;
    seg.address = address;
    seg.totalSize = size;
    seg.pool = pool;
    seg.stream = 0;
    seg.expandable = expandable;
    const quint64 unit = pool == PoolKind::Small ? 512 : 2 * kMiB;
    const quint64 mappedEnd = expandable ? size * 5 / 8 / unit * unit : size;
    quint64 offset = 0;
    qint64 id = static_cast<qint64>(address / 4096 % 100000);
    for (int i = 0; i < blocks && offset < mappedEnd; ++i) {
        const quint64 remaining = mappedEnd - offset;
        quint64 blockSize = unit * static_cast<quint64>(1 + rng.below(pool == PoolKind::Small ? 256 : 64));
        if (i == blocks - 1 || blockSize > remaining) blockSize = remaining;
        ViewBlock b;
        b.address = address + offset;
        b.size = blockSize;
        const int pick = rng.below(10);
        b.state = pick < 5 ? BlockState::Allocated : (pick < 8 ? BlockState::Inactive : BlockState::PendingFree);
        if (b.state != BlockState::Inactive) {
            b.requestedSize = blockSize - (blockSize / 8) * static_cast<quint64>(rng.below(3)) / 2;
            b.id = id++;
            b.label = QStringLiteral("tensor %1").arg(b.id);
        }
        seg.blocks.push_back(b);
        offset += blockSize;
    }
    if (offset < mappedEnd) {
        ViewBlock b;
        b.address = address + offset;
        b.size = mappedEnd - offset;
        b.state = BlockState::Inactive;
        seg.blocks.push_back(b);
    }
    if (mappedEnd < size) {
        ViewBlock b;
        b.address = address + mappedEnd;
        b.size = size - mappedEnd;
        b.state = BlockState::Unmapped;
        seg.blocks.push_back(b);
    }
    return seg;
}

inline SegmentMapData realisticSegmentMap(int segments = 40) {
    Lcg rng(42);
    SegmentMapData data;
    quint64 address = 0x7f0000000000ull;
    for (int i = 0; i < segments; ++i) {
        ViewSegment seg;
        if (i == 3) {
            seg = segmentOf(address, 2048 * kMiB, PoolKind::Large, rng, 40, true);
        } else if (i % 3 == 0) {
            seg = segmentOf(address, 2 * kMiB, PoolKind::Small, rng, 24);
        } else if (i % 7 == 1) {
            seg = segmentOf(address, static_cast<quint64>(256 << (i % 3)) * kMiB, PoolKind::Large, rng, 12);
        } else {
            seg = segmentOf(address, 20 * kMiB, PoolKind::Large, rng, 6);
        }
        seg.stream = i % 11 == 5 ? 7 : 0;
        data.segments.push_back(seg);
        address += seg.totalSize + 0x200000ull * static_cast<quint64>(1 + rng.below(4));
    }
    return data;
}

inline HeatCell cellOf(int requested, int waste, int inactive, int pending, int unmapped) {
    return HeatCell{static_cast<quint8>(requested), static_cast<quint8>(waste), static_cast<quint8>(inactive),
                    static_cast<quint8>(pending), static_cast<quint8>(unmapped)};
}

// A grid that looks like a training loop: memory grows, saw-tooths, leaves cached holes.
inline HeatmapData realisticHeatmap(int timeBins = 480, int addressBins = 240) {
    HeatmapData h;
    h.timeBins = timeBins;
    h.addressBins = addressBins;
    h.eventCount = static_cast<qint64>(timeBins) * 25;
    for (int t = 0; t < timeBins; ++t) h.columnFirstEvent.push_back(static_cast<qint64>(t) * 25);
    const quint64 base = 0x7f0000000000ull;
    h.ranges = {{base, 512 * kMiB, 0},
                {base + 768 * kMiB, 256 * kMiB, 256 * kMiB},
                {base + 1100 * kMiB, 1024 * kMiB, 76 * kMiB},
                {base + 4096 * kMiB, 512 * kMiB, 1972 * kMiB}};
    Lcg rng(7);
    h.cells.resize(static_cast<std::size_t>(timeBins) * static_cast<std::size_t>(addressBins));
    for (int t = 0; t < timeBins; ++t) {
        const double phase = std::fmod(t / 60.0, 1.0);
        const int reservedTop = static_cast<int>(addressBins * std::min(1.0, 0.25 + t / (timeBins * 0.6)));
        const int liveTop = static_cast<int>(reservedTop * (0.4 + 0.55 * phase));
        for (int a = 0; a < addressBins; ++a) {
            HeatCell c{};
            if (a < liveTop) {
                const int waste = 10 + rng.below(40);
                c = (a % 17 == 5) ? cellOf(0, 0, 255, 0, 0) : cellOf(255 - waste, waste, 0, 0, 0);
                if (a % 23 == 0 && phase > 0.7) c = cellOf(0, 0, 0, 255, 0);
            } else if (a < reservedTop) {
                c = a > addressBins * 7 / 8 ? cellOf(0, 0, 0, 0, 255) : cellOf(40, 5, 210, 0, 0);
            }
            h.cells[static_cast<std::size_t>(t) * static_cast<std::size_t>(addressBins) + static_cast<std::size_t>(a)] = c;
        }
    }
    return h;
}

inline TimelineData realisticTimeline(int buckets = 3000) {
    TimelineData d;
    for (int i = 0; i < buckets; ++i) {
        TimelineBucket b;
        b.firstEvent = static_cast<qint64>(i) * 4;
        b.lastEvent = b.firstEvent + 3;
        const double step = std::fmod(i / 300.0, 1.0);
        const double allocated = (2.0 + 5.0 * step + 0.3 * std::sin(i / 7.0)) * 1024 * kMiB;
        const double reserved = (3.0 + 5.0 * std::min(1.0, i / 1500.0)) * 1024 * kMiB + allocated * 0.2;
        auto mm = [](double v, double spread) { return MinMax{static_cast<qint64>(v * (1 - spread)), static_cast<qint64>(v)}; };
        b.bytes[static_cast<int>(TimelineMetric::Allocated)] = mm(allocated, 0.04);
        b.bytes[static_cast<int>(TimelineMetric::Reserved)] = mm(reserved, 0.0);
        b.bytes[static_cast<int>(TimelineMetric::Active)] = mm(allocated * 1.05, 0.03);
        b.bytes[static_cast<int>(TimelineMetric::Requested)] = mm(allocated * 0.93, 0.04);
        b.fragmentation = std::clamp(1.0 - allocated / reserved, 0.0, 1.0);
        d.buckets.push_back(b);
    }
    d.markers = {{1200, MarkerKind::Retry, QStringLiteral("cudaMalloc of 2.00 GiB failed; freed cached blocks and retried")},
                 {2400, MarkerKind::GarbageCollection, QStringLiteral("reserved above 80 % of the limit: released 640 MiB")},
                 {6000, MarkerKind::EmptyCache, QStringLiteral("torch.cuda.empty_cache()")},
                 {9000, MarkerKind::Oom, QStringLiteral("Tried to allocate 4.00 GiB; 1.20 GiB free")}};
    d.phases = {{QStringLiteral("warm-up"), 0, 1199}, {QStringLiteral("epoch 1"), 1200, 5999}, {QStringLiteral("epoch 2"), 6000, 11999}};
    d.fragmentationLabel = QStringLiteral("fragmentation");
    return d;
}

inline SummaryTableData realisticSummary() {
    SummaryTableData s;
    s.rows = {{QStringLiteral("Allocated memory"), true, 3'221'225'472, 6'442'450'944, 90'194'313'216, 86'973'087'744},
              {QStringLiteral("Active memory"), true, 3'300'000'000, 6'500'000'000, 91'000'000'000, 87'700'000'000},
              {QStringLiteral("Requested memory"), true, 3'100'000'000, 6'300'000'000, 89'000'000'000, 85'900'000'000},
              {QStringLiteral("GPU reserved memory"), true, 8'589'934'592, 8'589'934'592, 9'663'676'416, 1'073'741'824},
              {QStringLiteral("Non-releasable memory"), true, 402'653'184, 1'288'490'188, 50'000'000'000, 49'597'346'816},
              {QStringLiteral("Allocations"), false, 1234, 2456, 987654, 986420},
              {QStringLiteral("Active allocs"), false, 1240, 2460, 987700, 986460},
              {QStringLiteral("GPU reserved segments"), false, 57, 57, 61, 4},
              {QStringLiteral("Non-releasable allocs"), false, 31, 88, 40000, 39969},
              {QStringLiteral("Oversize allocations"), false, 0, 0, 0, 0},
              {QStringLiteral("Oversize GPU segments"), false, 0, 0, 0, 0}};
    QString text;
    text += QStringLiteral("|===========================================================================|\n");
    text += QStringLiteral("|                  PyTorch CUDA memory summary, device ID 0                 |\n");
    text += QStringLiteral("|---------------------------------------------------------------------------|\n");
    text += QStringLiteral("|            CUDA OOMs: 0            |        cudaMalloc retries: 1         |\n");
    text += QStringLiteral("|===========================================================================|\n");
    text += QStringLiteral("|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n");
    text += QStringLiteral("|---------------------------------------------------------------------------|\n");
    text += QStringLiteral("| Allocated memory      |   3072 MiB |   6144 MiB |  84000 MiB |  81000 MiB |\n");
    text += QStringLiteral("|===========================================================================|\n");
    s.text = text;
    return s;
}

}  // namespace viewtest
