#include "views/widgets/LegendWidget.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

namespace allocscope::views {
namespace {
constexpr int kSwatch = 12;
constexpr int kGap = 6;
constexpr int kEntryGap = 16;
constexpr int kMargin = 4;
}  // namespace

LegendWidget::LegendWidget(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void LegendWidget::setEntries(const QVector<LegendEntry>& entries) {
    entries_ = entries;
    updateGeometry();
    update();
}

QVector<QRect> LegendWidget::layoutSwatches(int width) const {
    QVector<QRect> rects;
    const QFontMetrics metrics(font());
    const int lineHeight = std::max(kSwatch, metrics.height());
    int x = kMargin;
    int y = kMargin;
    for (const LegendEntry& entry : entries_) {
        const int entryWidth = kSwatch + kGap + metrics.horizontalAdvance(entry.label);
        if (x > kMargin && x + entryWidth > width - kMargin) {
            x = kMargin;
            y += lineHeight + kGap;
        }
        rects.push_back(QRect(x, y + (lineHeight - kSwatch) / 2, kSwatch, kSwatch));
        x += entryWidth + kEntryGap;
    }
    return rects;
}

QRect LegendWidget::swatchRect(int index) const {
    const QVector<QRect> rects = layoutSwatches(width());
    return index >= 0 && index < rects.size() ? rects[index] : QRect();
}

int LegendWidget::heightForWidth(int width) const {
    const QVector<QRect> rects = layoutSwatches(width);
    const int lineHeight = std::max(kSwatch, QFontMetrics(font()).height());
    if (rects.isEmpty()) return lineHeight + 2 * kMargin;
    return rects.back().center().y() + lineHeight / 2 + kMargin + 1;
}

QSize LegendWidget::sizeHint() const { return QSize(400, heightForWidth(400)); }

void LegendWidget::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QVector<QRect> rects = layoutSwatches(width());
    const QFontMetrics metrics(font());
    painter.setPen(palette().color(QPalette::WindowText));
    for (int i = 0; i < entries_.size(); ++i) {
        painter.fillRect(rects[i], entries_[i].color);
        painter.drawRect(rects[i].adjusted(0, 0, -1, -1));
        const QRect text(rects[i].right() + kGap, rects[i].center().y() - metrics.height() / 2,
                         metrics.horizontalAdvance(entries_[i].label) + 2, metrics.height());
        painter.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, entries_[i].label);
    }
}

bool LegendWidget::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QVector<QRect> rects = layoutSwatches(width());
        for (int i = 0; i < rects.size(); ++i) {
            const QRect hit = rects[i].adjusted(0, -2, QFontMetrics(font()).horizontalAdvance(entries_[i].label) + kGap, 2);
            if (hit.contains(help->pos()) && !entries_[i].toolTip.isEmpty()) {
                QToolTip::showText(help->globalPos(), entries_[i].toolTip, this);
                return true;
            }
        }
        QToolTip::hideText();
        event->ignore();
        return true;
    }
    return QWidget::event(event);
}

}  // namespace allocscope::views
