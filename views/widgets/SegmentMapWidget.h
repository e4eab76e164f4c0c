#pragma once
// The segment map: every reserved segment a row (width proportional to its size), every block
// coloured by state, with a legend. Click or arrow keys select a block (blockSelected), Ctrl+wheel
// or +/- zoom, hovering shows what a block is.
#include <QWidget>

#include <optional>

#include "views/data/SegmentMapData.h"

namespace allocscope::views {

class LegendWidget;
class SegmentMapCanvas;

class SegmentMapWidget : public QWidget {
    Q_OBJECT
public:
    explicit SegmentMapWidget(QWidget* parent = nullptr);

    void setData(SegmentMapData input);
    const SegmentMapData& data() const;
    std::optional<quint64> selectedBlock() const;
    double zoom() const;

    SegmentMapCanvas* canvas() const { return canvas_; }
    LegendWidget* legend() const { return legend_; }

public slots:
    bool selectBlock(quint64 address);  // does not emit blockSelected
    void clearSelection();
    void setZoom(double zoom);
    void zoomIn();
    void zoomOut();
    void resetZoom();

signals:
    void blockSelected(quint64 address);  // by the user: click or keyboard
    void selectionCleared();
    void zoomChanged(double zoom);

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateLegend();
    SegmentMapCanvas* canvas_;
    LegendWidget* legend_;
};

}  // namespace allocscope::views
