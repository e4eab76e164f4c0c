#pragma once
// The drawing surface of the Allocations view: event index on x, bytes on y. Every drawn
// allocation is a band from its alloc event to its free (free_requested) event, stacked in
// allocation order on top of the "smaller allocations" band (allocated bytes the drawn bands do
// not cover); when an allocation is freed the ones above it move down. Colours follow the call
// site (the top user frame), stable across runs and zooms. Rendered column by column into a QImage
// (one pass over the drawn bands per pixel column), so zoom and pan cost one render.
//
// Mouse: the wheel zooms time around the pointer (Ctrl+wheel zooms bytes), dragging pans,
// Shift+drag selects a range of events and zooms to it, a click selects the allocation under the
// pointer (or moves the scrubber there), a double click shows the whole run. Keys: + / - zoom,
// Left / Right pan, Home shows everything.
#include <QImage>
#include <QPoint>
#include <QWidget>

#include <optional>
#include <vector>

#include "views/data/AllocationsData.h"
#include "views/data/SearchHighlight.h"
#include "views/theme/ThemePalette.h"

namespace allocscope::views {

class AllocationsPlot : public QWidget {
    Q_OBJECT
public:
    explicit AllocationsPlot(QWidget* parent = nullptr);

    void setData(AllocationsData input);
    const AllocationsData& data() const { return data_; }
    // How many of the largest allocations are drawn one by one (the rest merge).
    void setDetail(int count);
    int detail() const { return detail_; }
    int drawnCount() const { return static_cast<int>(drawn_.size()); }
    void setCurrentEvent(qint64 event);
    qint64 currentEvent() const { return currentEvent_; }
    // A search: matching bands keep their colour, the others fade.
    void setHighlight(const SearchHighlight& highlight);
    const SearchHighlight& highlight() const { return highlight_; }
    bool bandMatches(int band) const;  // band: an index into data().bands

    // The visible window: events [first, last) and bytes [low, high).
    void setWindow(double first, double last);
    double windowFirst() const { return x0_; }
    double windowLast() const { return x1_; }
    double bytesLow() const { return y0_; }
    double bytesHigh() const { return y1_; }
    void zoomTime(double factor, double aroundEvent);
    void zoomBytes(double factor, double aroundBytes);
    void resetZoom();

    QRect plotRect() const;
    double xForEvent(double event) const;
    double eventAtX(double x) const;
    double bytesAtY(double y) const;
    // What lies under a point of the plot: a drawn band (its index in data().bands), the
    // "smaller allocations" band, or nothing.
    struct Hit {
        enum class Kind { None, Band, Smaller } kind = Kind::None;
        int band = -1;
        qint64 event = 0;
        qint64 smallerBytes = 0;
    };
    Hit hitAt(const QPoint& pos) const;
    QString describe(const Hit& hit) const;
    // The colour a site's bands are drawn in (the smaller-allocations band for -1).
    QColor siteColor(int site) const;
    const QImage& image() const { return image_; }

    QSize sizeHint() const override { return QSize(800, 360); }
    QSize minimumSizeHint() const override { return QSize(240, 140); }

signals:
    void eventRequested(qint64 event);
    // A click on a band: the block at `address` at `event` (within its lifetime).
    void blockRequested(quint64 address, qint64 event);
    void windowChanged();

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool event(QEvent* event) override;
    void changeEvent(QEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;

private:
    // One pixel column's stack: the smaller band's bytes, then the drawn bands live in it.
    struct Column {
        qint64 smaller = 0;
        std::vector<int> bands;  // indexes into drawn_, bottom to top
    };
    void assignColours();
    void rebuildDrawn();
    void fitBytes();
    void render();
    Column columnAt(int x, int width) const;
    qint64 envelope(qint64 first, qint64 last) const;  // max allocated over events [first, last)
    void drawAxes(class QPainter& p, const QRect& plot) const;
    void drawLegend(class QPainter& p, const QRect& plot) const;
    void invalidate();

    AllocationsData data_;
    ThemePalette palette_;
    int detail_ = 200;
    std::vector<int> drawn_;               // indexes into data_.bands, by alloc event
    std::vector<qint64> allocOf_, freeOf_; // per drawn band, for the column loop
    std::vector<qint64> sizeOf_;
    std::vector<QRgb> colourOf_;
    SearchHighlight highlight_;
    std::vector<int> legend_;              // sites by drawn bytes, largest first
    std::vector<int> siteColour_;          // per site, an index into the colour table
    double x0_ = 0, x1_ = 1, y0_ = 0, y1_ = 1;
    bool autoBytes_ = true;                // the byte axis follows the window's maximum
    qint64 currentEvent_ = -1;
    QImage image_;
    bool dirty_ = true;
    // Mouse state.
    QPoint pressPos_;
    bool pressed_ = false, panning_ = false, selecting_ = false;
    double pressX0_ = 0, pressX1_ = 0, pressY0_ = 0, pressY1_ = 0;
    std::optional<std::pair<double, double>> selection_;  // events, while Shift-dragging
};

}  // namespace allocscope::views
