#include "views/widgets/SegmentMapWidget.h"

#include <QEvent>
#include <QVBoxLayout>

#include "views/theme/ThemePalette.h"
#include "views/widgets/LegendWidget.h"
#include "views/widgets/SegmentMapCanvas.h"

namespace allocscope::views {

SegmentMapWidget::SegmentMapWidget(QWidget* parent)
    : QWidget(parent), canvas_(new SegmentMapCanvas(this)), legend_(new LegendWidget(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(canvas_, 1);
    layout->addWidget(legend_);
    setFocusProxy(canvas_);
    connect(canvas_, &SegmentMapCanvas::blockSelected, this, &SegmentMapWidget::blockSelected);
    connect(canvas_, &SegmentMapCanvas::selectionCleared, this, &SegmentMapWidget::selectionCleared);
    connect(canvas_, &SegmentMapCanvas::zoomChanged, this, &SegmentMapWidget::zoomChanged);
    setToolTip(tr("Click a block (or use the arrow keys) to inspect it; Ctrl+wheel or +/- zooms"));
    canvas_->setWhatsThis(tr("Each row is a reserved segment, its width proportional to its size. Click a block to "
                             "select it; arrow keys move the selection; Ctrl+wheel or +/- zoom."));
    updateLegend();
}

void SegmentMapWidget::setData(SegmentMapData input) { canvas_->setData(std::move(input)); }
const SegmentMapData& SegmentMapWidget::data() const { return canvas_->data(); }
std::optional<quint64> SegmentMapWidget::selectedBlock() const { return canvas_->selectedBlock(); }
double SegmentMapWidget::zoom() const { return canvas_->zoom(); }
bool SegmentMapWidget::selectBlock(quint64 address) { return canvas_->selectBlock(address); }
void SegmentMapWidget::clearSelection() { canvas_->clearSelection(); }
void SegmentMapWidget::setZoom(double zoom) { canvas_->setZoom(zoom); }
void SegmentMapWidget::zoomIn() { canvas_->setZoom(canvas_->zoom() * 1.5625); }
void SegmentMapWidget::zoomOut() { canvas_->setZoom(canvas_->zoom() / 1.5625); }
void SegmentMapWidget::resetZoom() { canvas_->setZoom(1.0); }

void SegmentMapWidget::updateLegend() {
    const ThemePalette colors = ThemePalette::forPalette(palette());
    legend_->setEntries({
        {tr("allocated (requested)"), colors.requested, tr("Bytes the program asked for")},
        {tr("rounding waste"), colors.roundingWaste,
         tr("Allocated beyond the request: size rounding or an unsplit remainder")},
        {tr("inactive (cached free)"), colors.inactive, tr("Free bytes the allocator keeps cached for reuse")},
        {tr("pending free"), colors.pendingFree, tr("Freed by the program, waiting for stream events to complete")},
        {tr("unmapped"), colors.unmapped, tr("Pages of an expandable segment without physical memory")},
    });
}

void SegmentMapWidget::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) updateLegend();
    QWidget::changeEvent(event);
}

}  // namespace allocscope::views
