#pragma once
// What the Compare tab draws: one program run under several allocator configs. Plain values,
// filled by app/ from the session's stored runs (summary, timeline, state at the peak) and the
// cost model; views never see allocator or storage types.
#include <QString>
#include <QtGlobal>

#include <optional>
#include <vector>

#include "views/data/SegmentMapData.h"

namespace allocscope::views {

// The numbers compared, in the order the bar charts and table columns show them.
enum class CompareMetric : quint8 {
    PeakReserved = 0,  // bytes
    Waste,             // bytes: rounding + stranded free bytes at the peak-reserved point
    CudaMallocs,       // count: segment_alloc events (cudaMalloc calls)
    Retries,           // count: num_alloc_retries
    Ooms,              // count
    AllocatorTime,     // microseconds, estimated by the cost model
};
inline constexpr int kCompareMetricCount = 6;

// One point of a run's reserved timeline, aligned across runs by program op.
struct CompareTimelinePoint {
    qint64 op = 0;
    qint64 reserved = 0;  // bytes
};

struct CompareRun {
    QString label;       // the config as the user named it ("default", "expandable_segments:True")
    QString configText;  // the PYTORCH_CUDA_ALLOC_CONF string
    int run = -1;        // session run number; -1 = not recorded (the async backend model)
    bool asyncBackend = false;
    quint64 peakReserved = 0;
    quint64 peakAllocated = 0;
    quint64 roundingWaste = 0;  // at the peak-reserved point
    quint64 strandedFree = 0;   // at the peak-reserved point
    quint64 cudaMallocs = 0;
    quint64 cudaFrees = 0;
    quint64 retries = 0;
    quint64 ooms = 0;
    qint64 firstOomOp = -1;
    double allocatorUs = 0.0;
    std::vector<CompareTimelinePoint> reservedTimeline;  // ascending op
    // Why this run has no segment map (e.g. "backend:cudaMallocAsync has no segments"); empty
    // when it has one.
    QString noMapReason;
    // A what-if replay: of its best-fit decisions settled by an address, how many rested on a
    // modelled (not recorded) segment address; nullopt for runs that are no such replay.
    std::optional<quint64> modelledDecisions;
    // The run replays a recorded history that starts mid-run (a ring buffer that overflowed, a
    // state-only snapshot): its peaks and counts cover only the recorded window, a lower bound of
    // the whole run's (CompareData::windowNote says which and why). Every number here but the
    // label, the config and the run number is such a figure.
    bool windowOnly = false;

    quint64 waste() const { return roundingWaste + strandedFree; }
    double value(CompareMetric metric) const {
        switch (metric) {
            case CompareMetric::PeakReserved: return static_cast<double>(peakReserved);
            case CompareMetric::Waste: return static_cast<double>(waste());
            case CompareMetric::CudaMallocs: return static_cast<double>(cudaMallocs);
            case CompareMetric::Retries: return static_cast<double>(retries);
            case CompareMetric::Ooms: return static_cast<double>(ooms);
            case CompareMetric::AllocatorTime: return allocatorUs;
        }
        return 0.0;
    }
};

struct CompareData {
    QString program;  // "fragmentation-101 (steps=100), seed 1 on h100-80gb"
    qint64 opCount = 0;
    std::vector<CompareRun> runs;  // in the order the user listed the configs
    // When a run is windowOnly: one line saying what its window covers and that its figures
    // cannot be compared with whole-run ones (the CLI's legend, alloc::WindowFigures); "" otherwise.
    QString windowNote;
};

// The segment maps of every run at one program op (same order as CompareData::runs); nullopt for
// a run without segments or not loaded yet.
struct CompareMaps {
    qint64 op = -1;
    std::vector<std::optional<SegmentMapData>> maps;
};

}  // namespace allocscope::views
