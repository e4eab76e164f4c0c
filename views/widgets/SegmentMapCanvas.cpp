#include "views/widgets/SegmentMapCanvas.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "views/util/Formatting.h"

namespace allocscope::views {

namespace {
constexpr double kMinZoom = 1.0;
constexpr double kMaxZoom = 1 << 20;
constexpr double kZoomStep = 1.25;

QString stateName(BlockState state) {
    switch (state) {
        case BlockState::Allocated: return QStringLiteral("Allocated");
        case BlockState::PendingFree: return QStringLiteral("Pending free");
        case BlockState::Inactive: return QStringLiteral("Inactive (cached, free)");
        case BlockState::Unmapped: return QStringLiteral("Unmapped pages");
    }
    return QString();
}
}  // namespace

SegmentMapCanvas::SegmentMapCanvas(QWidget* parent) : QAbstractScrollArea(parent) {
    setFocusPolicy(Qt::StrongFocus);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    viewport()->setMouseTracking(false);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    colors_ = ThemePalette::forPalette(palette());
    updateMetrics();
}

void SegmentMapCanvas::setData(SegmentMapData input) {
    const std::optional<quint64> previous = selectedBlock();
    data_ = std::move(input);
    maxSegmentSize_ = 1;
    for (const ViewSegment& s : data_.segments) maxSegmentSize_ = std::max(maxSegmentSize_, s.totalSize);
    const bool hadPrivatePool = anyPrivatePool_;
    anyPrivatePool_ = std::any_of(data_.segments.begin(), data_.segments.end(),
                                  [](const ViewSegment& s) { return !s.poolLabel.isEmpty(); });
    if (anyPrivatePool_ || hadPrivatePool) updateMetrics();  // the pool tags widen the label column
    selection_.reset();
    // Keep the selection across updates when the same block still exists (moving the cursor in
    // time should not lose what the user is looking at).
    if (previous) {
        for (int s = 0; s < static_cast<int>(data_.segments.size()); ++s) {
            const auto& blocks = data_.segments[static_cast<std::size_t>(s)].blocks;
            const int b = firstBlockFrom(data_.segments[static_cast<std::size_t>(s)], *previous);
            if (b < static_cast<int>(blocks.size()) && blocks[static_cast<std::size_t>(b)].address == *previous)
                selection_ = BlockRef{s, b};
        }
    }
    updateScrollBars();
    viewport()->update();
}

void SegmentMapCanvas::updateMetrics() {
    const QFontMetrics fm(font());
    rowHeight_ = std::max(22, fm.height() + 8);
    labelWidth_ = kMargin + Formatting::addressWidth(fm) + fm.horizontalAdvance(QStringLiteral("  000.0 MiB  large  s00  exp")) + kMargin;
    if (anyPrivatePool_) {
        // Room for the widest row's tags, pool included, so that "graph pool (1,0)" is read, not
        // elided (streams of real traces are 10-digit handles: measure the tags themselves).
        const int fixed = kMargin + Formatting::addressWidth(fm) + fm.horizontalAdvance(QStringLiteral("  000.0 MiB  ")) + kMargin;
        for (int i = 0; i < static_cast<int>(data_.segments.size()); ++i)
            labelWidth_ = std::max(labelWidth_, fixed + fm.horizontalAdvance(rowTags(i)) + fm.horizontalAdvance(QStringLiteral("  ")));
    }
}

int SegmentMapCanvas::barAreaWidth() const { return std::max(20, viewport()->width() - barLeft() - kMargin); }

double SegmentMapCanvas::pixelsPerByte() const {
    return barAreaWidth() * zoom_ / static_cast<double>(maxSegmentSize_);
}

int SegmentMapCanvas::rowTop(int segment) const { return kMargin + segment * rowPitch() - verticalScrollBar()->value(); }

double SegmentMapCanvas::segmentX(int segment, quint64 address) const {
    const ViewSegment& s = data_.segments[static_cast<std::size_t>(segment)];
    const double offset = address >= s.address ? static_cast<double>(address - s.address) : 0.0;
    return barLeft() - horizontalScrollBar()->value() + offset * pixelsPerByte();
}

QRect SegmentMapCanvas::rowRect(int segment) const {
    if (segment < 0 || segment >= static_cast<int>(data_.segments.size())) return QRect();
    const ViewSegment& s = data_.segments[static_cast<std::size_t>(segment)];
    const double x0 = segmentX(segment, s.address);
    const double x1 = segmentX(segment, s.address + s.totalSize);
    const int left = static_cast<int>(std::floor(x0));
    const int right = std::max(left + 2, static_cast<int>(std::floor(x1)));
    return QRect(left, rowTop(segment), right - left, rowHeight_);
}

void SegmentMapCanvas::updateScrollBars() {
    const int content = static_cast<int>(std::min(2.0e9, barAreaWidth() * zoom_));
    horizontalScrollBar()->setRange(0, std::max(0, content - barAreaWidth()));
    horizontalScrollBar()->setPageStep(barAreaWidth());
    horizontalScrollBar()->setSingleStep(std::max(1, barAreaWidth() / 20));
    const int height = 2 * kMargin + static_cast<int>(data_.segments.size()) * rowPitch();
    verticalScrollBar()->setRange(0, std::max(0, height - viewport()->height()));
    verticalScrollBar()->setPageStep(viewport()->height());
    verticalScrollBar()->setSingleStep(rowPitch());
}

void SegmentMapCanvas::setZoom(double zoom, int anchorViewportX) {
    zoom = std::clamp(zoom, kMinZoom, kMaxZoom);
    if (zoom == zoom_) return;
    if (anchorViewportX < barLeft()) anchorViewportX = barLeft() + barAreaWidth() / 2;
    const double anchor = anchorViewportX - barLeft();
    const double content = (anchor + horizontalScrollBar()->value()) / zoom_;  // in zoom-1 pixels
    zoom_ = zoom;
    updateScrollBars();
    horizontalScrollBar()->setValue(static_cast<int>(std::lround(content * zoom_ - anchor)));
    viewport()->update();
    emit zoomChanged(zoom_);
}

std::optional<quint64> SegmentMapCanvas::selectedBlock() const {
    if (!selection_) return std::nullopt;
    return data_.segments[static_cast<std::size_t>(selection_->segment)].blocks[static_cast<std::size_t>(selection_->block)].address;
}

int SegmentMapCanvas::firstBlockFrom(const ViewSegment& segment, quint64 address) const {
    // The first block that ends after `address` (blocks are in address order).
    const auto it = std::upper_bound(segment.blocks.begin(), segment.blocks.end(), address,
                                     [](quint64 a, const ViewBlock& b) { return a < b.address + b.size; });
    return static_cast<int>(it - segment.blocks.begin());
}

void SegmentMapCanvas::setHighlight(const SearchHighlight& highlight) {
    highlight_ = highlight;
    viewport()->update();
}

int SegmentMapCanvas::matchCount() const {
    if (!highlight_.active()) return 0;
    int count = 0;
    for (const ViewSegment& seg : data_.segments) {
        for (const ViewBlock& block : seg.blocks) {
            if ((block.state == BlockState::Allocated || block.state == BlockState::PendingFree) &&
                highlight_.matches(block.address, block.size, block.stackId)) {
                ++count;
            }
        }
    }
    return count;
}

bool SegmentMapCanvas::selectBlock(quint64 address) {
    for (int s = 0; s < static_cast<int>(data_.segments.size()); ++s) {
        const ViewSegment& seg = data_.segments[static_cast<std::size_t>(s)];
        if (address < seg.address || address >= seg.address + seg.totalSize) continue;
        const int b = firstBlockFrom(seg, address);
        if (b < static_cast<int>(seg.blocks.size()) && seg.blocks[static_cast<std::size_t>(b)].address == address) {
            setSelection(BlockRef{s, b}, false);
            ensureVisible(*selection_);
            return true;
        }
    }
    return false;
}

void SegmentMapCanvas::clearSelection() { setSelection(std::nullopt, false); }

void SegmentMapCanvas::setSelection(std::optional<BlockRef> ref, bool emitSignal) {
    if (ref == selection_) return;
    selection_ = ref;
    viewport()->update();
    if (!emitSignal) return;
    if (selection_)
        emit blockSelected(*selectedBlock());
    else
        emit selectionCleared();
}

QRect SegmentMapCanvas::blockRect(quint64 address) const {
    for (int s = 0; s < static_cast<int>(data_.segments.size()); ++s) {
        const ViewSegment& seg = data_.segments[static_cast<std::size_t>(s)];
        if (address < seg.address || address >= seg.address + seg.totalSize) continue;
        const int b = firstBlockFrom(seg, address);
        if (b >= static_cast<int>(seg.blocks.size())) return QRect();
        const ViewBlock& block = seg.blocks[static_cast<std::size_t>(b)];
        const int left = static_cast<int>(std::floor(segmentX(s, block.address)));
        const int right = std::max(left + 1, static_cast<int>(std::floor(segmentX(s, block.address + block.size))));
        return QRect(left, rowTop(s), right - left, rowHeight_);
    }
    return QRect();
}

std::optional<SegmentMapCanvas::BlockRef> SegmentMapCanvas::blockAt(const QPoint& pos) const {
    if (data_.segments.empty() || pos.x() < barLeft()) return std::nullopt;
    const int y = pos.y() - kMargin + verticalScrollBar()->value();
    if (y < 0 || y % rowPitch() >= rowHeight_) return std::nullopt;
    const int s = y / rowPitch();
    if (s >= static_cast<int>(data_.segments.size())) return std::nullopt;
    const ViewSegment& seg = data_.segments[static_cast<std::size_t>(s)];
    const double offset = (pos.x() + 0.5 - barLeft() + horizontalScrollBar()->value()) / pixelsPerByte();
    if (offset < 0 || offset >= static_cast<double>(seg.totalSize)) return std::nullopt;
    const int b = firstBlockFrom(seg, seg.address + static_cast<quint64>(offset));
    if (b >= static_cast<int>(seg.blocks.size())) return std::nullopt;
    return BlockRef{s, b};
}

QString SegmentMapCanvas::describeSegment(int segment) const {
    const ViewSegment& s = data_.segments[static_cast<std::size_t>(segment)];
    quint64 used = 0;
    for (const ViewBlock& b : s.blocks)
        if (b.state == BlockState::Allocated || b.state == BlockState::PendingFree) used += b.size;
    return QStringLiteral("Segment %1\n%2, %3 pool, stream %4%5\nMemory pool: %6\n%7 blocks, %8 in use")
        .arg(Formatting::address(s.address), Formatting::bytes(s.totalSize),
             s.pool == PoolKind::Small ? QStringLiteral("small") : QStringLiteral("large"), QString::number(s.stream),
             s.expandable ? QStringLiteral(", expandable") : QString(),
             s.poolLabel.isEmpty() ? QStringLiteral("default pool") : s.poolLabel, QString::number(s.blocks.size()),
             Formatting::bytes(used));
}

QString SegmentMapCanvas::rowTags(int segment) const {
    const ViewSegment& seg = data_.segments[static_cast<std::size_t>(segment)];
    QString tags = seg.pool == PoolKind::Small ? QStringLiteral("small") : QStringLiteral("large");
    // In hex, as the inspector and the OOM answer name streams (PyTorch's are pointers).
    tags += seg.stream == 0 ? QStringLiteral("  s0") : QStringLiteral("  s0x%1").arg(seg.stream, 0, 16);
    if (seg.expandable) tags += QStringLiteral("  exp");
    if (anyPrivatePool_) tags += QStringLiteral("  ") + (seg.poolLabel.isEmpty() ? QStringLiteral("default pool") : seg.poolLabel);
    return tags;
}

QString SegmentMapCanvas::describeBlock(const BlockRef& ref) const {
    const ViewSegment& s = data_.segments[static_cast<std::size_t>(ref.segment)];
    const ViewBlock& b = s.blocks[static_cast<std::size_t>(ref.block)];
    QString text = QStringLiteral("%1 block at %2\nsize %3").arg(stateName(b.state), Formatting::address(b.address),
                                                              Formatting::bytes(b.size));
    if (b.state == BlockState::Allocated || b.state == BlockState::PendingFree) {
        text += QStringLiteral(" (requested %1, rounding waste %2)")
                    .arg(Formatting::bytes(b.requestedSize),
                         Formatting::bytes(b.size > b.requestedSize ? b.size - b.requestedSize : 0));
    }
    text += QStringLiteral("\nstream %1").arg(b.stream);
    if (b.id >= 0) text += QStringLiteral(", allocation #%1").arg(b.id);
    if (!b.label.isEmpty()) text += QStringLiteral("\n") + b.label;
    text += QStringLiteral("\nin segment %1 (%2, %3 pool%4)")
                .arg(Formatting::address(s.address), Formatting::bytes(s.totalSize),
                     s.pool == PoolKind::Small ? QStringLiteral("small") : QStringLiteral("large"),
                     s.expandable ? QStringLiteral(", expandable") : QString());
    if (!s.poolLabel.isEmpty()) text += QStringLiteral("\nmemory pool: ") + s.poolLabel;
    return text;
}

void SegmentMapCanvas::paintEvent(QPaintEvent* event) {
    QPainter painter(viewport());
    const QRect clip = event->rect();
    painter.fillRect(clip, colors_.background);
    if (data_.segments.empty()) {
        painter.setPen(colors_.mutedText);
        painter.drawText(viewport()->rect(), Qt::AlignCenter, tr("No segments reserved"));
        return;
    }
    const int scrollY = verticalScrollBar()->value();
    const int first = std::max(0, (clip.top() - kMargin + scrollY) / rowPitch());
    const int last = std::min(static_cast<int>(data_.segments.size()) - 1, (clip.bottom() - kMargin + scrollY) / rowPitch());
    for (int s = first; s <= last; ++s) paintRow(painter, s, clip);
}

void SegmentMapCanvas::paintRow(QPainter& painter, int segment, const QRect& clip) const {
    const ViewSegment& seg = data_.segments[static_cast<std::size_t>(segment)];
    const int top = rowTop(segment);
    const QRect barClip(barLeft(), top, barAreaWidth(), rowHeight_);
    painter.save();
    painter.setClipRect(barClip.intersected(clip));
    const QRect row = rowRect(segment);
    painter.fillRect(row, colors_.unreserved);

    // Only the blocks that reach into the visible byte range.
    const double ppb = pixelsPerByte();
    const double visibleFrom = (barLeft() - segmentX(segment, seg.address)) / ppb;
    const quint64 fromOffset = visibleFrom > 0 ? static_cast<quint64>(visibleFrom) : 0;
    int b = firstBlockFrom(seg, seg.address + fromOffset);
    const int clipRight = barClip.right() + 1;
    double paintedUpTo = -1e9;
    for (; b < static_cast<int>(seg.blocks.size()); ++b) {
        const ViewBlock& block = seg.blocks[static_cast<std::size_t>(b)];
        const double x0 = segmentX(segment, block.address);
        if (x0 > clipRight) break;
        const double x1 = std::max(x0 + 1.0, segmentX(segment, block.address + block.size));
        // Blocks that fall entirely on a pixel column already painted add nothing visible; a
        // small-pool segment can hold thousands of them (hotspot's timeline skips them too).
        if (std::floor(segmentX(segment, block.address + block.size)) < paintedUpTo) continue;
        paintBlock(painter, block, QRectF(x0, top, x1 - x0, rowHeight_));
        paintedUpTo = std::floor(x1);
    }
    if (highlight_.active()) {
        // Matching live blocks get an outline, also where they are too thin to see filled.
        QPen pen(colors_.highlight, 2);
        pen.setJoinStyle(Qt::MiterJoin);
        painter.setPen(pen);
        painter.setBrush(Qt::NoBrush);
        for (const ViewBlock& block : seg.blocks) {
            if (block.state != BlockState::Allocated && block.state != BlockState::PendingFree) continue;
            if (!highlight_.matches(block.address, block.size, block.stackId)) continue;
            const double x0 = segmentX(segment, block.address);
            const double x1 = std::max(x0 + 3.0, segmentX(segment, block.address + block.size));
            if (x1 < barClip.left() || x0 > clipRight) continue;
            painter.drawRect(QRectF(x0 + 1, top + 1, x1 - x0 - 2, rowHeight_ - 2));
        }
    }
    if (selection_ && selection_->segment == segment) {
        const QRect r = blockRect(seg.blocks[static_cast<std::size_t>(selection_->block)].address);
        QPen pen(colors_.selection, 2);
        pen.setJoinStyle(Qt::MiterJoin);
        painter.setPen(pen);
        painter.setBrush(Qt::NoBrush);
        const QRect outline = r.width() < 4 ? r.adjusted(-2, 0, 2, 0) : r;
        painter.drawRect(outline.adjusted(1, 1, -1, -1));
    }
    painter.restore();

    // The label column stays put while the bars scroll sideways.
    const QRect label(kMargin, top, labelWidth_ - kMargin, rowHeight_);
    if (!label.intersects(clip)) return;
    const QFontMetrics fm(font());
    painter.setPen(colors_.text);
    const QString addr = Formatting::address(seg.address);
    painter.drawText(label, Qt::AlignLeft | Qt::AlignVCenter, addr);
    const int sizeLeft = label.left() + Formatting::addressWidth(fm) + fm.horizontalAdvance(QStringLiteral("  "));
    const QRect sizeRect(sizeLeft, top, fm.horizontalAdvance(QStringLiteral("000.0 MiB")), rowHeight_);
    painter.drawText(sizeRect, Qt::AlignRight | Qt::AlignVCenter, Formatting::bytes(seg.totalSize));
    painter.setPen(colors_.mutedText);
    const QString tags = rowTags(segment);
    const QRect tagRect(sizeRect.right() + fm.horizontalAdvance(QStringLiteral("  ")), top,
                        label.right() - sizeRect.right(), rowHeight_);
    painter.drawText(tagRect, Qt::AlignLeft | Qt::AlignVCenter, fm.elidedText(tags, Qt::ElideRight, tagRect.width()));
}

void SegmentMapCanvas::paintBlock(QPainter& painter, const ViewBlock& block, const QRectF& rect) const {
    const QRect r(QPoint(static_cast<int>(std::floor(rect.left())), static_cast<int>(rect.top())),
                  QPoint(std::max(static_cast<int>(std::floor(rect.left())), static_cast<int>(std::floor(rect.right())) - 1),
                         static_cast<int>(rect.bottom()) - 1));
    switch (block.state) {
        case BlockState::Allocated: {
            painter.fillRect(r, colors_.roundingWaste);
            const double share = block.size ? static_cast<double>(std::min(block.requestedSize, block.size)) /
                                                  static_cast<double>(block.size)
                                            : 1.0;
            const int w = static_cast<int>(std::lround(r.width() * share));
            painter.fillRect(QRect(r.left(), r.top(), std::max(share > 0 ? 1 : 0, w), r.height()), colors_.requested);
            break;
        }
        case BlockState::PendingFree: painter.fillRect(r, colors_.pendingFree); break;
        case BlockState::Inactive: painter.fillRect(r, colors_.inactive); break;
        case BlockState::Unmapped:
            painter.fillRect(r, colors_.unmapped);
            painter.fillRect(r, QBrush(colors_.unmappedHatch, Qt::BDiagPattern));
            break;
    }
    // A separator at the block's start once blocks are wide enough to tell apart.
    if (r.width() >= 5) painter.fillRect(QRect(r.left(), r.top(), 1, r.height()), colors_.blockBorder);
}

void SegmentMapCanvas::resizeEvent(QResizeEvent* event) {
    // Keep the zoomed content anchored at the same relative position.
    const double fraction = horizontalScrollBar()->maximum() > 0
                                ? static_cast<double>(horizontalScrollBar()->value()) / horizontalScrollBar()->maximum()
                                : 0.0;
    QAbstractScrollArea::resizeEvent(event);
    updateScrollBars();
    horizontalScrollBar()->setValue(static_cast<int>(fraction * horizontalScrollBar()->maximum()));
}

void SegmentMapCanvas::scrollContentsBy(int, int) { viewport()->update(); }

void SegmentMapCanvas::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return QAbstractScrollArea::mousePressEvent(event);
    setFocus(Qt::MouseFocusReason);
    const std::optional<BlockRef> hit = blockAt(event->position().toPoint());
    if (hit) setSelection(hit, true);
}

void SegmentMapCanvas::wheelEvent(QWheelEvent* event) {
    if (event->modifiers() & Qt::ControlModifier) {
        const double steps = event->angleDelta().y() / 120.0;
        if (steps != 0) setZoom(zoom_ * std::pow(kZoomStep, steps), static_cast<int>(event->position().x()));
        event->accept();
        return;
    }
    QAbstractScrollArea::wheelEvent(event);
}

void SegmentMapCanvas::ensureVisible(const BlockRef& ref) {
    const int top = kMargin + ref.segment * rowPitch();
    QScrollBar* v = verticalScrollBar();
    if (top < v->value() + kMargin) v->setValue(top - kMargin);
    if (top + rowHeight_ > v->value() + viewport()->height() - kMargin)
        v->setValue(top + rowHeight_ - viewport()->height() + kMargin);
    const QRect r = blockRect(data_.segments[static_cast<std::size_t>(ref.segment)].blocks[static_cast<std::size_t>(ref.block)].address);
    QScrollBar* h = horizontalScrollBar();
    if (r.left() < barLeft()) h->setValue(h->value() - (barLeft() - r.left()) - kMargin);
    else if (r.left() > barLeft() + barAreaWidth() - 4) h->setValue(h->value() + r.left() - barLeft() - barAreaWidth() / 2);
    viewport()->update();
}

void SegmentMapCanvas::moveSelection(int dx, int dy) {
    if (data_.segments.empty()) return;
    BlockRef ref = selection_.value_or(BlockRef{0, 0});
    if (selection_) {
        if (dx != 0) {
            const int count = static_cast<int>(data_.segments[static_cast<std::size_t>(ref.segment)].blocks.size());
            ref.block = std::clamp(ref.block + dx, 0, count - 1);
        }
        if (dy != 0) {
            const int target = std::clamp(ref.segment + dy, 0, static_cast<int>(data_.segments.size()) - 1);
            if (target != ref.segment) {
                // Land on the block at the same horizontal position in the next row.
                const ViewSegment& from = data_.segments[static_cast<std::size_t>(ref.segment)];
                const ViewBlock& blk = from.blocks[static_cast<std::size_t>(ref.block)];
                const quint64 offset = blk.address - from.address;
                const ViewSegment& to = data_.segments[static_cast<std::size_t>(target)];
                if (to.blocks.empty()) return;
                const quint64 clamped = std::min(offset, to.totalSize ? to.totalSize - 1 : 0);
                ref = BlockRef{target, std::min(firstBlockFrom(to, to.address + clamped),
                                                static_cast<int>(to.blocks.size()) - 1)};
            }
        }
    }
    if (data_.segments[static_cast<std::size_t>(ref.segment)].blocks.empty()) return;
    setSelection(ref, true);
    ensureVisible(ref);
}

void SegmentMapCanvas::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
        case Qt::Key_Left: moveSelection(-1, 0); return;
        case Qt::Key_Right: moveSelection(1, 0); return;
        case Qt::Key_Up: moveSelection(0, -1); return;
        case Qt::Key_Down: moveSelection(0, 1); return;
        case Qt::Key_Plus:
        case Qt::Key_Equal: setZoom(zoom_ * kZoomStep * kZoomStep); return;
        case Qt::Key_Minus: setZoom(zoom_ / (kZoomStep * kZoomStep)); return;
        case Qt::Key_0:
            if (event->modifiers() & Qt::ControlModifier) {
                setZoom(1.0);
                return;
            }
            break;
        case Qt::Key_Escape:
            if (selection_) {
                setSelection(std::nullopt, true);
                return;
            }
            break;
        default: break;
    }
    QAbstractScrollArea::keyPressEvent(event);
}

bool SegmentMapCanvas::viewportEvent(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        QString text;
        if (const std::optional<BlockRef> hit = blockAt(help->pos())) {
            text = describeBlock(*hit);
        } else if (help->pos().x() < labelWidth_ && !data_.segments.empty()) {
            const int y = help->pos().y() - kMargin + verticalScrollBar()->value();
            const int s = y >= 0 ? y / rowPitch() : -1;
            if (s >= 0 && s < static_cast<int>(data_.segments.size())) text = describeSegment(s);
        }
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, viewport());
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

void SegmentMapCanvas::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) {
        colors_ = ThemePalette::forPalette(palette());
        viewport()->update();
    } else if (event->type() == QEvent::FontChange) {
        updateMetrics();
        updateScrollBars();
    }
    QAbstractScrollArea::changeEvent(event);
}

}  // namespace allocscope::views
