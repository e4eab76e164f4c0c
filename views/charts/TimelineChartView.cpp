#include "views/charts/TimelineChartView.h"

#include <QAreaSeries>
#include <QChart>
#include <QCursor>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMouseEvent>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "views/charts/TimelineDownsampler.h"
#include "views/util/Formatting.h"
#include "views/util/NiceTicks.h"

namespace allocscope::views {

namespace {
const char* const kMetricNames[kTimelineMetricCount] = {"allocated", "reserved", "active", "requested"};
const char* const kMarkerNames[kMarkerKindCount] = {"OOM", "cudaMalloc retry", "garbage collection", "empty_cache"};

QString markerText(const TimelineMarker& m) {
    QString text = QStringLiteral("%1 at event %2").arg(QString::fromLatin1(kMarkerNames[static_cast<int>(m.kind)]),
                                                      Formatting::count(m.event));
    if (!m.cause.isEmpty()) text += QStringLiteral("\n") + m.cause;
    return text;
}
}  // namespace

TimelineChartView::TimelineChartView(QWidget* parent) : ThemedChartView(parent) {
    setToolTip(tr("Click or drag to move the scrubber; markers show OOMs, retries, garbage collection and empty_cache"));
    auto* chart = new QChart();
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    setChart(chart);
    setRenderHint(QPainter::Antialiasing, true);
    setMinimumSize(240, 160);

    axisX_ = new QValueAxis(this);
    axisX_->setTitleText(tr("event index"));
    axisX_->setLabelFormat(QStringLiteral("%.0f"));
    axisBytes_ = new QValueAxis(this);
    axisBytes_->setLabelFormat(QStringLiteral("%.4g"));
    axisFrag_ = new QValueAxis(this);
    axisFrag_->setRange(0.0, 100.0);
    axisFrag_->setLabelFormat(QStringLiteral("%.0f %%"));
    axisFrag_->setTickType(QValueAxis::TicksDynamic);
    axisFrag_->setTickAnchor(0);
    axisFrag_->setTickInterval(25);
    chart->addAxis(axisX_, Qt::AlignBottom);
    chart->addAxis(axisBytes_, Qt::AlignLeft);
    chart->addAxis(axisFrag_, Qt::AlignRight);

    // Reserved first so the smaller statistics are drawn on top of it.
    const int order[kTimelineMetricCount] = {1, 2, 0, 3};
    for (int m : order) {
        auto* upper = new QLineSeries(this);
        auto* lower = new QLineSeries(this);
        auto* band = new QAreaSeries(upper, lower);
        band->setName(tr(kMetricNames[m]));
        chart->addSeries(band);
        band->attachAxis(axisX_);
        band->attachAxis(axisBytes_);
        bands_[static_cast<std::size_t>(m)] = band;
    }
    fragmentation_ = new QLineSeries(this);
    chart->addSeries(fragmentation_);
    fragmentation_->attachAxis(axisX_);
    fragmentation_->attachAxis(axisFrag_);

    const QScatterSeries::MarkerShape shapes[kMarkerKindCount] = {
        QScatterSeries::MarkerShapeStar, QScatterSeries::MarkerShapeTriangle, QScatterSeries::MarkerShapeCircle,
        QScatterSeries::MarkerShapeRotatedRectangle};
    for (int k = 0; k < kMarkerKindCount; ++k) {
        auto* series = new QScatterSeries(this);
        series->setName(tr(kMarkerNames[k]));
        series->setMarkerShape(shapes[k]);
        series->setMarkerSize(k == 0 ? 16 : 11);
        chart->addSeries(series);
        series->attachAxis(axisX_);
        series->attachAxis(axisBytes_);
        const auto kind = static_cast<MarkerKind>(k);
        connect(series, &QScatterSeries::hovered, this,
                [this, kind](const QPointF& point, bool state) { showMarkerTip(kind, point, state); });
        markers_[static_cast<std::size_t>(k)] = series;
    }
    applyColors();
    rebuild();
}

QLineSeries* TimelineChartView::maxSeries(TimelineMetric metric) const { return band(metric)->upperSeries(); }
QLineSeries* TimelineChartView::minSeries(TimelineMetric metric) const { return band(metric)->lowerSeries(); }

QList<QPointF> TimelineChartView::maxPoints(TimelineMetric metric) const { return maxSeries(metric)->points(); }
QList<QPointF> TimelineChartView::minPoints(TimelineMetric metric) const { return minSeries(metric)->points(); }
QList<QPointF> TimelineChartView::fragmentationPoints() const { return fragmentation_->points(); }
QList<QPointF> TimelineChartView::markerPoints(MarkerKind kind) const { return markerSeries(kind)->points(); }
int TimelineChartView::markerShape(MarkerKind kind) const { return static_cast<int>(markerSeries(kind)->markerShape()); }
QColor TimelineChartView::metricColor(TimelineMetric metric) const { return band(metric)->pen().color(); }
QColor TimelineChartView::legendColor(TimelineMetric metric) const {
    const QList<QLegendMarker*> markers = chart()->legend()->markers(band(metric));
    return markers.size() == 1 ? markers.front()->brush().color() : QColor();
}

void TimelineChartView::setData(TimelineData input) {
    data_ = std::move(input);
    builtForWidth_ = -1;
    rebuild();
}

int TimelineChartView::targetBuckets() const {
    // The plot is narrower than the viewport, so this never leaves fewer points than pixels.
    return std::max(2, viewport()->width());
}

void TimelineChartView::rebuild() {
    builtForWidth_ = targetBuckets();
    shown_ = TimelineDownsampler::downsample(data_.buckets, builtForWidth_);
    qint64 peak = 1;
    for (const TimelineBucket& b : shown_)
        for (const MinMax& mm : b.bytes) peak = std::max(peak, mm.max);
    const double kib = 1024.0;
    const char* unitName = "B";
    unit_ = 1.0;
    for (const char* name : {"KiB", "MiB", "GiB", "TiB"}) {
        if (static_cast<double>(peak) / unit_ < 2 * kib) break;
        unit_ *= kib;
        unitName = name;
    }
    axisBytes_->setTitleText(tr("memory (%1)").arg(QString::fromLatin1(unitName)));

    for (int m = 0; m < kTimelineMetricCount; ++m) {
        QList<QPointF> upper, lower;
        upper.reserve(static_cast<qsizetype>(shown_.size()));
        lower.reserve(static_cast<qsizetype>(shown_.size()));
        for (const TimelineBucket& b : shown_) {
            const double x = 0.5 * static_cast<double>(b.firstEvent + b.lastEvent);
            upper.append(QPointF(x, static_cast<double>(b.bytes[static_cast<std::size_t>(m)].max) / unit_));
            lower.append(QPointF(x, static_cast<double>(b.bytes[static_cast<std::size_t>(m)].min) / unit_));
        }
        bands_[static_cast<std::size_t>(m)]->upperSeries()->replace(upper);
        bands_[static_cast<std::size_t>(m)]->lowerSeries()->replace(lower);
    }
    QList<QPointF> frag;
    frag.reserve(static_cast<qsizetype>(shown_.size()));
    for (const TimelineBucket& b : shown_)
        frag.append(QPointF(0.5 * static_cast<double>(b.firstEvent + b.lastEvent), b.fragmentation * 100.0));
    fragmentation_->replace(frag);
    fragmentation_->setName(data_.fragmentationLabel);

    // Markers sit on the reserved line at their event, so a retry or OOM shows at the peak it hit.
    for (int k = 0; k < kMarkerKindCount; ++k) markerIndex_[static_cast<std::size_t>(k)].clear();
    std::array<QList<QPointF>, kMarkerKindCount> points;
    for (const TimelineMarker& marker : data_.markers) {
        const auto it = std::upper_bound(shown_.begin(), shown_.end(), marker.event,
                                         [](qint64 e, const TimelineBucket& b) { return e < b.firstEvent; });
        const qint64 reserved = it == shown_.begin() ? 0 : std::prev(it)->bytes[static_cast<std::size_t>(TimelineMetric::Reserved)].max;
        const auto k = static_cast<std::size_t>(marker.kind);
        points[k].append(QPointF(static_cast<double>(marker.event), static_cast<double>(reserved) / unit_));
        markerIndex_[k].push_back(&marker);
    }
    for (int k = 0; k < kMarkerKindCount; ++k) {
        markers_[static_cast<std::size_t>(k)]->replace(points[static_cast<std::size_t>(k)]);
        const auto legendMarkers = chart()->legend()->markers(markers_[static_cast<std::size_t>(k)]);
        for (QLegendMarker* lm : legendMarkers) lm->setVisible(!points[static_cast<std::size_t>(k)].isEmpty());
    }

    const double firstX = shown_.empty() ? 0.0 : static_cast<double>(shown_.front().firstEvent);
    const double lastX = shown_.empty() ? 1.0 : std::max(firstX + 1, static_cast<double>(shown_.back().lastEvent));
    // The tick interval goes first: a new range under the old interval could ask Qt Charts for
    // millions of ticks (0..1 with step 0.1, then 0..80000).
    axisX_->setTickType(QValueAxis::TicksDynamic);
    axisX_->setTickAnchor(0);
    axisX_->setTickInterval(NiceTicks::step(lastX - firstX, std::max(2, viewport()->width() / 110)));
    axisX_->setRange(firstX, lastX);
    const double top = std::max(1.0, static_cast<double>(peak) / unit_ * 1.08);
    axisBytes_->setTickType(QValueAxis::TicksDynamic);
    axisBytes_->setTickAnchor(0);
    axisBytes_->setTickInterval(NiceTicks::step(top, std::max(2, viewport()->height() / 60)));
    axisBytes_->setRange(0.0, top);
    viewport()->update();
}

void TimelineChartView::applyColors() {
    QChart* c = chart();
    c->setTheme(colors_.theme == Theme::Dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    c->setBackgroundBrush(palette().color(QPalette::Window));
    c->setPlotAreaBackgroundBrush(colors_.background);
    c->setPlotAreaBackgroundVisible(true);
    c->legend()->setLabelColor(colors_.text);
    for (QValueAxis* axis : {axisX_, axisBytes_, axisFrag_}) {
        axis->setLabelsColor(colors_.text);
        axis->setTitleBrush(colors_.text);
        axis->setGridLineColor(colors_.grid);
        axis->setLinePenColor(colors_.grid);
    }
    axisFrag_->setGridLineVisible(false);
    for (int m = 0; m < kTimelineMetricCount; ++m) {
        QAreaSeries* band = bands_[static_cast<std::size_t>(m)];
        const QColor color = colors_.metric[static_cast<std::size_t>(m)];
        QColor fill = color;
        fill.setAlpha(m == static_cast<int>(TimelineMetric::Reserved) ? 40 : 70);
        band->setBrush(fill);
        band->setPen(QPen(color, 1.5));
        // The legend shows the line's solid colour: the band's faint fill made the four metrics'
        // boxes look alike.
        for (QLegendMarker* lm : c->legend()->markers(band)) lm->setBrush(color);
    }
    fragmentation_->setPen(QPen(colors_.fragmentation, 1.5));
    axisFrag_->setTitleText(data_.fragmentationLabel);
    for (int k = 0; k < kMarkerKindCount; ++k) {
        QScatterSeries* s = markers_[static_cast<std::size_t>(k)];
        s->setColor(colors_.marker[static_cast<std::size_t>(k)]);
        s->setBorderColor(colors_.text);
    }
    // setTheme() resets visibility; markers without points stay out of the legend.
    for (int k = 0; k < kMarkerKindCount; ++k)
        for (QLegendMarker* lm : chart()->legend()->markers(markers_[static_cast<std::size_t>(k)]))
            lm->setVisible(markers_[static_cast<std::size_t>(k)]->count() > 0);
}

int TimelineChartView::xForEvent(qint64 event) const {
    const QPointF pos = chart()->mapToPosition(QPointF(static_cast<double>(event), 0.0), bands_[0]);
    return mapFromScene(chart()->mapToScene(pos)).x();
}

qint64 TimelineChartView::eventAtX(int viewportX) const {
    const QPointF chartPos = chart()->mapFromScene(mapToScene(QPoint(viewportX, 0)));
    const double value = chart()->mapToValue(chartPos, bands_[0]).x();
    const qint64 lo = data_.buckets.empty() ? 0 : data_.buckets.front().firstEvent;
    const qint64 hi = data_.buckets.empty() ? 0 : data_.buckets.back().lastEvent;
    return std::clamp<qint64>(static_cast<qint64>(std::llround(value)), lo, hi);
}

void TimelineChartView::setCurrentEvent(qint64 event) {
    if (event == currentEvent_) return;
    currentEvent_ = event;
    viewport()->update();
}

void TimelineChartView::plotPressed(const QPoint& viewportPos) {
    if (data_.buckets.empty()) return;
    const qint64 event = eventAtX(viewportPos.x());
    setCurrentEvent(event);
    emit eventRequested(event);
}

void TimelineChartView::resizeEvent(QResizeEvent* event) {
    QChartView::resizeEvent(event);
    // Small charts (a short splitter pane) give the plot the room: no legend, no axis titles.
    const bool compact = height() < 300 || width() < 420;
    chart()->legend()->setVisible(!compact);
    for (QValueAxis* axis : {axisX_, axisBytes_, axisFrag_}) axis->setTitleVisible(!compact);
    if (targetBuckets() != builtForWidth_ && static_cast<int>(data_.buckets.size()) > std::min(builtForWidth_, targetBuckets()))
        rebuild();
    else if (targetBuckets() != builtForWidth_)
        builtForWidth_ = targetBuckets();
}

void TimelineChartView::drawForeground(QPainter* painter, const QRectF& rect) {
    QChartView::drawForeground(painter, rect);
    if (data_.buckets.empty()) return;
    const QRectF plot = chart()->mapRectToScene(chart()->plotArea());
    auto sceneX = [&](qint64 event) {
        return chart()->mapToScene(chart()->mapToPosition(QPointF(static_cast<double>(event), 0.0), bands_[0])).x();
    };
    painter->save();
    painter->setClipRect(plot);
    const QFontMetrics fm(font());
    // Every other phase is shaded and each starts with a thin line, so phases that tile the
    // whole run stay distinguishable instead of tinting everything.
    for (std::size_t i = 0; i < data_.phases.size(); ++i) {
        const TimelinePhase& phase = data_.phases[i];
        const double start = sceneX(phase.firstEvent);
        const double x0 = std::max(plot.left(), start);
        const double x1 = std::min(plot.right(), sceneX(phase.lastEvent));
        if (x1 <= x0) continue;
        const QRectF shade(x0, plot.top(), x1 - x0, plot.height());
        if (i % 2 == 0) painter->fillRect(shade, colors_.phaseShade);
        if (start > plot.left() + 1) painter->fillRect(QRectF(std::round(start), plot.top(), 1, plot.height()), colors_.mutedText);
        painter->setPen(colors_.mutedText);
        const QString label = fm.elidedText(phase.name, Qt::ElideRight, static_cast<int>(shade.width()) - 4);
        painter->drawText(shade.adjusted(3, 2, -1, 0), Qt::AlignLeft | Qt::AlignTop, label);
    }
    if (currentEvent_ >= 0) {
        const double x = std::round(sceneX(currentEvent_));
        painter->setRenderHint(QPainter::Antialiasing, false);
        painter->fillRect(QRectF(x - 1, plot.top(), 2, plot.height()), colors_.cursor);
    }
    painter->restore();
}

void TimelineChartView::showMarkerTip(MarkerKind kind, const QPointF& point, bool state) {
    if (!state) {
        QToolTip::hideText();
        return;
    }
    const auto& list = markerIndex_[static_cast<std::size_t>(kind)];
    const TimelineMarker* best = nullptr;
    for (const TimelineMarker* m : list)
        if (!best || std::fabs(static_cast<double>(m->event) - point.x()) < std::fabs(static_cast<double>(best->event) - point.x()))
            best = m;
    if (best) QToolTip::showText(QCursor::pos(), markerText(*best), this);
}

}  // namespace allocscope::views
