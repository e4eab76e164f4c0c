#pragma once
// An icicle chart of a StackTreeData: the root spans the full width at the top, and each frame's
// children sit under it, as wide as their share of its bytes (a diff: of the larger side), so the
// wide bars are where the memory is. One side: a frame's colour says which file it is in (a
// hash hue); a diff: red where bytes were gained, green where released, grey unchanged.
// Click selects a frame (the tree follows), double-click zooms into it, Backspace / Escape / a
// double-click on the top bar zooms back out. QPainter on a raster surface.
#include <QList>
#include <QRectF>
#include <QWidget>

#include <vector>

#include "views/data/StackTreeData.h"

namespace allocscope::views {

class IcicleWidget : public QWidget {
    Q_OBJECT
public:
    explicit IcicleWidget(QWidget* parent = nullptr);

    void setTree(const StackTreeData& tree);
    // A node as the list of child rows from the root (empty: the root).
    void setSelectedPath(const QList<int>& path);
    QList<int> selectedPath() const { return selected_; }
    QList<int> zoomPath() const { return zoom_; }
    void zoomTo(const QList<int>& path);
    // The node drawn at a point (for tests and tooltips); false when none.
    bool pathAt(const QPointF& point, QList<int>* path) const;

    QSize sizeHint() const override { return {420, 240}; }
    QSize minimumSizeHint() const override { return {160, 80}; }

signals:
    void nodeSelected(const QList<int>& path);
    void nodeActivated(const QList<int>& path);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Cell {
        QRectF rect;
        const StackTreeNode* node = nullptr;
        QList<int> path;
    };
    const StackTreeNode* nodeAt(const QList<int>& path) const;
    qint64 widthValue(const StackTreeNode& node) const;
    void layoutCells();
    void layoutChildren(const StackTreeNode& node, const QList<int>& path, const QRectF& area, int depth);
    QColor fill(const StackTreeNode& node) const;
    QString describe(const StackTreeNode& node) const;

    StackTreeData data_;
    QList<int> selected_;
    QList<int> zoom_;
    std::vector<Cell> cells_;
    int rowHeight_ = 20;
};

}  // namespace allocscope::views
