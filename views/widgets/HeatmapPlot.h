#pragma once
// The drawing surface of the heatmap: time on x, address on y (low addresses at the bottom), one
// cell per (time bin, address bin) coloured by the mix of its bytes' states. The grid is rendered
// once into a QImage (one pixel per cell) and scaled without smoothing, so repaints and cursor
// moves cost one image blit.
#include <QImage>
#include <QWidget>

#include "views/data/HeatmapData.h"
#include "views/data/SearchHighlight.h"
#include "views/theme/ThemePalette.h"

namespace allocscope::views {

class HeatmapPlot : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapPlot(QWidget* parent = nullptr);

    void setData(HeatmapData input);
    const HeatmapData& data() const { return data_; }
    void setCurrentEvent(qint64 event);
    // Allocations matching a search, outlined (time range x address range).
    void setHighlights(std::vector<HeatHighlight> highlights);
    const std::vector<HeatHighlight>& highlights() const { return highlights_; }
    // Where an address sits on the axis (squeezed or raw); nullopt outside every range.
    std::optional<quint64> axisOffsetOf(quint64 address) const;
    qint64 currentEvent() const { return currentEvent_; }

    // Geometry, in widget coordinates.
    QRect plotRect() const;
    QRectF cellRect(int timeBin, int addressBin) const;
    double xForEvent(qint64 event) const;
    qint64 eventAtX(double x) const;   // clamped to [0, eventCount - 1]
    int timeBinAtX(double x) const;    // -1 outside the plot
    int addressBinAtY(double y) const; // -1 outside the plot
    quint64 addressAtAxisOffset(quint64 offset) const;
    QString describeCell(int timeBin, int addressBin) const;
    // The blended colour of a cell (what the image holds).
    QRgb cellColor(const HeatCell& cell) const;
    const QImage& image() const { return image_; }

    QSize sizeHint() const override { return QSize(800, 360); }
    QSize minimumSizeHint() const override { return QSize(240, 120); }

signals:
    void eventRequested(qint64 event);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void rebuildImage();
    void requestAt(double x);
    void paintAddressAxis(QPainter& painter, const QRect& plot) const;
    void paintTimeAxis(QPainter& painter, const QRect& plot) const;
    double yForAxisOffset(quint64 offset) const;
    qint64 columnEnd(int timeBin) const;

    HeatmapData data_;
    ThemePalette colors_;
    std::vector<HeatHighlight> highlights_;
    QImage image_;
    qint64 currentEvent_ = -1;
    quint64 axisBytes_ = 0;
};

}  // namespace allocscope::views
