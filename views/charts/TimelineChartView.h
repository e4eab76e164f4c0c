#pragma once
// The memory timeline (Qt Charts): allocated / reserved / active / requested as min–max bands per
// bucket, a fragmentation metric on a second axis, OOM / retry / GC / empty_cache markers with
// tooltips, shaded phases and the current event as a cursor line. Clicking or dragging in the plot
// moves the cursor and emits eventRequested. The buckets given are merged down to the plot's pixel
// width; phases and the cursor are painted over the chart, so moving the cursor never rebuilds a
// series.
#include <QChartView>

#include <array>

#include "views/data/TimelineData.h"
#include "views/theme/ThemePalette.h"
#include "views/charts/ThemedChartView.h"

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QLineSeries;
class QScatterSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace allocscope::views {

class TimelineChartView : public ThemedChartView {
    Q_OBJECT
public:
    explicit TimelineChartView(QWidget* parent = nullptr);

    void setData(TimelineData input);
    const TimelineData& data() const { return data_; }
    qint64 currentEvent() const { return currentEvent_; }

    // What is on screen, for tests and export.
    int displayedBucketCount() const { return static_cast<int>(shown_.size()); }
    QAreaSeries* band(TimelineMetric metric) const { return bands_[static_cast<std::size_t>(metric)]; }
    QLineSeries* maxSeries(TimelineMetric metric) const;
    QLineSeries* minSeries(TimelineMetric metric) const;
    QLineSeries* fragmentationSeries() const { return fragmentation_; }
    QScatterSeries* markerSeries(MarkerKind kind) const { return markers_[static_cast<std::size_t>(kind)]; }
    double byteUnit() const { return unit_; }  // the y values are bytes / byteUnit()
    // The same as plain values (callers outside views/charts/ must not include Qt Charts).
    QList<QPointF> maxPoints(TimelineMetric metric) const;
    QList<QPointF> minPoints(TimelineMetric metric) const;
    QList<QPointF> fragmentationPoints() const;  // y in percent
    QList<QPointF> markerPoints(MarkerKind kind) const;
    int markerShape(MarkerKind kind) const;      // QScatterSeries::MarkerShape as int
    QColor metricColor(TimelineMetric metric) const;
    // The colour of the metric's box in the legend (invalid when the legend has none).
    QColor legendColor(TimelineMetric metric) const;
    int xForEvent(qint64 event) const;        // viewport x
    qint64 eventAtX(int viewportX) const;

public slots:
    void setCurrentEvent(qint64 event);  // moves the cursor; does not emit eventRequested

signals:
    void eventRequested(qint64 event);

protected:
    void resizeEvent(QResizeEvent* event) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    void rebuild();
    void applyColors() override;
    int targetBuckets() const;
    void plotPressed(const QPoint& viewportPos) override;
    void showMarkerTip(MarkerKind kind, const QPointF& point, bool state);

    TimelineData data_;
    std::vector<TimelineBucket> shown_;
    qint64 currentEvent_ = -1;
    double unit_ = 1.0;
    int builtForWidth_ = -1;
    std::array<QAreaSeries*, kTimelineMetricCount> bands_{};
    QLineSeries* fragmentation_ = nullptr;
    std::array<QScatterSeries*, kMarkerKindCount> markers_{};
    std::array<std::vector<const TimelineMarker*>, kMarkerKindCount> markerIndex_;
    QValueAxis* axisX_ = nullptr;
    QValueAxis* axisBytes_ = nullptr;
    QValueAxis* axisFrag_ = nullptr;
};

}  // namespace allocscope::views
