#pragma once
// The scrolling part of the segment map: one row per segment, width proportional to its size,
// blocks painted by state. Only the rows (and, inside a row, the blocks) that intersect the
// viewport are painted, so thousands of segments with many blocks each stay cheap.
#include <QAbstractScrollArea>

#include <optional>

#include "views/data/SearchHighlight.h"
#include "views/data/SegmentMapData.h"
#include "views/theme/ThemePalette.h"

namespace allocscope::views {

class SegmentMapCanvas : public QAbstractScrollArea {
    Q_OBJECT
public:
    struct BlockRef {
        int segment = -1;
        int block = -1;
        bool operator==(const BlockRef&) const = default;
    };

    explicit SegmentMapCanvas(QWidget* parent = nullptr);

    void setData(SegmentMapData input);
    const SegmentMapData& data() const { return data_; }

    // Zoom 1 = the largest segment spans the bar area; larger values scroll horizontally.
    double zoom() const { return zoom_; }
    void setZoom(double zoom, int anchorViewportX = -1);

    // Selection by block address (the start address identifies a block at one moment).
    std::optional<quint64> selectedBlock() const;
    bool selectBlock(quint64 address);  // false if no block starts there
    // A search: live blocks that match are outlined; matchCount() counts them at this state.
    void setHighlight(const SearchHighlight& highlight);
    int matchCount() const;
    void clearSelection();

    // Geometry in viewport coordinates, for tests and for the container's tooltips.
    QRect blockRect(quint64 address) const;
    QRect rowRect(int segment) const;  // the bar area of a segment's row (full width at this zoom)
    int rowWidth(int segment) const { return rowRect(segment).width(); }
    int labelWidth() const { return labelWidth_; }
    std::optional<BlockRef> blockAt(const QPoint& viewportPos) const;
    QString describeBlock(const BlockRef& ref) const;
    QString describeSegment(int segment) const;
    // The muted tags after a row's size: "large  s0  exp", plus the segment's memory pool
    // ("graph pool (1,0)", or "default pool" beside them) when any segment shown is in a private pool.
    QString rowTags(int segment) const;

    QSize sizeHint() const override { return QSize(800, 400); }

signals:
    void blockSelected(quint64 address);
    void selectionCleared();
    void zoomChanged(double zoom);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool viewportEvent(QEvent* event) override;
    void changeEvent(QEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    int rowPitch() const { return rowHeight_ + kRowGap; }
    int barLeft() const { return labelWidth_ + kMargin; }
    int barAreaWidth() const;
    double pixelsPerByte() const;
    double segmentX(int segment, quint64 address) const;  // viewport x of an address in a row
    int rowTop(int segment) const;
    void updateMetrics();
    void updateScrollBars();
    void setSelection(std::optional<BlockRef> ref, bool emitSignal);
    void ensureVisible(const BlockRef& ref);
    void moveSelection(int dx, int dy);
    void paintRow(QPainter& painter, int segment, const QRect& clip) const;
    void paintBlock(QPainter& painter, const ViewBlock& block, const QRectF& rect) const;
    int firstBlockFrom(const ViewSegment& segment, quint64 address) const;

    static constexpr int kRowGap = 6;
    static constexpr int kMargin = 8;
    SegmentMapData data_;
    ThemePalette colors_;
    quint64 maxSegmentSize_ = 1;
    double zoom_ = 1.0;
    int rowHeight_ = 24;
    int labelWidth_ = 280;
    bool anyPrivatePool_ = false;  // some segment has a poolLabel: every row names its pool
    std::optional<BlockRef> selection_;
    SearchHighlight highlight_;
};

}  // namespace allocscope::views
