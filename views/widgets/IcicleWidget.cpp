#include "views/widgets/IcicleWidget.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

#include "views/theme/ThemePalette.h"
#include "views/util/Formatting.h"

namespace allocscope::views {
namespace {
constexpr double kMinCellWidth = 1.0;  // narrower bars are not drawn (nor hit)
constexpr double kMinTextWidth = 28.0;
}  // namespace

IcicleWidget::IcicleWidget(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setToolTip(tr("Icicle chart: width is bytes. Click a frame to select it, double-click to zoom in, Backspace to zoom out"));
}

void IcicleWidget::setTree(const StackTreeData& tree) {
    data_ = tree;
    // Keep the zoom and selection where the same path still exists (scrubbing keeps the view).
    if (!nodeAt(zoom_)) zoom_.clear();
    if (!nodeAt(selected_)) selected_.clear();
    layoutCells();
    update();
}

void IcicleWidget::setSelectedPath(const QList<int>& path) {
    if (path == selected_) return;
    selected_ = nodeAt(path) ? path : QList<int>{};
    update();
}

void IcicleWidget::zoomTo(const QList<int>& path) {
    zoom_ = nodeAt(path) ? path : QList<int>{};
    layoutCells();
    update();
}

const StackTreeNode* IcicleWidget::nodeAt(const QList<int>& path) const {
    if (!data_.valid) return nullptr;
    const StackTreeNode* node = &data_.root;
    for (int row : path) {
        if (row < 0 || row >= static_cast<int>(node->children.size())) return nullptr;
        node = &node->children[static_cast<std::size_t>(row)];
    }
    return node;
}

qint64 IcicleWidget::widthValue(const StackTreeNode& node) const {
    return data_.diff ? std::max(node.bytes[0], node.bytes[1]) : node.bytes[0];
}

void IcicleWidget::layoutCells() {
    cells_.clear();
    rowHeight_ = fontMetrics().height() + 6;
    const StackTreeNode* top = nodeAt(zoom_);
    if (!top) return;
    const QRectF bar(0, 0, width(), rowHeight_);
    cells_.push_back(Cell{bar, top, zoom_});
    layoutChildren(*top, zoom_, bar, 1);
}

void IcicleWidget::layoutChildren(const StackTreeNode& node, const QList<int>& path, const QRectF& area, int depth) {
    const double y = depth * rowHeight_;
    if (y >= height()) return;
    const qint64 total = widthValue(node);
    if (total <= 0) return;
    double x = area.left();
    for (std::size_t i = 0; i < node.children.size(); ++i) {
        const StackTreeNode& child = node.children[i];
        const double w = area.width() * static_cast<double>(widthValue(child)) / static_cast<double>(total);
        if (w >= kMinCellWidth) {
            QList<int> childPath = path;
            childPath.append(static_cast<int>(i));
            const QRectF cell(x, y, w, rowHeight_);
            cells_.push_back(Cell{cell, &child, childPath});
            layoutChildren(child, childPath, cell, depth + 1);
        }
        x += w;
    }
}

QColor IcicleWidget::fill(const StackTreeNode& node) const {
    const bool dark = ThemePalette::isDark(palette());
    const bool special = node.kind != StackTreeNode::Kind::Frame;  // root, no stack, internal only
    if (special && (!data_.diff || node.kind == StackTreeNode::Kind::Root)) return dark ? QColor(0x55, 0x5b, 0x66) : QColor(0xc4, 0xc8, 0xd0);
    if (data_.diff) {
        const qint64 d = node.deltaBytes();
        const qint64 scale = std::max<qint64>(widthValue(node), 1);
        const double strength = 0.35 + 0.65 * std::min(1.0, static_cast<double>(d < 0 ? -d : d) / static_cast<double>(scale));
        if (d == 0) return dark ? QColor(0x4a, 0x4f, 0x58) : QColor(0xd8, 0xdb, 0xe0);
        const QColor base = d > 0 ? QColor(0xd5, 0x5e, 0x00) : QColor(0x00, 0x9e, 0x73);  // Okabe–Ito vermillion / green
        const QColor back = dark ? QColor(0x2b, 0x2e, 0x33) : QColor(0xff, 0xff, 0xff);
        return QColor::fromRgbF(static_cast<float>(back.redF() + (base.redF() - back.redF()) * strength),
                                static_cast<float>(back.greenF() + (base.greenF() - back.greenF()) * strength),
                                static_cast<float>(back.blueF() + (base.blueF() - back.blueF()) * strength));
    }
    // The file decides the hue (warm, flame-graph like), so one module's frames share a colour.
    const QString file = node.label.section(QLatin1Char('('), -1).section(QLatin1Char(':'), 0, 0);
    const int hue = 10 + static_cast<int>(qHash(file) % 40u);
    return dark ? QColor::fromHsv(hue, 150, 170) : QColor::fromHsv(hue, 120, 245);
}

void IcicleWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const ThemePalette colours = ThemePalette::forPalette(palette());
    p.fillRect(rect(), colours.background);
    if (!data_.valid) {
        p.setPen(colours.mutedText);
        p.drawText(rect(), Qt::AlignCenter, tr("No call stacks to show"));
        return;
    }
    const QColor textColour = ThemePalette::isDark(palette()) ? QColor(0xf0, 0xf0, 0xf0) : QColor(0x20, 0x20, 0x20);
    const QColor border = colours.background;
    for (const Cell& cell : cells_) {
        const QRectF r = cell.rect.adjusted(0, 0, -1, -1);
        p.fillRect(r, fill(*cell.node));
        p.setPen(border);
        p.drawRect(r);
        if (r.width() >= kMinTextWidth) {
            p.setPen(textColour);
            const QString text = fontMetrics().elidedText(cell.node->label, Qt::ElideRight, static_cast<int>(r.width()) - 6);
            p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
        }
    }
    for (const Cell& cell : cells_) {
        if (cell.path != selected_) continue;
        QPen pen(colours.selection, 2);
        p.setPen(pen);
        p.setBrush(Qt::NoBrush);
        p.drawRect(cell.rect.adjusted(1, 1, -2, -2));
    }
    if (!zoom_.isEmpty()) {
        p.setPen(colours.mutedText);
        p.drawText(rect().adjusted(4, 0, -4, -4), Qt::AlignRight | Qt::AlignBottom, tr("zoomed in: Backspace zooms out"));
    }
}

void IcicleWidget::resizeEvent(QResizeEvent*) { layoutCells(); }

bool IcicleWidget::pathAt(const QPointF& point, QList<int>* path) const {
    for (const Cell& cell : cells_) {
        if (cell.rect.contains(point)) {
            if (path) *path = cell.path;
            return true;
        }
    }
    return false;
}

void IcicleWidget::mousePressEvent(QMouseEvent* event) {
    QList<int> path;
    if (event->button() != Qt::LeftButton || !pathAt(event->position(), &path)) return;
    selected_ = path;
    update();
    emit nodeSelected(path);
}

void IcicleWidget::mouseDoubleClickEvent(QMouseEvent* event) {
    QList<int> path;
    if (!pathAt(event->position(), &path)) return;
    if (path == zoom_ && !zoom_.isEmpty()) path.removeLast();  // the top bar: one level out
    zoomTo(path);
    emit nodeActivated(path);
}

void IcicleWidget::keyPressEvent(QKeyEvent* event) {
    if ((event->key() == Qt::Key_Backspace || event->key() == Qt::Key_Escape) && !zoom_.isEmpty()) {
        QList<int> out = zoom_;
        out.removeLast();
        zoomTo(out);
        return;
    }
    QWidget::keyPressEvent(event);
}

QString IcicleWidget::describe(const StackTreeNode& node) const {
    QString text = node.toolTip.isEmpty() ? node.label : node.toolTip;
    if (data_.diff) {
        text += tr("\n%1: %2 → %3: %4 (%5%6)")
                    .arg(data_.beforeLabel, Formatting::bytes(node.bytes[0]), data_.afterLabel, Formatting::bytes(node.bytes[1]),
                         node.deltaBytes() > 0 ? QStringLiteral("+") : QString(), Formatting::bytes(node.deltaBytes()));
    } else {
        text += tr("\n%1 in %2 blocks").arg(Formatting::bytes(node.bytes[0]), Formatting::count(node.blocks[0]));
    }
    return text;
}

bool IcicleWidget::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        QList<int> path;
        if (pathAt(help->pos(), &path)) {
            QToolTip::showText(help->globalPos(), describe(*nodeAt(path)), this);
            return true;
        }
    }
    return QWidget::event(event);
}

}  // namespace allocscope::views
