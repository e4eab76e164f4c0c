#pragma once
// The memory timeline of one run, already bucketed at the source (heaptrack keeps each bucket's
// peak, we keep min and max so a band shows how much a statistic moved inside the bucket).
#include <QString>
#include <QtGlobal>

#include <array>
#include <vector>

namespace allocscope::views {

enum class TimelineMetric : quint8 { Allocated = 0, Reserved, Active, Requested };
inline constexpr int kTimelineMetricCount = 4;

struct MinMax {
    qint64 min = 0;
    qint64 max = 0;
};

struct TimelineBucket {
    qint64 firstEvent = 0;  // event index range [firstEvent, lastEvent]
    qint64 lastEvent = 0;
    std::array<MinMax, kTimelineMetricCount> bytes{};  // indexed by TimelineMetric
    double fragmentation = 0.0;  // e.g. 1 - largest free block / free bytes; 0..1
};

enum class MarkerKind : quint8 { Oom = 0, Retry, GarbageCollection, EmptyCache };
inline constexpr int kMarkerKindCount = 4;

struct TimelineMarker {
    qint64 event = 0;
    MarkerKind kind = MarkerKind::Oom;
    QString cause;  // shown in the tooltip ("cudaMalloc of 2.0 GiB failed, 1.2 GiB free", ...)
};

struct TimelinePhase {
    QString name;
    qint64 firstEvent = 0;
    qint64 lastEvent = 0;
};

struct TimelineData {
    std::vector<TimelineBucket> buckets;  // ascending, non-overlapping
    std::vector<TimelineMarker> markers;
    std::vector<TimelinePhase> phases;
    QString fragmentationLabel = QStringLiteral("fragmentation");
};

}  // namespace allocscope::views
