#pragma once
// The reserved memory of every compared config over the program, overlaid: one step line per
// config (its CompareColors colour), x = program op, so the runs line up op for op whatever
// events each config produced. The selected op is a cursor line; clicking or dragging in the plot
// picks an op (opRequested), which the Compare widget uses for its side-by-side segment maps.
#include <QChartView>

#include <vector>

#include "views/data/CompareData.h"
#include "views/theme/ThemePalette.h"
#include "views/charts/ThemedChartView.h"

QT_BEGIN_NAMESPACE
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace allocscope::views {

class CompareTimelineChart : public ThemedChartView {
    Q_OBJECT
public:
    explicit CompareTimelineChart(QWidget* parent = nullptr);

    void setRuns(const std::vector<CompareRun>& runs, qint64 opCount);
    qint64 currentOp() const { return currentOp_; }

    // What is on screen, as plain values (y in byteUnit() units).
    int lineCount() const { return static_cast<int>(lines_.size()); }
    QList<QPointF> linePoints(int run) const;
    QColor lineColor(int run) const;
    QString lineName(int run) const;
    double byteUnit() const { return unit_; }
    int xForOp(qint64 op) const;  // viewport x
    qint64 opAtX(int viewportX) const;

public slots:
    void setCurrentOp(qint64 op);  // moves the cursor; does not emit opRequested

signals:
    void opRequested(qint64 op);

protected:
    void resizeEvent(QResizeEvent* event) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    void rebuild();
    void applyColors() override;
    void updateTicks();
    void plotPressed(const QPoint& viewportPos) override;

    std::vector<CompareRun> runs_;
    qint64 opCount_ = 0;
    std::vector<QLineSeries*> lines_;
    QValueAxis* axisX_ = nullptr;
    QValueAxis* axisY_ = nullptr;
    double unit_ = 1.0;
    qint64 lastOp_ = 1;
    double top_ = 1.0;
    qint64 currentOp_ = -1;
};

}  // namespace allocscope::views
