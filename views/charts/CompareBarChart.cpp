#include "views/charts/CompareBarChart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QCursor>
#include <QLegend>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "views/charts/CompareColors.h"
#include "views/util/Formatting.h"
#include "views/util/NiceTicks.h"

namespace allocscope::views {

namespace {
bool isBytes(CompareMetric m) { return m == CompareMetric::PeakReserved || m == CompareMetric::Waste; }
}  // namespace

QString CompareBarChart::metricName(CompareMetric metric) {
    switch (metric) {
        case CompareMetric::PeakReserved: return tr("peak reserved");
        case CompareMetric::Waste: return tr("waste at peak");
        case CompareMetric::CudaMallocs: return tr("cudaMalloc calls");
        case CompareMetric::Retries: return tr("retries");
        case CompareMetric::Ooms: return tr("OOMs");
        case CompareMetric::AllocatorTime: return tr("est. allocator time");
    }
    return {};
}

QString CompareBarChart::metricDescription(CompareMetric metric) {
    switch (metric) {
        case CompareMetric::PeakReserved:
            return tr("The most memory the allocator held from the driver at once (reserved_bytes peak).");
        case CompareMetric::Waste:
            return tr("At the peak-reserved point: bytes handed out beyond what was asked (rounding) plus free "
                      "bytes stranded in segments that still hold a tensor.");
        case CompareMetric::CudaMallocs:
            return tr("Segments the allocator asked the driver for (segment_alloc events, one cudaMalloc each).");
        case CompareMetric::Retries:
            return tr("Failed cudaMalloc calls retried after releasing cached blocks (num_alloc_retries).");
        case CompareMetric::Ooms: return tr("Requests that failed with an out-of-memory error.");
        case CompareMetric::AllocatorTime:
            return tr("Estimated time spent in the allocator: per-op cost measured on an H100 plus 38.8 µs per "
                      "cudaMalloc/cudaFree (segment maps and unmaps charged the same, an assumption).");
    }
    return {};
}

QString CompareBarChart::formatValue(CompareMetric metric, double raw) {
    if (isBytes(metric)) return Formatting::bytes(static_cast<qint64>(std::llround(raw)));
    if (metric == CompareMetric::AllocatorTime) {
        if (raw >= 1e6) return QStringLiteral("%1 s").arg(raw / 1e6, 0, 'f', 3);
        if (raw >= 1e3) return QStringLiteral("%1 ms").arg(raw / 1e3, 0, 'f', 2);
        return QStringLiteral("%1 µs").arg(raw, 0, 'f', 1);
    }
    return Formatting::count(static_cast<qint64>(std::llround(raw)));
}

CompareBarChart::CompareBarChart(CompareMetric metric, QWidget* parent) : ThemedChartView(parent), metric_(metric) {
    auto* chart = new QChart();
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->legend()->setVisible(false);  // the Compare widget shows one legend for all charts
    chart->setTitle(metricName(metric));
    setChart(chart);
    setRenderHint(QPainter::Antialiasing, true);
    setMinimumSize(160, 140);
    setToolTip(metricDescription(metric));

    series_ = new QBarSeries(this);
    series_->setLabelsVisible(true);
    series_->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    series_->setBarWidth(0.8);  // wide bars leave room for their value labels
    chart->addSeries(series_);
    axisX_ = new QBarCategoryAxis(this);
    axisX_->append(QStringLiteral(" "));
    axisX_->setGridLineVisible(false);
    axisY_ = new QValueAxis(this);
    axisY_->setLabelFormat(QStringLiteral("%.4g"));
    chart->addAxis(axisX_, Qt::AlignBottom);
    chart->addAxis(axisY_, Qt::AlignLeft);
    series_->attachAxis(axisX_);
    series_->attachAxis(axisY_);
    connect(series_, &QBarSeries::hovered, this, &CompareBarChart::showBarTip);
    connect(chart, &QChart::plotAreaChanged, this, &CompareBarChart::updateValueLabels);
    rebuild();
}

void CompareBarChart::setRuns(const std::vector<CompareRun>& runs, const QString& windowNote) {
    runs_ = runs;
    // Every compared number is a peak or a count: over a window it is the window's (see
    // CompareRun::windowOnly), and the title says so as the table's headers do.
    const bool window = std::any_of(runs_.begin(), runs_.end(), [](const CompareRun& r) { return r.windowOnly; });
    chart()->setTitle(window ? tr("%1 (window)").arg(metricName(metric_)) : metricName(metric_));
    setToolTip(window ? metricDescription(metric_) + QStringLiteral("\n\n") + windowNote : metricDescription(metric_));
    rebuild();
}

QString CompareBarChart::title() const { return chart()->title(); }

double CompareBarChart::rawValue(int run) const {
    if (run < 0 || run >= static_cast<int>(runs_.size())) return 0.0;
    return runs_[static_cast<std::size_t>(run)].value(metric_);
}

double CompareBarChart::barValue(int run) const {
    if (run < 0 || run >= barCount()) return 0.0;
    return sets_[static_cast<std::size_t>(run)]->at(0);
}

QColor CompareBarChart::barColor(int run) const {
    if (run < 0 || run >= barCount()) return {};
    return sets_[static_cast<std::size_t>(run)]->color();
}

double CompareBarChart::axisMax() const { return axisY_->max(); }

QString CompareBarChart::barToolTip(int run) const {
    if (run < 0 || run >= static_cast<int>(runs_.size())) return {};
    const CompareRun& r = runs_[static_cast<std::size_t>(run)];
    QString text = QStringLiteral("%1\n%2: %3").arg(r.label, metricName(metric_), formatValue(metric_, r.value(metric_)));
    if (isBytes(metric_)) text += QStringLiteral(" (%1 bytes)").arg(Formatting::count(static_cast<qint64>(r.value(metric_))));
    if (metric_ == CompareMetric::Waste && !r.asyncBackend) {
        text += tr("\nrounding %1 + stranded free %2").arg(Formatting::bytes(r.roundingWaste), Formatting::bytes(r.strandedFree));
    }
    if (r.asyncBackend && (metric_ == CompareMetric::Waste || metric_ == CompareMetric::CudaMallocs ||
                           metric_ == CompareMetric::Retries)) {
        text += tr("\nbackend:cudaMallocAsync has no segments: the driver's pool does not report this (shown as 0)");
    }
    if (metric_ == CompareMetric::Ooms && r.firstOomOp >= 0) text += tr("\nfirst at op %1").arg(Formatting::count(r.firstOomOp));
    return text;
}

void CompareBarChart::rebuild() {
    series_->clear();  // deletes the old sets
    sets_.clear();
    double peak = 0.0;
    for (const CompareRun& r : runs_) peak = std::max(peak, r.value(metric_));
    unit_ = 1.0;
    unitName_.clear();
    if (isBytes(metric_)) {
        unitName_ = QStringLiteral("B");
        for (const char* name : {"KiB", "MiB", "GiB", "TiB"}) {
            if (peak / unit_ < 2048.0) break;
            unit_ *= 1024.0;
            unitName_ = QString::fromLatin1(name);
        }
    } else if (metric_ == CompareMetric::AllocatorTime) {
        unitName_ = QStringLiteral("µs");
        if (peak >= 2e6) {
            unit_ = 1e6;
            unitName_ = QStringLiteral("s");
        } else if (peak >= 2e3) {
            unit_ = 1e3;
            unitName_ = QStringLiteral("ms");
        }
    }
    for (std::size_t i = 0; i < runs_.size(); ++i) {
        auto* set = new QBarSet(runs_[i].label);
        *set << runs_[i].value(metric_) / unit_;
        sets_.push_back(set);
    }
    // Counts print as integers; scaled values with up to four significant digits.
    series_->setLabelsFormat(QStringLiteral("@value"));
    series_->setLabelsPrecision(4);
    for (QBarSet* set : sets_) series_->append(set);
    const double top = peak / unit_;
    const double niceTop = top <= 0.0 ? 1.0 : top * 1.18;
    const double step = NiceTicks::step(niceTop, 4);
    axisY_->setTickType(QValueAxis::TicksDynamic);
    axisY_->setTickAnchor(0);
    axisY_->setTickInterval(!isBytes(metric_) && metric_ != CompareMetric::AllocatorTime ? std::max(1.0, step) : step);
    axisY_->setRange(0.0, std::max(niceTop, isBytes(metric_) || metric_ == CompareMetric::AllocatorTime ? 0.0 : 1.0));
    axisY_->setTitleText(unitName_);
    applyColors();
    updateValueLabels();
}

void CompareBarChart::updateValueLabels() {
    if (sets_.empty()) return;
    // Qt Charts prints @value with the series' precision: measure the same text.
    const QFontMetrics fm(sets_.front()->labelFont());
    int widest = 0;
    for (QBarSet* set : sets_) widest = std::max(widest, fm.horizontalAdvance(QString::number(set->at(0), 'g', 4)));
    const double barPixels = chart()->plotArea().width() * series_->barWidth() / static_cast<double>(sets_.size());
    series_->setLabelsVisible(chart()->plotArea().width() <= 0 || widest + 4 <= barPixels);
}

bool CompareBarChart::valueLabelsShown() const { return series_->isLabelsVisible(); }


void CompareBarChart::applyColors() {
    QChart* c = chart();
    c->setTheme(colors_.theme == Theme::Dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    c->legend()->setVisible(false);
    c->setBackgroundBrush(palette().color(QPalette::Window));
    c->setPlotAreaBackgroundBrush(colors_.background);
    c->setPlotAreaBackgroundVisible(true);
    c->setTitleBrush(colors_.text);
    for (QAbstractAxis* axis : {static_cast<QAbstractAxis*>(axisX_), static_cast<QAbstractAxis*>(axisY_)}) {
        axis->setLabelsColor(colors_.text);
        axis->setTitleBrush(colors_.text);
        axis->setGridLineColor(colors_.grid);
        axis->setLinePenColor(colors_.grid);
    }
    for (std::size_t i = 0; i < sets_.size(); ++i) {
        const QColor color = CompareColors::forRun(static_cast<int>(i), colors_.theme);
        sets_[i]->setColor(color);
        sets_[i]->setBorderColor(color);
        sets_[i]->setLabelColor(colors_.text);
    }
}

void CompareBarChart::showBarTip(bool status, int, QBarSet* set) {
    if (!status) {
        QToolTip::hideText();
        return;
    }
    const auto it = std::find(sets_.begin(), sets_.end(), set);
    if (it != sets_.end()) QToolTip::showText(QCursor::pos(), barToolTip(static_cast<int>(it - sets_.begin())), this);
}

bool CompareBarChart::allZero() const {
    if (runs_.empty()) return false;
    return std::all_of(runs_.begin(), runs_.end(), [this](const CompareRun& r) { return r.value(metric_) == 0.0; });
}

void CompareBarChart::drawForeground(QPainter* painter, const QRectF& rect) {
    QChartView::drawForeground(painter, rect);
    if (runs_.empty()) return;
    const QRectF plot = chart()->mapRectToScene(chart()->plotArea());
    painter->save();
    painter->setPen(colors_.mutedText);
    if (allZero()) {
        painter->drawText(plot, Qt::AlignCenter | Qt::TextWordWrap, runs_.size() == 1 ? tr("0") : tr("0 for every config"));
    } else {
        // A bar of height 0 has no label of its own: print the 0 where the bar would stand (the
        // bars share the one category [-0.5, 0.5] in value space, barWidth of it, side by side).
        const double width = series_->barWidth();
        const double n = static_cast<double>(sets_.size());
        const QFontMetrics fm(font());
        for (std::size_t i = 0; i < sets_.size(); ++i) {
            if (runs_[i].value(metric_) != 0.0) continue;
            const double x = -width / 2 + (static_cast<double>(i) + 0.5) * width / n;
            const QPointF base = chart()->mapToScene(chart()->mapToPosition(QPointF(x, 0.0), series_));
            const QRectF box(base.x() - 30, base.y() - fm.height() - 2, 60, fm.height());
            painter->drawText(box, Qt::AlignHCenter | Qt::AlignBottom, QStringLiteral("0"));
        }
    }
    painter->restore();
}

}  // namespace allocscope::views
