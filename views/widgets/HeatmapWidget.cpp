#include "views/widgets/HeatmapWidget.h"

#include <QEvent>
#include <QVBoxLayout>

#include "views/theme/ThemePalette.h"
#include "views/widgets/HeatmapPlot.h"
#include "views/widgets/LegendWidget.h"

namespace allocscope::views {

HeatmapWidget::HeatmapWidget(QWidget* parent) : QWidget(parent), plot_(new HeatmapPlot(this)), legend_(new LegendWidget(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(plot_, 1);
    layout->addWidget(legend_);
    connect(plot_, &HeatmapPlot::eventRequested, this, &HeatmapWidget::eventRequested);
    updateLegend();
}

void HeatmapWidget::setData(HeatmapData input) { plot_->setData(std::move(input)); }
const HeatmapData& HeatmapWidget::data() const { return plot_->data(); }
qint64 HeatmapWidget::currentEvent() const { return plot_->currentEvent(); }
void HeatmapWidget::setCurrentEvent(qint64 event) { plot_->setCurrentEvent(event); }

void HeatmapWidget::updateLegend() {
    const ThemePalette colors = ThemePalette::forPalette(palette());
    legend_->setEntries({
        {tr("requested"), colors.requested, tr("Allocated bytes the program asked for")},
        {tr("rounding waste"), colors.roundingWaste, tr("Allocated beyond the request")},
        {tr("inactive (cached free)"), colors.inactive, tr("Reserved, free, kept in the cache")},
        {tr("pending free"), colors.pendingFree, tr("Freed, waiting for stream events")},
        {tr("unmapped"), colors.unmapped, tr("Expandable segment pages without memory behind them")},
        {tr("not reserved"), colors.unreserved, tr("Address space no segment covered at that time")},
    });
}

void HeatmapWidget::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) updateLegend();
    QWidget::changeEvent(event);
}

}  // namespace allocscope::views
