#include "views/charts/CompareTimelineChart.h"

#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMouseEvent>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "views/charts/CompareColors.h"
#include "views/util/NiceTicks.h"

namespace allocscope::views {

CompareTimelineChart::CompareTimelineChart(QWidget* parent) : ThemedChartView(parent) {
    auto* chart = new QChart();
    chart->setAnimationOptions(QChart::NoAnimation);
    // The Compare widget shows one legend (config colours) for all its charts.
    chart->legend()->setVisible(false);
    chart->setMargins(QMargins(4, 4, 4, 4));
    setChart(chart);
    setRenderHint(QPainter::Antialiasing, true);
    setMinimumSize(240, 160);
    setToolTip(tr("Reserved memory of each config over the program (x = program op, so runs line up op for op).\n"
                  "Click or drag to show the segment maps at that op."));
    axisX_ = new QValueAxis(this);
    axisX_->setTitleText(tr("program op"));
    axisX_->setLabelFormat(QStringLiteral("%.0f"));
    axisY_ = new QValueAxis(this);
    axisY_->setLabelFormat(QStringLiteral("%.4g"));
    chart->addAxis(axisX_, Qt::AlignBottom);
    chart->addAxis(axisY_, Qt::AlignLeft);
    rebuild();
}

void CompareTimelineChart::setRuns(const std::vector<CompareRun>& runs, qint64 opCount) {
    runs_ = runs;
    opCount_ = opCount;
    rebuild();
}

QList<QPointF> CompareTimelineChart::linePoints(int run) const {
    if (run < 0 || run >= lineCount()) return {};
    return lines_[static_cast<std::size_t>(run)]->points();
}

QColor CompareTimelineChart::lineColor(int run) const {
    if (run < 0 || run >= lineCount()) return {};
    return lines_[static_cast<std::size_t>(run)]->pen().color();
}

QString CompareTimelineChart::lineName(int run) const {
    if (run < 0 || run >= lineCount()) return {};
    return lines_[static_cast<std::size_t>(run)]->name();
}

void CompareTimelineChart::rebuild() {
    for (QLineSeries* s : lines_) {
        chart()->removeSeries(s);
        delete s;
    }
    lines_.clear();
    qint64 peak = 1;
    qint64 lastOp = std::max<qint64>(1, opCount_ - 1);
    for (const CompareRun& r : runs_)
        for (const CompareTimelinePoint& p : r.reservedTimeline) {
            peak = std::max(peak, p.reserved);
            lastOp = std::max(lastOp, p.op);
        }
    unit_ = 1.0;
    const char* unitName = "B";
    for (const char* name : {"KiB", "MiB", "GiB", "TiB"}) {
        if (static_cast<double>(peak) / unit_ < 2048.0) break;
        unit_ *= 1024.0;
        unitName = name;
    }
    axisY_->setTitleText(tr("reserved (%1)").arg(QString::fromLatin1(unitName)));
    for (const CompareRun& r : runs_) {
        auto* line = new QLineSeries(this);
        line->setName(r.label);
        // A step line: reserved holds its value until the next op that changes it.
        QList<QPointF> points;
        points.reserve(static_cast<qsizetype>(r.reservedTimeline.size() * 2));
        for (const CompareTimelinePoint& p : r.reservedTimeline) {
            const double x = static_cast<double>(p.op);
            const double y = static_cast<double>(p.reserved) / unit_;
            if (!points.isEmpty() && points.back().y() != y) points.append(QPointF(x, points.back().y()));
            points.append(QPointF(x, y));
        }
        if (!points.isEmpty() && points.back().x() < static_cast<double>(lastOp))
            points.append(QPointF(static_cast<double>(lastOp), points.back().y()));
        line->replace(points);
        chart()->addSeries(line);
        line->attachAxis(axisX_);
        line->attachAxis(axisY_);
        lines_.push_back(line);
    }
    lastOp_ = lastOp;
    top_ = std::max(1.0, static_cast<double>(peak) / unit_ * 1.08);
    updateTicks();
    applyColors();
    viewport()->update();
}

void CompareTimelineChart::applyColors() {
    QChart* c = chart();
    c->setTheme(colors_.theme == Theme::Dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    c->setBackgroundBrush(palette().color(QPalette::Window));
    c->setPlotAreaBackgroundBrush(colors_.background);
    c->setPlotAreaBackgroundVisible(true);
    c->legend()->setVisible(false);  // setTheme() shows it again
    for (QValueAxis* axis : {axisX_, axisY_}) {
        axis->setLabelsColor(colors_.text);
        axis->setTitleBrush(colors_.text);
        axis->setGridLineColor(colors_.grid);
        axis->setLinePenColor(colors_.grid);
    }
    for (std::size_t i = 0; i < lines_.size(); ++i)
        lines_[i]->setPen(QPen(CompareColors::forRun(static_cast<int>(i), colors_.theme), 2.0));
}

void CompareTimelineChart::updateTicks() {
    // The interval goes first: a new range under the old interval could ask for millions of ticks.
    axisX_->setTickType(QValueAxis::TicksDynamic);
    axisX_->setTickAnchor(0);
    axisX_->setTickInterval(NiceTicks::step(static_cast<double>(lastOp_), std::max(2, viewport()->width() / 110)));
    axisX_->setRange(0.0, static_cast<double>(lastOp_));
    axisY_->setTickType(QValueAxis::TicksDynamic);
    axisY_->setTickAnchor(0);
    axisY_->setTickInterval(NiceTicks::step(top_, std::max(2, viewport()->height() / 50)));
    axisY_->setRange(0.0, top_);
}

int CompareTimelineChart::xForOp(qint64 op) const {
    const QPointF pos = chart()->mapToPosition(QPointF(static_cast<double>(op), 0.0));
    return mapFromScene(chart()->mapToScene(pos)).x();
}

qint64 CompareTimelineChart::opAtX(int viewportX) const {
    const QPointF chartPos = chart()->mapFromScene(mapToScene(QPoint(viewportX, 0)));
    const double value = chart()->mapToValue(chartPos).x();
    return std::clamp<qint64>(static_cast<qint64>(std::llround(value)), 0, std::max<qint64>(0, opCount_ - 1));
}

void CompareTimelineChart::setCurrentOp(qint64 op) {
    if (op == currentOp_) return;
    currentOp_ = op;
    viewport()->update();
}

void CompareTimelineChart::plotPressed(const QPoint& viewportPos) {
    if (opCount_ <= 0) return;
    const qint64 op = opAtX(viewportPos.x());
    setCurrentOp(op);
    emit opRequested(op);
}

void CompareTimelineChart::resizeEvent(QResizeEvent* event) {
    QChartView::resizeEvent(event);
    const bool compact = height() < 160;
    for (QValueAxis* axis : {axisX_, axisY_}) axis->setTitleVisible(!compact);
    updateTicks();
}

void CompareTimelineChart::drawForeground(QPainter* painter, const QRectF& rect) {
    QChartView::drawForeground(painter, rect);
    if (currentOp_ < 0 || lines_.empty()) return;
    const QRectF plot = chart()->mapRectToScene(chart()->plotArea());
    const double x = std::round(chart()->mapToScene(chart()->mapToPosition(QPointF(static_cast<double>(currentOp_), 0.0))).x());
    painter->save();
    painter->setClipRect(plot);
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->fillRect(QRectF(x - 1, plot.top(), 2, plot.height()), colors_.cursor);
    painter->restore();
}

}  // namespace allocscope::views
