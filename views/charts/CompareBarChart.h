#pragma once
// One compared number (peak reserved, waste, cudaMalloc calls, ...) as a bar chart: one bar per
// config in the config's colour (CompareColors), the value printed on the bar, a tooltip with the
// exact figure and the config. Bytes are scaled to one binary unit for the axis; time to µs/ms/s.
#include <QChartView>

#include <vector>

#include "views/data/CompareData.h"
#include "views/theme/ThemePalette.h"
#include "views/charts/ThemedChartView.h"

QT_BEGIN_NAMESPACE
class QBarSeries;
class QBarSet;
class QBarCategoryAxis;
class QValueAxis;
QT_END_NAMESPACE

namespace allocscope::views {

class CompareBarChart : public ThemedChartView {
    Q_OBJECT
public:
    explicit CompareBarChart(CompareMetric metric, QWidget* parent = nullptr);

    // `windowNote` (CompareData::windowNote) joins the tooltip when a run is windowOnly.
    void setRuns(const std::vector<CompareRun>& runs, const QString& windowNote = {});
    QString title() const;  // "peak reserved", "peak reserved (window)"
    CompareMetric metric() const { return metric_; }

    // What is on screen, as plain values (callers outside views/charts/ never include Qt Charts).
    int barCount() const { return static_cast<int>(sets_.size()); }
    double barValue(int run) const;  // in unitName() units
    double rawValue(int run) const;  // bytes, count or microseconds
    QString unitName() const { return unitName_; }
    double unit() const { return unit_; }
    QColor barColor(int run) const;
    QString barToolTip(int run) const;
    double axisMax() const;
    // Every config scored 0 (no bars): the plot says so instead of staying blank.
    bool allZero() const;
    // Values are printed above the bars only while each fits its bar's width (many configs in a
    // small chart would print them over each other); the tooltip and the table always have them.
    bool valueLabelsShown() const;

    static QString metricName(CompareMetric metric);         // "peak reserved"
    static QString metricDescription(CompareMetric metric);  // one sentence for tooltips
    // The value as the table shows it: "1.17 GiB", "12", "1.52 ms".
    static QString formatValue(CompareMetric metric, double raw);

protected:
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    void rebuild();
    void updateValueLabels();
    void applyColors() override;
    void showBarTip(bool status, int index, QBarSet* set);

    CompareMetric metric_;
    std::vector<CompareRun> runs_;
    QBarSeries* series_ = nullptr;
    std::vector<QBarSet*> sets_;
    QBarCategoryAxis* axisX_ = nullptr;
    QValueAxis* axisY_ = nullptr;
    QString unitName_;
    double unit_ = 1.0;
};

}  // namespace allocscope::views
