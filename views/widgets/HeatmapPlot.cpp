#include "views/widgets/HeatmapPlot.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "views/util/Formatting.h"
#include "views/util/NiceTicks.h"

namespace allocscope::views {

namespace {
constexpr int kTopMargin = 8;
constexpr int kRightMargin = 12;
constexpr int kTick = 4;
}  // namespace

HeatmapPlot::HeatmapPlot(QWidget* parent) : QWidget(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setCursor(Qt::CrossCursor);
    colors_ = ThemePalette::forPalette(palette());
}

void HeatmapPlot::setData(HeatmapData input) {
    data_ = std::move(input);
    if (!data_.isValid()) data_ = HeatmapData{};
    axisBytes_ = data_.axisBytes();
    rebuildImage();
    update();
}

void HeatmapPlot::setCurrentEvent(qint64 event) {
    if (event == currentEvent_) return;
    currentEvent_ = event;
    update();
}

QRgb HeatmapPlot::cellColor(const HeatCell& cell) const {
    // Blend the state colours by share; whatever is left is unreserved address space.
    int r = 0, g = 0, b = 0, used = 0;
    for (int s = 0; s < kHeatStateCount; ++s) {
        const int share = cell[static_cast<std::size_t>(s)];
        if (share == 0) continue;
        const QColor c = colors_.heatColor(static_cast<HeatState>(s));
        r += share * c.red();
        g += share * c.green();
        b += share * c.blue();
        used += share;
    }
    const int rest = std::max(0, 255 - used);
    r += rest * colors_.unreserved.red();
    g += rest * colors_.unreserved.green();
    b += rest * colors_.unreserved.blue();
    const int total = used + rest;
    return qRgb((r + total / 2) / total, (g + total / 2) / total, (b + total / 2) / total);
}

void HeatmapPlot::rebuildImage() {
    if (data_.timeBins <= 0) {
        image_ = QImage();
        return;
    }
    image_ = QImage(data_.timeBins, data_.addressBins, QImage::Format_RGB32);
    for (int a = 0; a < data_.addressBins; ++a) {
        // Image row 0 is the top of the plot: the highest address bin.
        auto* line = reinterpret_cast<QRgb*>(image_.scanLine(data_.addressBins - 1 - a));
        for (int t = 0; t < data_.timeBins; ++t) line[t] = cellColor(data_.cell(t, a));
    }
}

QRect HeatmapPlot::plotRect() const {
    const QFontMetrics fm(font());
    const int left = Formatting::addressWidth(fm) + kTick + 10;
    const int bottom = 2 * fm.height() + kTick + 6;
    return QRect(left, kTopMargin, std::max(10, width() - left - kRightMargin), std::max(10, height() - kTopMargin - bottom));
}

QRectF HeatmapPlot::cellRect(int timeBin, int addressBin) const {
    const QRectF plot = plotRect();
    const double w = plot.width() / static_cast<double>(std::max(1, data_.timeBins));
    const double h = plot.height() / static_cast<double>(std::max(1, data_.addressBins));
    return QRectF(plot.left() + timeBin * w, plot.top() + (data_.addressBins - 1 - addressBin) * h, w, h);
}

qint64 HeatmapPlot::columnEnd(int timeBin) const {
    return timeBin + 1 < data_.timeBins ? data_.columnFirstEvent[static_cast<std::size_t>(timeBin) + 1] : data_.eventCount;
}

double HeatmapPlot::xForEvent(qint64 event) const {
    if (data_.timeBins <= 0) return -1;
    const auto& firsts = data_.columnFirstEvent;
    int bin = static_cast<int>(std::upper_bound(firsts.begin(), firsts.end(), event) - firsts.begin()) - 1;
    bin = std::clamp(bin, 0, data_.timeBins - 1);
    const qint64 first = firsts[static_cast<std::size_t>(bin)];
    const qint64 span = std::max<qint64>(1, columnEnd(bin) - first);
    const double frac = std::clamp(static_cast<double>(event - first) / static_cast<double>(span), 0.0, 1.0);
    const QRectF cell = cellRect(bin, 0);
    return cell.left() + frac * cell.width();
}

int HeatmapPlot::timeBinAtX(double x) const {
    const QRectF plot = plotRect();
    if (data_.timeBins <= 0 || x < plot.left() || x >= plot.left() + plot.width()) return -1;
    return std::clamp(static_cast<int>((x - plot.left()) * data_.timeBins / plot.width()), 0, data_.timeBins - 1);
}

int HeatmapPlot::addressBinAtY(double y) const {
    const QRectF plot = plotRect();
    if (data_.addressBins <= 0 || y < plot.top() || y >= plot.top() + plot.height()) return -1;
    const int fromTop = static_cast<int>((y - plot.top()) * data_.addressBins / plot.height());
    return std::clamp(data_.addressBins - 1 - fromTop, 0, data_.addressBins - 1);
}

qint64 HeatmapPlot::eventAtX(double x) const {
    if (data_.timeBins <= 0 || data_.eventCount <= 0) return 0;
    const QRectF plot = plotRect();
    const double clamped = std::clamp(x, plot.left(), plot.left() + plot.width() - 0.001);
    const int bin = timeBinAtX(clamped);
    const QRectF cell = cellRect(bin, 0);
    const qint64 first = data_.columnFirstEvent[static_cast<std::size_t>(bin)];
    const qint64 span = std::max<qint64>(1, columnEnd(bin) - first);
    const double frac = std::clamp((clamped - cell.left()) / cell.width(), 0.0, 1.0);
    const qint64 event = first + std::min(span - 1, static_cast<qint64>(frac * static_cast<double>(span)));
    return std::clamp<qint64>(event, 0, data_.eventCount - 1);
}

void HeatmapPlot::setHighlights(std::vector<HeatHighlight> highlights) {
    highlights_ = std::move(highlights);
    update();
}

std::optional<quint64> HeatmapPlot::axisOffsetOf(quint64 address) const {
    quint64 offset = 0;
    for (const AddressRange& r : data_.ranges) {
        if (address >= r.start && address < r.start + r.size) return offset + (address - r.start);
        offset += r.size;
    }
    return std::nullopt;
}

quint64 HeatmapPlot::addressAtAxisOffset(quint64 offset) const {
    for (const AddressRange& r : data_.ranges) {
        if (offset < r.size) return r.start + offset;
        offset -= r.size;
    }
    return data_.ranges.empty() ? 0 : data_.ranges.back().start + data_.ranges.back().size;
}

double HeatmapPlot::yForAxisOffset(quint64 offset) const {
    const QRectF plot = plotRect();
    const double frac = axisBytes_ ? static_cast<double>(offset) / static_cast<double>(axisBytes_) : 0.0;
    return plot.top() + plot.height() * (1.0 - frac);
}

QString HeatmapPlot::describeCell(int t, int a) const {
    const HeatCell& cell = data_.cell(t, a);
    const quint64 from = axisBytes_ * static_cast<quint64>(a) / static_cast<quint64>(data_.addressBins);
    const quint64 to = axisBytes_ * static_cast<quint64>(a + 1) / static_cast<quint64>(data_.addressBins);
    QString text = tr("events %1 – %2\naddresses %3 – %4 (%5)")
                       .arg(Formatting::count(data_.columnFirstEvent[static_cast<std::size_t>(t)]),
                            Formatting::count(std::max<qint64>(0, columnEnd(t) - 1)),
                            Formatting::address(addressAtAxisOffset(from)), Formatting::address(addressAtAxisOffset(to - (to > from ? 1 : 0))),
                            Formatting::bytes(to - from));
    static const char* const kNames[] = {"requested", "rounding waste", "inactive (cached free)", "pending free", "unmapped"};
    int used = 0;
    for (int s = 0; s < kHeatStateCount; ++s) {
        const int share = cell[static_cast<std::size_t>(s)];
        used += share;
        if (share > 0)
            text += QStringLiteral("\n%1: %2").arg(tr(kNames[s]), Formatting::percent(share / 255.0));
    }
    if (used < 255) text += tr("\nnot reserved: %1").arg(Formatting::percent((255 - used) / 255.0));
    return text;
}

void HeatmapPlot::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Window));
    const QRect plot = plotRect();
    if (image_.isNull()) {
        painter.fillRect(plot, colors_.background);
        painter.setPen(colors_.mutedText);
        painter.drawText(plot, Qt::AlignCenter, tr("No heatmap for this run yet"));
        return;
    }
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter.drawImage(QRectF(plot), image_);

    // Squeezed gaps: a dashed line across the plot where two ranges meet.
    if (!data_.rawAddresses) {
        QPen gapPen(colors_.gapMarker, 1, Qt::DashLine);
        painter.setPen(gapPen);
        quint64 offset = 0;
        for (std::size_t i = 0; i < data_.ranges.size(); ++i) {
            if (i > 0 && data_.ranges[i].gapBefore > 0) {
                const int y = static_cast<int>(std::lround(yForAxisOffset(offset)));
                painter.drawLine(plot.left(), y, plot.right(), y);
            }
            offset += data_.ranges[i].size;
        }
    }
    if (!highlights_.empty() && data_.eventCount > 0) {
        painter.save();
        painter.setClipRect(plot);
        painter.setPen(QPen(colors_.highlight, 2));
        painter.setBrush(Qt::NoBrush);
        for (const HeatHighlight& h : highlights_) {
            const std::optional<quint64> low = axisOffsetOf(h.address);
            const std::optional<quint64> high = axisOffsetOf(h.address + h.size - 1);
            if (!low || !high) continue;
            const double x0 = xForEvent(h.firstEvent), x1 = std::max(x0 + 3.0, xForEvent(h.lastEvent));
            const double y0 = yForAxisOffset(*high + 1), y1 = std::max(y0 + 3.0, yForAxisOffset(*low));
            painter.drawRect(QRectF(x0, y0, x1 - x0, y1 - y0));
        }
        painter.restore();
    }
    painter.setPen(colors_.grid);
    painter.drawRect(plot.adjusted(0, 0, -1, -1));
    paintAddressAxis(painter, plot);
    paintTimeAxis(painter, plot);

    if (currentEvent_ >= 0 && data_.eventCount > 0) {
        const int x = std::clamp(static_cast<int>(std::floor(xForEvent(currentEvent_))), plot.left(), plot.right());
        painter.fillRect(QRect(x - 1, plot.top() - 4, 3, plot.height() + 4), colors_.cursor);
        // A small triangle above the plot makes the cursor findable on busy columns.
        QPolygon head;
        head << QPoint(x - 5, plot.top() - 6) << QPoint(x + 5, plot.top() - 6) << QPoint(x, plot.top());
        painter.setPen(Qt::NoPen);
        painter.setBrush(colors_.cursor);
        painter.drawPolygon(head);
    }
}

void HeatmapPlot::paintAddressAxis(QPainter& painter, const QRect& plot) const {
    const QFontMetrics fm(font());
    painter.setPen(colors_.text);
    int lastLabelY = plot.bottom() + fm.height();  // labels go bottom-up; skip any that would overlap
    auto label = [&](int y, const QString& text, bool force) {
        if (!force && std::abs(lastLabelY - y) < fm.height() + 2) return;
        painter.drawLine(plot.left() - kTick, y, plot.left(), y);
        const QRect r(0, y - fm.height() / 2, plot.left() - kTick - 3, fm.height());
        painter.drawText(r, Qt::AlignRight | Qt::AlignVCenter, text);
        lastLabelY = y;
    };
    if (data_.rawAddresses || data_.ranges.size() <= 1) {
        // Ticks at round addresses: a power-of-two step (segments are aligned to such sizes), so
        // the labels read 0x7f0004000000 rather than 0x7f0003c55555.
        const quint64 low = data_.ranges.empty() ? 0 : data_.ranges.front().start;
        const int ticks = std::max(2, plot.height() / (3 * fm.height()));
        quint64 step = 1;
        while (step < axisBytes_ / static_cast<quint64>(ticks)) step <<= 1;
        label(static_cast<int>(std::lround(yForAxisOffset(0))), Formatting::address(low), true);
        for (quint64 address = (low / step + 1) * step; address - low <= axisBytes_; address += step) {
            label(static_cast<int>(std::lround(yForAxisOffset(address - low))), Formatting::address(address), false);
        }
        return;
    }
    quint64 offset = 0;
    for (std::size_t i = 0; i < data_.ranges.size(); ++i) {
        const int y = static_cast<int>(std::lround(yForAxisOffset(offset)));
        label(std::min(y, plot.bottom()), Formatting::address(data_.ranges[i].start), i == 0);
        if (i > 0 && data_.ranges[i].gapBefore > 0) {
            // The squeeze mark: two short slanted strokes across the axis line.
            painter.drawLine(plot.left() - 4, y + 3, plot.left() + 4, y - 1);
            painter.drawLine(plot.left() - 4, y + 1, plot.left() + 4, y - 3);
        }
        offset += data_.ranges[i].size;
    }
}

void HeatmapPlot::paintTimeAxis(QPainter& painter, const QRect& plot) const {
    const QFontMetrics fm(font());
    painter.setPen(colors_.text);
    const double last = static_cast<double>(std::max<qint64>(1, data_.eventCount));
    const int maxTicks = std::max(2, plot.width() / (fm.horizontalAdvance(QStringLiteral("0,000,000")) + 16));
    const std::vector<double> ticks = NiceTicks::ticks(0.0, last, maxTicks);
    const int y = plot.bottom() + 1;
    for (double v : ticks) {
        const int x = static_cast<int>(std::lround(xForEvent(static_cast<qint64>(v))));
        if (x < plot.left() || x > plot.right()) continue;
        painter.drawLine(x, y, x, y + kTick);
        const QString text = Formatting::count(static_cast<qint64>(v));
        const int w = fm.horizontalAdvance(text);
        const int left = std::clamp(x - w / 2, 0, width() - w);
        painter.drawText(QRect(left, y + kTick + 1, w, fm.height()), Qt::AlignCenter, text);
    }
    painter.setPen(colors_.mutedText);
    const QString title = tr("event index →");
    painter.drawText(QRect(plot.left(), y + kTick + 1 + fm.height(), plot.width(), fm.height()), Qt::AlignHCenter, title);
}

void HeatmapPlot::requestAt(double x) {
    if (data_.eventCount <= 0) return;
    const qint64 event = eventAtX(x);
    setCurrentEvent(event);
    emit eventRequested(event);
}

void HeatmapPlot::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton && plotRect().adjusted(0, -8, 0, 0).contains(event->position().toPoint()))
        requestAt(event->position().x());
}

void HeatmapPlot::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) requestAt(event->position().x());
}

bool HeatmapPlot::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int t = timeBinAtX(help->pos().x());
        const int a = addressBinAtY(help->pos().y());
        if (t >= 0 && a >= 0)
            QToolTip::showText(help->globalPos(), describeCell(t, a), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void HeatmapPlot::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) {
        colors_ = ThemePalette::forPalette(palette());
        rebuildImage();
        update();
    }
    QWidget::changeEvent(event);
}

}  // namespace allocscope::views
