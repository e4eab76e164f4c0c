#include "views/charts/ThemedChartView.h"

#include <QMouseEvent>

namespace allocscope::views {

ThemedChartView::ThemedChartView(QWidget* parent) : QChartView(parent), colors_(ThemePalette::forPalette(palette())) {}

void ThemedChartView::plotPressed(const QPoint&) {}

void ThemedChartView::pressAt(const QPoint& viewportPos) {
    const QPointF chartPos = chart()->mapFromScene(mapToScene(viewportPos));
    // A little slack, so a click on the axis line still lands on the first or last value.
    if (!chart()->plotArea().adjusted(-2, -2, 2, 2).contains(chartPos)) return;
    plotPressed(viewportPos);
}

void ThemedChartView::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) pressAt(event->position().toPoint());
    QChartView::mousePressEvent(event);
}

void ThemedChartView::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) pressAt(event->position().toPoint());
    QChartView::mouseMoveEvent(event);
}

void ThemedChartView::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) {
        colors_ = ThemePalette::forPalette(palette());
        applyColors();
        viewport()->update();
    }
    QChartView::changeEvent(event);
}

}  // namespace allocscope::views
