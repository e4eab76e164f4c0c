#pragma once
// What every AllocScope chart shares: its colours follow the active palette (a theme switch
// re-colours the series without rebuilding them), and a left click or drag inside the plot area is
// reported once, in viewport coordinates, so a chart can move a cursor (event, program op).
#include <QChartView>

#include "views/theme/ThemePalette.h"

namespace allocscope::views {

class ThemedChartView : public QChartView {
    Q_OBJECT
public:
    explicit ThemedChartView(QWidget* parent = nullptr);

protected:
    // Re-colours the series from colors_ (already refreshed for the new palette).
    virtual void applyColors() = 0;
    // A left click, or a drag with the left button held, at this viewport position inside the
    // plot area (with a 2-pixel margin). The default ignores it.
    virtual void plotPressed(const QPoint& viewportPos);

    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;

    ThemePalette colors_;

private:
    void pressAt(const QPoint& viewportPos);
};

}  // namespace allocscope::views
