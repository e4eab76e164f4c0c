#include "views/widgets/OomRequestBar.h"

#include <QEvent>
#include <QPainter>

#include <algorithm>

#include "views/theme/ThemePalette.h"
#include "views/util/Formatting.h"

namespace allocscope::views {
namespace {
constexpr int kBarMargin = 6;
constexpr int kTrack = 22;     // the memory track's height
constexpr int kRowHeight = 18;
constexpr int kRowGap = 6;
constexpr int kValueRoom = 90;  // right of the rows' longest bar: its value

int rowIndex(OomRequestBar::Row row) { return static_cast<int>(row) - 1; }

int scaled(double bytes, double scale, int width) {
    if (scale <= 0 || bytes <= 0) return 0;
    return std::clamp(static_cast<int>(bytes / scale * width + 0.5), 1, width);
}

}  // namespace

OomRequestBar::OomRequestBar(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setToolTip(tr("Top: memory under the limit at the failure. Below: the request against the largest cached free block "
                  "and the room left under the limit; the allocator needs one of them to be at least as long as the request."));
}

void OomRequestBar::setAnswer(const OomAnswerData& answer) {
    answer_ = answer;
    update();
}

qint64 OomRequestBar::room() const {
    if (!answer_.limit.known() || answer_.reserved < 0) return -1;
    return std::max<qint64>(0, static_cast<qint64>(answer_.limit.low) - answer_.reserved);
}

QSize OomRequestBar::sizeHint() const { return QSize(640, minimumSizeHint().height()); }

QSize OomRequestBar::minimumSizeHint() const {
    const int line = fontMetrics().height();
    return QSize(320, kBarMargin + line + kTrack + line + kRowGap * 2 + 3 * kRowHeight + 2 * kRowGap + kBarMargin);
}

OomRequestBar::Geometry OomRequestBar::geometry() const {
    Geometry g;
    const QFontMetrics metrics = fontMetrics();
    const int line = metrics.height();
    const int left = kBarMargin;
    const int right = width() - kBarMargin;
    // Top track: 0 .. the larger of the limit's high end and reserved memory (reserved can pass an
    // inferred limit's low end).
    g.memoryScale = static_cast<double>(std::max<qint64>(static_cast<qint64>(answer_.limit.high), answer_.reserved));
    g.memory = QRect(left, kBarMargin + line, std::max(1, right - left), kTrack);

    g.labelWidth = std::max({metrics.horizontalAdvance(tr("request")), metrics.horizontalAdvance(tr("largest free block")),
                             metrics.horizontalAdvance(tr("room under the limit"))}) + 8;
    const int barLeft = left + g.labelWidth;
    const int barWidth = std::max(1, right - barLeft - kValueRoom);
    const qint64 r = room();
    g.rowScale = static_cast<double>(std::max({static_cast<qint64>(answer_.requestBytes), answer_.largestFree, r}));
    int y = g.memory.bottom() + 1 + line + 2 * kRowGap;
    for (QRect& row : g.rows) {
        row = QRect(barLeft, y, barWidth, kRowHeight);
        y += kRowHeight + kRowGap;
    }
    return g;
}

QRect OomRequestBar::barRect(Row row) const {
    const Geometry g = geometry();
    if (row == Row::Memory) {
        if (g.memoryScale <= 0 || answer_.reserved < 0) return {};
        const int w = scaled(static_cast<double>(answer_.reserved), g.memoryScale, g.memory.width());
        return QRect(g.memory.left(), g.memory.top(), w, g.memory.height());
    }
    const qint64 bytes = row == Row::Request ? static_cast<qint64>(answer_.requestBytes) : row == Row::LargestFree ? answer_.largestFree : room();
    const QRect track = g.rows[rowIndex(row)];
    const int w = scaled(static_cast<double>(bytes), g.rowScale, track.width());
    return w > 0 ? QRect(track.left(), track.top(), w, track.height()) : QRect();
}

void OomRequestBar::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const ThemePalette theme = ThemePalette::forPalette(palette());
    const Geometry g = geometry();
    const QFontMetrics metrics = fontMetrics();
    const int line = metrics.height();
    const QColor requestColor = theme.marker[static_cast<int>(MarkerKind::Oom)];
    const QColor roomColor = theme.unmappedHatch;

    // Top: the memory under the limit.
    p.setPen(theme.text);
    p.drawText(QRect(g.memory.left(), kBarMargin, g.memory.width(), line), Qt::AlignLeft | Qt::AlignVCenter,
               tr("Memory at the failure"));
    p.fillRect(g.memory, theme.unreserved);
    if (g.memoryScale > 0 && answer_.reserved >= 0) {
        const qint64 allocated = std::clamp<qint64>(answer_.allocated, 0, answer_.reserved);
        const int wAllocated = scaled(static_cast<double>(allocated), g.memoryScale, g.memory.width());
        const int wReserved = scaled(static_cast<double>(answer_.reserved), g.memoryScale, g.memory.width());
        p.fillRect(QRect(g.memory.left(), g.memory.top(), wAllocated, g.memory.height()), theme.requested);
        p.fillRect(QRect(g.memory.left() + wAllocated, g.memory.top(), wReserved - wAllocated, g.memory.height()), theme.inactive);
    }
    p.setPen(theme.grid);
    p.drawRect(g.memory.adjusted(0, 0, -1, -1));
    QString under = answer_.reserved >= 0
                        ? tr("allocated %1 · cached free %2").arg(Formatting::bytes(std::max<qint64>(0, answer_.allocated)),
                                                                 Formatting::bytes(std::max<qint64>(0, answer_.cachedFree)))
                        : tr("the state at the failure is not known");
    if (answer_.limit.known() && g.memoryScale > 0) {
        const int xLow = g.memory.left() + scaled(static_cast<double>(answer_.limit.low), g.memoryScale, g.memory.width());
        const int xHigh = g.memory.left() + scaled(static_cast<double>(answer_.limit.high), g.memoryScale, g.memory.width());
        if (xHigh > xLow) {
            QColor band = theme.cursor;
            band.setAlpha(40);
            p.fillRect(QRect(xLow, g.memory.top() - 3, xHigh - xLow, g.memory.height() + 6), band);
        }
        p.setPen(QPen(theme.cursor, 2));
        p.drawLine(xLow, g.memory.top() - 3, xLow, g.memory.bottom() + 3);
        if (xHigh > xLow) p.drawLine(xHigh, g.memory.top() - 3, xHigh, g.memory.bottom() + 3);
        const QString limit = answer_.limit.isInterval()
                                  ? tr("limit %1 – %2").arg(Formatting::bytes(answer_.limit.low), Formatting::bytes(answer_.limit.high))
                                  : tr("limit %1").arg(Formatting::bytes(answer_.limit.low));
        p.setPen(theme.text);
        const int w = metrics.horizontalAdvance(limit);
        p.drawText(QRect(std::max(g.memory.left(), std::min(xLow, g.memory.right()) - w), kBarMargin, w + 2, line),
                   Qt::AlignRight | Qt::AlignVCenter, limit);
    }
    p.setPen(theme.text);
    p.drawText(QRect(g.memory.left(), g.memory.bottom() + 3, g.memory.width(), line), Qt::AlignLeft | Qt::AlignVCenter, under);

    // Below: the request against what could have served it.
    struct RowSpec {
        Row row;
        QString label;
        qint64 bytes;
        QColor color;
    };
    const RowSpec rows[] = {
        {Row::Request, tr("request"), static_cast<qint64>(answer_.requestBytes), requestColor},
        {Row::LargestFree, tr("largest free block"), answer_.largestFree, theme.inactive},
        {Row::Room, tr("room under the limit"), room(), roomColor},
    };
    for (const RowSpec& spec : rows) {
        const QRect track = g.rows[rowIndex(spec.row)];
        p.setPen(theme.text);
        p.drawText(QRect(kBarMargin, track.top(), g.labelWidth, track.height()), Qt::AlignLeft | Qt::AlignVCenter, spec.label);
        const QRect bar = barRect(spec.row);
        if (!bar.isEmpty()) p.fillRect(bar, spec.color);
        const QString value = spec.bytes < 0 ? tr("not known") : Formatting::bytes(spec.bytes);
        const int x = (bar.isEmpty() ? track.left() : bar.right()) + 6;
        p.setPen(theme.text);
        p.drawText(QRect(x, track.top(), kValueRoom + track.right() - x, track.height()), Qt::AlignLeft | Qt::AlignVCenter, value);
    }
}

void OomRequestBar::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) update();
    QWidget::changeEvent(event);
}

}  // namespace allocscope::views
