#include "views/widgets/HeatmapWidget.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QVBoxLayout>

#include "views/data/HeatmapRawAddresses.h"

#include "views/theme/ThemePalette.h"
#include "views/widgets/HeatmapPlot.h"
#include "views/widgets/LegendWidget.h"

namespace allocscope::views {

HeatmapWidget::HeatmapWidget(QWidget* parent)
    : QWidget(parent), plot_(new HeatmapPlot(this)), legend_(new LegendWidget(this)), rawToggle_(new QCheckBox(tr("Ra&w addresses"), this)) {
    setToolTip(tr("Click or drag to move the scrubber to that time"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(plot_, 1);
    auto* bottom = new QHBoxLayout;
    bottom->setContentsMargins(0, 0, 0, 0);
    bottom->addWidget(legend_, 1);
    bottom->addWidget(rawToggle_, 0, Qt::AlignTop);
    layout->addLayout(bottom);
    rawToggle_->setToolTip(tr("Lay the address axis out as raw virtual addresses, gaps between segments included "
                              "(off: reserved ranges end to end, gaps squeezed out and marked)"));
    connect(rawToggle_, &QCheckBox::toggled, this, &HeatmapWidget::setRawAddresses);
    connect(plot_, &HeatmapPlot::eventRequested, this, &HeatmapWidget::eventRequested);
    updateLegend();
}

void HeatmapWidget::setData(HeatmapData input) {
    squeezed_ = std::move(input);
    showData();
}

void HeatmapWidget::setRawAddresses(bool raw) {
    if (raw == raw_) return;
    raw_ = raw;
    rawToggle_->setChecked(raw);
    showData();
    emit rawAddressesChanged(raw);
}

void HeatmapWidget::showData() {
    const qint64 event = plot_->currentEvent();
    plot_->setData(raw_ ? toRawAddresses(squeezed_) : squeezed_);
    plot_->setCurrentEvent(event);
}
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
